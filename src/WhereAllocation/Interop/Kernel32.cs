#nullable enable
using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>
    /// The few Windows kernel calls the Windows branch makes besides Winsock's (an overlapped receive's event and its
    /// cancellation: see WindowsSocketCalls.ReceiveReady). Bindings only, blittable as <see cref="Ws2_32"/>'s.
    /// </summary>
    internal static unsafe class Kernel32
    {
        internal const string Lib = "kernel32.dll";

        [DllImport(Lib, EntryPoint = "CancelIoEx", SetLastError = true)]
        internal static extern int CancelIoEx(IntPtr handle, Ws2_32.Overlapped* overlapped);

        [DllImport(Lib, EntryPoint = "CreateEventW", SetLastError = true)]
        internal static extern IntPtr CreateEvent(IntPtr attributes, int manualReset, int initialState, IntPtr name);

        [DllImport(Lib, EntryPoint = "CloseHandle", SetLastError = true)]
        internal static extern int CloseHandle(IntPtr handle);
    }
}
