#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Windows (Winsock 2): <c>WSAPoll</c> then an overlapped <c>WSARecvFrom</c> that never waits (Winsock has no per-call
    /// non-blocking flag: see <see cref="ReceiveAfterReadiness"/>), <c>sendto</c>, and <c>WSAPoll</c> for waits. A cut datagram is the
    /// error WSAEMSGSIZE after the buffer was filled. Run by this project's CI under Wine (docs/testing-under-wine.md: where
    /// Wine differs from Windows).
    /// </summary>
    internal sealed unsafe class WindowsSocketCalls : OsSocketCalls
    {
        private const int MsgPeek = 0x2;
        private const int MsgDontRoute = 0x4;
        private const int SolSocket = 0xffff;
        private const int SoReuseAddr = 0x4;
        private const int SoSndBuf = 0x1001;
        private const int SoRcvBuf = 0x1002;
        private const int SoRcvTimeo = 0x1006;   // a DWORD of milliseconds on Windows
        private const uint SioUdpConnReset = 0x9800000C; // _WSAIOW(IOC_VENDOR, 12)
        private const uint SioUdpNetReset = 0x9800000F;  // _WSAIOW(IOC_VENDOR, 15)
        private const int IpProtoIPv6 = 41;
        private const int IPv6V6Only = 27;
        private const short PollRdNorm = 0x0100;
        private const short PollWrNorm = 0x0010;
        private const short PollHup = 0x0002;
        private const short PollNval = 0x0004;

        internal override string Name => "Windows";

        internal override SockaddrFormat Format => SockaddrFormat.Windows;

        internal override string? Probe()
        {
            try
            {
                // A poll of nothing: answers at once (with an error or 0); only a missing library or symbol throws.
                Ws2_32.WsaPoll(null, 0, 0);
                return null;
            }
            catch (Exception e)
            {
                // DllNotFoundException, EntryPointNotFoundException; under IL2CPP also NotSupportedException from a stub.
                return ProbeFailed("ws2_32", e);
            }
        }

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            int ready = PollOne(socket, PollRdNorm, 0, out _, out error);
            if (ready == 0)
            {
                error = SocketError.WouldBlock;
                return -1;
            }
            if (ready < 0) return -1;
            // Readable, or an error or hang-up pending: the receive reports which.
            return ReceiveAfterReadiness(socket, payload, size, peek, address, addressLength, out error);
        }

        /// <summary>
        /// The receive after WSAPoll said readable (this class's own check in <see cref="Receive"/>, or the caller's wait: a
        /// slice of <see cref="Poll"/>, the awaits' poller), which must not wait even when the datagram WSAPoll saw is gone by now
        /// (another reader of the socket, such as the application's own receive on another thread, took it in between).
        /// A plain recvfrom on a blocking socket (the usual kind) would then wait for the next datagram: the I/O thread of
        /// the awaits, and every await of the process with it, or a TryReceiveFrom_NonAlloc that promises never to wait.
        /// Winsock has no MSG_DONTWAIT, and switching the socket to non-blocking (FIONBIO) would change what the
        /// application's own calls on it do (the runtime keeps its Blocking flag apart and would not know). So the receive
        /// is overlapped: a datagram already queued completes it at once, as recvfrom would; otherwise it is cancelled
        /// (CancelIoEx) and its end awaited (the cancellation, or a datagram that arrived meanwhile, which is then taken).
        /// Its event has the low bit set, so that no completion goes to an I/O completion port the runtime may have bound the
        /// socket to. Windows creates every socket overlapped-capable (socket() and the runtimes' WSASocket alike).
        /// </summary>
        internal override long ReceiveAfterReadiness(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            int length = *addressLength;
            uint received = 0;
            uint flags = peek ? (uint)MsgPeek : 0;
            Ws2_32.WsaBuf buffer;
            buffer.Length = (uint)size;
            buffer.Buffer = payload;
            Ws2_32.Overlapped overlapped = default;
            overlapped.Event = ThreadEvent.Current;
            if (overlapped.Event == IntPtr.Zero)
            {
                // Out of kernel objects: no receive that could be cancelled, so none at all (a later call tries again).
                error = SocketError.NoBufferSpaceAvailable;
                return -1;
            }
            if (Ws2_32.WsaRecvFrom(socket, &buffer, 1, &received, &flags, address, &length, &overlapped, IntPtr.Zero) == 0)
            {
                error = SocketError.Success;
            }
            else
            {
                error = LastError();
                if (error == SocketError.IOPending)
                {
                    // Nothing queued after all. The buffers and the OVERLAPPED live on this stack: wait for the end.
                    Kernel32.CancelIoEx(socket, &overlapped);
                    uint ignored = 0;
                    error = Ws2_32.WsaGetOverlappedResult(socket, &overlapped, &received, 1, &ignored) != 0 ? SocketError.Success : LastError();
                    if (error == SocketError.OperationAborted)
                    {
                        error = SocketError.WouldBlock;
                        return -1;
                    }
                }
            }
            if (error == SocketError.Success)
            {
                *addressLength = length;
                return received;
            }
            if (error != SocketError.MessageSize) return -1;
            // The buffer holds the datagram's first bytes and the sender is known; its length is not.
            *addressLength = length;
            error = SocketError.Success;
            return (long)size + 1;
        }

        /// <summary>
        /// One manual-reset event per thread for <see cref="ReceiveAfterReadiness"/>, made at the thread's first receive and closed when
        /// the thread is gone (the finalizer of the object that holds it). Given with its low bit set: a completion then
        /// signals it and is never queued to a completion port.
        /// </summary>
        private sealed class ThreadEvent
        {
            [ThreadStatic]
            private static ThreadEvent? t_current;

            private readonly IntPtr _handle;

            private ThreadEvent(IntPtr handle)
            {
                _handle = handle;
            }

            /// <summary>The thread's event with its low bit set; zero when the OS could make none.</summary>
            internal static IntPtr Current
            {
                get
                {
                    ThreadEvent? current = t_current ?? Make();
                    return current == null ? IntPtr.Zero : (IntPtr)((long)current._handle | 1);
                }
            }

            private static ThreadEvent? Make()
            {
                IntPtr handle = Kernel32.CreateEvent(IntPtr.Zero, 1, 0, IntPtr.Zero);
                if (handle == IntPtr.Zero) return null;
                return t_current = new ThreadEvent(handle);
            }

            ~ThreadEvent()
            {
                Kernel32.CloseHandle(_handle);
            }
        }

        internal override bool IsConnected(IntPtr socket)
        {
            byte* name = stackalloc byte[SockaddrLayout.StorageSize];
            int length = SockaddrLayout.StorageSize;
            return Ws2_32.GetPeerName(socket, name, &length) == 0;
        }

        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error)
        {
            int sent = Ws2_32.SendTo(socket, payload, size, dontRoute ? MsgDontRoute : 0, address, addressLength);
            error = sent < 0 ? LastError() : SocketError.Success;
            return sent;
        }

        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
        {
            int ready = PollOne(socket, forWrite ? PollWrNorm : PollRdNorm, timeoutMilliseconds, out short revents, out error);
            hungUp = (revents & (PollHup | PollNval)) != 0;
            return ready;
        }

        /// <summary>WSAPoll on one socket for <paramref name="events"/>: 1 when it reported something, 0 when the time passed, -1 with <paramref name="error"/>.</summary>
        private int PollOne(IntPtr socket, short events, int timeoutMilliseconds, out short revents, out SocketError error)
        {
            Ws2_32.WsaPollFd poll;
            poll.Fd = socket;
            poll.Events = events;
            poll.Revents = 0;
            int ready = PollSet(&poll, 1, timeoutMilliseconds, out error);
            revents = poll.Revents;
            return ready;
        }

        /// <summary>
        /// The Windows branch's one wait: WSAPoll over <paramref name="count"/> entries of <paramref name="set"/>, for one
        /// socket (the receive's check, a blocking wait) or many (<see cref="WindowsPoller"/>). Returns how many entries
        /// reported something, 0 when the time passed, or -1 with <paramref name="error"/> when the call failed.
        /// </summary>
        internal int PollSet(Ws2_32.WsaPollFd* set, int count, int timeoutMilliseconds, out SocketError error)
        {
            int ready = Ws2_32.WsaPoll(set, (uint)count, timeoutMilliseconds);
            if (ready < 0)
            {
                error = LastError();
                return -1;
            }
            error = SocketError.Success;
            return ready;
        }

        internal override int ReceiveTimeoutMilliseconds(IntPtr socket)
        {
            int ms = 0;
            int length = sizeof(int);
            if (Ws2_32.GetSockOpt(socket, SolSocket, SoRcvTimeo, (byte*)&ms, &length) != 0) return 0;
            return ms < 0 ? 0 : ms;
        }

        internal override bool IsDualMode(IntPtr socket)
        {
            int value = 1;
            int length = sizeof(int);
            return Ws2_32.GetSockOpt(socket, IpProtoIPv6, IPv6V6Only, (byte*)&value, &length) == 0 && value == 0;
        }

        internal override SocketError DisableAddressSharing(IntPtr socket)
        {
            int off = 0;
            return Ws2_32.SetSockOpt(socket, SolSocket, SoReuseAddr, (byte*)&off, sizeof(int)) == 0 ? SocketError.Success : LastError();
        }

        // Winsock's SO_REUSEADDR lets sockets share a port, but each unicast datagram goes to one of them, not spread by sender.
        internal override string? BalancedGroupUnsupported =>
            "Windows has no socket option that spreads one port's datagrams over several sockets by sender (SO_REUSEADDR shares a port, but each datagram goes to one socket), so shards would not share the load.";

        internal override string? ThreadPinningUnsupported =>
            "Windows: the library pins threads only for shards, which Windows cannot balance, so it has no pinning call there.";

        internal override ReadinessPoller CreatePoller() => new WindowsPoller(this);

        // sendto follows the socket's blocking mode: Winsock has no per-call flag.
        internal override bool SendNeverWaits => false;

        internal override bool HasResetReports => true;

        internal override SocketError DisableResetReports(IntPtr socket)
        {
            int off = 0;
            uint returned = 0;
            if (Ws2_32.WsaIoctl(socket, SioUdpConnReset, &off, sizeof(int), null, 0, &returned, null, null) != 0) return LastError();
            // SIO_UDP_NETRESET (TTL expiry reports) exists since Windows 7; an OS that refuses it has no such reports.
            Ws2_32.WsaIoctl(socket, SioUdpNetReset, &off, sizeof(int), null, 0, &returned, null, null);
            return SocketError.Success;
        }

        internal override int BufferSize(IntPtr socket, bool receive)
        {
            int value = -1;
            int length = sizeof(int);
            return Ws2_32.GetSockOpt(socket, SolSocket, receive ? SoRcvBuf : SoSndBuf, (byte*)&value, &length) == 0 ? value : -1;
        }

        /// <summary>WSAGetLastError, which already is a <see cref="SocketError"/> value.</summary>
        private static SocketError LastError() => (SocketError)Marshal.GetLastWin32Error();
    }
}
