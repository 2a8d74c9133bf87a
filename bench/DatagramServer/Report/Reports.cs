using System.Collections.Generic;
using System.IO;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>Writes results.csv, details.csv, summary.csv, rounds.csv, shards.csv, tick.csv and results.md.</summary>
    internal static class Reports
    {
        public const string ResultsHeader =
            "runtime,mode,method,sent,kernel_drops,received,lost,seconds,datagrams_per_s,ns_per_datagram,bytes_per_datagram,gen0,gen1,gen2,ratio_to_c_recvfrom";

        public const string DetailsHeader =
            "runtime,mode,method,read,received,corrupt,injected_corrupt,duplicate,out_of_range,allocated_bytes,cpu_ns_per_datagram,rcvbuf_granted,sender_mode,stopped_by";

        public const string SummaryHeader =
            "runtime,mode,method,rounds,ns_per_datagram_median,ns_per_datagram_min,ns_per_datagram_max,cpu_ns_per_datagram_median,cpu_ns_per_datagram_min,cpu_ns_per_datagram_max,datagrams_per_s_median,ratio_to_c_recvfrom_median,bytes_per_datagram,lost";

        public const string RoundsHeader =
            "runtime,mode,method,round,sent,kernel_drops,received,lost,corrupt,seconds,ns_per_datagram,cpu_ns_per_datagram,bytes_per_datagram,gen0";

        public const string ShardsHeader =
            "runtime,receiver,shards,fills,sent,kernel_drops,received,lost,corrupt,duplicate,datagrams_per_s_median,datagrams_per_s_min,datagrams_per_s_max,ratio_to_one_shard,cpu_ns_per_datagram_median,bytes_per_datagram,gen0,smallest_shard_share";

        public const string TickHeader =
            "runtime,way,clients,entities,frames,datagrams_per_frame,lost,seconds,frames_per_s,bytes_per_frame,gen0,gen1,gen2";

        public static string ResultsLine(ResultRow r)
        {
            return string.Join(",", r.Runtime, r.Mode, r.Method, Numbers.Int(r.Sent), Numbers.Int(r.KernelDrops), Numbers.Int(r.Received),
                Numbers.Int(r.Lost), Numbers.Fixed(r.Seconds, 6), Numbers.Fixed(r.DatagramsPerSecond, 0), Numbers.Fixed(r.NsPerDatagram, 1),
                Numbers.Bytes(r.BytesPerDatagram), Numbers.Optional(r.Gen0), Numbers.Optional(r.Gen1), Numbers.Optional(r.Gen2), Numbers.Ratio(r.RatioToCRecvfrom));
        }

        public static string DetailsLine(ResultRow r)
        {
            return string.Join(",", r.Runtime, r.Mode, r.Method, Numbers.Int(r.Read), Numbers.Int(r.Received), Numbers.Int(r.Corrupt),
                Numbers.Int(r.Injected), Numbers.Int(r.Duplicate), Numbers.Int(r.OutOfRange),
                r.AllocatedBytes == null ? "" : Numbers.Int(r.AllocatedBytes.Value),
                r.CpuNsPerDatagram == null ? "" : Numbers.Fixed(r.CpuNsPerDatagram.Value, 1), Numbers.Int(r.ReceiveBufferGranted), r.SenderMode, r.StoppedBy);
        }

        public static string SummaryLine(RunReport report, MethodSummary m)
        {
            ResultRow all = report.Rows.Find(r => r.Method == m.Method)!;
            return string.Join(",", all.Runtime, all.Mode, m.Method, Numbers.Int(m.Rounds.Count),
                Numbers.Fixed(m.NsPerDatagram.Median, 1), Numbers.Fixed(m.NsPerDatagram.Min, 1), Numbers.Fixed(m.NsPerDatagram.Max, 1),
                Optional(m.CpuNsPerDatagram, s => s.Median), Optional(m.CpuNsPerDatagram, s => s.Min), Optional(m.CpuNsPerDatagram, s => s.Max),
                Numbers.Fixed(m.MedianDatagramsPerSecond, 0), m.RatioToCRecvfrom == null ? "" : Numbers.Fixed(m.RatioToCRecvfrom.Value.Median, 3),
                Numbers.Bytes(all.BytesPerDatagram), Numbers.Int(all.Lost));
        }

        public static string RoundsLine(ResultRow r)
        {
            return string.Join(",", r.Runtime, r.Mode, r.Method, Numbers.Int(r.Round), Numbers.Int(r.Sent), Numbers.Int(r.KernelDrops), Numbers.Int(r.Received),
                Numbers.Int(r.Lost), Numbers.Int(r.Corrupt), Numbers.Fixed(r.Seconds, 6), Numbers.Fixed(r.NsPerDatagram, 1),
                r.CpuNsPerDatagram == null ? "" : Numbers.Fixed(r.CpuNsPerDatagram.Value, 1), Numbers.Bytes(r.BytesPerDatagram), Numbers.Optional(r.Gen0));
        }

        public static string ShardsLine(ShardRow r)
        {
            return string.Join(",", r.Runtime, r.Receiver, Numbers.Int(r.Shards), Numbers.Int(r.FillRates.Count), Numbers.Int(r.Sent), Numbers.Int(r.KernelDrops),
                Numbers.Int(r.Received), Numbers.Int(r.Lost), Numbers.Int(r.Corrupt), Numbers.Int(r.Duplicate),
                Numbers.Fixed(r.Rate.Median, 0), Numbers.Fixed(r.Rate.Min, 0), Numbers.Fixed(r.Rate.Max, 0),
                r.RatioToOneShard == null ? "" : Numbers.Fixed(r.RatioToOneShard.Value.Median, 3), Numbers.Fixed(r.CpuNsPerDatagram.Median, 1),
                Numbers.Bytes(r.BytesPerDatagram), Numbers.Optional(r.Gen0), Numbers.Fixed(r.SmallestShare, 3));
        }

        private static string Optional(Spread s, System.Func<Spread, double> value) => s.Count == 0 ? "" : Numbers.Fixed(value(s), 1);

        public static string TickLine(TickRow t)
        {
            return string.Join(",", t.Runtime, t.Way, Numbers.Int(t.Clients), Numbers.Int(t.Entities), Numbers.Int(t.Frames),
                Numbers.Int(t.DatagramsPerFrame), Numbers.Int(t.Lost), Numbers.Fixed(t.Seconds, 6), Numbers.Fixed(t.FramesPerSecond, 1),
                Numbers.Bytes(t.BytesPerFrame), Numbers.Int(t.Gen0), Numbers.Int(t.Gen1), Numbers.Int(t.Gen2));
        }

        public static void WriteCsv(string path, string header, IEnumerable<string> lines)
        {
            var text = new StringBuilder();
            text.Append(header).Append('\n');
            foreach (string line in lines) text.Append(line).Append('\n');
            File.WriteAllText(path, text.ToString());
        }

        /// <summary>The results as Markdown: the table of results.csv, then what the table does not say.</summary>
        public static string Markdown(RunReport report)
        {
            var md = new StringBuilder();
            md.Append("# DatagramServer results: ").Append(report.RuntimeLabel).Append(", ").Append(report.ModeName).Append(" mode\n\n");
            md.Append("- runtime: ").Append(report.RuntimeDescription).Append('\n');
            md.Append("- machine: ").Append(report.MachineDescription).Append('\n');
            md.Append("- ").Append(report.Workload).Append('\n');
            md.Append("- library path: `").Append(report.LibraryPath).Append("` (DatagramPathSettings.Default)\n");
            md.Append("- load average (1, 5, 15 min) at the start: ").Append(report.Load).Append('\n');
            md.Append("- date: ").Append(report.Date).Append("\n\n");

            md.Append("## Per method: median and spread over ").Append(report.Rounds).Append(report.Rounds == 1 ? " round\n\n" : " interleaved rounds\n\n");
            md.Append("Each round runs every method once, in the same order. ns/datagram: wall-clock time from the first to the last datagram ");
            md.Append("of each queue fill, over the datagrams read; CPU ns/datagram: the receiving thread's CPU time (user + system; for C, ");
            md.Append("wa-recv's rusage) over the same datagrams. Medians, with the smallest and largest round in brackets.\n\n");
            md.Append("| method | ns/datagram | receiver CPU ns/datagram | datagrams/s (median) | × c-recvfrom (median of rounds) | B/datagram | gen0 | lost |\n");
            md.Append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
            foreach (MethodSummary m in report.Summaries)
            {
                ResultRow all = report.Rows.Find(r => r.Method == m.Method)!;
                md.Append("| ").Append(m.Method)
                  .Append(" | ").Append(m.NsPerDatagram.Text(0))
                  .Append(" | ").Append(Dash(m.CpuNsPerDatagram.Text(0)))
                  .Append(" | ").Append(Numbers.Fixed(m.MedianDatagramsPerSecond, 0))
                  .Append(" | ").Append(m.RatioToCRecvfrom == null ? "–" : Numbers.Fixed(m.RatioToCRecvfrom.Value.Median, 2))
                  .Append(" | ").Append(Dash(Numbers.Bytes(all.BytesPerDatagram)))
                  .Append(" | ").Append(Dash(Numbers.Optional(all.Gen0)))
                  .Append(" | ").Append(Numbers.Int(all.Lost))
                  .Append(" |\n");
            }
            md.Append('\n');
            if (report.Comparisons.Count > 0)
            {
                md.Append("Ratios of rates, round by round (above 1: the first is faster), median and range; the same from CPU time per datagram:\n\n");
                md.Append("| comparison | rate ratio | CPU-time ratio |\n|---|---:|---:|\n");
                foreach (Comparison k in report.Comparisons)
                {
                    md.Append("| `").Append(k.Method).Append("` ÷ `").Append(k.Baseline).Append("`: ").Append(k.Label)
                      .Append(" | ").Append(k.Wall.Text(3)).Append(" | ").Append(Dash(k.Cpu.Text(3))).Append(" |\n");
                }
                md.Append('\n');
            }
            if (report.Shards.Count > 0)
            {
                md.Append("## Shards: one port, N sockets (SO_REUSEPORT), one pinned thread each, drain mode\n\n");
                md.Append("Per fill, wa-sender fills every shard's queue from many source ports (Linux gives each source port to one shard); then every shard ");
                md.Append("is drained at once by its own thread. datagrams/s: all the shards' datagrams over the time from the first shard's first receive ");
                md.Append("call to the last datagram on any shard; median of the fills, range in brackets. Smallest share: the fewest datagrams any shard ");
                md.Append("got in a fill, times the shard count, over the fill (1 = perfectly even).\n\n");
                md.Append("| receiver | shards | fills | datagrams/s | × 1 shard | CPU ns/datagram | B/datagram | gen0 | smallest share | kernel drops | lost |\n");
                md.Append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
                foreach (ShardRow r in report.Shards)
                {
                    md.Append("| ").Append(r.Receiver)
                      .Append(" | ").Append(r.Shards)
                      .Append(" | ").Append(r.FillRates.Count)
                      .Append(" | ").Append(r.Rate.Text(0))
                      .Append(" | ").Append(r.RatioToOneShard == null ? "–" : r.RatioToOneShard.Value.Text(2))
                      .Append(" | ").Append(Numbers.Fixed(r.CpuNsPerDatagram.Median, 0))
                      .Append(" | ").Append(Dash(Numbers.Bytes(r.BytesPerDatagram)))
                      .Append(" | ").Append(Dash(Numbers.Optional(r.Gen0)))
                      .Append(" | ").Append(Numbers.Fixed(r.SmallestShare, 2))
                      .Append(" | ").Append(Numbers.Int(r.KernelDrops))
                      .Append(" | ").Append(Numbers.Int(r.Lost))
                      .Append(" |\n");
                }
                md.Append('\n');
            }

            md.Append("## Every round added up (results.csv)\n\n");
            md.Append("| method | sent | kernel drops | received | lost | seconds | datagrams/s | ns/datagram | B/datagram | gen0 | gen1 | gen2 | × c-recvfrom |\n");
            md.Append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            foreach (ResultRow r in report.Rows)
            {
                md.Append("| ").Append(r.Method)
                  .Append(" | ").Append(Numbers.Int(r.Sent))
                  .Append(" | ").Append(Numbers.Int(r.KernelDrops))
                  .Append(" | ").Append(Numbers.Int(r.Received))
                  .Append(" | ").Append(Numbers.Int(r.Lost))
                  .Append(" | ").Append(Numbers.Fixed(r.Seconds, 3))
                  .Append(" | ").Append(Numbers.Fixed(r.DatagramsPerSecond, 0))
                  .Append(" | ").Append(Numbers.Fixed(r.NsPerDatagram, 1))
                  .Append(" | ").Append(Dash(Numbers.Bytes(r.BytesPerDatagram)))
                  .Append(" | ").Append(Dash(Numbers.Optional(r.Gen0)))
                  .Append(" | ").Append(Dash(Numbers.Optional(r.Gen1)))
                  .Append(" | ").Append(Dash(Numbers.Optional(r.Gen2)))
                  .Append(" | ").Append(Dash(Numbers.Ratio(r.RatioToCRecvfrom)))
                  .Append(" |\n");
            }
            md.Append('\n');
            md.Append("received = valid, in-range, first-seen datagrams; lost = sent − kernel drops − received (missing or corrupted after the kernel accepted them). ");
            md.Append("Rates count every datagram read, from the first to the last. B/datagram and GCs are not applicable (–) to the C programs.\n\n");

            if (report.Absent.Count > 0)
            {
                md.Append("Rows not in this run:\n\n");
                foreach (string absent in report.Absent) md.Append("- ").Append(absent).Append('\n');
                md.Append('\n');
            }

            md.Append("Checks per row (details.csv). Receiver CPU ns/datagram is the receiving thread's CPU time (for C: wa-recv's) over the datagrams read: ");
            md.Append("the receiver's own cost, also when few kernel drops show that the sender, not the receiver, set the pace.\n\n");
            md.Append("| method | read | corrupt | injected | duplicate | out of range | allocated bytes | receiver CPU ns/datagram | SO_RCVBUF granted | sender | stopped by |\n");
            md.Append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
            foreach (ResultRow r in report.Rows)
            {
                md.Append("| ").Append(r.Method)
                  .Append(" | ").Append(Numbers.Int(r.Read))
                  .Append(" | ").Append(Numbers.Int(r.Corrupt))
                  .Append(" | ").Append(Numbers.Int(r.Injected))
                  .Append(" | ").Append(Numbers.Int(r.Duplicate))
                  .Append(" | ").Append(Numbers.Int(r.OutOfRange))
                  .Append(" | ").Append(r.AllocatedBytes == null ? "–" : Numbers.Int(r.AllocatedBytes.Value))
                  .Append(" | ").Append(r.CpuNsPerDatagram == null ? "–" : Numbers.Fixed(r.CpuNsPerDatagram.Value, 0))
                  .Append(" | ").Append(Numbers.Int(r.ReceiveBufferGranted))
                  .Append(" | ").Append(r.SenderMode)
                  .Append(" | ").Append(r.StoppedBy)
                  .Append(" |\n");
            }
            md.Append('\n');

            if (report.Tick.Count > 0)
            {
                TickRow first = report.Tick[0];
                md.Append("## Tick: a game server frame\n\n");
                md.Append("Per frame the server socket sends ").Append(first.Entities).Append(" entity updates (").Append(report.Size)
                  .Append(" B) to each of ").Append(first.Clients).Append(" client sockets, which receive and check them; ")
                  .Append(first.Frames).Append(" frames after warm-up, on one thread.\n\n");
                md.Append("| way | datagrams/frame | lost | frames/s | B/frame | gen0 | gen1 | gen2 |\n");
                md.Append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
                foreach (TickRow t in report.Tick)
                {
                    md.Append("| ").Append(t.Way)
                      .Append(" | ").Append(Numbers.Int(t.DatagramsPerFrame))
                      .Append(" | ").Append(Numbers.Int(t.Lost))
                      .Append(" | ").Append(Numbers.Fixed(t.FramesPerSecond, 1))
                      .Append(" | ").Append(Numbers.Bytes(t.BytesPerFrame))
                      .Append(" | ").Append(Numbers.Int(t.Gen0))
                      .Append(" | ").Append(Numbers.Int(t.Gen1))
                      .Append(" | ").Append(Numbers.Int(t.Gen2))
                      .Append(" |\n");
                }
                md.Append('\n');
            }
            md.Append("Verdict: ").Append(report.Verdict).Append('\n');
            return md.ToString();
        }

        private static string Dash(string value) => value.Length == 0 ? "–" : value;
    }

    /// <summary>Everything one run reports.</summary>
    internal sealed class RunReport
    {
        public string RuntimeLabel { get; set; } = "";
        public string RuntimeDescription { get; set; } = "";
        public string MachineDescription { get; set; } = "";
        public string ModeName { get; set; } = "";
        public string Workload { get; set; } = "";
        public string LibraryPath { get; set; } = "";
        public string Date { get; set; } = "";
        public string Load { get; set; } = "";
        public int Size { get; set; }
        public int Rounds { get; set; }

        /// <summary>One row per method: every round added up (results.csv, details.csv).</summary>
        public List<ResultRow> Rows { get; } = new List<ResultRow>();

        /// <summary>One row per method and round (rounds.csv).</summary>
        public List<ResultRow> RoundRows { get; } = new List<ResultRow>();

        public List<MethodSummary> Summaries { get; } = new List<MethodSummary>();
        public List<Comparison> Comparisons { get; } = new List<Comparison>();
        public List<ShardRow> Shards { get; } = new List<ShardRow>();
        public List<string> Absent { get; } = new List<string>();
        public List<TickRow> Tick { get; } = new List<TickRow>();
        public string Verdict { get; set; } = "";
    }
}
