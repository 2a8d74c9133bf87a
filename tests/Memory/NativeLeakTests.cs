using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>10^6 mixed operations end with nothing live by every allocator's own accounting.</summary>
    public class NativeLeakTests
    {
        [Fact]
        public void AMillionMixedOperationsLeaveNothingLive()
        {
            MixedWorkload.Result result = MixedWorkload.Run(1_000_000);
            Assert.True(result.Operations >= 1_000_000);
            Assert.Equal(0, result.MultiFrameLiveBytes);
            Assert.Equal(0, result.MultiFrameLiveAllocations);
            Assert.Equal(0, result.MultiFrameLeaksReported);
            Assert.Equal(0, result.PersistentLiveBytes);
            Assert.Equal(0, result.PersistentLiveAllocations);
            Assert.True(result.PersistentPeakBytes > 0);
            Assert.Equal(0, result.SharedPersistentLiveBytes);
            Assert.Equal(0, result.ArenaRented);
            Assert.Equal(0, result.ArenaNativeBytesAfterTrim);
            Assert.Equal(8 * 1024, result.FrameLiveNativeBytes);
            Assert.True(result.FrameHighWaterMark > 8 * 1024); // the workload overflows on purpose
        }
    }
}
