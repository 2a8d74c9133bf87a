#nullable enable
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
        // Whether to ask the runtime for SocketFlags.Truncated, decided from the build, which no linker can change. The
        // net8.0 build runs only on CoreCLR, which passes the flag through as MSG_TRUNC (a cut datagram's length on Linux).
        // The netstandard2.1 build runs on Mono and Unity's Mono, which refuse the flag (OperationNotSupported), on IL2CPP,
        // whose socket layer rejects any flag it does not map (Truncated among them), and on Unity's CoreCLR player: it
        // never asks, and tells a cut datagram apart by FIONREAD where that gives the next datagram's size (Linux, Android).
#if NET8_0_OR_GREATER
        private static readonly bool s_truncatedFlag = OsSocketCalls.Current.TruncatedFlagGivesLength;
#else
        private static readonly bool s_truncatedFlag = false;
#endif

        /// <summary>True when this build's Managed path adds <see cref="SocketFlags.Truncated"/> to a receive (only the net8.0 build, on Linux).</summary>
        internal static bool AsksTruncated => s_truncatedFlag;

        // Where FIONREAD gives the next datagram's size (Linux), it tells a cut datagram apart on Mono. Elsewhere the
        // runtime reports a cut datagram itself (MessageSize, Windows), or nothing does (macOS: see the README).
        private static readonly bool s_availableIsNextSize = OsSocketCalls.Current.AvailableIsNextDatagramSize;

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
            // An empty buffer would leave the datagram queued on .NET (the runtime does not call the OS): receive
            // into one byte instead, which takes it and tells whether it had any bytes.
            bool empty = size == 0;
            if (empty)
            {
                buffer = RuntimeReceive.OneByte;
                offset = 0;
                size = 1;
            }
            int received;
            bool truncated;
            while (!TryReceiveOnce(socket, buffer, offset, size, flags, into, wait, out received, out truncated))
            {
                // A reset report was consumed: receive again.
            }
            if (received < 0)
            {
                datagram = default;
                return false;
            }
            if (empty)
            {
                truncated |= received > 0;
                received = 0;
            }
            datagram = new ReceivedDatagram(received, truncated, into.CurrentKey);
            return true;
        }

        /// <summary>
        /// One receive through the runtime: false when it met a connection-reset report on an unconnected socket
        /// (consumed; the caller tries again), else true with the length (-1: nothing was queued and
        /// <paramref name="wait"/> is false) and whether the datagram was cut.
        /// </summary>
        private static bool TryReceiveOnce(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, IPEndPointNonAlloc into, bool wait, out int received, out bool truncated)
        {
            truncated = false;
            if ((!wait || !socket.Blocking) && !RuntimeReceive.IsReady(socket))
            {
                received = -1;
                if (!wait) return true;
                throw SocketErrors.Receive(SocketError.WouldBlock);
            }

            // Mono sizes the sender's buffer from remoteEP.Serialize(): an IPv4 endpoint on a dual-mode
            // socket would get a cut sockaddr_in6 back. Give it the socket's family first, and its own
            // socket address back in temp if the caller put another one there (a no-op otherwise).
            into.SetCurrent(into.AddressFamily != socket.AddressFamily
                ? socket.AddressFamily == AddressFamily.InterNetworkV6 ? AnyV6 : AnyV4
                : into.CurrentKey);

            // Mono cuts a long datagram silently and refuses MSG_TRUNC: ask the size of the queued datagram
            // first (FIONREAD gives it on Linux), waiting for one if the call may block. The wait is in slices,
            // so that Dispose ends it (Poll then throws ObjectDisposedException).
            int pending = -1;
            if (!s_truncatedFlag)
            {
                if (wait && socket.Blocking && !RuntimeReceive.WaitUntilReady(socket))
                    throw new SocketException((int)SocketError.TimedOut);
                if (s_availableIsNextSize) pending = socket.Available;
            }
            else if (wait && socket.Blocking && !WaitPolicy.DisposeWakesRuntimeReceive(socket) && !RuntimeReceive.WaitUntilReady(socket))
            {
                // The runtime's receive waits in the kernel, where its Dispose wakes it only on a descriptor it may shut down: on
                // any other (a handle that does not own it, no FD_CLOEXEC) the wait is the library's, in slices a Dispose ends.
                throw new SocketException((int)SocketError.TimedOut);
            }

            EndPoint endPoint = into;
            truncated = pending > size;
            into.ReceivingIntoSelf = true;
            // Where no wait of the library's came first (MSG_TRUNC passes through), the runtime's receive may wait itself:
            // counted as a library call inside a wait (SocketHandles.EnterWait), as the waits above are. On .NET 8+, whose
            // handle refuses new references once its Socket is disposed, only for the tests (SocketHandles.CountKernelWaits).
#if NET8_0_OR_GREATER
            bool counted = SocketHandles.CountKernelWaits && s_truncatedFlag && wait && socket.Blocking;
#else
            bool counted = s_truncatedFlag && wait && socket.Blocking;
#endif
            if (counted) SocketHandles.EnterWait();
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
            catch (SocketException e)
            {
                // Disposed during the call: ObjectDisposedException. A reset report on an unconnected socket is
                // consumed and the caller receives again. A socket shut down for receiving: Shutdown, as on every path
                // (Mono reports it as Interrupted, .NET as "nothing queued" on a non-blocking socket). Else: the error.
                SocketError code = e.SocketErrorCode;
                if ((code == SocketError.WouldBlock || code == SocketError.Interrupted) && ReceiveShutdown.IsShutDown(socket)) throw RuntimeReceive.ShutDown(socket);
                if (!RuntimeReceive.IsResetReportToSkip(socket, e)) throw;
                received = 0;
                return false;
            }
            finally
            {
                into.ReceivingIntoSelf = false;
                if (counted) SocketHandles.ExitWait();
            }

            // 0 bytes on a socket shut down for receiving: what .NET's blocking receive returns then, no datagram.
            if (received == 0 && ReceiveShutdown.IsShutDown(socket)) throw RuntimeReceive.ShutDown(socket);

            // A runtime that did not call Create() handed back another endpoint: copy it in.
            if (!ReferenceEquals(endPoint, into) && endPoint is IPEndPoint other) into.SetCurrent(EndPointKey.FromIPEndPoint(other));
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
