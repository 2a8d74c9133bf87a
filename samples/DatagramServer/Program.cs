using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>
    /// The datagram server benchmark: every way of receiving this build can run, side by side in one run,
    /// against the C receivers of bench/native; then the game-frame scenario. See README.md and --help.
    /// </summary>
    public static class Program
    {
        public static int Main(string[] args)
        {
            Options options;
            try
            {
                options = Options.Parse(args);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine("DatagramServer: " + e.Message);
                return 2;
            }
            if (options.ShowHelp)
            {
                Console.WriteLine(Options.Help);
                return 0;
            }
            if (options.CheckFormat) return FormatSelfTest.Run() == 0 ? 0 : 3;
            if (!Linux.IsLinux)
            {
                Console.Error.WriteLine("DatagramServer: Linux only (CPU pinning, SO_MEMINFO and the C programs of bench/native).");
                return 1;
            }

            IReadOnlyList<ReceiverMethod> registry = MethodRegistry.All();
            var selected = new List<ReceiverMethod>();
            var report = new RunReport
            {
                RuntimeLabel = options.RuntimeLabel,
                RuntimeDescription = Machine.RuntimeDescription,
                MachineDescription = Machine.Describe(),
                ModeName = options.Mode == RunMode.Drain ? "drain" : "stream",
                LibraryPath = DatagramPaths.Default.ToString(),
                Date = DateTime.UtcNow.ToString("yyyy-MM-dd HH:mm 'UTC'", CultureInfo.InvariantCulture),
                Size = options.Size,
            };
            foreach (string name in options.Methods ?? registry.Select(m => m.Name).ToList())
            {
                ReceiverMethod? method = MethodRegistry.Find(registry, name);
                if (method == null)
                {
                    Console.Error.WriteLine("DatagramServer: unknown method '" + name + "'; known: " + string.Join(", ", registry.Select(m => m.Name)));
                    return 2;
                }
                if (method.Unavailable != null) report.Absent.Add(method.Name + ": " + method.Unavailable);
                else selected.Add(method);
            }

            try
            {
                return Run(options, selected, report);
            }
            catch (Exception e) when (e is InvalidOperationException || e is TimeoutException || e is FormatException || e is IOException || e is System.Net.Sockets.SocketException)
            {
                Console.WriteLine();
                Console.Error.WriteLine("DatagramServer: " + e.Message);
                return 1;
            }
        }

        private static int Run(Options options, List<ReceiverMethod> selected, RunReport report)
        {
            string output = options.ResolvedOutput;
            long rmemMax = Machine.ReceiveBufferMax;
            report.Workload = options.Size + "-byte datagrams, " + report.ModeName + " mode, "
                + Numbers.Int(options.Count) + " per method; wa-sender (" + options.SenderMode + ") on CPU " + options.SenderCpu
                + ", one receiving thread on CPU " + options.ReceiverCpu + "; SO_RCVBUF asked " + Numbers.Int(options.ReceiveBuffer)
                + (rmemMax > 0 ? " (net.core.rmem_max " + Numbers.Int(rmemMax) + ")" : "")
                + (options.Mode == RunMode.Drain ? "; rounds of " + Numbers.Int(options.DrainRound) : "");

            Console.WriteLine("where-allocation DatagramServer on " + report.RuntimeDescription);
            Console.WriteLine("machine: " + report.MachineDescription);
            Console.WriteLine("workload: " + report.Workload);
            Console.WriteLine("library path: " + report.LibraryPath + "; results go to " + output);
            foreach (string absent in report.Absent) Console.WriteLine("absent: " + absent);

            string? nativeDirectory = NativeTools.Locate(options.NativeDirectory);
            if (nativeDirectory == null) throw new InvalidOperationException("bench/native not found; pass --native-dir");
            Console.Write("building the C programs (" + nativeDirectory + "/build.sh) ... ");
            NativeTools tools = NativeTools.Build(nativeDirectory);
            Console.WriteLine("done");

            var progress = new Progress();
            foreach (ReceiverMethod method in selected)
            {
                ResultRow row;
                if (method is ManagedMethod managed)
                {
                    if (options.WarmUp > 0)
                    {
                        // The same code as the measured run, progress included, so that on CoreCLR every method
                        // involved has been compiled and promoted to its optimised tier before measuring: a
                        // promotion allocates a few dozen bytes once on the thread that triggers it, and the
                        // tiering delay restarts whenever a new method is compiled, even on another thread.
                        ManagedRunner.Run(managed, options, tools, Math.Min(options.WarmUp, options.Count), progress);
                        progress.Show(method.Name, "warmed up");
                        System.Threading.Thread.Sleep(250);
                    }
                    row = ManagedRunner.Run(managed, options, tools, options.Count, progress);
                }
                else
                {
                    row = NativeRunner.Run((NativeMethod)method, options, tools, progress);
                }
                report.Rows.Add(row);
                progress.Done(method.Name, Numbers.Short(row.DatagramsPerSecond) + "/s, " + Numbers.Fixed(row.NsPerDatagram, 0) + " ns, "
                    + (row.BytesPerDatagram == null ? "" : Numbers.Bytes(row.BytesPerDatagram) + " B/datagram, gen0 " + row.Gen0 + ", ")
                    + "drops " + Numbers.Int(row.KernelDrops) + ", lost " + Numbers.Int(row.Lost) + (row.Clean ? "" : "  <-- NOT CLEAN (see details.csv)"));
            }

            ResultRow? c = report.Rows.FirstOrDefault(r => r.Method == "c-recvfrom");
            foreach (ResultRow r in report.Rows)
                r.RatioToCRecvfrom = c != null && c.DatagramsPerSecond > 0 ? r.DatagramsPerSecond / c.DatagramsPerSecond : (double?)null;

            if (options.TickFrames > 0) report.Tick.AddRange(TickScenario.Run(options, progress));

            bool clean = report.Rows.All(r => r.Clean) && report.Tick.All(t => t.Lost == 0);
            report.Verdict = clean
                ? "every datagram the kernel accepted was received intact (lost = 0 in every row" + (options.Inject > 0 ? "; every injected corrupt datagram rejected" : "") + ")."
                : "NOT CLEAN: some row lost, duplicated or misjudged datagrams; see the checks table.";

            Directory.CreateDirectory(output);
            Reports.WriteCsv(Path.Combine(output, "results.csv"), Reports.ResultsHeader, report.Rows.Select(Reports.ResultsLine));
            Reports.WriteCsv(Path.Combine(output, "details.csv"), Reports.DetailsHeader, report.Rows.Select(Reports.DetailsLine));
            if (report.Tick.Count > 0) Reports.WriteCsv(Path.Combine(output, "tick.csv"), Reports.TickHeader, report.Tick.Select(Reports.TickLine));
            string markdown = Reports.Markdown(report);
            File.WriteAllText(Path.Combine(output, "results.md"), markdown);
            File.WriteAllText(Path.Combine(output, "results.svg"),
                SvgChart.Render("DatagramServer: " + report.RuntimeDescription + ", " + report.ModeName + " mode, " + options.Size + "-byte datagrams", report.Rows));

            Console.WriteLine();
            Console.WriteLine(ConsoleTable(report));
            Console.WriteLine("verdict: " + report.Verdict);
            Console.WriteLine("wrote results.csv, details.csv, " + (report.Tick.Count > 0 ? "tick.csv, " : "") + "results.md, results.svg in " + output);
            return clean ? 0 : 3;
        }

        private static string ConsoleTable(RunReport report)
        {
            var lines = new List<string[]>
            {
                new[] { "method", "sent", "drops", "received", "lost", "seconds", "datagrams/s", "ns/dgram", "B/dgram", "gen0", "gen1", "gen2", "x c-recvfrom" },
            };
            foreach (ResultRow r in report.Rows)
            {
                lines.Add(new[]
                {
                    r.Method, Numbers.Int(r.Sent), Numbers.Int(r.KernelDrops), Numbers.Int(r.Received), Numbers.Int(r.Lost),
                    Numbers.Fixed(r.Seconds, 3), Numbers.Fixed(r.DatagramsPerSecond, 0), Numbers.Fixed(r.NsPerDatagram, 1),
                    Dash(Numbers.Bytes(r.BytesPerDatagram)), Dash(Numbers.Optional(r.Gen0)), Dash(Numbers.Optional(r.Gen1)), Dash(Numbers.Optional(r.Gen2)),
                    Dash(Numbers.Ratio(r.RatioToCRecvfrom)),
                });
            }
            string table = Align(lines);
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
