using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>Winsock's datagram calls. Blittable signatures only. Implemented, not tested on this project's CI (Linux).</summary>
    internal static unsafe class Ws2_32
    {
        private const string Lib = "ws2_32.dll";

        [StructLayout(LayoutKind.Sequential)]
        internal struct WsaPollFd
        {
            internal IntPtr Fd;
            internal short Events;
            internal short Revents;
        }

        internal const short PollRdNorm = 0x0100;
        internal const short PollWrNorm = 0x0010;
        internal const short PollHup = 0x0002;
        internal const short PollNval = 0x0004;

        [DllImport(Lib, EntryPoint = "recvfrom", SetLastError = true)]
        internal static extern int RecvFrom(IntPtr socket, byte* buffer, int length, int flags, byte* address, int* addressLength);

        [DllImport(Lib, EntryPoint = "sendto", SetLastError = true)]
        internal static extern int SendTo(IntPtr socket, byte* buffer, int length, int flags, byte* address, int addressLength);

        [DllImport(Lib, EntryPoint = "WSAPoll", SetLastError = true)]
        internal static extern int WsaPoll(WsaPollFd* fds, uint count, int timeoutMilliseconds);

        [DllImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
        internal static extern int GetSockOpt(IntPtr socket, int level, int name, byte* value, int* valueLength);
    }
}
