using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>--mode scale: the many-peers drain table (ScaleScenario), written to scale.md.</summary>
    internal static class ScaleMode
    {
        public static int Run(Options options)
        {
            Console.WriteLine("where-allocation DatagramServer --mode scale on " + Machine.RuntimeDescription);
            Console.WriteLine("machine: " + Machine.Describe() + "; load average " + Machine.LoadAverage);
            NativeTools tools = NativeTools.Prepare(options);
            var started = DateTime.UtcNow;
            List<ScaleScenario.Row> rows = ScaleScenario.Run(options, tools.ReceiverPath, Console.WriteLine);
            string markdown = "### Many peers: " + Machine.RuntimeDescription + "\n\n"
                + "machine: " + Machine.Describe() + "; load average " + Machine.LoadAverage + " (shared, loaded); drain mode, " + options.Rounds + " interleaved rounds; "
                + "receiver CPU time per datagram (the receiving thread; wa-recv: its process) while it drains a full queue alone\n\n"
                + ScaleScenario.Markdown(rows, options.PeerCounts, options.Rounds, options.DrainRound)
                + "(" + (DateTime.UtcNow - started).TotalSeconds.ToString("F0", System.Globalization.CultureInfo.InvariantCulture) + " s)\n";
            string output = options.ResolvedOutput;
            Directory.CreateDirectory(output);
            File.WriteAllText(Path.Combine(output, "scale.md"), markdown);
            File.WriteAllText(Path.Combine(output, "scale.csv"), ScaleScenario.Csv(rows, options.PeerCounts, options.RuntimeLabel, options.Rounds));
            // One line for the README's headline (./demo.sh prints it with the send lines at its end).
            File.WriteAllText(Path.Combine(output, "scale-summary.txt"),
                ScaleScenario.SummaryLine(rows, options.PeerCounts, Machine.RuntimeShort + ", load " + Machine.LoadAverage) + "\n");
            Console.WriteLine();
            Console.WriteLine(markdown);
            return rows.All(r => r.Lost == 0 && r.Wrong == 0) ? 0 : 3;
        }
    }
}
