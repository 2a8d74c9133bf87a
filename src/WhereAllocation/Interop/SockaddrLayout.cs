#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary><see cref="SockaddrLayout.StorageSize"/> (32) bytes, 8-byte aligned, as a local: room for the sockaddr of one datagram's sender.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct SockaddrStorage
    {
        private ulong _0, _1, _2, _3;
    }

    /// <summary>
    /// Byte offsets and constants of <c>sockaddr_in</c> / <c>sockaddr_in6</c>. The three ABIs share
    /// the port (network order at 2), the IPv4 address (at 4), the IPv6 flow info (4), address (8)
    /// and scope id (24, host order); they differ only in how the family is written.
    /// </summary>
    internal static class SockaddrLayout
    {
        internal const int IPv4Size = 16;
        internal const int IPv6Size = 28;
        /// <summary>Large enough for any sockaddr_in / sockaddr_in6 on every supported OS.</summary>
        internal const int StorageSize = 32;
        internal const int PortOffset = 2;
        internal const int IPv4AddressOffset = 4;
        internal const int IPv6FlowInfoOffset = 4;
        internal const int IPv6AddressOffset = 8;
        internal const int IPv6ScopeIdOffset = 24;

        internal const int LinuxAfInet = 2;
        internal const int LinuxAfInet6 = 10;
        internal const int DarwinAfInet = 2;
        internal const int DarwinAfInet6 = 30;
        internal const int WindowsAfInet = 2;
        internal const int WindowsAfInet6 = 23;
    }
}
