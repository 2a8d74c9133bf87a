using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// --mode drain (the default) and --mode stream: every way of receiving this build can run, in interleaved rounds,
    /// beside the C receivers of bench/native; then the shard and tick scenarios. --mode sweep: the same drain over the sweep's
    /// rows (<see cref="MethodRegistry.Sweep"/>), without the scenarios. Writes results.md and its CSV files.
    /// </summary>
    internal static class ReceiveMode
    {
        public static int Run(Options options)
        {
            IReadOnlyList<ReceiverMethod> registry = options.Mode == RunMode.Sweep ? MethodRegistry.Sweep(options.BatchSizes) : MethodRegistry.All();
            var selected = new List<ReceiverMethod>();
            var report = new RunReport
            {
                RuntimeLabel = options.RuntimeLabel,
                RuntimeDescription = Machine.RuntimeDescription,
                MachineDescription = Machine.Describe(),
                ModeName = options.ModeName,
                LibraryPath = DatagramPathSettings.Default.ToString(),
                Date = DateTime.UtcNow.ToString("yyyy-MM-dd HH:mm 'UTC'", CultureInfo.InvariantCulture),
                Size = options.Size,
            };
            foreach (string name in options.Methods ?? registry.Select(m => m.Name).ToList())
            {
                ReceiverMethod? method = MethodRegistry.Find(registry, name);
                if (method == null) throw new ArgumentException("unknown method '" + name + "'; known: " + string.Join(", ", registry.Select(m => m.Name)));
                if (method.Unavailable != null) report.Absent.Add(method.Name + ": " + method.Unavailable);
                else selected.Add(method);
            }

            return Run(options, selected, report);
        }

        private static int Run(Options options, List<ReceiverMethod> selected, RunReport report)
        {
            string output = options.ResolvedOutput;
            long rmemMax = Machine.ReceiveBufferMax;
            bool drain = options.Drains;
            bool sweep = options.Mode == RunMode.Sweep;
            report.Rounds = options.Rounds;
            report.Workload = options.Size + "-byte datagrams, " + report.ModeName + " mode, "
                + Numbers.Int(options.Rounds) + (options.Rounds == 1 ? " round" : " interleaved rounds") + " of " + Numbers.Int(options.Count) + " per method"
                + (drain ? " (queue fills of " + Numbers.Int(options.DrainRound) + ")" : "")
                + "; wa-sender (" + options.SenderMode + ") on CPU " + options.SenderCpu
                + ", one receiving thread on CPU " + options.ReceiverCpu + "; SO_RCVBUF asked " + Numbers.Int(options.ReceiveBuffer)
                + (rmemMax > 0 ? " (net.core.rmem_max " + Numbers.Int(rmemMax) + ")" : "")
                + (sweep ? "; slots and buffers of " + Numbers.Int(options.BufferSize) + " B, every datagram checked as bytes (no decode) or counted only" : "");
            report.Load = Machine.LoadAverage;

            Console.WriteLine("where-allocation DatagramServer on " + report.RuntimeDescription);
            Console.WriteLine("machine: " + report.MachineDescription + "; load average " + report.Load);
            Console.WriteLine("workload: " + report.Workload);
            Console.WriteLine("library path: " + report.LibraryPath + "; results go to " + output);
            foreach (string absent in report.Absent) Console.WriteLine("absent: " + absent);
            if (!FrameCounters.HasAllocationCounter) Console.WriteLine("allocation counter: " + AllocationCanary.NoCounter + " (it did not see a byte[" + AllocationCanary.Length + "] canary): bytes are left empty, collections show the cost");

            NativeTools tools = NativeTools.Prepare(options);

            var progress = new Progress();
            if (options.WarmUp > 0)
            {
                foreach (ReceiverMethod method in selected)
                {
                    if (!(method is ManagedMethod managed)) continue;
                    // The same code as the measured runs, progress included, so that every method involved is compiled
                    // before anything is measured (on CoreCLR, tiering is off here: see DatagramServer.csproj).
                    ManagedRunner.Run(managed, options, tools, Math.Min(options.WarmUp, options.Count), 0, progress);
                    progress.Done(method.Name, "warmed up");
                }
                System.Threading.Thread.Sleep(250);
            }

            // Interleaved rounds: every method once per round, so that a slow spell of this shared machine falls on every
            // method alike instead of on one; and each round starts one method later than the one before, so that no method
            // always runs first after the last one's round (a C receiver's process, another method's cache footprint).
            var rounds = new Dictionary<string, List<ResultRow>>();
            foreach (ReceiverMethod method in selected) rounds[method.Name] = new List<ResultRow>();
            for (int round = 0; round < options.Rounds; round++)
            {
                int inject = round == 0 ? options.Inject : 0;
                for (int turn = 0; turn < selected.Count; turn++)
                {
                    ReceiverMethod method = selected[(round + turn) % selected.Count];
                    int injected = method.ChecksContent ? inject : 0;
                    ResultRow row = method is ManagedMethod managed
                        ? ManagedRunner.Run(managed, options, tools, options.Count, injected, progress)
                        : NativeRunner.Run((NativeMethod)method, options, tools, injected, progress);
                    row.Round = round + 1;
                    rounds[method.Name].Add(row);
                    progress.Done(method.Name + (options.Rounds > 1 ? ", round " + (round + 1) : ""),
                        Numbers.Fixed(row.NsPerDatagram, 0) + " ns, CPU " + (row.CpuNsPerDatagram == null ? "-" : Numbers.Fixed(row.CpuNsPerDatagram.Value, 0)) + " ns, "
                        + (row.BytesPerDatagram == null ? "" : Numbers.Bytes(row.BytesPerDatagram) + " B/datagram, gen0 " + row.Gen0 + ", ")
                        + "drops " + Numbers.Int(row.KernelDrops) + ", lost " + Numbers.Int(row.Lost) + (row.Clean ? "" : "  <-- NOT CLEAN (see rounds.csv)"));
                }
            }

            foreach (ReceiverMethod method in selected)
            {
                report.Rows.Add(ResultRow.Combine(rounds[method.Name]));
                report.RoundRows.AddRange(rounds[method.Name]);
                report.Summaries.Add(new MethodSummary(method.Name, rounds[method.Name]));
            }
            MethodSummary? c = report.Summaries.FirstOrDefault(m => m.Method == "c-recvfrom");
            foreach (MethodSummary summary in report.Summaries)
                if (c != null) summary.RatioToCRecvfrom = new Comparison("", summary, c).Wall;
            ResultRow? cRow = report.Rows.FirstOrDefault(r => r.Method == "c-recvfrom");
            foreach (ResultRow r in report.Rows)
                r.RatioToCRecvfrom = cRow != null && cRow.DatagramsPerSecond > 0 ? r.DatagramsPerSecond / cRow.DatagramsPerSecond : (double?)null;
            AddComparison(report, "the library's own cost, one datagram per call", "library", "raw-pinvoke");
            AddComparison(report, "what the handle reference alone costs (the runtime's SafeHandle)", "raw-pinvoke-held", "raw-pinvoke");
            AddComparison(report, "what the library's safety and the sender cost at the least", "raw-pinvoke-safe", "raw-pinvoke");
            AddComparison(report, "the library's structure above that least", "library", "raw-pinvoke-safe");
            AddComparison(report, "the library's own cost, batches", "library-batch", "raw-recvmmsg");
            AddComparison(report, "batches against C", "library-batch", "c-recvmmsg");
            AddComparison(report, "the runtime's share in batches (P/Invoke, decode and check in JIT code)", "raw-recvmmsg", "c-recvmmsg");
            AddComparison(report, "one datagram per call against C", "library", "c-recvfrom");
            AddComparison(report, "the runtime's share (P/Invoke, decode and check in JIT code)", "raw-pinvoke", "c-recvfrom");
            AddComparison(report, "batches against C's one call per datagram", "library-batch", "c-recvfrom");
            if (sweep)
                foreach (SweepComparison k in MethodRegistry.SweepComparisons(options.BatchSizes)) AddComparison(report, k.Label, k.Method, k.Baseline);

            if (options.ShardCounts.Count > 0 && !sweep)
            {
                if (DatagramShardGroup.IsSupported) report.Shards.AddRange(ShardScenario.Run(options, tools, progress));
                else report.Absent.Add("shards: DatagramShardGroup.IsSupported is false here");
            }
            if (options.TickFrames > 0 && !sweep) report.Tick.AddRange(TickScenario.Run(options, progress));

            bool clean = report.RoundRows.All(r => r.Clean) && report.Shards.All(r => r.Clean) && report.Tick.All(t => t.Lost == 0);
            report.Verdict = clean
                ? "every datagram the kernel accepted was received intact (lost = 0 in every row" + (options.Inject > 0 ? "; every injected corrupt datagram rejected" : "") + ")."
                : "NOT CLEAN: some row lost, duplicated or misjudged datagrams; see the checks table.";

            Directory.CreateDirectory(output);
            Reports.WriteCsv(Path.Combine(output, "results.csv"), Reports.ResultsHeader, report.Rows.Select(Reports.ResultsLine));
            Reports.WriteCsv(Path.Combine(output, "details.csv"), Reports.DetailsHeader, report.Rows.Select(Reports.DetailsLine));
            Reports.WriteCsv(Path.Combine(output, "summary.csv"), Reports.SummaryHeader, report.Summaries.Select(m => Reports.SummaryLine(report, m)));
            Reports.WriteCsv(Path.Combine(output, "rounds.csv"), Reports.RoundsHeader, report.RoundRows.Select(Reports.RoundsLine));
            if (report.Shards.Count > 0) Reports.WriteCsv(Path.Combine(output, "shards.csv"), Reports.ShardsHeader, report.Shards.Select(Reports.ShardsLine));
            if (report.Tick.Count > 0) Reports.WriteCsv(Path.Combine(output, "tick.csv"), Reports.TickHeader, report.Tick.Select(Reports.TickLine));
            string markdown = Reports.Markdown(report);
            File.WriteAllText(Path.Combine(output, "results.md"), markdown);
            File.WriteAllText(Path.Combine(output, "results.svg"),
                SvgChart.Render("DatagramServer: " + report.RuntimeDescription + ", " + report.ModeName + " mode, " + options.Size + "-byte datagrams", report.Rows));

            Console.WriteLine();
            Console.WriteLine(ConsoleTable(report));
            Console.WriteLine("verdict: " + report.Verdict);
            Console.WriteLine("wrote results.csv, summary.csv, rounds.csv, details.csv, " + (report.Shards.Count > 0 ? "shards.csv, " : "")
                + (report.Tick.Count > 0 ? "tick.csv, " : "") + "results.md, results.svg in " + output);
            return clean ? 0 : 3;
        }

        private static void AddComparison(RunReport report, string label, string method, string baseline)
        {
            MethodSummary? a = report.Summaries.FirstOrDefault(m => m.Method == method);
            MethodSummary? b = report.Summaries.FirstOrDefault(m => m.Method == baseline);
            if (a != null && b != null) report.Comparisons.Add(new Comparison(label, a, b));
        }

        private static string ConsoleTable(RunReport report)
        {
            var lines = new List<string[]>
            {
                new[] { "method", "ns/dgram", "(min-max)", "CPU ns/dgram", "(min-max)", "datagrams/s", "x c-recvfrom", "B/dgram", "gen0", "drops", "lost" },
            };
            foreach (MethodSummary m in report.Summaries)
            {
                ResultRow all = report.Rows.First(r => r.Method == m.Method);
                lines.Add(new[]
                {
                    m.Method, Numbers.Fixed(m.NsPerDatagram.Median, 0), Numbers.Fixed(m.NsPerDatagram.Min, 0) + "-" + Numbers.Fixed(m.NsPerDatagram.Max, 0),
                    m.CpuNsPerDatagram.Count == 0 ? "-" : Numbers.Fixed(m.CpuNsPerDatagram.Median, 0),
                    m.CpuNsPerDatagram.Count == 0 ? "-" : Numbers.Fixed(m.CpuNsPerDatagram.Min, 0) + "-" + Numbers.Fixed(m.CpuNsPerDatagram.Max, 0),
                    Numbers.Fixed(m.MedianDatagramsPerSecond, 0), m.RatioToCRecvfrom == null ? "-" : Numbers.Ratio(m.RatioToCRecvfrom.Value.Median),
                    Dash(Numbers.Bytes(all.BytesPerDatagram)), Dash(Numbers.Optional(all.Gen0)), Numbers.Int(all.KernelDrops), Numbers.Int(all.Lost),
                });
            }
            string table = "medians over " + report.Rounds + (report.Rounds == 1 ? " round" : " interleaved rounds") + "; drops, lost, B and gen0 over all of them\n" + Align(lines);
            if (report.Comparisons.Count > 0)
            {
                var ratios = new List<string[]> { new[] { "ratio of rates, per round", "median", "(min-max)", "by CPU time", "(min-max)" } };
                foreach (Comparison k in report.Comparisons)
                {
                    ratios.Add(new[]
                    {
                        k.Method + " / " + k.Baseline, Numbers.Fixed(k.Wall.Median, 3), Numbers.Fixed(k.Wall.Min, 3) + "-" + Numbers.Fixed(k.Wall.Max, 3),
                        k.Cpu.Count == 0 ? "-" : Numbers.Fixed(k.Cpu.Median, 3), k.Cpu.Count == 0 ? "-" : Numbers.Fixed(k.Cpu.Min, 3) + "-" + Numbers.Fixed(k.Cpu.Max, 3),
                    });
                }
                table += "\n" + Align(ratios);
            }
            if (report.Shards.Count > 0)
            {
                var shards = new List<string[]> { new[] { "shard receiver", "shards", "datagrams/s", "(min-max)", "x 1 shard", "CPU ns/dgram", "B/dgram", "smallest share", "drops", "lost" } };
                foreach (ShardRow r in report.Shards)
                {
                    shards.Add(new[]
                    {
                        r.Receiver, Numbers.Int(r.Shards), Numbers.Fixed(r.Rate.Median, 0), Numbers.Fixed(r.Rate.Min, 0) + "-" + Numbers.Fixed(r.Rate.Max, 0),
                        r.RatioToOneShard == null ? "-" : Numbers.Fixed(r.RatioToOneShard.Value.Median, 2) + " (" + Numbers.Fixed(r.RatioToOneShard.Value.Min, 2) + "-" + Numbers.Fixed(r.RatioToOneShard.Value.Max, 2) + ")", Numbers.Fixed(r.CpuNsPerDatagram.Median, 0),
                        Dash(Numbers.Bytes(r.BytesPerDatagram)), Numbers.Fixed(r.SmallestShare, 2), Numbers.Int(r.KernelDrops), Numbers.Int(r.Lost),
                    });
                }
                table += "\n" + Align(shards);
            }
            if (report.Tick.Count > 0)
            {
                var tick = new List<string[]> { new[] { "tick way", "datagrams/frame", "lost", "frames/s", "B/frame", "gen0", "gen1", "gen2" } };
                foreach (TickRow t in report.Tick)
                {
                    tick.Add(new[]
                    {
                        t.Way, Numbers.Int(t.DatagramsPerFrame), Numbers.Int(t.Lost), Numbers.Fixed(t.FramesPerSecond, 1),
                        Numbers.Bytes(t.BytesPerFrame), Numbers.Int(t.Gen0), Numbers.Int(t.Gen1), Numbers.Int(t.Gen2),
                    });
                }
                table += "\n" + Align(tick);
            }
            return table;
        }

        private static string Align(List<string[]> lines)
        {
            int columns = lines[0].Length;
            var widths = new int[columns];
            foreach (string[] line in lines)
                for (int i = 0; i < columns; i++) widths[i] = Math.Max(widths[i], line[i].Length);
            var text = new System.Text.StringBuilder();
            foreach (string[] line in lines)
            {
                for (int i = 0; i < columns; i++)
                {
                    if (i > 0) text.Append("  ");
                    text.Append(i == 0 ? line[i].PadRight(widths[i]) : line[i].PadLeft(widths[i]));
                }
                text.Append('\n');
            }
            return text.ToString().TrimEnd('\n');
        }

        private static string Dash(string value) => value.Length == 0 ? "-" : value;
    }
}
