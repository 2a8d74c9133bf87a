using System;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    public static class BatchModes
    {
        /// <summary>
        /// True when <paramref name="mode"/> can run here. Where it cannot (MultiMessage, Linux's
        /// recvmmsg/sendmmsg, anywhere but Linux), asserts that a batch in that mode is refused with
        /// PlatformNotSupportedException and returns false: the case is then tested, not skipped.
        /// </summary>
        public static bool TryUse(DatagramBatchMode mode)
        {
            if (DatagramBatch.IsModeAvailable(mode)) return true;
            Assert.True(mode == DatagramBatchMode.MultiMessage && !RuntimeInformation.IsOSPlatform(OSPlatform.Linux), mode + " should be available on " + Runtime.Describe());
            Assert.Throws<PlatformNotSupportedException>(() => new DatagramBatch(4, 100, mode));
            return false;
        }
    }
}
