#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Linux (glibc or musl): <c>recvfrom</c> with MSG_DONTWAIT | MSG_TRUNC (one call per datagram, and the real
    /// length of a cut one), <c>sendto</c> with MSG_DONTWAIT | MSG_NOSIGNAL, <c>poll</c>, and <c>recvmmsg</c>/<c>sendmmsg</c>
    /// for batches. Constants and error numbers are those of Linux on x86-64 and arm64.
    /// </summary>
    internal sealed unsafe partial class LinuxSocketCalls : PosixSocketCalls
    {
        private const int MsgPeek = 0x2;
        private const int MsgTrunc = 0x20;     // as an input flag: return the datagram's real length; in msg_flags: it was cut
        private const int MsgDontWait = 0x40;
        private const int MsgNoSignal = 0x4000; // a send after Shutdown(Send) fails with EPIPE and raises no SIGPIPE
        private const int SolSocket = 1;
        private const int SoReuseAddr = 2;
        private const int SoSndBuf = 7;
        private const int SoRcvBuf = 8;
        private const int SoRcvTimeo = 20;
        private const int SoReusePort = 15;     // Linux 3.9+
        private const int SoMemInfo = 55;       // Linux 4.6+: u32 sk_meminfo[SK_MEMINFO_VARS]
        private const int MemInfoRmemAlloc = 0; // bytes queued for receiving
        private const int MemInfoDrops = 8;     // SK_MEMINFO_DROPS: datagrams dropped (Linux 4.15+)
        private const int IPv6V6Only = 26;
        private const int CpuSetWords = 16;     // a cpu_set_t of glibc and musl: 1024 bits

        private readonly bool _hasMultiMessage;

        internal LinuxSocketCalls()
            : base(MsgDontWait | MsgNoSignal, SolSocket, SoReuseAddr, SoSndBuf, SoRcvBuf, IPv6V6Only)
        {
            _hasMultiMessage = ProbeMultiMessage();
        }

        internal override string Name => "Linux";

        internal override SockaddrFormat Format => SockaddrFormat.Linux;

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            uint length = (uint)*addressLength;
            long received = Libc.RecvFrom((int)socket, payload, (nuint)size, (peek ? MsgPeek : 0) | MsgDontWait | MsgTrunc, address, &length);
            if (received < 0)
            {
                error = LastError();
                return -1;
            }
            *addressLength = (int)length;
            error = SocketError.Success;
            return received;
        }

        internal override bool HasWaitingReceive => true;

        internal override long ReceiveWaiting(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            // A blocked recvfrom ends with 0 bytes and a sender length of 0 when the socket is shut down for receiving: Linux
            // sets the shutdown and wakes every waiter even on an unconnected datagram socket (where shutdown says ENOTCONN).
            uint length = (uint)*addressLength;
            long received = Libc.RecvFrom((int)socket, payload, (nuint)size, (peek ? MsgPeek : 0) | MsgTrunc, address, &length);
            if (received < 0)
            {
                error = LastError();
                return -1;
            }
            *addressLength = (int)length;
            error = SocketError.Success;
            return received;
        }

        private const int ShutRd = 0;

        internal override void WakeWaitingReceives(IntPtr socket)
        {
            // ENOTCONN on an unconnected datagram socket, and yet the shutdown is set and the waiters woken (see ReceiveWaiting).
            Libc.Shutdown((int)socket, ShutRd);
        }

        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => ReceiveTimeout(socket, SoRcvTimeo, false);

        private const short PollRdHup = 0x2000; // Linux 2.6.17+: the peer, or a shutdown, ended the receiving side

        internal override bool IsReceiveShutDown(IntPtr socket)
        {
            // A datagram socket shut down for receiving polls readable and hung up for reading (POLLIN | POLLRDHUP).
            Libc.PollFd poll;
            poll.Fd = (int)socket;
            poll.Events = PollRdHup;
            poll.Revents = 0;
            return Libc.Poll(&poll, 1, 0) > 0 && (poll.Revents & PollRdHup) != 0;
        }

        internal override ReadinessPoller CreatePoller() => new LinuxPoller(this);

        internal override bool TruncatedFlagGivesLength => true;

        internal override bool AvailableIsNextDatagramSize => true;

        internal override void QueueCounters(IntPtr socket, out long dropped, out int queuedBytes)
        {
            uint* memInfo = stackalloc uint[16];
            uint length = 16 * sizeof(uint);
            dropped = -1;
            queuedBytes = -1;
            if (Libc.GetSockOpt((int)socket, SolSocket, SoMemInfo, memInfo, &length) != 0) return;
            if (length > MemInfoRmemAlloc * sizeof(uint)) queuedBytes = (int)memInfo[MemInfoRmemAlloc];
            if (length > MemInfoDrops * sizeof(uint)) dropped = memInfo[MemInfoDrops];
        }

        // ----- SO_REUSEPORT groups and thread affinity -----

        internal override string? BalancedGroupUnsupported => null;

        internal override SocketError JoinBalancedGroup(IntPtr socket)
        {
            int on = 1;
            return Libc.SetSockOpt((int)socket, SolSocket, SoReusePort, &on, sizeof(int)) == 0 ? SocketError.Success : LastError();
        }

        internal override string? ThreadPinningUnsupported => null;

        internal override SocketError PinCurrentThread(int cpu)
        {
            // pid 0 is the calling thread: Linux keeps an affinity mask per thread.
            ulong* mask = stackalloc ulong[CpuSetWords];
            for (int i = 0; i < CpuSetWords; i++) mask[i] = 0;
            mask[cpu >> 6] = 1UL << (cpu & 63);
            return Libc.SchedSetAffinity(0, (nuint)(CpuSetWords * sizeof(ulong)), mask) == 0 ? SocketError.Success : LastError();
        }

        // ----- recvmmsg / sendmmsg -----

        internal override bool HasMultiMessage => _hasMultiMessage;

        /// <summary>True when the C library has both calls (glibc 2.14+, musl).</summary>
        private bool ProbeMultiMessage()
        {
            if (Probe() != null) return false;
            try
            {
                // Descriptor -1: each call fails at once with EBADF; only a missing symbol throws.
                Libc.RecvMMsg(-1, null, 0, 0, null);
                Libc.SendMMsg(-1, null, 0, 0);
                return true;
            }
            catch (Exception)
            {
                // A C library without them (EntryPointNotFoundException), or IL2CPP's stub for a missing symbol (NotSupportedException).
                return false;
            }
        }

        internal override int ReceiveMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            // The kernel writes each datagram's length (msg_len, cut to the slot), sender (msg_name, msg_namelen)
            // and MSG_TRUNC in msg_flags when it was longer than the slot. An error met after the first
            // datagram is kept by the kernel for the next call.
            int received = Libc.RecvMMsg((int)socket, messages, (uint)count, MsgDontWait, null);
            if (received > 0)
            {
                error = SocketError.Success;
                return received;
            }
            error = received == 0 ? SocketError.WouldBlock : LastError();
            return -1;
        }

        private const int MsgWaitForOne = 0x10000; // Linux 2.6.34+: after the first datagram, recvmmsg takes only what is queued

        internal override int ReceiveManyWaiting(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            int received = Libc.RecvMMsg((int)socket, messages, (uint)count, MsgWaitForOne, null);
            if (received > 0)
            {
                error = SocketError.Success;
                return received;
            }
            error = received == 0 ? SocketError.WouldBlock : LastError();
            return -1;
        }

        internal override int SendMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            // When a datagram fails after others went, the kernel stops there without an error; the next
            // call, which starts at that datagram, reports it.
            int sent = Libc.SendMMsg((int)socket, messages, (uint)count, MsgDontWait | MsgNoSignal);
            if (sent > 0)
            {
                error = SocketError.Success;
                return sent;
            }
            error = sent == 0 ? SocketError.WouldBlock : LastError();
            return -1;
        }

        /// <summary>
        /// Linux's errno (x86-64, arm64) as a <see cref="SocketError"/>: every errno that a datagram call the library makes
        /// (recvfrom, recvmsg, recvmmsg, sendto, sendmmsg, poll, getsockopt, setsockopt, epoll_*, sched_setaffinity) is
        /// documented to return or meets from an ICMP report, and every errno the runtime's own table knows. Mapped as the
        /// runtime maps it (its SocketErrorPal, checked by ErrnoMapTests against the runtime itself), with two deliberate
        /// differences: EBADF is OperationAborted (the descriptor was closed under the call: it was disposed) and ESHUTDOWN
        /// is Shutdown (as Windows' WSAESHUTDOWN; the runtime says Disconnecting). Where the runtime has no answer (it says
        /// SocketError.SocketError) the nearest meaningful one is given. An errno outside this table (none is documented
        /// for these calls) stays SocketError.SocketError, the runtime's answer.
        /// </summary>
        protected override SocketError FromErrno(int errno)
        {
            switch (errno)
            {
                case 0: return SocketError.Success;
                case 1: return SocketError.AccessDenied;               // EPERM: a firewall rule refused the datagram (runtime: none)
                case 2: return SocketError.AddressNotAvailable;        // ENOENT
                case 3: return SocketError.InvalidArgument;            // ESRCH: no such thread (sched_setaffinity; runtime: none)
                case 4: return SocketError.Interrupted;                // EINTR
                case 5: return SocketError.NetworkDown;                // EIO: the device failed the datagram (runtime: none)
                case 6: return SocketError.HostNotFound;               // ENXIO
                case 9: return SocketError.OperationAborted;           // EBADF: the descriptor was closed under us (runtime: InvalidArgument)
                case 11: return SocketError.WouldBlock;                // EAGAIN == EWOULDBLOCK
                case 12: return SocketError.NoBufferSpaceAvailable;    // ENOMEM (runtime: none)
                case 13: return SocketError.AccessDenied;              // EACCES: a broadcast without SO_BROADCAST, ICMP "prohibited"
                case 14: return SocketError.Fault;                     // EFAULT
                case 17: return SocketError.InvalidArgument;           // EEXIST: epoll_ctl added a descriptor twice (runtime: none)
                case 19: return SocketError.NetworkDown;               // ENODEV: the interface is gone (runtime: none)
                case 22: return SocketError.InvalidArgument;           // EINVAL
                case 23: return SocketError.TooManyOpenSockets;        // ENFILE: the system's table of open files is full
                case 24: return SocketError.TooManyOpenSockets;        // EMFILE: the process's descriptors are all taken
                case 28: return SocketError.TooManyOpenSockets;        // ENOSPC: epoll's watch limit (runtime: none)
                case 32: return SocketError.Shutdown;                  // EPIPE: a send after Shutdown(Send)
                case 61: return SocketError.NoData;                    // ENODATA
                case 64: return SocketError.HostUnreachable;           // ENONET: ICMP "host isolated" (runtime: none)
                case 71: return SocketError.HostUnreachable;           // EPROTO: ICMP "parameter problem" (runtime: none)
                case 88: return SocketError.NotSocket;                 // ENOTSOCK
                case 89: return SocketError.DestinationAddressRequired; // EDESTADDRREQ
                case 90: return SocketError.MessageSize;               // EMSGSIZE
                case 91: return SocketError.ProtocolType;              // EPROTOTYPE
                case 92: return SocketError.ProtocolOption;            // ENOPROTOOPT
                case 93: return SocketError.ProtocolNotSupported;      // EPROTONOSUPPORT
                case 94: return SocketError.SocketNotSupported;        // ESOCKTNOSUPPORT
                case 95: return SocketError.OperationNotSupported;     // EOPNOTSUPP == ENOTSUP
                case 96: return SocketError.ProtocolFamilyNotSupported; // EPFNOSUPPORT
                case 97: return SocketError.AddressFamilyNotSupported; // EAFNOSUPPORT
                case 98: return SocketError.AddressAlreadyInUse;       // EADDRINUSE
                case 99: return SocketError.AddressNotAvailable;       // EADDRNOTAVAIL
                case 100: return SocketError.NetworkDown;              // ENETDOWN
                case 101: return SocketError.NetworkUnreachable;       // ENETUNREACH
                case 102: return SocketError.NetworkReset;             // ENETRESET
                case 103: return SocketError.ConnectionAborted;        // ECONNABORTED
                case 104: return SocketError.ConnectionReset;          // ECONNRESET
                case 105: return SocketError.NoBufferSpaceAvailable;   // ENOBUFS
                case 106: return SocketError.IsConnected;              // EISCONN
                case 107: return SocketError.NotConnected;             // ENOTCONN
                case 108: return SocketError.Shutdown;                 // ESHUTDOWN (runtime: Disconnecting)
                case 110: return SocketError.TimedOut;                 // ETIMEDOUT
                case 111: return SocketError.ConnectionRefused;        // ECONNREFUSED
                case 112: return SocketError.HostDown;                 // EHOSTDOWN
                case 113: return SocketError.HostUnreachable;          // EHOSTUNREACH
                case 114: return SocketError.AlreadyInProgress;        // EALREADY
                case 115: return SocketError.InProgress;               // EINPROGRESS
                case 125: return SocketError.OperationAborted;         // ECANCELED
                default: return SocketError.SocketError;
            }
        }
    }
}
