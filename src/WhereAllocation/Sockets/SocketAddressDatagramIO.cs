#if NET8_0_OR_GREATER
using System;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// <see cref="DatagramPath.SocketAddress"/>: the runtime's own allocation-free overloads of .NET 8,
    /// with one cached <see cref="SocketAddress"/> per family and thread.
    /// </summary>
    internal static class SocketAddressDatagramIO
    {
        private static readonly bool s_truncatedFlag = OsSocketCalls.Current.TruncatedFlagGivesLength;

        [ThreadStatic] private static SocketAddress? t_v4;
        [ThreadStatic] private static SocketAddress? t_v6;

        private static SocketAddress Scratch(AddressFamily family)
        {
            if (family == AddressFamily.InterNetworkV6) return t_v6 ??= new SocketAddress(AddressFamily.InterNetworkV6);
            return t_v4 ??= new SocketAddress(AddressFamily.InterNetwork);
        }

        internal static bool Receive(Socket socket, Span<byte> buffer, SocketFlags flags, bool wait, out ReceivedDatagram datagram)
        {
            // ReceiveFrom throws (and so allocates) on an empty non-blocking socket: ask Poll first.
            if ((!wait || !socket.Blocking) && !socket.Poll(0, SelectMode.SelectRead))
            {
                datagram = default;
                if (!wait) return false;
                throw new SocketException((int)SocketError.WouldBlock);
            }

            SocketAddress address = Scratch(socket.AddressFamily);
            address.Size = SocketAddress.GetMaximumAddressSize(socket.AddressFamily);
            int received;
            bool truncated = false;
            try
            {
                // On Linux the runtime passes SocketFlags.Truncated through as MSG_TRUNC, and the call then
                // returns the datagram's real length: the only allocation-free way to see truncation here.
                // (Windows reports MessageSize instead, caught below; macOS cuts silently on this path.)
                received = socket.ReceiveFrom(buffer, s_truncatedFlag ? flags | SocketFlags.Truncated : flags, address);
                if (received > buffer.Length)
                {
                    received = buffer.Length;
                    truncated = true;
                }
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
            {
                // The runtime reports a cut datagram as an error after filling the buffer.
                received = buffer.Length;
                truncated = true;
            }
            datagram = new ReceivedDatagram(received, truncated, EndPointKey.FromSocketAddress(address));
            return true;
        }

        internal static int Send(Socket socket, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey remote)
        {
            SocketAddress address = Scratch(remote.AddressFamily);
            address.Size = remote.AddressFamily == AddressFamily.InterNetwork ? 16 : 28;
            remote.CopyTo(address);
            return socket.SendTo(buffer, flags, address);
        }
    }
}
#endif
