using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>--mode send: the fan-out table (FanoutScenario) and the burst table (BurstScenario), written to send.md.</summary>
    internal static class SendMode
    {
        public static int Run(Options options)
        {
            Console.WriteLine("where-allocation DatagramServer --mode send on " + Machine.RuntimeDescription);
            Console.WriteLine("machine: " + Machine.Describe() + "; load average " + Machine.LoadAverage);
            NativeTools tools = NativeTools.Prepare(options);
            var started = DateTime.UtcNow;
            // Every sender, the library's thread and the C programs (each a process of its own, which the scheduler would put on
            // whichever CPU is free, with other caches and load), on one CPU: their rows compare the same CPU's work.
            CpuPlacement placement = CpuPlacement.Choose();
            Console.WriteLine(placement.Pinned ? "send: every sender (this thread, and wa-fanout and wa-burst) on CPU " + placement.MeasuredCpu : "send: no CPU affinity to set here: senders go where the scheduler puts them");
            List<FanoutScenario.Row> rows;
            List<BurstScenario.Row> bursts;
            string coalesced;
            placement.ToMeasured();
            try
            {
                rows = FanoutScenario.Run(options, tools.PathOf("wa-fanout"), placement.CpuArgument, Console.WriteLine);
                bursts = BurstScenario.Run(options, tools.PathOf("wa-burst"), placement.CpuArgument, Console.WriteLine, out coalesced);
            }
            finally
            {
                placement.Restore();
            }
            string markdown = "### The send half: " + Machine.RuntimeDescription + "\n\n"
                + "machine: " + Machine.Describe() + "; load average " + Machine.LoadAverage + " (shared, loaded); " + options.Size + "-byte datagrams, "
                + FanoutScenario.DatagramsPerRound.ToString("N0", System.Globalization.CultureInfo.InvariantCulture) + " per row and round, " + options.Rounds + " interleaved rounds; "
                + "sender CPU time (the sending thread, around the sends only; on loopback it includes the kernel's delivery to the receiving socket)\n\n"
                + FanoutScenario.Markdown(rows, options.PeerCounts, options.Rounds) + "\n"
                + BurstScenario.Markdown(bursts, options.Rounds) + "\n" + coalesced + "\n\n"
                + "(" + (DateTime.UtcNow - started).TotalSeconds.ToString("F0", System.Globalization.CultureInfo.InvariantCulture) + " s)\n";
            string output = options.ResolvedOutput;
            Directory.CreateDirectory(output);
            File.WriteAllText(Path.Combine(output, "send.md"), markdown);
            var csv = new System.Text.StringBuilder("runtime,table,sender,n,rounds,cpu_ns_per_datagram_median,bytes_per_datagram,lost\n");
            FanoutScenario.AppendCsv(csv, rows, options.RuntimeLabel, options.Rounds);
            BurstScenario.AppendCsv(csv, bursts, options.RuntimeLabel, options.Rounds);
            File.WriteAllText(Path.Combine(output, "send.csv"), csv.ToString());
            // One line per table for the README's headline (./demo.sh prints them together at its end).
            string runtime = Machine.RuntimeShort + ", load " + Machine.LoadAverage;
            File.WriteAllText(Path.Combine(output, "send-summary.txt"),
                FanoutScenario.SummaryLine(rows, options.PeerCounts, runtime) + "\n" + BurstScenario.SummaryLine(bursts, runtime) + "\n");
            Console.WriteLine();
            Console.WriteLine(markdown);
            bool clean = rows.All(r => r.Lost == 0) && bursts.All(b => b.Lost == 0) && coalesced.Contains(" 0 wrong, 0 missing");
            return clean ? 0 : 3;
        }
    }
}
