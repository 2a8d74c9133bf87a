using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Tests
{
    /// <summary>How allocations are seen on this runtime.</summary>
    public enum OracleKind
    {
        /// <summary>GC.GetAllocatedBytesForCurrentThread, which saw the canary: CoreCLR, Mono with SGen.</summary>
        ThreadBytes,

        /// <summary>
        /// The thread's counter is dead (it returns 0 under Mono's Boehm collector, the one Unity runs), so the
        /// collector's own count of the bytes it has handed out is read instead (see <see cref="AllocationWindow"/>).
        /// </summary>
        BoehmHeapBytes,

        /// <summary>No counter and no second oracle (IL2CPP's counter throws): a measurement throws, it never says 0.</summary>
        None,
    }

    /// <summary>
    /// Which allocation oracle this runtime has, decided once by a canary of known size: an oracle that does not see
    /// 1000 bytes allocated before its eyes is not used.
    /// </summary>
    public static class AllocationOracle
    {
        /// <summary>The canary: a byte[] of this many elements, allocated between two readings of the thread's counter.</summary>
        public const int CanaryLength = 1000;

        /// <summary>What the thread's counter said about the canary (0 under Boehm, -1 where it threw).</summary>
        public static readonly long CanarySeen = ProbeThreadCounter();

        /// <summary>The oracle chosen on this runtime.</summary>
        public static readonly OracleKind Kind = Choose();

        /// <summary>Held so the canary cannot be optimised away.</summary>
        private static object? _sink;

        /// <summary>A line for reports: which oracle, and why.</summary>
        public static string Describe()
        {
            switch (Kind)
            {
                case OracleKind.ThreadBytes:
                    return "the thread's allocated-bytes counter (it saw " + CanarySeen + " B for a " + CanaryLength + "-element byte[] canary)";
                case OracleKind.BoehmHeapBytes:
                    return "no allocation counter on this runtime (the thread's counter saw " + CanarySeen + " B of a " + CanaryLength
                        + "-element byte[] canary): Boehm collector, its own count of bytes handed out, process-wide, read instead";
                default:
                    return "no allocation counter on this runtime (the thread's counter saw " + CanarySeen + " B of a " + CanaryLength
                        + "-element byte[] canary) and no second oracle";
            }
        }

        private static long ProbeThreadCounter()
        {
            try
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                _sink = new byte[CanaryLength];
                long after = GC.GetAllocatedBytesForCurrentThread();
                _sink = null;
                return after - before;
            }
            catch (Exception e) when (e is NotImplementedException || e is NotSupportedException || e is PlatformNotSupportedException || e is MissingMethodException)
            {
                return -1;
            }
        }

        private static OracleKind Choose()
        {
            if (CanarySeen >= CanaryLength) return OracleKind.ThreadBytes;
            // Mono's Boehm build reports a single generation (SGen reports two): that and Mono is the Boehm build.
            if (Runtime.IsMono && GC.MaxGeneration == 0 && BoehmCollector.IsAvailable()) return OracleKind.BoehmHeapBytes;
            return OracleKind.None;
        }
    }

    /// <summary>
    /// The Boehm collector's own calls, exported by the mono-boehm executable. GC_get_total_bytes: the bytes the collector
    /// has handed out since start, all threads together; a thread takes small objects from a free list of its own and
    /// the count grows when that list is refilled, a few kilobytes at a time. GC_set_free_space_divisor: a collection
    /// starts once the bytes allocated since the last one exceed the heap's traced size divided by it (3 by default;
    /// Mono reads no environment variable for it, only MONO_GC_PARAMS=max-heap-size).
    /// </summary>
    internal static class BoehmCollector
    {
        /// <summary>The collector's default divisor.</summary>
        public const int DefaultDivisor = 3;

        public static bool IsAvailable()
        {
            try
            {
                TotalBytes();
                SetDivisor(DefaultDivisor);
                return true;
            }
            catch (Exception e) when (e is EntryPointNotFoundException || e is DllNotFoundException)
            {
                return false;
            }
        }

        public static long TotalBytes() => (long)(ulong)GC_get_total_bytes();

        public static void SetDivisor(int divisor) => GC_set_free_space_divisor((UIntPtr)divisor);

        [DllImport("__Internal")]
        private static extern UIntPtr GC_get_total_bytes();

        [DllImport("__Internal")]
        private static extern void GC_set_free_space_divisor(UIntPtr value);
    }
}
