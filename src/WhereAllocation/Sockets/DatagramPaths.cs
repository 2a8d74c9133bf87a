using System;

namespace WhereAllocation
{
    /// <summary>
    /// Which <see cref="DatagramPath"/> the socket extensions use. By default the fastest path that is
    /// allocation free on this runtime: <see cref="DatagramPath.Native"/> wherever P/Invoke reaches the OS's
    /// socket calls, else <see cref="DatagramPath.SocketAddress"/> on .NET 8+, else <see cref="DatagramPath.Managed"/>.
    /// </summary>
    public static class DatagramPaths
    {
        private static readonly DatagramPath s_default = ChooseDefault();
        private static DatagramPath s_active = s_default;

        /// <summary>The path every call takes now.</summary>
        public static DatagramPath Active => s_active;

        /// <summary>The path chosen for this runtime and OS when nothing is forced.</summary>
        public static DatagramPath Default => s_default;

        /// <summary>True when <paramref name="path"/> can run in this process.</summary>
        public static bool IsAvailable(DatagramPath path)
        {
            switch (path)
            {
                case DatagramPath.Native: return NativeDatagramIO.IsSupported;
#if NET8_0_OR_GREATER
                case DatagramPath.SocketAddress: return true;
#else
                case DatagramPath.SocketAddress: return false;
#endif
                case DatagramPath.Managed: return true;
                default: return false;
            }
        }

        /// <summary>Makes every later call take <paramref name="path"/> (for tests and benchmarks). Affects all threads.</summary>
        /// <exception cref="PlatformNotSupportedException">The path cannot run here (for example <see cref="DatagramPath.SocketAddress"/> on Mono).</exception>
        public static void Force(DatagramPath path)
        {
            if (!IsAvailable(path)) throw new PlatformNotSupportedException("The " + path + " datagram path is not available on this runtime or operating system.");
            s_active = path;
        }

        /// <summary>Returns to <see cref="Default"/>.</summary>
        public static void Reset() => s_active = s_default;

        private static DatagramPath ChooseDefault()
        {
            if (IsAvailable(DatagramPath.Native)) return DatagramPath.Native;
            if (IsAvailable(DatagramPath.SocketAddress)) return DatagramPath.SocketAddress;
            return DatagramPath.Managed;
        }
    }
}
