#nullable enable
using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace WhereAllocation
{
    /// <summary>
    /// Allocation-free datagram receive and send on a <see cref="Socket"/>, on Mono and .NET alike.
    /// The <c>_NonAlloc</c> names and argument lists are those earlier versions of this library had, so
    /// existing code compiles unchanged; the key and span overloads are the newer, leaner form.
    /// </summary>
    /// <remarks>
    /// <para>Every call takes the path in <see cref="DatagramPathSettings.Active"/>. On the native and SocketAddress
    /// paths a receive or send allocates nothing, for IPv4, IPv6 and dual-mode sockets.</para>
    /// <para>Arguments are checked before any system call: a bad argument never costs a datagram. A disposed socket is
    /// reported before a bad argument (ObjectDisposedException), as the runtime's Socket does.</para>
    /// <para>A receive on a socket shut down for receiving throws a <see cref="SocketException"/> with
    /// <see cref="SocketError.Shutdown"/> at once, whether it would wait or not (docs/CONTRACT.md says why).</para>
    /// <para>Where no way reaches the socket's handle, the first call that would fall back to the allocating Managed
    /// path unasked throws <see cref="PlatformNotSupportedException"/> once (see <see cref="DatagramPathSettings.HandleAccess"/>).</para>
    /// </remarks>
    public static partial class SocketExtensions
    {
        // ----- compatible surface -----

        /// <summary>
        /// Receives one datagram into <paramref name="buffer"/> and overwrites <paramref name="remoteEndPoint"/>
        /// (and its <see cref="IPEndPointNonAlloc.temp"/>) with the sender. Blocks when the socket is blocking,
        /// honouring <see cref="Socket.ReceiveTimeout"/>.
        /// </summary>
        /// <returns>The number of bytes received.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/>, <paramref name="buffer"/> or <paramref name="remoteEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">The endpoint's family does not fit the socket (an IPv4 endpoint is accepted by a dual-mode socket), the socket is not an IPv4/IPv6 datagram socket, or <paramref name="socketFlags"/> holds a flag other than Peek.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error: WouldBlock for an empty non-blocking socket, TimedOut, ConnectionReset, ConnectionRefused, or MessageSize when the datagram was longer than <paramref name="size"/> (the first <paramref name="size"/> bytes and the sender are stored).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int ReceiveFrom_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, IPEndPointNonAlloc remoteEndPoint)
        {
            // What a server's receive loop runs per datagram: the buffer checks written out here (Mono inlines no method of this
            // size, and each call level costs it 15-20 instructions per datagram), the socket's checks skipped when this endpoint
            // saw them pass for this socket, then one call to the native receive. Anything else is checked one by one, which
            // names the bad argument (or lets an IPv4 endpoint on a dual-mode socket pass) and remembers the socket.
            if (remoteEndPoint == null || buffer == null || (uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset)
                || (socketFlags & ~SocketFlags.Peek) != 0 || socket == null || !ReferenceEquals(remoteEndPoint.CheckedSocket, socket))
                SocketArguments.CheckReceiveFromArguments(socket!, buffer!, offset, size, socketFlags, remoteEndPoint!);
            if (DatagramPathSettings.s_active == DatagramPath.Native)
            {
                long length = NativeDatagramIO.Receive(socket!, buffer!, offset, size, socketFlags, remoteEndPoint!);
                if (length > size) throw SocketErrors.Receive(SocketError.MessageSize);
                return (int)length;
            }
            return ReceiveFromOnRuntimePath(socket!, buffer!, offset, size, socketFlags, remoteEndPoint!);
        }

        // The compatible receive on the runtime's paths, apart so that the native path's caller has no struct local to clear.
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int ReceiveFromOnRuntimePath(Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, IPEndPointNonAlloc remoteEndPoint)
        {
            PathDispatch.ReceiveOnRuntimePath(DatagramPathSettings.Active, socket, buffer, offset, buffer.AsSpan(offset, size), socketFlags, true, remoteEndPoint, out ReceivedDatagram datagram);
            if (datagram.Truncated) throw SocketErrors.Receive(SocketError.MessageSize);
            return datagram.Length;
        }

        /// <summary>Receives one datagram into the whole of <paramref name="buffer"/>; see the full overload.</summary>
        /// <returns>The number of bytes received.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/>, <paramref name="buffer"/> or <paramref name="remoteEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentException">The endpoint's family does not fit the socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error, or MessageSize for a datagram longer than the buffer.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int ReceiveFrom_NonAlloc(this Socket socket, byte[] buffer, IPEndPointNonAlloc remoteEndPoint)
        {
            // A server's loop, from here to the native receive without the full overload in between: on Mono each call
            // level costs 15-20 instructions per datagram. Anything but all-good arguments on the native path goes the full way.
            if (buffer != null && remoteEndPoint != null && socket != null && ReferenceEquals(remoteEndPoint.CheckedSocket, socket) && DatagramPathSettings.s_active == DatagramPath.Native)
            {
                long length = NativeDatagramIO.Receive(socket, buffer, 0, buffer.Length, SocketFlags.None, remoteEndPoint);
                if (length > buffer.Length) throw SocketErrors.Receive(SocketError.MessageSize);
                return (int)length;
            }
            if (buffer == null) throw SocketArguments.Refused(socket, new ArgumentNullException(nameof(buffer)));
            return ReceiveFrom_NonAlloc(socket!, buffer, 0, buffer.Length, SocketFlags.None, remoteEndPoint!); // a null endpoint: the full overload throws
        }

        /// <summary>
        /// Receives one datagram if one is queued, without blocking and without throwing when none is,
        /// and overwrites <paramref name="remoteEndPoint"/> with its sender.
        /// </summary>
        /// <returns>False when no datagram was waiting.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/>, <paramref name="buffer"/> or <paramref name="remoteEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">The endpoint's family does not fit the socket, or a flag other than Peek is given.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error other than "nothing to read".</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TryReceiveFrom_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, IPEndPointNonAlloc remoteEndPoint, out ReceivedDatagram datagram)
        {
            if (remoteEndPoint == null) throw SocketArguments.Refused(socket, new ArgumentNullException(nameof(remoteEndPoint)));
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            SocketArguments.CheckReceive(socket, socketFlags, remoteEndPoint);
            return Receive(socket, buffer, offset, buffer.AsSpan(offset, size), socketFlags, false, remoteEndPoint, out datagram);
        }

        /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> to <paramref name="remoteEndPoint"/>'s current endpoint.</summary>
        /// <returns>The number of bytes sent.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/>, <paramref name="buffer"/> or <paramref name="remoteEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">An IPv6 destination on an IPv4 socket, a socket that is not an IPv4/IPv6 datagram socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error (for example MessageSize, NetworkUnreachable, or WouldBlock on a full non-blocking socket).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int SendTo_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, IPEndPointNonAlloc remoteEndPoint)
        {
            if (remoteEndPoint == null) throw SocketArguments.Refused(socket, new ArgumentNullException(nameof(remoteEndPoint)));
            if (DatagramPathSettings.s_active == DatagramPath.Native)
            {
                // A server's send loop: every check and the native send in one call (NativeDatagramIO.TrySendArray).
                int sent = NativeDatagramIO.TrySendArray(socket, buffer, offset, size, socketFlags, remoteEndPoint.CurrentKey);
                if (sent != NativeDatagramIO.NotSimple) return sent;
            }
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            return Send(socket, buffer, offset, size, socketFlags, remoteEndPoint.CurrentKey);
        }

        // ----- key and span overloads -----

        /// <summary>
        /// Receives one datagram into <paramref name="buffer"/>, blocking when the socket is blocking.
        /// A datagram longer than the buffer is stored cut and reported with <see cref="ReceivedDatagram.Truncated"/>.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket, or a flag other than Peek is given.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error; WouldBlock for an empty non-blocking socket.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static ReceivedDatagram ReceiveFrom_NonAlloc(this Socket socket, Span<byte> buffer, SocketFlags socketFlags = SocketFlags.None)
        {
            SocketArguments.CheckReceive(socket, socketFlags, null);
            Receive(socket, null, 0, buffer, socketFlags, true, null, out ReceivedDatagram datagram);
            return datagram;
        }

        /// <summary>Receives one datagram into <paramref name="buffer"/> and returns its length; <paramref name="remoteEndPoint"/> gets the sender.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> or <paramref name="buffer"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket, or a flag other than Peek is given.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error, or MessageSize for a datagram longer than <paramref name="size"/>.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int ReceiveFrom_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, out EndPointKey remoteEndPoint)
        {
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            SocketArguments.CheckReceive(socket, socketFlags, null);
            Receive(socket, buffer, offset, buffer.AsSpan(offset, size), socketFlags, true, null, out ReceivedDatagram datagram);
            remoteEndPoint = datagram.RemoteEndPoint;
            if (datagram.Truncated) throw SocketErrors.Receive(SocketError.MessageSize);
            return datagram.Length;
        }

        /// <summary>Receives one datagram if one is queued, without blocking and without throwing when none is. Flags come before the
        /// result, as in every form of this library and of the runtime's Socket (buffer, flags, endpoint).</summary>
        /// <returns>False when no datagram was waiting.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket, or a flag other than Peek is given.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error other than "nothing to read".</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TryReceiveFrom_NonAlloc(this Socket socket, Span<byte> buffer, SocketFlags socketFlags, out ReceivedDatagram datagram)
        {
            SocketArguments.CheckReceive(socket, socketFlags, null);
            return Receive(socket, null, 0, buffer, socketFlags, false, null, out datagram);
        }

        /// <summary>Receives one datagram if one is queued, without blocking and without throwing when none is; see the overload with flags.</summary>
        /// <returns>False when no datagram was waiting.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error other than "nothing to read".</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TryReceiveFrom_NonAlloc(this Socket socket, Span<byte> buffer, out ReceivedDatagram datagram)
        {
            return TryReceiveFrom_NonAlloc(socket, buffer, SocketFlags.None, out datagram);
        }

        /// <summary>Sends <paramref name="buffer"/> to <paramref name="remoteEndPoint"/>. On a dual-mode socket an IPv4 key is sent IPv4-mapped.
        /// Flags come before the endpoint, as in every form of this library and of the runtime's Socket.</summary>
        /// <returns>The number of bytes sent.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The key is empty, an IPv6 key on an IPv4 socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int SendTo_NonAlloc(this Socket socket, ReadOnlySpan<byte> buffer, SocketFlags socketFlags, in EndPointKey remoteEndPoint)
        {
            return Send(socket, null, 0, buffer, socketFlags, remoteEndPoint);
        }

        /// <summary>Sends <paramref name="buffer"/> to <paramref name="remoteEndPoint"/> with no flag; see the overload with flags.</summary>
        /// <returns>The number of bytes sent.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The key is empty, or an IPv6 key on an IPv4 socket.</exception>
        /// <exception cref="SocketException">The OS reported an error.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int SendTo_NonAlloc(this Socket socket, ReadOnlySpan<byte> buffer, in EndPointKey remoteEndPoint)
        {
            return Send(socket, null, 0, buffer, SocketFlags.None, remoteEndPoint);
        }

        /// <summary>Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> to <paramref name="remoteEndPoint"/>.</summary>
        /// <returns>The number of bytes sent.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> or <paramref name="buffer"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">The key is empty, an IPv6 key on an IPv4 socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static int SendTo_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, in EndPointKey remoteEndPoint)
        {
            if (DatagramPathSettings.s_active == DatagramPath.Native)
            {
                // A server's send loop: every check and the native send in one call (NativeDatagramIO.TrySendArray).
                int sent = NativeDatagramIO.TrySendArray(socket, buffer, offset, size, socketFlags, remoteEndPoint);
                if (sent != NativeDatagramIO.NotSimple) return sent;
            }
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            return Send(socket, buffer, offset, size, socketFlags, remoteEndPoint);
        }

        // ----- to the path: PathDispatch, the one place that chooses (the two compatible receives and the two array sends above test the path themselves) -----

        private static bool Receive(Socket socket, byte[]? array, int offset, Span<byte> buffer, SocketFlags flags, bool wait, IPEndPointNonAlloc? into, out ReceivedDatagram datagram)
        {
            return PathDispatch.Receive(DatagramPathSettings.Active, socket, array, offset, buffer, flags, wait ? ReceiveWaitKind.Waits : ReceiveWaitKind.Tries, into, out datagram);
        }

        private static int Send(Socket socket, byte[] array, int offset, int size, SocketFlags flags, in EndPointKey remote)
        {
            return Send(socket, array, offset, array.AsSpan(offset, size), flags, remote);
        }

        private static int Send(Socket socket, byte[]? array, int offset, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey remote)
        {
            EndPointKey to = SocketArguments.CheckSend(socket, flags, remote);
            return PathDispatch.Send(DatagramPathSettings.Active, socket, array, offset, buffer, flags, to, true);
        }
    }
}
