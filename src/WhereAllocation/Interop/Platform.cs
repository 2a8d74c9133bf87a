using System.Runtime.InteropServices;

namespace WhereAllocation.Interop
{
    /// <summary>The operating system families whose socket ABI the library knows.</summary>
    internal enum OsFamily
    {
        /// <summary>Linux (glibc or musl): sockaddr without a length byte, AF_INET6 = 10.</summary>
        Linux,
        /// <summary>macOS and iOS: sockaddr with a leading length byte, AF_INET6 = 30.</summary>
        Darwin,
        /// <summary>Windows (Winsock): AF_INET6 = 23, SOCKET handles.</summary>
        Windows,
        /// <summary>Anything else: the native path is not offered.</summary>
        Other,
    }

    /// <summary>Detects the operating system once, at type initialisation.</summary>
    internal static class Platform
    {
        internal static readonly OsFamily Os = Detect();

        private static OsFamily Detect()
        {
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) return OsFamily.Linux;
            if (RuntimeInformation.IsOSPlatform(OSPlatform.OSX)) return OsFamily.Darwin;
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows)) return OsFamily.Windows;
            return OsFamily.Other;
        }
    }
}
