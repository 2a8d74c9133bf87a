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
        // CoreCLR passes SocketFlags.Truncated through as MSG_TRUNC, which gives a cut datagram's length on Linux;
        // Mono refuses the flag (OperationNotSupported).
        private static readonly bool s_truncatedFlag = OsSocketCalls.Current.TruncatedFlagGivesLength && Type.GetType("Mono.Runtime") == null;

        [ThreadStatic] private static IPEndPointNonAlloc? t_v4;
        [ThreadStatic] private static IPEndPointNonAlloc? t_v6;
        [ThreadStatic] private static byte[]? t_copy;

        private static IPEndPointNonAlloc Scratch(AddressFamily family)
        {
            if (family == AddressFamily.InterNetworkV6) return t_v6 ??= new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            return t_v4 ??= new IPEndPointNonAlloc(IPAddress.Any, 0);
        }

        private static readonly EndPointKey AnyV4 = EndPointKey.IPv4(0, 0, 0, 0, 0);
        private static readonly EndPointKey AnyV6 = EndPointKey.IPv6(new byte[16], 0);

        private static int TimeoutMicroseconds(Socket socket)
        {
            int ms = socket.ReceiveTimeout;
            return ms <= 0 ? -1 : ms >= int.MaxValue / 1000 ? int.MaxValue : ms * 1000;
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

            // Mono sizes the sender's buffer from remoteEP.Serialize(): an IPv4 endpoint on a dual-mode
            // socket would get a cut sockaddr_in6 back. Give it the socket's family first, and its own
            // socket address back in temp if the caller put another one there (a no-op otherwise).
            into.SetCurrent(into.AddressFamily != socket.AddressFamily
                ? socket.AddressFamily == AddressFamily.InterNetworkV6 ? AnyV6 : AnyV4
                : into.CurrentKey);

            // Mono cuts a long datagram silently and refuses MSG_TRUNC: ask the size of the queued datagram
            // first (FIONREAD gives it on Linux), waiting for one if the call may block.
            int pending = -1;
            if (!s_truncatedFlag)
            {
                if (wait && socket.Blocking && !socket.Poll(TimeoutMicroseconds(socket), SelectMode.SelectRead))
                    throw new SocketException((int)SocketError.TimedOut);
                pending = socket.Available;
            }

            EndPoint endPoint = into;
            int received;
            bool truncated = pending > size;
            into.ReceivingIntoSelf = true;
            try
            {
                // See SocketAddressDatagramIO: on Linux, Truncated passes through as MSG_TRUNC and the
                // call returns the real length, which tells a cut datagram apart from a full one.
                received = socket.ReceiveFrom(buffer, offset, size, s_truncatedFlag ? flags | SocketFlags.Truncated : flags, ref endPoint);
                if (received > size)
                {
                    received = size;
                    truncated = true;
                }
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
