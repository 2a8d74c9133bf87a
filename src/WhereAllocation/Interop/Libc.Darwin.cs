using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>The C library call and structure only the macOS receive uses: recvmsg, which reports truncation in msg_flags.</summary>
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
    }
}
