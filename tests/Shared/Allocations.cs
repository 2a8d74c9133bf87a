using System;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Counts the managed bytes allocated over many calls, after a warm-up, with an oracle that has first proved
    /// on this runtime that it sees a known allocation (see <see cref="AllocationOracle"/>): the thread's byte
    /// counter where it works (CoreCLR, Mono with SGen), the collector's own count of bytes handed out under Boehm
    /// (mono-boehm, Unity's collector; the thread's counter says 0 there whatever is allocated), and an exception,
    /// never a 0, where neither works. <see cref="CollectionOracle"/> is the check that needs no counter at all.
    /// </summary>
    public static class Allocations
    {
        /// <summary>
        /// Runs <paramref name="call"/> <paramref name="warmUp"/> times, then up to three rounds of
        /// <paramref name="calls"/> measured calls (under Boehm, <see cref="AllocationWindow.Calls"/>: perhaps more), and returns the bytes allocated by the first round that
        /// allocated nothing, or else the smallest round. Under Boehm the bytes are the collector's count, which moves a
        /// free-list refill at a time for all threads together: 0 means no refill in a round long enough that
        /// <see cref="AllocationWindow.ResolutionPerCall"/> bytes per call would have forced two.
        /// </summary>
        /// <remarks>
        /// Why rounds: on CoreCLR with tiered PGO (the default), the JIT's promotion of a hot method to its
        /// optimised tier allocates a few dozen bytes once on the calling thread (seen on .NET 10: 24-80 B,
        /// at a moment set by a timer, not by the call count). That is not a cost per call: a call that
        /// allocates even one object makes every round allocate at least <paramref name="calls"/> bytes,
        /// so no round can reach 0.
        /// </remarks>
        public static long Measure(Action call, int calls = 10_000, int warmUp = 2000)
        {
            using AllocationWindow window = AllocationWindow.Open(calls);
            calls = window.Calls;
            for (int i = 0; i < warmUp; i++) call();
            long smallest = long.MaxValue;
            for (int round = 0; round < 3 && smallest != 0; round++)
            {
                long before = window.Read();
                for (int i = 0; i < calls; i++) call();
                long after = window.Read();
                smallest = Math.Min(smallest, after - before);
                // The collector's count is coarse and process-wide: more rounds cannot make a clear allocation exact, only slower.
                if (window.IsCoarse && smallest > 2 * window.Step) break;
            }
            return smallest;
        }

        /// <summary>True where the oracle counts bytes exactly (the thread's counter); false under Boehm, whose count moves a refill at a time.</summary>
        public static bool CountsExactBytes => AllocationOracle.Kind == OracleKind.ThreadBytes;

        /// <summary>
        /// Asserts that two measured costs are the same: byte for byte where the counter counts bytes; under Boehm,
        /// both non-zero or both zero (its count moves a refill at a time, so equal costs read differently by where
        /// the refills fall: it cannot compare bytes exactly).
        /// </summary>
        public static void AssertSameCost(long expected, long actual)
        {
            if (CountsExactBytes) Xunit.Assert.Equal(expected, actual);
            else Xunit.Assert.True((expected == 0) == (actual == 0), "under " + AllocationOracle.Describe() + ": expected " + expected + ", measured " + actual);
        }
    }
}
