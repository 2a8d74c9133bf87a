using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Bursts to one peer (--mode send): bursts of 8, 16 and 64 MTU-size datagrams (1472 bytes) through a DatagramBatch
    /// with segmentation offload on and off, and the same bursts in C (bench/native's wa-burst: one segmented send, or one
    /// sendmmsg of a message per datagram) in the same rounds, so that the kernel's own ratio stands beside the library's;
    /// the sending thread's CPU per datagram (on loopback that includes the kernel's delivery to the receiving socket; a
    /// network device that segments takes the cutting off the CPU instead, so the gain there differs). Every datagram is
    /// checked at the peer. Then a coalesced receive of segmented bursts: every datagram back as its own slot with its sender.
    /// The library's thread and wa-burst run on the same CPU (<see cref="CpuPlacement"/>, set by <see cref="SendMode"/>).
    /// </summary>
    internal static unsafe class BurstScenario
    {
        public const int Mtu = 1472;
        public static readonly int[] Bursts = { 8, 16, 64 };
        private const int DatagramsPerRound = 6400;
        private const int DatagramsPerChunk = 256;

        /// <summary>The four senders of a burst size, in the order of the table: the library with and without offload, then C's.</summary>
        public static readonly string[] Senders = { "library-offload", "library-plain", "c-gso", "c-sendmmsg" };

        public sealed class Row
        {
            public int Burst;
            public string Sender = "";
            public List<double> CpuNs = new List<double>();
            public long Bytes, Datagrams, Lost;
        }

        public static List<Row> Run(Options options, string burstPath, string cpuArgument, Action<string> log, out string coalescedLine)
        {
            var rows = new List<Row>();
            using (Socket sender = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0)))
            using (Socket peer = DatagramSockets.Bind(new IPEndPoint(IPAddress.Parse("127.0.0.2"), 0)))
            using (var batch = new DatagramBatch(64, Mtu))
            {
                if (!batch.SegmentationOffload) throw new InvalidOperationException("segmentation offload is not available here");
                Linux.SetReceiveBuffer(peer, 4 * 1024 * 1024);
                EndPointKey to = EndPointKey.FromIPEndPoint((IPEndPoint)peer.LocalEndPoint!);
                int fd = (int)peer.Handle;
                foreach (int burst in Bursts)
                {
                    var byName = new Dictionary<string, Row>();
                    foreach (string name in Senders)
                    {
                        byName[name] = new Row { Burst = burst, Sender = name };
                        rows.Add(byName[name]);
                    }
                    Round(batch, sender, fd, to, burst, true, 2 * DatagramsPerChunk, new Row()); // warm up both
                    Round(batch, sender, fd, to, burst, false, 2 * DatagramsPerChunk, new Row());
                    for (int round = 0; round < options.Rounds; round++)
                    {
                        var line = new StringBuilder("bursts of " + burst + ", round " + (round + 1) + ":");
                        for (int turn = 0; turn < Senders.Length; turn++)
                        {
                            string name = Senders[(round + turn) % Senders.Length]; // the order rotates from round to round
                            Row row = byName[name];
                            if (name.StartsWith("c-", StringComparison.Ordinal)) RunC(burstPath, name.Substring(2), burst, cpuArgument, row);
                            else Round(batch, sender, fd, to, burst, name == "library-offload", DatagramsPerRound, row);
                            line.Append(" " + name + " " + row.CpuNs[round].ToString("F0", CultureInfo.InvariantCulture) + " ns/datagram;");
                        }
                        log(line.ToString());
                    }
                }
                batch.SegmentationOffload = true;
                coalescedLine = Coalesced(batch, sender);
            }
            return rows;
        }

        private static void Round(DatagramBatch batch, Socket sender, int fd, EndPointKey to, int burst, bool offload, int datagrams, Row row)
        {
            batch.SegmentationOffload = offload;
            long cpu = 0, bytes = 0, lost = 0;
            int bursts = datagrams / burst;
            int perChunk = Math.Max(1, DatagramsPerChunk / burst);
            byte* data = stackalloc byte[2048];
            for (int b0 = 0; b0 < bursts; b0 += perChunk)
            {
                int b1 = Math.Min(bursts, b0 + perChunk);
                long bytes0 = GC.GetAllocatedBytesForCurrentThread();
                long cpu0 = Linux.ThreadCpuNanoseconds();
                for (int b = b0; b < b1; b++)
                {
                    for (int k = 0; k < burst; k++)
                    {
                        if (!batch.TryAdd(Mtu, to, out Span<byte> slot))
                        {
                            Flush(batch, sender);
                            batch.TryAdd(Mtu, to, out slot);
                        }
                        Span<int> words = MemoryMarshal.Cast<byte, int>(slot);
                        words[0] = b;
                        words[1] = k;
                    }
                    Flush(batch, sender);
                }
                cpu += Linux.ThreadCpuNanoseconds() - cpu0;
                bytes += GC.GetAllocatedBytesForCurrentThread() - bytes0;
                // The peer must hold every datagram of these bursts, in order.
                for (int b = b0; b < b1; b++)
                {
                    for (int k = 0; k < burst; k++)
                    {
                        long deadline = Environment.TickCount + 1000;
                        nint got;
                        while ((got = SendNative.Recv(fd, data, 2048, SendNative.MsgDontWait)) < 0 && Environment.TickCount < deadline) { }
                        if (got != Mtu || ((int*)data)[0] != b || ((int*)data)[1] != k) lost++;
                    }
                }
                while (SendNative.Recv(fd, data, 2048, SendNative.MsgDontWait) >= 0) lost++;
            }
            int sent = bursts * burst;
            row.CpuNs.Add((double)cpu / sent);
            row.Bytes += bytes;
            row.Datagrams += sent;
            row.Lost += lost;
        }

        /// <summary>One run of wa-burst (method gso or sendmmsg) with the library's round size: its CPU per datagram and what it lost.</summary>
        private static void RunC(string path, string method, int burst, string cpuArgument, Row row)
        {
            var values = SendNative.RunC(path, "--burst " + burst + " --count " + DatagramsPerRound + " --size " + Mtu + " --method " + method + cpuArgument, 120);
            long datagrams = long.Parse(values["datagrams"], CultureInfo.InvariantCulture);
            row.CpuNs.Add(long.Parse(values["cpu_ns"], CultureInfo.InvariantCulture) / (double)datagrams);
            row.Datagrams += datagrams;
            row.Lost += long.Parse(values["lost"], CultureInfo.InvariantCulture) + long.Parse(values["wrong"], CultureInfo.InvariantCulture);
        }

        private static void Flush(DatagramBatch batch, Socket sender)
        {
            while (batch.PendingCount > 0) batch.Send(sender);
            if (batch.FailedCount > 0) throw new InvalidOperationException("the batch could not send " + batch.FailedCount + " datagrams: " + batch.GetSendError(0));
            batch.Clear();
        }

        /// <summary>Segmented bursts to a socket with coalesced receive, read by a batch with CoalescedReceive on: every datagram, its sender, in order.</summary>
        private static string Coalesced(DatagramBatch batch, Socket sender)
        {
            if (!DatagramBatch.IsCoalescedReceiveAvailable) return "coalesced receive: not available here";
            using (Socket peer = DatagramSockets.Bind(new IPEndPoint(IPAddress.Parse("127.0.0.3"), 0)))
            using (var receiver = new DatagramBatch(256, 1500))
            {
                Linux.SetReceiveBuffer(peer, 4 * 1024 * 1024);
                peer.EnableCoalescedReceive();
                receiver.CoalescedReceive = true;
                EndPointKey to = EndPointKey.FromIPEndPoint((IPEndPoint)peer.LocalEndPoint!);
                EndPointKey from = EndPointKey.FromIPEndPoint((IPEndPoint)sender.LocalEndPoint!);
                long good = 0, bad = 0, sent = 0;
                foreach (int burst in Bursts)
                {
                    for (int b = 0; b < 32; b++)
                    {
                        for (int k = 0; k < burst; k++)
                        {
                            if (!batch.TryAdd(Mtu, to, out Span<byte> slot))
                            {
                                Flush(batch, sender);
                                batch.TryAdd(Mtu, to, out slot);
                            }
                            Span<int> words = MemoryMarshal.Cast<byte, int>(slot);
                            words[0] = b;
                            words[1] = k;
                        }
                        Flush(batch, sender);
                        sent += burst;
                    }
                    int expectB = 0, expectK = 0;
                    long taken = 0;
                    while (taken < 32L * burst)
                    {
                        int n = receiver.Receive(peer, 1000);
                        if (n == 0) break;
                        using (DatagramBatch.Reader reader = receiver.BeginRead())
                        {
                            for (int i = 0; i < n; i++)
                            {
                                ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out EndPointKey source);
                                int b = MemoryMarshal.Read<int>(datagram);
                                int k = MemoryMarshal.Read<int>(datagram.Slice(4));
                                if (datagram.Length == Mtu && source.Equals(from) && b == expectB && k == expectK) good++;
                                else bad++;
                                if (++expectK == burst)
                                {
                                    expectK = 0;
                                    expectB++;
                                }
                            }
                        }
                        taken += n;
                    }
                }
                return "coalesced receive: " + sent + " datagrams sent in segmented bursts of 8, 16 and 64; " + good + " received as their own datagrams with their sender and in order, "
                    + bad + " wrong, " + (sent - good - bad) + " missing (the tests assert that the kernel coalesces such bursts)";
            }
        }

        /// <summary>The median over the rounds of the per-round ratio CPU(<paramref name="numerator"/>) / CPU(<paramref name="denominator"/>).</summary>
        public static double RatioMedian(List<Row> rows, int burst, string numerator, string denominator)
        {
            Row a = Find(rows, burst, numerator), b = Find(rows, burst, denominator);
            var ratios = new List<double>();
            for (int i = 0; i < Math.Min(a.CpuNs.Count, b.CpuNs.Count); i++) ratios.Add(a.CpuNs[i] / b.CpuNs[i]);
            return SendNative.Median(ratios);
        }

        private static Row Find(List<Row> rows, int burst, string sender) => rows.Find(r => r.Burst == burst && r.Sender == sender)!;

        public static string Markdown(List<Row> rows, int rounds)
        {
            var text = new StringBuilder();
            text.Append("| burst to one peer (1472-byte datagrams; CPU ns per datagram, median of " + rounds + " rounds) | library, offload | library, without | **library: without / offload** (target >= 2) | C, UDP_SEGMENT | C, sendmmsg | **C: sendmmsg / UDP_SEGMENT** | library offload vs C UDP_SEGMENT (C's CPU / ours) | library without vs C sendmmsg | B/datagram | lost |\n");
            text.Append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            foreach (int burst in Bursts)
            {
                Row on = Find(rows, burst, "library-offload"), off = Find(rows, burst, "library-plain");
                long lost = 0;
                foreach (string name in Senders) lost += Find(rows, burst, name).Lost;
                text.Append("| " + burst + " | " + F0(on) + " | " + F0(off)
                    + " | " + RatioMedian(rows, burst, "library-plain", "library-offload").ToString("F2", CultureInfo.InvariantCulture)
                    + " | " + F0(Find(rows, burst, "c-gso")) + " | " + F0(Find(rows, burst, "c-sendmmsg"))
                    + " | " + RatioMedian(rows, burst, "c-sendmmsg", "c-gso").ToString("F2", CultureInfo.InvariantCulture)
                    + " | " + RatioMedian(rows, burst, "c-gso", "library-offload").ToString("F2", CultureInfo.InvariantCulture)
                    + " | " + RatioMedian(rows, burst, "c-sendmmsg", "library-plain").ToString("F2", CultureInfo.InvariantCulture)
                    + " | " + FrameCounters.BytesPerDatagram(on.Bytes + off.Bytes, on.Datagrams + off.Datagrams) + " | " + lost + " |\n");
            }
            text.Append("\n(ratios are medians of the per-round ratios of rows measured in the same round; C runs as bench/native's wa-burst, its own process, "
                + "the same sizes, peer arrangement and checks)\n");
            return text.ToString();
        }

        private static string F0(Row row) => SendNative.Median(row.CpuNs).ToString("F0", CultureInfo.InvariantCulture);

        /// <summary>send.csv's burst rows: runtime,table,sender,n (the burst),rounds,cpu_ns_per_datagram_median,bytes_per_datagram,lost.</summary>
        public static void AppendCsv(StringBuilder csv, List<Row> rows, string runtime, int rounds)
        {
            foreach (Row r in rows)
            {
                string bytes = r.Sender.StartsWith("c-", StringComparison.Ordinal) ? "" : FrameCounters.BytesPerDatagram(r.Bytes, r.Datagrams);
                csv.Append(runtime + ",burst," + r.Sender + "," + r.Burst.ToString(CultureInfo.InvariantCulture) + "," + rounds.ToString(CultureInfo.InvariantCulture) + ","
                    + F0(r) + "," + bytes + "," + r.Lost.ToString(CultureInfo.InvariantCulture) + "\n");
            }
        }

        /// <summary>The burst table's line for the summary: the library's ratio per burst size, C's own beside it, and the library against C.</summary>
        public static string SummaryLine(List<Row> rows, string runtime)
        {
            string Ratios(string numerator, string denominator)
            {
                var parts = new List<string>();
                foreach (int burst in Bursts) parts.Add(RatioMedian(rows, burst, numerator, denominator).ToString("F2", CultureInfo.InvariantCulture));
                return string.Join("/", parts);
            }
            long lost = 0, bytes = 0, datagrams = 0;
            foreach (Row r in rows)
            {
                lost += r.Lost;
                if (!r.Sender.StartsWith("c-", StringComparison.Ordinal))
                {
                    bytes += r.Bytes;
                    datagrams += r.Datagrams;
                }
            }
            return "offload, " + runtime + ": bursts of " + string.Join("/", Bursts) + " x " + Mtu + " B to one peer, CPU per datagram without / with offload: library "
                + Ratios("library-plain", "library-offload") + " (target >= 2), C's own (sendmmsg / UDP_SEGMENT) " + Ratios("c-sendmmsg", "c-gso")
                + "; the library's CPU against C's (C / library): offload " + Ratios("c-gso", "library-offload") + ", without " + Ratios("c-sendmmsg", "library-plain")
                + "; " + FrameCounters.BytesPerDatagram(bytes, datagrams) + " B/datagram, " + lost + " lost (loopback: a NIC that segments differs)";
        }
    }
}
