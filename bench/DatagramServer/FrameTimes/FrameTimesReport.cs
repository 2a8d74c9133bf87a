using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>The frame-time figures of one run: per way and rate, the percentiles, the budget, collections, pauses, preemption.</summary>
    internal sealed class FrameTimesReport
    {
        /// <summary>One frame at 60 Hz, in milliseconds.</summary>
        public const double BudgetMs = 1000.0 / 60;

        public string RuntimeLabel { get; set; } = "";
        public string RuntimeDescription { get; set; } = "";
        public string MachineDescription { get; set; } = "";
        public string Date { get; set; } = "";
        public FrameTimesOptions Options { get; set; } = null!;
        public double LiveHeapBuildSeconds { get; set; }
        public long LiveHeapBytes { get; set; }
        public long HeapAfterBuild { get; set; }
        public double TotalSeconds { get; set; }
        public long Lost { get; set; }
        public List<FrameLog> Logs { get; } = new List<FrameLog>();

        public IEnumerable<FrameSummary> Summaries() => Logs.Select(l => new FrameSummary(l));

        public static string RateName(int rate) => rate == 0 ? "flat out" : rate + " Hz";

        public void Write(string output)
        {
            Directory.CreateDirectory(output);
            var summary = new StringBuilder("runtime,rate,way,frames,p50_ms,p99_ms,p999_ms,max_ms,over_budget,collections,frames_with_collection,longest_pause_ms,pause_source,bytes_per_frame,p99_over_p50,slow_frames,slow_preempted,slow_collecting,live_heap_mb,cpu_p50_ms,cpu_p99_ms\n");
            foreach (FrameSummary s in Summaries())
            {
                summary.Append(string.Join(",", RuntimeLabel, s.Rate, s.Way, s.Frames, Ms(s.P50), Ms(s.P99), Ms(s.P999), Ms(s.Max), s.OverBudget, s.Collections,
                    s.FramesWithCollection, Ms(s.LongestPause), s.PauseSource, s.BytesPerFrame == null ? "" : Numbers.Bytes(s.BytesPerFrame), Numbers.Fixed(s.P99 / s.P50, 2),
                    s.Slow, s.SlowPreempted, s.SlowCollecting, Options.LiveHeapMb, Ms(s.CpuP50), Ms(s.CpuP99))).Append('\n');
            }
            File.WriteAllText(Path.Combine(output, "frametimes.csv"), summary.ToString());

            var frames = new StringBuilder("runtime,rate,way,frame,start_ms,wall_ms,cpu_ms,collections,pause_ms,allocated_bytes\n");
            foreach (FrameLog log in Logs)
            {
                long origin = log.Count > 0 ? log.Start[0] : 0;
                for (int i = 0; i < log.Count; i++)
                {
                    frames.Append(RuntimeLabel).Append(',').Append(log.Rate).Append(',').Append(log.Way).Append(',').Append(i).Append(',')
                        .Append(Numbers.Fixed((log.Start[i] - origin) * 1000.0 / System.Diagnostics.Stopwatch.Frequency, 3)).Append(',')
                        .Append(Ms(log.WallNs[i])).Append(',').Append(Ms(log.CpuNs[i])).Append(',').Append(log.Collections[i]).Append(',')
                        .Append(FrameCounters.HasPauseTotal ? Ms(log.PauseNs[i]) : "").Append(',')
                        .Append(FrameCounters.HasAllocationCounter ? Numbers.Int(log.AllocatedBytes[i]) : "").Append('\n');
                }
            }
            File.WriteAllText(Path.Combine(output, "frames.csv"), frames.ToString());
            File.WriteAllText(Path.Combine(output, "frametimes.md"), Markdown());
            File.WriteAllText(Path.Combine(output, "frametimes.svg"), FrameTimesSvg.Render(this));
        }

        public string Markdown()
        {
            var md = new StringBuilder();
            md.Append("### Frame times: ").Append(RuntimeDescription).Append("\n\n");
            md.Append("Machine: ").Append(MachineDescription).Append("; shared and loaded (other work ran beside it); ").Append(Date).Append(".  \n");
            md.Append("Frame: ").Append(Options.Clients).Append(" clients × ").Append(Options.Entities).Append(" entity updates sent and received (")
              .Append(Options.Clients * Options.Entities).Append(" datagrams of ").Append(Options.Size).Append(" bytes each way); live heap ")
              .Append(LiveHeapBytes >> 20).Append(" MB of small objects (").Append(LiveHeapBuildSeconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture))
              .Append(" s to build); ").Append(Options.Frames).Append(" frames per way and rate in ").Append(Options.Rounds).Append(" interleaved rounds; whole run ")
              .Append(TotalSeconds.ToString("F0", System.Globalization.CultureInfo.InvariantCulture)).Append(" s.  \n");
            md.Append("Allocation counter: ").Append(FrameCounters.HasAllocationCounter ? "the thread's (seen to count a canary)" : AllocationCanary.NoCounter + " (B/frame n/a; collections show the cost)").Append(".\n\n");
            md.Append("| rate | way | p50 ms | p99 ms | p99.9 ms | max ms | frames > 16.7 ms | collections | longest pause ms | B/frame | p99/p50 | slow frames: preempted / collecting | CPU p50 / p99 ms |\n");
            md.Append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            foreach (FrameSummary s in Summaries())
            {
                md.Append("| ").Append(RateName(s.Rate)).Append(" | ").Append(s.Way).Append(" | ").Append(Ms(s.P50)).Append(" | ").Append(Ms(s.P99)).Append(" | ")
                  .Append(Ms(s.P999)).Append(" | ").Append(Ms(s.Max)).Append(" | ").Append(s.OverBudget).Append(" | ").Append(s.Collections).Append(" | ")
                  .Append(s.FramesWithCollection == 0 ? "-" : Ms(s.LongestPause) + (s.PauseSource == "runtime" ? "" : " (est.)")).Append(" | ")
                  .Append(s.BytesPerFrame == null ? "n/a" : Numbers.Bytes(s.BytesPerFrame)).Append(" | ").Append(Numbers.Fixed(s.P99 / s.P50, 2)).Append(" | ")
                  .Append(s.Slow).Append(": ").Append(s.SlowPreempted).Append(" / ").Append(s.SlowCollecting).Append(" | ")
                  .Append(Ms(s.CpuP50)).Append(" / ").Append(Ms(s.CpuP99)).Append(" |\n");
            }
            md.Append('\n');
            foreach (FrameSummary s in Summaries().Where(s => s.Way == "library"))
            {
                bool met = s.Collections == 0 && s.P99 <= 1.5 * s.P50;
                md.Append("- library, ").Append(RateName(s.Rate)).Append(": ").Append(s.Collections).Append(" collections in its frames, p99 = ")
                  .Append(Numbers.Fixed(s.P99 / s.P50, 2)).Append(" × p50: target (0 collections, p99 ≤ 1.5 × p50) ").Append(met ? "met" : "NOT met").Append(".\n");
            }
            md.Append("\nPause: ").Append(FrameCounters.HasPauseTotal
                ? "the runtime's own pause total (GC.GetTotalPauseDuration) across the frame."
                : "estimated: the frame's time less the way's median collection-free frame (this runtime reports no pause time).")
              .Append(" A slow frame is one over 1.5 × its way's p50; preempted: no collection ran in it and more than half its excess over p50 was off the CPU (wall time less the thread's CPU time), the shared machine's doing; collecting: a collection ran in it.\n");
            if (FrameCounters.IsBoehm)
            {
                md.Append("\nBoehm here and in Unity: this is Debian's Mono 6.8 built with Boehm, collecting stop-the-world as shipped (not incremental); ")
                  .Append("Unity's manual says its player runs Boehm-Demers-Weiser in incremental mode by default, in time slices (GarbageCollector.incrementalTimeSliceNanoseconds) ")
                  .Append("spread over frames, with a full stop-the-world collection when the increments cannot keep up, and Unity builds its own copy of the collector. ")
                  .Append("So the allocating way's single long pauses here would be spread as slices in a Unity player; the marking work, which grows with the live heap, is the same, ")
                  .Append("and the library's frames have none of it to do.\n");
            }
            return md.ToString();
        }

        public string ConsoleTable()
        {
            var text = new StringBuilder();
            text.Append("rate      way         p50 ms  p99 ms  p99.9 ms  max ms  >16.7ms  collections  pause ms     B/frame  p99/p50  slow: preempted/collecting\n");
            foreach (FrameSummary s in Summaries())
            {
                text.Append(RateName(s.Rate).PadRight(10)).Append(s.Way.PadRight(10)).Append(Ms(s.P50).PadLeft(8)).Append(Ms(s.P99).PadLeft(8)).Append(Ms(s.P999).PadLeft(10))
                    .Append(Ms(s.Max).PadLeft(8)).Append(s.OverBudget.ToString().PadLeft(9)).Append(s.Collections.ToString().PadLeft(13))
                    .Append((s.FramesWithCollection == 0 ? "-" : Ms(s.LongestPause)).PadLeft(10))
                    .Append((s.BytesPerFrame == null ? "n/a" : Numbers.Bytes(s.BytesPerFrame)).PadLeft(12)).Append(Numbers.Fixed(s.P99 / s.P50, 2).PadLeft(9))
                    .Append(("  " + s.Slow + ": " + s.SlowPreempted + "/" + s.SlowCollecting)).Append('\n');
            }
            return text.ToString().TrimEnd('\n');
        }

        public static string Ms(double nanoseconds) => Numbers.Fixed(nanoseconds / 1e6, 2);
    }

    /// <summary>The figures of one way at one rate.</summary>
    internal sealed class FrameSummary
    {
        public FrameSummary(FrameLog log)
        {
            Way = log.Way;
            Rate = log.Rate;
            Frames = log.Count;
            long[] sorted = log.WallNs.Take(log.Count).OrderBy(x => x).ToArray();
            P50 = Percentile(sorted, 0.50);
            P99 = Percentile(sorted, 0.99);
            P999 = Percentile(sorted, 0.999);
            Max = sorted.Length == 0 ? 0 : sorted[sorted.Length - 1];
            long[] cpu = log.CpuNs.Take(log.Count).OrderBy(x => x).ToArray();
            CpuP50 = Percentile(cpu, 0.50);
            CpuP99 = Percentile(cpu, 0.99);
            long[] quiet = Enumerable.Range(0, log.Count).Where(i => log.Collections[i] == 0).Select(i => log.WallNs[i]).OrderBy(x => x).ToArray();
            double quietMedian = quiet.Length > 0 ? Percentile(quiet, 0.5) : P50;
            PauseSource = FrameCounters.HasPauseTotal ? "runtime" : "estimate";
            for (int i = 0; i < log.Count; i++)
            {
                if (log.WallNs[i] > FrameTimesReport.BudgetMs * 1e6) OverBudget++;
                Collections += log.Collections[i];
                if (log.Collections[i] > 0)
                {
                    FramesWithCollection++;
                    double pause = FrameCounters.HasPauseTotal ? log.PauseNs[i] : Math.Max(0, log.WallNs[i] - quietMedian);
                    LongestPause = Math.Max(LongestPause, pause);
                }
                if (log.WallNs[i] > 1.5 * P50)
                {
                    Slow++;
                    double excess = log.WallNs[i] - P50;
                    if (log.Collections[i] == 0 && log.WallNs[i] - log.CpuNs[i] > excess / 2) SlowPreempted++;
                    if (log.Collections[i] > 0) SlowCollecting++;
                }
            }
            if (FrameCounters.HasAllocationCounter && log.Count > 0) BytesPerFrame = log.AllocatedBytes.Take(log.Count).Sum() / (double)log.Count;
        }

        public string Way { get; }
        public int Rate { get; }
        public int Frames { get; }
        public double P50 { get; }
        public double P99 { get; }
        public double P999 { get; }
        public double Max { get; }

        /// <summary>The thread's CPU time per frame, median and 99th percentile: the frame's own work, without the time it waited for a CPU.</summary>
        public double CpuP50 { get; }

        public double CpuP99 { get; }
        public int OverBudget { get; }
        public long Collections { get; }
        public int FramesWithCollection { get; }
        public double LongestPause { get; }
        public string PauseSource { get; }
        public double? BytesPerFrame { get; }
        public int Slow { get; }
        public int SlowPreempted { get; }
        public int SlowCollecting { get; }

        /// <summary>The nearest-rank percentile of sorted values.</summary>
        private static double Percentile(long[] sorted, double p)
        {
            if (sorted.Length == 0) return 0;
            int rank = (int)Math.Ceiling(p * sorted.Length) - 1;
            return sorted[Math.Max(0, Math.Min(sorted.Length - 1, rank))];
        }
    }
}
