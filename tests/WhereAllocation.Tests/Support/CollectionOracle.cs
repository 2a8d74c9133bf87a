using System;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The oracle of last resort, needing no counter at all: collections counted over enough calls that an allocating
    /// call must force several. Under Boehm the collector's threshold is first made small (free-space divisor raised);
    /// elsewhere it is the runtime's own young-generation budget. The threshold is measured, not assumed: 16-byte
    /// objects are allocated until two collections have run, and the bytes between them are the threshold.
    /// </summary>
    public static class CollectionOracle
    {
        /// <summary>The free-space divisor used under Boehm: a collection per few tens of kilobytes on the suite's heap.</summary>
        public const int BoehmDivisor = 4096;

        private static object? _sink;

        /// <summary>Collections so far, every kind this runtime counts (SGen counts its major collections apart).</summary>
        public static long Collections()
        {
            long count = GC.CollectionCount(0);
            if (Runtime.IsMono && GC.MaxGeneration > 0) count += GC.CollectionCount(1);
            return count;
        }

        /// <summary>
        /// Runs <paramref name="call"/> enough times (at least <paramref name="calls"/>) that a call allocating the smallest
        /// object must force two collections, and returns the collections seen, the threshold and the calls run.
        /// </summary>
        public static (long Collections, long Threshold, int Calls) Measure(Action call, int calls)
        {
            bool boehm = AllocationOracle.Kind == OracleKind.BoehmHeapBytes;
            if (boehm) BoehmCollector.SetDivisor(BoehmDivisor);
            try
            {
                call(); // compiled before counting
                long threshold = Threshold();
                long needed = 3 * threshold / AllocationWindow.SmallestObject + 1; // three thresholds: two collections even if the threshold shrinks a little
                int run = (int)Math.Min(50_000_000, Math.Max(calls, needed));
                long before = Collections();
                for (int i = 0; i < run; i++) call();
                return (Collections() - before, threshold, run);
            }
            finally
            {
                if (boehm) BoehmCollector.SetDivisor(BoehmCollector.DefaultDivisor);
            }
        }

        /// <summary>The bytes of 16-byte objects from one collection to the next; throws if 256 MB force none.</summary>
        private static long Threshold()
        {
            const long Limit = 256L << 20;
            long objects = 0;
            for (int pass = 0; pass < 2; pass++)
            {
                objects = 0;
                long start = Collections();
                while (Collections() == start)
                {
                    _sink = new object();
                    if (++objects * AllocationWindow.SmallestObject > Limit) throw new InvalidOperationException("the collection oracle's canary: 256 MB of objects started no collection");
                }
            }
            _sink = null;
            return objects * AllocationWindow.SmallestObject;
        }
    }
}
