#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>The C library calls and structures only Linux has: the many-messages calls and their headers, and thread affinity.</summary>
    internal static unsafe partial class Libc
    {
        /// <summary>Always the dynamic name, even where <see cref="Lib"/> is "__Internal": see Libc.cs.</summary>
        internal const string LinuxLib = "libc";

        /// <summary>
        /// struct msghdr on Linux: {void* name; socklen_t namelen; struct iovec* iov; size_t iovlen;
        /// void* control; size_t controllen; int flags;}. 56 bytes on x86-64 and arm64 (offsets 0, 8,
        /// 16, 24, 32, 40, 48), as a C program with offsetof reported; a test checks these numbers.
        /// </summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct LinuxMsgHdr
        {
            internal void* Name;
            internal uint NameLength;
            internal IoVec* Iov;
            internal nuint IovLength;
            internal void* Control;
            internal nuint ControlLength;
            internal int Flags;
        }

        /// <summary>struct mmsghdr on Linux: {struct msghdr msg_hdr; unsigned int msg_len;}, 64 bytes on x86-64 and arm64 (msg_len at 56).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct LinuxMMsgHdr
        {
            internal LinuxMsgHdr Header;
            internal uint Length;
        }

        /// <summary>Linux 2.6.33+: receives up to <paramref name="count"/> datagrams in one call. No timeout is ever passed (null).</summary>
        [DllImport(LinuxLib, EntryPoint = "recvmmsg", SetLastError = true)]
        internal static extern int RecvMMsg(int fd, LinuxMMsgHdr* messages, uint count, int flags, void* timeout);

        /// <summary>Linux 2.6.27+: a new epoll set. <paramref name="flags"/>: EPOLL_CLOEXEC.</summary>
        [DllImport(LinuxLib, EntryPoint = "epoll_create1", SetLastError = true)]
        internal static extern int EpollCreate1(int flags);

        /// <summary>
        /// Adds, changes or removes a descriptor in an epoll set. <paramref name="ev"/> points at a struct epoll_event:
        /// {uint32 events; uint64 data}, packed (12 bytes, data at 4) on x86 and x86-64, naturally aligned (16 bytes,
        /// data at 8) elsewhere; the poller lays it out for the process's architecture.
        /// </summary>
        [DllImport(LinuxLib, EntryPoint = "epoll_ctl", SetLastError = true)]
        internal static extern int EpollCtl(int epfd, int op, int fd, byte* ev);

        /// <summary>Waits up to <paramref name="timeoutMilliseconds"/> for events of the set; <paramref name="events"/> holds room for <paramref name="maxEvents"/> epoll_events.</summary>
        [DllImport(LinuxLib, EntryPoint = "epoll_wait", SetLastError = true)]
        internal static extern int EpollWait(int epfd, byte* events, int maxEvents, int timeoutMilliseconds);

        /// <summary>Linux 3.0+: sends up to <paramref name="count"/> datagrams in one call, each to its own msg_name.</summary>
        [DllImport(LinuxLib, EntryPoint = "sendmmsg", SetLastError = true)]
        internal static extern int SendMMsg(int fd, LinuxMMsgHdr* messages, uint count, int flags);

        /// <summary>
        /// One datagram into the scatter list of <paramref name="message"/> (Linux's msghdr), with its control messages
        /// (a coalesced datagram's segment size). With MSG_PEEK | MSG_TRUNC it returns the queued datagram's real length
        /// and leaves it queued.
        /// </summary>
        [DllImport(LinuxLib, EntryPoint = "recvmsg", SetLastError = true)]
        internal static extern nint RecvMsg(int fd, LinuxMsgHdr* message, int flags);

        /// <summary>Linux 2.5.8+: the CPUs thread <paramref name="pid"/> (0: the calling thread) may run on, as a bit mask of <paramref name="maskBytes"/> bytes.</summary>
        [DllImport(LinuxLib, EntryPoint = "sched_setaffinity", SetLastError = true)]
        internal static extern int SchedSetAffinity(int pid, nuint maskBytes, ulong* mask);
    }
}
