#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// The C library calls and structures only macOS (and the other Apple systems) has here: recvmsg, which reports
    /// truncation in msg_flags, and kqueue/kevent, the readiness mechanism of the awaitable receive and send.
    /// </summary>
    internal static unsafe partial class Libc
    {
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

        [DllImport(Lib, EntryPoint = "recvmsg", SetLastError = true)]
        internal static extern nint RecvMsgDarwin(int fd, DarwinMsgHdr* message, int flags);

        /// <summary>
        /// struct kevent on Apple's systems: {uintptr_t ident; int16_t filter; uint16_t flags; uint32_t fflags;
        /// intptr_t data; void* udata;}, 32 bytes on 64-bit (offsets 0, 8, 10, 12, 16, 24), from sys/event.h.
        /// </summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct KEvent
        {
            internal nuint Ident;
            internal short Filter;
            internal ushort Flags;
            internal uint FilterFlags;
            internal nint Data;
            internal void* UserData;
        }

        /// <summary>struct timespec: {time_t tv_sec; long tv_nsec;}.</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct TimeSpec
        {
            internal nint Seconds;
            internal nint Nanoseconds;
        }

        /// <summary>A new kqueue.</summary>
        [DllImport(Lib, EntryPoint = "kqueue", SetLastError = true)]
        internal static extern int KQueue();

        /// <summary>Applies <paramref name="changeCount"/> changes, then waits up to <paramref name="timeout"/> (null: no limit) for up to <paramref name="eventCount"/> events.</summary>
        [DllImport(Lib, EntryPoint = "kevent", SetLastError = true)]
        internal static extern int KEventCall(int kq, KEvent* changes, int changeCount, KEvent* events, int eventCount, TimeSpec* timeout);
    }
}
