#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    // The sends that report a full send buffer with false instead of a WouldBlock exception.
    public static partial class SocketExtensions
    {
        /// <summary>
        /// Sends <paramref name="buffer"/> to <paramref name="remoteEndPoint"/> if the socket's send buffer has room, without
        /// waiting and without throwing when it has none. On a dual-mode socket an IPv4 key is sent IPv4-mapped.
        /// </summary>
        /// <remarks>
        /// <para>A full send buffer is an ordinary condition for a server that sends faster than the network drains: this
        /// call answers it with false, on a blocking socket as on a non-blocking one (it never waits), on every path and OS.
        /// Any other failure throws as <see cref="SendTo_NonAlloc(Socket, ReadOnlySpan{byte}, SocketFlags, in EndPointKey)"/> does.</para>
        /// <para>Allocation free on the Native and SocketAddress paths, whether it sends or not.</para>
        /// </remarks>
        /// <returns>True when the datagram was handed to the OS whole; false when the send buffer had no room (nothing was sent).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The key is empty, an IPv6 key on an IPv4 socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error other than a full send buffer (for example MessageSize).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TrySendTo_NonAlloc(this Socket socket, ReadOnlySpan<byte> buffer, SocketFlags socketFlags, in EndPointKey remoteEndPoint)
        {
            return TrySend(socket, null, 0, buffer, socketFlags, remoteEndPoint);
        }

        /// <summary>
        /// Sends <paramref name="buffer"/> to <paramref name="remoteEndPoint"/> with no flag if the send buffer has room, without
        /// waiting and without throwing when it has none; see the overload with flags.
        /// </summary>
        /// <returns>True when the datagram was handed to the OS whole; false when the send buffer had no room (nothing was sent).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The key is empty, or an IPv6 key on an IPv4 socket.</exception>
        /// <exception cref="SocketException">The OS reported an error other than a full send buffer (for example MessageSize).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TrySendTo_NonAlloc(this Socket socket, ReadOnlySpan<byte> buffer, in EndPointKey remoteEndPoint)
        {
            return TrySend(socket, null, 0, buffer, SocketFlags.None, remoteEndPoint);
        }

        /// <summary>
        /// Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> to <paramref name="remoteEndPoint"/>
        /// if the send buffer has room, without waiting and without throwing when it has none; see the span overload.
        /// </summary>
        /// <returns>True when the datagram was handed to the OS whole; false when the send buffer had no room (nothing was sent).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> or <paramref name="buffer"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">The key is empty, an IPv6 key on an IPv4 socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error other than a full send buffer (for example MessageSize).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TrySendTo_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, in EndPointKey remoteEndPoint)
        {
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            return TrySend(socket, buffer, offset, buffer.AsSpan(offset, size), socketFlags, remoteEndPoint);
        }

        /// <summary>
        /// Sends <paramref name="size"/> bytes of <paramref name="buffer"/> from <paramref name="offset"/> to <paramref name="remoteEndPoint"/>'s
        /// current endpoint if the send buffer has room, without waiting and without throwing when it has none; see the span overload.
        /// </summary>
        /// <returns>True when the datagram was handed to the OS whole; false when the send buffer had no room (nothing was sent).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/>, <paramref name="buffer"/> or <paramref name="remoteEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="offset"/> or <paramref name="size"/> is outside <paramref name="buffer"/>.</exception>
        /// <exception cref="ArgumentException">An IPv6 destination on an IPv4 socket, a socket that is not an IPv4/IPv6 datagram socket, or a flag other than DontRoute.</exception>
        /// <exception cref="SocketException">The OS reported an error other than a full send buffer (for example MessageSize).</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the call would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>).</exception>
        public static bool TrySendTo_NonAlloc(this Socket socket, byte[] buffer, int offset, int size, SocketFlags socketFlags, IPEndPointNonAlloc remoteEndPoint)
        {
            if (remoteEndPoint == null) throw SocketArguments.Refused(socket, new ArgumentNullException(nameof(remoteEndPoint)));
            SocketArguments.CheckBuffer(socket, buffer, offset, size);
            return TrySend(socket, buffer, offset, buffer.AsSpan(offset, size), socketFlags, remoteEndPoint.CurrentKey);
        }

        private static bool TrySend(Socket socket, byte[]? array, int offset, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey remote)
        {
            EndPointKey to = SocketArguments.CheckSend(socket, flags, remote);
            return PathDispatch.TrySend(DatagramPathSettings.Active, socket, array, offset, buffer, flags, to);
        }
    }
}
