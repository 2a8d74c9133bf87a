using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.AwaitStress
{
    /// <summary>
    /// Bytes allocated by the whole process, every thread: the awaits complete on the library's I/O thread or on the
    /// thread pool, so one thread's counter would miss them. Used only after it has seen a <c>byte[1000]</c> canary
    /// (docs/allocation-oracles.md); where it does not, <see cref="Works"/> is false and the figures say
    /// <see cref="NoCounter"/>, never 0.
    /// </summary>
    /// <remarks>
    /// CoreCLR: <c>GC.GetTotalAllocatedBytes(precise: true)</c>. Mono 6.8 has no such call (netstandard2.1 has none
    /// either), so there the count comes from a profiler module of this benchmark (native/alloccount.c), which Mono calls
    /// for every managed object it allocates, on any thread, with either collector: run.sh loads it with
    /// <c>mono --profile=alloccount</c>. Without it the canary is not seen.
    /// </remarks>
    internal sealed class ProcessAllocations
    {
        public const string NoCounter = "no allocation counter on this runtime";
        public const int CanaryLength = 1000;

        private static object? s_sink;

        private ProcessAllocations(string name, bool works, long canarySeen)
        {
            Name = name;
            Works = works;
            CanarySeen = canarySeen;
        }

        /// <summary>What counts: the runtime's call or the profiler module.</summary>
        public string Name { get; }

        /// <summary>True when the count grew by at least the canary's length when the canary was allocated.</summary>
        public bool Works { get; }

        /// <summary>How much the count grew for the canary.</summary>
        public long CanarySeen { get; }

        /// <summary>The process's bytes so far (0 when the meter does not work).</summary>
        public long Read()
        {
            if (!Works) return 0;
#if NET
            return GC.GetTotalAllocatedBytes(true);
#else
            return MonoModule.alloccount_bytes();
#endif
        }

        /// <summary>Picks the meter of this runtime and checks it against the canary.</summary>
        public static ProcessAllocations Open()
        {
#if NET
            long before = GC.GetTotalAllocatedBytes(true);
            s_sink = new byte[CanaryLength];
            long seen = GC.GetTotalAllocatedBytes(true) - before;
            s_sink = null;
            return new ProcessAllocations("GC.GetTotalAllocatedBytes(precise)", seen >= CanaryLength, seen);
#else
            const string Name = "the alloccount profiler module (mono --profile=alloccount)";
            try
            {
                if (MonoModule.alloccount_loaded() == 0) return new ProcessAllocations(Name + ": not loaded", false, 0);
                long before = MonoModule.alloccount_bytes();
                s_sink = new byte[CanaryLength];
                long seen = MonoModule.alloccount_bytes() - before;
                s_sink = null;
                return new ProcessAllocations(Name, seen >= CanaryLength, seen);
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                return new ProcessAllocations(Name + ": not found (" + e.GetType().Name + ")", false, 0);
            }
#endif
        }

        /// <summary>Bytes per await for a report: <see cref="NoCounter"/> where the meter did not see the canary.</summary>
        public string PerAwait(long bytes, long awaits) =>
            Works ? ((double)bytes / Math.Max(1, awaits)).ToString("0.00", System.Globalization.CultureInfo.InvariantCulture) : NoCounter;

#if !NET
        private static class MonoModule
        {
            // The module's file is libmono-profiler-alloccount.so; run.sh puts its folder on LD_LIBRARY_PATH, so that this
            // finds the copy Mono loaded for --profile (the same file: one copy, one count).
            private const string Library = "mono-profiler-alloccount";

            [DllImport(Library)]
            internal static extern long alloccount_bytes();

            [DllImport(Library)]
            internal static extern int alloccount_loaded();
        }
#endif
    }
}
