#nullable enable
using System;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The one place where a datagram call goes to its path: <see cref="NativeDatagramIO"/>,
    /// <c>SocketAddressDatagramIO</c> (.NET 8+) or <see cref="ManagedDatagramIO"/>. Every caller names the path:
    /// <see cref="SocketExtensions"/> and <see cref="DatagramBatch"/> pass <see cref="DatagramPathSettings.Active"/> as it is at
    /// the call, an <see cref="AsyncDatagramSocket"/> the path it was made with (docs/CONTRACT.md, "Which path a call
    /// takes"). Arguments are checked before anything here is called.
    /// </summary>
    /// <remarks>
    /// <para>A <see cref="DatagramBatch"/> comes here only for its slot-by-slot loops on the runtime's paths; on the native path
    /// it calls the OS itself, on its own slots (<c>recvmmsg</c>, <c>sendmmsg</c>, <c>sendto</c>, and its slot-by-slot loop).</para>
    /// <para>Four calls a server makes per datagram test <see cref="DatagramPathSettings.Active"/> themselves and go straight to the
    /// native path, whose instruction counts bench/ReceiveCost and bench/SendCost budget (on Mono each call level costs
    /// 15-20 instructions): the compatible receives <c>ReceiveFrom_NonAlloc(byte[], …, IPEndPointNonAlloc)</c> and the
    /// array forms of <c>SendTo_NonAlloc</c>. Any other path, and any argument that is not the simple case, they send here.</para>
    /// </remarks>
    internal static class PathDispatch
    {
        /// <summary>
        /// One datagram into <paramref name="buffer"/> (a span of <paramref name="array"/> from <paramref name="offset"/> when
        /// the caller has an array) on <paramref name="path"/>; the sender also goes to <paramref name="into"/> when given.
        /// Without <see cref="ReceiveWaitKind.Waits"/> in <paramref name="kind"/>, false when nothing is queued; with it, a
        /// blocking socket waits (honouring its receive timeout) and an empty non-blocking one throws WouldBlock. What else
        /// <paramref name="kind"/> says (an await's try: a shutdown its poller reports, a readiness it reported) only the native
        /// path needs; the runtime's paths keep their own way.
        /// </summary>
        internal static bool Receive(DatagramPath path, Socket socket, byte[]? array, int offset, Span<byte> buffer, SocketFlags flags, ReceiveWaitKind kind, IPEndPointNonAlloc? into, out ReceivedDatagram datagram)
        {
            if (path == DatagramPath.Native)
            {
                long length = NativeDatagramIO.Receive(socket, buffer, flags, kind, into, out EndPointKey sender);
                if (length < 0)
                {
                    datagram = default;
                    return false;
                }
                datagram = new ReceivedDatagram((int)Math.Min(length, buffer.Length), length > buffer.Length, into != null ? into.CurrentKey : sender);
                return true;
            }
            return ReceiveOnRuntimePath(path, socket, array, offset, buffer, flags, (kind & ReceiveWaitKind.Waits) != 0, into, out datagram);
        }

        /// <summary>The receive of the runtime's own paths (SocketAddress, Managed), which wait and retry in their own way.</summary>
        internal static bool ReceiveOnRuntimePath(DatagramPath path, Socket socket, byte[]? array, int offset, Span<byte> buffer, SocketFlags flags, bool wait, IPEndPointNonAlloc? into, out ReceivedDatagram datagram)
        {
            bool received;
#if NET8_0_OR_GREATER
            if (path == DatagramPath.SocketAddress)
            {
                received = SocketAddressDatagramIO.Receive(socket, buffer, flags, wait, out datagram);
            }
            else
#endif
            {
                DatagramPathSettings.ReportFallbackOnce();
                received = array != null && into != null
                    ? ManagedDatagramIO.Receive(socket, array, offset, buffer.Length, flags, into, wait, out datagram)
                    : ManagedDatagramIO.Receive(socket, buffer, flags, wait, out datagram);
            }
            if (received && into != null) into.SetCurrent(datagram.RemoteEndPoint);
            return received;
        }

        /// <summary>
        /// One datagram to <paramref name="to"/> (already fitted to the socket: <see cref="SocketArguments.FitToSocket"/>) on
        /// <paramref name="path"/>. With <paramref name="wait"/> false it returns -1 instead of waiting for room in the send
        /// buffer; with it true a blocking socket waits for room and a non-blocking one throws WouldBlock.
        /// </summary>
        internal static int Send(DatagramPath path, Socket socket, byte[]? array, int offset, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey to, bool wait)
        {
            if (path == DatagramPath.Native)
            {
                // A native sendto would bind an unbound socket behind the runtime's back, leaving its
                // IsBound and LocalEndPoint wrong; bind through the runtime first, as its SendTo does.
                if (!socket.IsBound && !socket.Connected) BindAnyOnce(socket);
                return NativeDatagramIO.Send(socket, buffer, flags, to, wait);
            }
            // The runtime's sends wait on a blocking socket: ask for room first when the caller must not wait.
            if (!wait && !socket.Poll(0, SelectMode.SelectWrite)) return -1;
#if NET8_0_OR_GREATER
            if (path == DatagramPath.SocketAddress) return SocketAddressDatagramIO.Send(socket, buffer, flags, to);
#endif
            DatagramPathSettings.ReportFallbackOnce();
            return array != null
                ? ManagedDatagramIO.Send(socket, array, offset, buffer.Length, flags, to)
                : ManagedDatagramIO.Send(socket, buffer, flags, to);
        }

        /// <summary>
        /// <see cref="Send"/> without waiting, whatever the socket's blocking mode: false when the send buffer had no room
        /// (nothing was sent). The native send answers "no room" with a return value; the runtime's sends are asked for room
        /// first, and their WouldBlock exception is left only for a buffer that filled in between.
        /// </summary>
        internal static bool TrySend(DatagramPath path, Socket socket, byte[]? array, int offset, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey to)
        {
            if (path == DatagramPath.Native) return Send(path, socket, array, offset, buffer, flags, to, false) >= 0;
            try
            {
                return Send(path, socket, array, offset, buffer, flags, to, false) >= 0;
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.WouldBlock)
            {
                return false;
            }
        }

        /// <summary>
        /// The awaits' engine of <paramref name="path"/>: the OS's own readiness mechanism for the native path (it watches
        /// descriptors), <c>Socket.Select</c> for the runtime's paths (they have none to give).
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The native path on an OS with no readiness mechanism the library knows.</exception>
        internal static AwaitEngine Engine(DatagramPath path) => path == DatagramPath.Native ? AwaitEngine.Native : AwaitEngine.Runtime;

        /// <summary>
        /// Binds an unbound socket to the wildcard address and a port the OS picks, through the runtime (so that its IsBound
        /// and LocalEndPoint are right), as the runtime's SendTo does before a first send.
        /// </summary>
        internal static void BindAnyOnce(Socket socket)
        {
            socket.Bind(new IPEndPoint(socket.AddressFamily == AddressFamily.InterNetworkV6 ? IPAddress.IPv6Any : IPAddress.Any, 0));
        }
    }
}
