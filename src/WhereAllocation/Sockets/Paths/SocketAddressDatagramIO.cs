#nullable enable
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
            if ((!wait || !socket.Blocking) && !RuntimeReceive.IsReady(socket))
            {
                datagram = default;
                if (!wait) return false;
                throw SocketErrors.Receive(SocketError.WouldBlock);
            }

            // The runtime's receive waits in the kernel, where its Dispose wakes it only on a descriptor it may shut down: on any
            // other (a handle that does not own it, no FD_CLOEXEC) the wait is the library's, in slices that a Dispose ends.
            if (wait && socket.Blocking && !WaitPolicy.DisposeWakesRuntimeReceive(socket) && !RuntimeReceive.WaitUntilReady(socket))
                throw new SocketException((int)SocketError.TimedOut);

            // An empty buffer would leave the datagram queued (the runtime does not call the OS): receive into
            // one byte instead, which takes it and tells whether it had any bytes.
            bool empty = buffer.Length == 0;
            Span<byte> into = empty ? RuntimeReceive.OneByte : buffer;
            SocketAddress address = Scratch(socket.AddressFamily);
            int received;
            bool truncated = false;
            // The runtime's receive waits itself on a blocking socket. This build runs on .NET 8+, whose handle refuses new
            // references once its Socket is disposed, so the wait is counted (SocketHandles.EnterWait) only for the tests.
            bool counted = SocketHandles.CountKernelWaits && wait && socket.Blocking;
            if (counted) SocketHandles.EnterWait();
            try
            {
                while (true)
                {
                    address.Size = SocketAddress.GetMaximumAddressSize(socket.AddressFamily);
                    try
                    {
                        // On Linux the runtime passes SocketFlags.Truncated through as MSG_TRUNC, and the call then
                        // returns the datagram's real length: the only allocation-free way to see truncation here.
                        // (Windows reports MessageSize instead, caught below; macOS cuts silently on this path.)
                        received = socket.ReceiveFrom(into, s_truncatedFlag ? flags | SocketFlags.Truncated : flags, address);
                        if (received > into.Length)
                        {
                            received = into.Length;
                            truncated = true;
                        }
                        break;
                    }
                    catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                    {
                        // The runtime reports a cut datagram as an error after filling the buffer.
                        received = into.Length;
                        truncated = true;
                        break;
                    }
                    catch (SocketException e)
                    {
                        // Disposed during the call: ObjectDisposedException. A reset report on an unconnected socket is
                        // consumed, and the receive goes on (the queue may hold datagrams behind it). "Nothing queued" though
                        // Poll said readable: a socket shut down for receiving. Else: the error.
                        if (e.SocketErrorCode == SocketError.WouldBlock && ReceiveShutdown.IsShutDown(socket)) throw RuntimeReceive.ShutDown(socket);
                        if (!RuntimeReceive.IsResetReportToSkip(socket, e)) throw;
                        if ((!wait || !socket.Blocking) && !RuntimeReceive.IsReady(socket))
                        {
                            datagram = default;
                            if (!wait) return false;
                            throw SocketErrors.Receive(SocketError.WouldBlock);
                        }
                    }
                }
            }
            finally
            {
                if (counted) SocketHandles.ExitWait();
            }
            // No sender: not a datagram (an empty one always has its sender) but a socket shut down for receiving.
            if (received == 0 && address.Size == 0) throw RuntimeReceive.ShutDown(socket);
            if (empty)
            {
                truncated |= received > 0;
                received = 0;
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
