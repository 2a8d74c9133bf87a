#nullable enable
using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// Winsock's calls that the Windows branch makes. Bindings only: blittable signatures (pointers and
    /// integers), so nothing is marshalled or allocated. The error of a failed call is WSAGetLastError,
    /// which is the thread's last error that <see cref="Marshal.GetLastWin32Error"/> reads back.
    /// </summary>
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

        /// <summary>WSABUF: a length and a pointer (the layout pads the length to the pointer's alignment, as C does).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct WsaBuf
        {
            internal uint Length;
            internal byte* Buffer;
        }

        /// <summary>OVERLAPPED (for a socket its offsets are unused and zero).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Overlapped
        {
            internal IntPtr Internal;
            internal IntPtr InternalHigh;
            internal uint Offset;
            internal uint OffsetHigh;
            internal IntPtr Event;
        }

        [DllImport(Lib, EntryPoint = "WSARecvFrom", SetLastError = true)]
        internal static extern int WsaRecvFrom(IntPtr socket, WsaBuf* buffers, uint bufferCount, uint* received, uint* flags, byte* address, int* addressLength, Overlapped* overlapped, IntPtr completionRoutine);

        [DllImport(Lib, EntryPoint = "WSAGetOverlappedResult", SetLastError = true)]
        internal static extern int WsaGetOverlappedResult(IntPtr socket, Overlapped* overlapped, uint* transferred, int wait, uint* flags);

        [DllImport(Lib, EntryPoint = "recvfrom", SetLastError = true)]
        internal static extern int RecvFrom(IntPtr socket, byte* buffer, int length, int flags, byte* address, int* addressLength);

        [DllImport(Lib, EntryPoint = "sendto", SetLastError = true)]
        internal static extern int SendTo(IntPtr socket, byte* buffer, int length, int flags, byte* address, int addressLength);

        [DllImport(Lib, EntryPoint = "WSAPoll", SetLastError = true)]
        internal static extern int WsaPoll(WsaPollFd* fds, uint count, int timeoutMilliseconds);

        [DllImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
        internal static extern int GetSockOpt(IntPtr socket, int level, int name, byte* value, int* valueLength);

        [DllImport(Lib, EntryPoint = "setsockopt", SetLastError = true)]
        internal static extern int SetSockOpt(IntPtr socket, int level, int name, byte* value, int valueLength);

        [DllImport(Lib, EntryPoint = "getpeername", SetLastError = true)]
        internal static extern int GetPeerName(IntPtr socket, byte* address, int* addressLength);

        /// <summary>WSAIoctl without overlapped I/O (the last two arguments are always null).</summary>
        [DllImport(Lib, EntryPoint = "WSAIoctl", SetLastError = true)]
        internal static extern int WsaIoctl(IntPtr socket, uint code, void* input, uint inputLength, void* output, uint outputLength, uint* returned, void* overlapped, void* completion);
    }
}
