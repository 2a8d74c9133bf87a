using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>
    /// Bursts to one peer (--mode send): bursts of 8, 16 and 64 MTU-size datagrams (1472 bytes) through a DatagramBatch
    /// with segmentation offload on and off, the sending thread's CPU per datagram (on loopback that includes the kernel's
    /// delivery to the receiving socket; a network device that segments takes the cutting off the CPU instead, so the gain
    /// there differs). Every datagram is checked at the peer. Then a coalesced receive of segmented bursts: every datagram
    /// back as its own slot with its sender.
    /// </summary>
    internal static unsafe class BurstScenario
    {
        public const int Mtu = 1472;
        public static readonly int[] Bursts = { 8, 16, 64 };
        private const int DatagramsPerRound = 6400;
        private const int DatagramsPerChunk = 256;

        public sealed class Row
        {
            public int Burst;
            public bool Offload;
            public List<double> CpuNs = new List<double>();
            public long Bytes, Datagrams, Lost;
        }

        public static List<Row> Run(Options options, Action<string> log, out string coalescedLine)
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
                    var on = new Row { Burst = burst, Offload = true };
                    var off = new Row { Burst = burst, Offload = false };
                    Round(batch, sender, fd, to, burst, true, 2 * DatagramsPerChunk, new Row()); // warm up both
                    Round(batch, sender, fd, to, burst, false, 2 * DatagramsPerChunk, new Row());
                    for (int round = 0; round < options.Rounds; round++)
                    {
                        bool first = round % 2 == 0; // alternate which goes first
                        Round(batch, sender, fd, to, burst, first, DatagramsPerRound, first ? on : off);
                        Round(batch, sender, fd, to, burst, !first, DatagramsPerRound, first ? off : on);
                        log("bursts of " + burst + ", round " + (round + 1) + ": offload " + on.CpuNs[round].ToString("F0", CultureInfo.InvariantCulture)
                            + " ns/datagram, without " + off.CpuNs[round].ToString("F0", CultureInfo.InvariantCulture) + " ns/datagram");
                    }
                    rows.Add(on);
                    rows.Add(off);
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

        public static string Markdown(List<Row> rows, int rounds)
        {
            var text = new StringBuilder();
            text.Append("| burst to one peer (1472-byte datagrams) | offload: CPU ns/datagram | without: CPU ns/datagram | without / offload (median of per-round ratios, target >= 2) | B/datagram | lost |\n");
            text.Append("|---|---:|---:|---:|---:|---:|\n");
            foreach (int burst in Bursts)
            {
                Row on = rows.Find(r => r.Burst == burst && r.Offload)!;
                Row off = rows.Find(r => r.Burst == burst && !r.Offload)!;
                var ratios = new List<double>();
                for (int i = 0; i < Math.Min(on.CpuNs.Count, off.CpuNs.Count); i++) ratios.Add(off.CpuNs[i] / on.CpuNs[i]);
                text.Append("| " + burst + " | " + SendNative.Median(on.CpuNs).ToString("F0", CultureInfo.InvariantCulture) + " | " + SendNative.Median(off.CpuNs).ToString("F0", CultureInfo.InvariantCulture)
                    + " | " + SendNative.Median(ratios).ToString("F2", CultureInfo.InvariantCulture) + " | " + FrameCounters.BytesPerDatagram(on.Bytes + off.Bytes, on.Datagrams + off.Datagrams) + " | " + (on.Lost + off.Lost) + " |\n");
            }
            _ = rounds;
            return text.ToString();
        }
    }
}
