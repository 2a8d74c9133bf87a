using System;
using System.Net;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    public static class ShardSupport
    {
        /// <summary>
        /// True when shards can run here (Linux with the native path). Elsewhere (Windows, under Wine in this
        /// project's CI) asserts that binding a group is refused with the OS's PlatformNotSupportedException,
        /// naming the OS, and returns false: the case is then tested, not skipped.
        /// </summary>
        public static bool TryUse()
        {
            if (DatagramShardGroup.IsSupported) return true;
            Assert.False(RuntimeInformation.IsOSPlatform(OSPlatform.Linux), "shards should be supported on " + Runtime.Describe());
            var e = Assert.Throws<PlatformNotSupportedException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 2));
            Assert.Contains(OsSocketCalls.InUse.Name, e.Message);
            return false;
        }

        /// <summary>
        /// True when <see cref="DatagramShardGroup.PinCurrentThread"/> works here (Linux); elsewhere asserts its
        /// PlatformNotSupportedException, naming the OS, and returns false.
        /// </summary>
        public static bool TryPin()
        {
            if (DatagramShardGroup.CanPinThreads) return true;
            Assert.False(RuntimeInformation.IsOSPlatform(OSPlatform.Linux), "thread pinning should be supported on " + Runtime.Describe());
            var e = Assert.Throws<PlatformNotSupportedException>(() => DatagramShardGroup.PinCurrentThread(0));
            Assert.Contains(OsSocketCalls.InUse.Name, e.Message);
            return false;
        }
    }
}
