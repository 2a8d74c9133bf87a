using System.Collections.Generic;
using System.IO;
using System.Text;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>Writes results.csv, details.csv, tick.csv and results.md.</summary>
    internal static class Reports
    {
        public const string ResultsHeader =
            "runtime,mode,method,sent,kernel_drops,received,lost,seconds,datagrams_per_s,ns_per_datagram,bytes_per_datagram,gen0,gen1,gen2,ratio_to_c_recvfrom";

        public const string DetailsHeader =
            "runtime,mode,method,read,received,corrupt,injected_corrupt,duplicate,out_of_range,allocated_bytes,cpu_ns_per_datagram,rcvbuf_granted,sender_mode,stopped_by";

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
            md.Append("- library path: `").Append(report.LibraryPath).Append("` (DatagramPaths.Default)\n");
            md.Append("- date: ").Append(report.Date).Append("\n\n");

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
        public int Size { get; set; }
        public List<ResultRow> Rows { get; } = new List<ResultRow>();
        public List<string> Absent { get; } = new List<string>();
        public List<TickRow> Tick { get; } = new List<TickRow>();
        public string Verdict { get; set; } = "";
    }
}
