using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// The C library's socket calls on Linux and macOS. Every signature is blittable (pointers and
    /// integers only), so a call marshals nothing and allocates nothing on CoreCLR, Mono or AOT.
    /// "libc" resolves to libc.so.6 through Mono's dllmap and CoreCLR's probing, and to libSystem on macOS.
    /// </summary>
    internal static unsafe class Libc
    {
        private const string Lib = "libc";

        [StructLayout(LayoutKind.Sequential)]
        internal struct PollFd
        {
            internal int Fd;
            internal short Events;
            internal short Revents;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct IoVec
        {
            internal void* Base;
            internal nuint Length;
        }

        /// <summary>struct msghdr on macOS (int iovlen, socklen_t controllen).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct DarwinMsgHdr
        {
            internal void* Name;
            internal uint NameLength;
            internal IoVec* Iov;
            internal int IovLength;
            internal void* Control;
            internal uint ControlLength;
            internal int Flags;
        }

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
        [DllImport(Lib, EntryPoint = "recvmmsg", SetLastError = true)]
        internal static extern int RecvMMsg(int fd, LinuxMMsgHdr* messages, uint count, int flags, void* timeout);

        /// <summary>Linux 3.0+: sends up to <paramref name="count"/> datagrams in one call, each to its own msg_name.</summary>
        [DllImport(Lib, EntryPoint = "sendmmsg", SetLastError = true)]
        internal static extern int SendMMsg(int fd, LinuxMMsgHdr* messages, uint count, int flags);

        [DllImport(Lib, EntryPoint = "recvfrom", SetLastError = true)]
        internal static extern nint RecvFrom(int fd, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        [DllImport(Lib, EntryPoint = "recvmsg", SetLastError = true)]
        internal static extern nint RecvMsgDarwin(int fd, DarwinMsgHdr* message, int flags);

        [DllImport(Lib, EntryPoint = "sendto", SetLastError = true)]
        internal static extern nint SendTo(int fd, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        // nfds_t is unsigned long on Linux and unsigned int on macOS; nuint is correct for both
        // calling conventions because the callee of the 32-bit form reads only the low half.
        [DllImport(Lib, EntryPoint = "poll", SetLastError = true)]
        internal static extern int Poll(PollFd* fds, nuint count, int timeoutMilliseconds);

        [DllImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
        internal static extern int GetSockOpt(int fd, int level, int name, void* value, uint* valueLength);

        [DllImport(Lib, EntryPoint = "getpid")]
        internal static extern int GetPid();
    }
}
