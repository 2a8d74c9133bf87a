using System;
using Xunit;
using Xunit.Sdk;

namespace WhereAllocation.Tests.Oracle
{
    /// <summary>
    /// The allocation oracle proves itself before any 0 it reports counts: it sees a known allocation, and an
    /// allocation assertion fed a deliberately allocating call fails, on every runtime the suite runs on (under
    /// mono-boehm, where the thread's counter returns 0, through the collector's own byte count), and the collections
    /// counted catch the same control without any counter.
    /// </summary>
    public class AllocationOracleTests
    {
        private static object? _sink;

        [Fact]
        public void TheOracleIsTheOneThisRuntimeHas()
        {
            bool boehm = Runtime.IsMono && GC.MaxGeneration == 0;
            if (boehm)
            {
                // The reason for the second oracle: under Boehm the thread's counter saw nothing of the canary.
                Assert.Equal(0, AllocationOracle.CanarySeen);
                Assert.Equal(OracleKind.BoehmHeapBytes, AllocationOracle.Kind);
            }
            else
            {
                Assert.True(AllocationOracle.CanarySeen >= AllocationOracle.CanaryLength, AllocationOracle.Describe());
                Assert.Equal(OracleKind.ThreadBytes, AllocationOracle.Kind);
            }
        }

        [Fact]
        public void TheOracleSeesAKnownAllocation()
        {
            long bytes = Allocations.Measure(() => _sink = new byte[100], 10_000, 100);
            // 10 000 arrays of 100 bytes: at least the payloads, exactly where the counter counts bytes, as an estimate under Boehm.
            Assert.True(bytes >= (Allocations.CountsExactBytes ? 10_000 * 100 : 1), AllocationOracle.Describe() + " saw " + bytes + " B");
        }

        /// <summary>The control: one smallest object per call makes a zero-allocation assertion fail (under mono-boehm, with the thread's counter alone, it passed).</summary>
        [Fact]
        public void AZeroAllocationAssertionFailsOnADeliberatelyAllocatingCall()
        {
            Assert.ThrowsAny<XunitException>(() => Assert.Equal(0, Allocations.Measure(() => _sink = new object())));
        }

        [Fact]
        public void TheWindowResolvesTheSmallestObjectPerCall()
        {
            using AllocationWindow window = AllocationWindow.Open(10_000);
            Assert.True(window.ResolutionPerCall <= AllocationWindow.SmallestObject,
                AllocationOracle.Describe() + ": resolution " + window.ResolutionPerCall + " B per call, the reading moving " + window.Step + " B at a time");
            Console.WriteLine("    oracle: " + AllocationOracle.Describe() + "; resolution over " + window.Calls + " calls: " + window.ResolutionPerCall + " B per call (step " + window.Step + " B)");
        }

        /// <summary>
        /// The oracle that needs no counter, on every runtime: collections counted over enough calls. The control (one
        /// smallest object per call) forces at least two; the same number of calls that allocate nothing forces none.
        /// </summary>
        [Fact]
        public void CountedCollectionsCatchTheControlAndNotTheNonAllocatingCall()
        {
            var control = CollectionOracle.Measure(() => _sink = new object(), 100_000);
            Console.WriteLine("    collections: " + control.Collections + " over " + control.Calls + " calls of the control; threshold " + control.Threshold
                + " B, so " + ((2 * control.Threshold + control.Calls - 1) / control.Calls) + " B per call is sure to force two");
            Assert.True(control.Collections >= 2, "the control forced " + control.Collections + " collections over " + control.Calls + " calls (threshold " + control.Threshold + " B)");
            int counter = 0;
            var quiet = CollectionOracle.Measure(() => counter++, control.Calls);
            Assert.Equal(0, quiet.Collections);
        }

        [Fact]
        public void ANonAllocatingCallMeasuresZero()
        {
            int counter = 0;
            Assert.Equal(0, Allocations.Measure(() => counter++));
            Assert.True(counter > 0);
        }
    }
}
