using System;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// <see cref="DatagramPath.Managed"/>: the runtime's <c>ReceiveFrom(byte[], …, ref EndPoint)</c> with an
    /// <see cref="IPEndPointNonAlloc"/> that receives into itself. The last resort; it allocates on receive.
    /// </summary>
    internal static class ManagedDatagramIO
    {
        [ThreadStatic] private static IPEndPointNonAlloc? t_v4;
        [ThreadStatic] private static IPEndPointNonAlloc? t_v6;
        [ThreadStatic] private static byte[]? t_copy;

        private static IPEndPointNonAlloc Scratch(AddressFamily family)
        {
            if (family == AddressFamily.InterNetworkV6) return t_v6 ??= new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            return t_v4 ??= new IPEndPointNonAlloc(IPAddress.Any, 0);
        }

        private static byte[] Copy(int length)
        {
            byte[]? copy = t_copy;
            if (copy == null || copy.Length < length) t_copy = copy = new byte[Math.Max(length, 2048)];
            return copy;
        }

        /// <summary>Receives into a span by way of a per-thread array (the runtime's span overloads allocate more on Mono).</summary>
        internal static bool Receive(Socket socket, Span<byte> buffer, SocketFlags flags, bool wait, out ReceivedDatagram datagram)
        {
            byte[] copy = Copy(buffer.Length);
            IPEndPointNonAlloc into = Scratch(socket.AddressFamily);
            if (!Receive(socket, copy, 0, buffer.Length, flags, into, wait, out datagram)) return false;
            copy.AsSpan(0, datagram.Length).CopyTo(buffer);
            return true;
        }

        internal static bool Receive(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, IPEndPointNonAlloc into, bool wait, out ReceivedDatagram datagram)
        {
            if ((!wait || !socket.Blocking) && !socket.Poll(0, SelectMode.SelectRead))
            {
                datagram = default;
                if (!wait) return false;
                throw new SocketException((int)SocketError.WouldBlock);
            }

            EndPoint endPoint = into;
            int received;
            bool truncated = false;
            into.ReceivingIntoSelf = true;
            try
            {
                received = socket.ReceiveFrom(buffer, offset, size, flags, ref endPoint);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
            {
                received = size;
                truncated = true;
            }
            finally
            {
                into.ReceivingIntoSelf = false;
            }

            // A runtime that did not call Create() handed back another endpoint: copy it in.
            if (!ReferenceEquals(endPoint, into) && endPoint is IPEndPoint other) into.SetCurrent(EndPointKey.FromIPEndPoint(other));
            datagram = new ReceivedDatagram(received, truncated, into.CurrentKey);
            return true;
        }

        internal static int Send(Socket socket, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey remote)
        {
            byte[] copy = Copy(buffer.Length);
            buffer.CopyTo(copy);
            return Send(socket, copy, 0, buffer.Length, flags, remote);
        }

        internal static int Send(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, in EndPointKey remote)
        {
            IPEndPointNonAlloc to = Scratch(remote.AddressFamily);
            to.SetCurrent(remote);
            return socket.SendTo(buffer, offset, size, flags, to);
        }
    }
}
