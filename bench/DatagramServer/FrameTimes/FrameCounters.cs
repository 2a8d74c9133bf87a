using System;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// What each frame reads before and after itself, all without allocating: collections (every kind this runtime
    /// counts), the runtime's own pause total where it has one (CoreCLR), and the thread's allocated bytes where the
    /// counter has first been seen to work.
    /// </summary>
    internal static class FrameCounters
    {
        /// <summary>Mono's Boehm build reports one generation; SGen two; CoreCLR three.</summary>
        public static readonly bool IsBoehm = Machine.IsMono && GC.MaxGeneration == 0;

        /// <summary>"coreclr", "mono" (SGen) or "mono-boehm".</summary>
        public static string RuntimeLabel => IsBoehm ? "mono-boehm" : Machine.RuntimeLabel;

        public static string RuntimeDescription => Machine.RuntimeDescription + (IsBoehm ? ", Boehm collector" : Machine.IsMono ? ", SGen collector" : "");

        /// <summary>
        /// True when GC.GetAllocatedBytesForCurrentThread saw a byte[1000] canary; false under Boehm, where it returns 0
        /// for everything (and IL2CPP, where it throws): there the benchmark says "no allocation counter on this runtime".
        /// </summary>
        public static readonly bool HasAllocationCounter = AllocationCanary.CounterSeesCanary();

        /// <summary>True where the runtime reports its own pause time (CoreCLR: GC.GetTotalPauseDuration).</summary>
#if NET
        public const bool HasPauseTotal = true;
#else
        public const bool HasPauseTotal = false;
#endif

        /// <summary>Collections so far: on CoreCLR gen0's count includes the older ones; SGen counts its majors apart.</summary>
        public static long Collections()
        {
            long count = GC.CollectionCount(0);
            if (Machine.IsMono && GC.MaxGeneration > 0) count += GC.CollectionCount(1);
            return count;
        }

        /// <summary>The runtime's total pause in nanoseconds so far (CoreCLR); 0 where it has none.</summary>
        public static long PauseNanoseconds()
        {
#if NET
            return GC.GetTotalPauseDuration().Ticks * 100;
#else
            return 0;
#endif
        }

        public static long AllocatedBytes() => HasAllocationCounter ? GC.GetAllocatedBytesForCurrentThread() : 0;

        /// <summary>
        /// Bytes per datagram for a report: "n/a" where the counter did not see the canary (Boehm, IL2CPP), never a 0
        /// read from a dead counter.
        /// </summary>
        public static string BytesPerDatagram(long bytes, long datagrams) =>
            HasAllocationCounter ? ((double)bytes / Math.Max(1, datagrams)).ToString("0.##", System.Globalization.CultureInfo.InvariantCulture) : "n/a";
    }

    /// <summary>Checks the thread's allocation counter against an allocation of known size before any figure of it is used.</summary>
    internal static class AllocationCanary
    {
        public const int Length = 1000;
        private static object? _sink;

        public static bool CounterSeesCanary()
        {
            try
            {
                long before = GC.GetAllocatedBytesForCurrentThread();
                _sink = new byte[Length];
                long seen = GC.GetAllocatedBytesForCurrentThread() - before;
                _sink = null;
                return seen >= Length;
            }
            catch (Exception e) when (e is NotImplementedException || e is NotSupportedException || e is PlatformNotSupportedException)
            {
                return false;
            }
        }

        public const string NoCounter = "no allocation counter on this runtime";
    }
}
