using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// The C library's socket calls that Linux and macOS share (this file), and the ones only one of them
    /// has (Libc.Linux.cs, Libc.Darwin.cs). Bindings only: which call runs, and with which constants, is
    /// decided by the OS's own class in Sockets/Os. Every signature is blittable (pointers and integers
    /// only), so a call marshals nothing and allocates nothing on CoreCLR, Mono or AOT. "libc" resolves to
    /// libc.so.6 through Mono's dllmap and CoreCLR's probing, and to libSystem on macOS.
    /// </summary>
    internal static unsafe partial class Libc
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

        [DllImport(Lib, EntryPoint = "recvfrom", SetLastError = true)]
        internal static extern nint RecvFrom(int fd, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        [DllImport(Lib, EntryPoint = "sendto", SetLastError = true)]
        internal static extern nint SendTo(int fd, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        // nfds_t is unsigned long on Linux and unsigned int on macOS; nuint is correct for both
        // calling conventions because the callee of the 32-bit form reads only the low half.
        [DllImport(Lib, EntryPoint = "poll", SetLastError = true)]
        internal static extern int Poll(PollFd* fds, nuint count, int timeoutMilliseconds);

        [DllImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
        internal static extern int GetSockOpt(int fd, int level, int name, void* value, uint* valueLength);

        [DllImport(Lib, EntryPoint = "setsockopt", SetLastError = true)]
        internal static extern int SetSockOpt(int fd, int level, int name, void* value, uint valueLength);

        [DllImport(Lib, EntryPoint = "getpeername", SetLastError = true)]
        internal static extern int GetPeerName(int fd, byte* address, uint* addressLength);

        [DllImport(Lib, EntryPoint = "getpid")]
        internal static extern int GetPid();
    }
}
