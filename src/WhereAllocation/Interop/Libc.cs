#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// The C library's socket calls that Linux and macOS share (this file), and the ones only one of them
    /// has (Libc.Linux.cs, Libc.Darwin.cs). Bindings only: which call runs, and with which constants, is
    /// decided by the OS's own class in Sockets/Os. Every signature is blittable (pointers and integers
    /// only), so a call marshals nothing and allocates nothing on CoreCLR, Mono or AOT.
    /// </summary>
    /// <remarks>
    /// <para>Where the calls are found (<see cref="Lib"/>), fixed when the library is compiled, so choosing costs
    /// nothing at run time:</para>
    /// <list type="bullet">
    /// <item>"libc" wherever a dynamic loader resolves it: Mono maps it to libc.so.6 through its dllmap (Unity's
    /// Mono likewise); CoreCLR and NativeAOT load libc.so.6 on Linux and /usr/lib/libc.dylib on macOS for exactly
    /// this name; IL2CPP loads libc.so.6 for it on Linux and finds libc.dylib by its name variations on macOS.</item>
    /// <item>"__Internal" where IL2CPP links native code statically (Unity's iOS, tvOS and visionOS players): the
    /// generated C++ then calls the C library's symbols directly. Unity defines UNITY_IOS (UNITY_TVOS,
    /// UNITY_VISIONOS) when it compiles the package for such a player, outside the Editor.</item>
    /// </list>
    /// <para>Only calls every C library has use <see cref="Lib"/>. The Linux-only calls (Libc.Linux.cs) always name
    /// "libc": a statically linked player links every "__Internal" symbol its code declares, and Apple's C library
    /// has no recvmmsg, so those would break its link.</para>
    /// </remarks>
    internal static unsafe partial class Libc
    {
#if (UNITY_IOS || UNITY_TVOS || UNITY_VISIONOS) && !UNITY_EDITOR
        internal const string Lib = "__Internal";
#else
        internal const string Lib = "libc";
#endif

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

        /// <summary>Shuts the socket down for receiving (<paramref name="how"/> 0, SHUT_RD, on Linux) or sending: what wakes a receive blocked on it.</summary>
        [DllImport(Lib, EntryPoint = "shutdown", SetLastError = true)]
        internal static extern int Shutdown(int fd, int how);

        /// <summary>
        /// fcntl with a command that takes no argument (F_GETFD): declared without the C function's variadic tail, which a
        /// command without an argument leaves empty, so the call is the same on every ABI (Apple's arm64 passes variadic
        /// arguments on the stack).
        /// </summary>
        [DllImport(Lib, EntryPoint = "fcntl", SetLastError = true)]
        internal static extern int Fcntl(int fd, int command);

        [DllImport(Lib, EntryPoint = "getpid")]
        internal static extern int GetPid();

        /// <summary>Closes a descriptor the library opened itself (an epoll or kqueue set); never a socket's.</summary>
        [DllImport(Lib, EntryPoint = "close", SetLastError = true)]
        internal static extern int Close(int fd);
    }
}
