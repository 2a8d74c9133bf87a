using System;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// One measurement with this runtime's <see cref="AllocationOracle"/>: <see cref="Read"/> before and after the calls
    /// measured; the difference is bytes. With the thread's counter it is that counter. Under Boehm it is the collector's
    /// own count of bytes handed out, which grows by a free-list refill at a time: opening the window measures that step
    /// with a canary of 16-byte objects (which also proves the count moves), and the window's
    /// <see cref="ResolutionPerCall"/> follows from it.
    /// </summary>
    /// <remarks>
    /// The collector's count is process-wide: an allocation on another thread counts too, so it can report an
    /// allocation that the measured thread did not make (never the reverse).
    /// </remarks>
    public sealed class AllocationWindow : IDisposable
    {
        /// <summary>The smallest managed object on a 64-bit Mono (a header of two words): the least a call that allocates can allocate.</summary>
        public static readonly int SmallestObject = 2 * IntPtr.Size;

        private static object? _sink;
        private readonly bool _collector;

        private AllocationWindow(int calls, long step, bool collector)
        {
            Calls = calls;
            Step = step;
            _collector = collector;
        }

        /// <summary>
        /// The calls to measure: those asked for, or under Boehm more where the count's step needs them for
        /// <see cref="ResolutionPerCall"/> to reach the smallest object. Loops that meter themselves run this many.
        /// </summary>
        public int Calls { get; }

        /// <summary>True for the collector's count (Boehm): it moves a free-list refill at a time, all threads together.</summary>
        public bool IsCoarse => _collector;

        /// <summary>The bytes by which a reading moves at a time: 1 for the thread's counter; under Boehm a free-list refill, measured.</summary>
        public long Step { get; }

        /// <summary>The fewest bytes per call that the window is sure to see over <see cref="Calls"/> calls: two steps shared among the calls (at least 1).</summary>
        public long ResolutionPerCall => _collector ? Math.Max(1, (2 * Step + Calls - 1) / Calls) : 1;

        /// <summary>Opens a window for <paramref name="calls"/> calls; throws where this runtime has no oracle (never reports 0 there).</summary>
        public static AllocationWindow Open(int calls)
        {
            switch (AllocationOracle.Kind)
            {
                case OracleKind.ThreadBytes:
                    return new AllocationWindow(calls, 1, false);
                case OracleKind.BoehmHeapBytes:
                    long step = CollectorStep();
                    long needed = (2 * step + SmallestObject - 1) / SmallestObject;
                    return new AllocationWindow((int)Math.Max(calls, needed), step, true);
                default:
                    throw new NotSupportedException(AllocationOracle.Describe());
            }
        }

        /// <summary>The reading: the thread's allocated bytes, or under Boehm the collector's bytes handed out so far.</summary>
        public long Read() => _collector ? BoehmCollector.TotalBytes() : GC.GetAllocatedBytesForCurrentThread();

        /// <summary>Nothing to undo; a window is disposable so that a later oracle may hold something while it is open.</summary>
        public void Dispose()
        {
        }

        /// <summary>The largest move of the collector's count over 16-byte objects, after the first: its step. Throws if 1 MB never moves it.</summary>
        private static long CollectorStep()
        {
            const long Limit = 1L << 20;
            long largest = 0;
            for (int moves = 0; moves < 4; moves++)
            {
                long start = BoehmCollector.TotalBytes(), objects = 0;
                while (BoehmCollector.TotalBytes() == start)
                {
                    _sink = new object();
                    if (++objects * SmallestObject > Limit) throw new InvalidOperationException("the collector's byte count did not move over 1 MB of objects: no allocation oracle");
                }
                if (moves > 0) largest = Math.Max(largest, objects * SmallestObject);
            }
            _sink = null;
            return largest;
        }
    }
}
