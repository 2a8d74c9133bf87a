using System;

namespace WhereAllocation.Tests
{
    /// <summary>Counts the managed bytes the current thread allocates over many calls, after a warm-up.</summary>
    public static class Allocations
    {
        /// <summary>
        /// Runs <paramref name="call"/> <paramref name="warmUp"/> times, then up to three rounds of
        /// <paramref name="calls"/> measured calls, and returns the bytes allocated by the first round that
        /// allocated nothing, or else the smallest round.
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
            for (int i = 0; i < warmUp; i++) call();
            long smallest = long.MaxValue;
            for (int round = 0; round < 3 && smallest != 0; round++)
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < calls; i++) call();
                long after = GC.GetAllocatedBytesForCurrentThread();
                smallest = Math.Min(smallest, after - before);
            }
            return smallest;
        }
    }
}
