using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Many peers (--mode scale): N distinct senders (sockets bound to 127.2.x.y, so distinct source addresses and ports)
    /// fill the receive queue, round-robin, so that no two datagrams in a row come from the same sender (for N > 1); then one
    /// receiver drains it alone and its CPU time per datagram is measured. The library's receivers look every sender up in a
    /// PeerTable holding all N (the work every server does), and check that the peer found is the one that sent
    /// (library-batch+lookup-many looks a batch's senders up together, PeerTable.TryGetMany, their slots fetched ahead); the floors
    /// are bare recvfrom / recvmmsg P/Invokes that take the sender's address and do nothing with it (and raw-recvmmsg+lookup
    /// a one-word open-addressing table after them); library-batch+bare-lookup puts that one-word table after the library's batch
    /// instead of the PeerTable, which tells the memory a table of N peers costs in the library's loop from the PeerTable's own
    /// cost. The C rows are bench/native's wa-recv --drain in a process of its own: c-recvfrom and c-recvmmsg take each sender's
    /// address and leave it (--read-sender, no check of the contents); c-recvfrom+lookup and c-recvmmsg+lookup do what the
    /// library's lookup rows do (--peers): find each sender in a C table of the N built as the PeerTable is (the whole sockaddr
    /// as key, a keyed SipHash-1-3, Robin Hood at load <= 0.75, 4-byte hashes apart from 32-byte entries; the list of senders
    /// comes from a file written once per N) and check the peer found against the index the sender wrote at offset 4. The ratio
    /// to N = 1 tells each row's growth; a library row's growth over its C counterpart's, the library's share of it.
    /// <para>
    /// Where it runs (<see cref="CpuPlacement"/>): every row's fill (the sends, and on loopback the kernel's whole delivery into the
    /// receiving socket, run on the sending CPU) runs on one CPU and every row's drain on another, the library's drains on the
    /// thread that filled, moved there after the fill, and wa-recv pinned there for its whole life. A server's queue is usually
    /// filled by a network card's interrupt and softirq on some CPU, often not the receiver's; and above all the library's rows
    /// and the C rows must start their drain alike: a drain on the CPU that has just run 6 000 deliveries through thousands of
    /// sockets finds its caches full of the kernel's data and its own tables pushed out, whereas a separate process the scheduler
    /// puts on the other CPU does not. With one CPU allowed, fill and drain share it for every row (the rows stay comparable, the
    /// drain's caches are the fill's). What stays different: wa-recv builds its table before each fill (in its CPU's caches when
    /// the drain starts), where the library's table was last touched by the previous rows with the same N on the same CPU.
    /// </para>
    /// </summary>
    internal static unsafe class ScaleScenario
    {
        public static readonly string[] Receivers =
        {
            "library+lookup", "library-batch+lookup", "library-batch+lookup-many", "library-batch", "library-batch+bare-lookup", "raw-recvfrom", "raw-recvmmsg", "raw-recvmmsg+lookup",
            "c-recvfrom", "c-recvmmsg", "c-recvfrom+lookup", "c-recvmmsg+lookup",
        };

        public const int Size = 64;
        private const int Batch = 64;

        public sealed class Row
        {
            public string Receiver = "";
            public int Senders;
            public List<double> CpuNs = new List<double>();
            public long Datagrams, Lost, Wrong, Bytes;
        }

        public static List<Row> Run(Options options, string receiverPath, Action<string> log)
        {
            var rows = new List<Row>();
            int fill = options.DrainRound;
            CpuPlacement placement = CpuPlacement.Choose();
            log("scale: " + Describe(placement));
            // Every N is set up at once and the rounds go over every N and every receiver in turn, so that a slow spell of this
            // shared machine falls on N = 1 and N = 10 000 alike: the ratios between them are the point.
            var setups = new List<Tuple<int, Senders, Receiver>>();
            try
            {
                foreach (int n in options.PeerCounts)
                {
                    var senders = new Senders(n);
                    setups.Add(Tuple.Create(n, senders, new Receiver(n, senders, options.ReceiveBuffer)));
                }
                var byName = new Dictionary<string, Row>();
                foreach (var setup in setups)
                {
                    foreach (string r in Receivers)
                    {
                        var row = new Row { Receiver = r, Senders = setup.Item1 };
                        byName[r + "/" + setup.Item1] = row;
                        rows.Add(row);
                        if (!r.StartsWith("c-", StringComparison.Ordinal)) setup.Item3.Drain(r, setup.Item2, 0, Math.Min(fill, 1000), placement, new Row()); // compile and warm
                    }
                }
                for (int round = 0; round < options.Rounds; round++)
                {
                    for (int s = 0; s < setups.Count; s++)
                    {
                        var setup = setups[(round + s) % setups.Count];
                        int n = setup.Item1;
                        for (int turn = 0; turn < Receivers.Length; turn++)
                        {
                            string name = Receivers[(round + turn) % Receivers.Length];
                            Row row = byName[name + "/" + n];
                            int offset = (int)((long)round * fill % n); // over the rounds every sender takes part
                            if (name.StartsWith("c-", StringComparison.Ordinal)) RunC(receiverPath, name.Substring(2), setup.Item2, offset, fill, options.ReceiveBuffer, placement, row);
                            else setup.Item3.Drain(name, setup.Item2, offset, fill, placement, row);
                            log("scale N=" + n + " " + name + ", round " + (round + 1) + ": CPU " + row.CpuNs[row.CpuNs.Count - 1].ToString("F0", CultureInfo.InvariantCulture) + " ns/datagram, lost " + row.Lost + ", wrong " + row.Wrong);
                        }
                    }
                }
            }
            finally
            {
                placement.Restore();
                foreach (var setup in setups)
                {
                    setup.Item3.Dispose();
                    setup.Item2.Dispose();
                }
            }
            return rows;
        }

        private static string Describe(CpuPlacement placement)
        {
            if (!placement.Pinned) return "no CPU affinity to set here: fills and drains go where the scheduler puts them";
            if (placement.OtherCpu == placement.MeasuredCpu) return "one CPU (" + placement.MeasuredCpu + ") for every fill and every drain: the drains find the fill's caches, library and C rows alike";
            return "every fill on CPU " + placement.OtherCpu + ", every drain (the library's thread, and wa-recv) on CPU " + placement.MeasuredCpu;
        }

        /// <summary>
        /// One C row: wa-recv --drain pinned to the drain's CPU (it builds its peer table there), stopped while this thread fills
        /// its queue from the fill's CPU. <paramref name="method"/> is recvfrom or recvmmsg, with "+lookup": --peers.
        /// </summary>
        private static void RunC(string path, string method, Senders senders, int offset, int fill, int receiveBuffer, CpuPlacement placement, Row row)
        {
            string ready = Path.Combine(Path.GetTempPath(), "wa-scale-" + System.Diagnostics.Process.GetCurrentProcess().Id + ".port");
            if (File.Exists(ready)) File.Delete(ready);
            const string Lookup = "+lookup";
            bool lookup = method.EndsWith(Lookup, StringComparison.Ordinal);
            if (lookup) method = method.Substring(0, method.Length - Lookup.Length);
            var start = new System.Diagnostics.ProcessStartInfo(path,
                "--bind 127.0.0.1 --method " + method + " --batch " + Batch + " --count " + fill + " --size 2048 --rcvbuf " + receiveBuffer
                + placement.CpuArgument + " --drain --no-check " + (lookup ? "--peers " + senders.PeerFile : "--read-sender")
                + " --idle-ms 1000 --max-seconds 60 --ready-file " + ready)
            { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            using (var process = System.Diagnostics.Process.Start(start)!)
            {
                var error = process.StandardError.ReadToEndAsync();
                var output = process.StandardOutput.ReadToEndAsync();
                int port = 0;
                for (int i = 0; i < 5000 && port == 0; i++)
                {
                    if (File.Exists(ready) && int.TryParse(File.ReadAllText(ready).Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out int p)) port = p;
                    else Thread.Sleep(1);
                }
                if (port == 0) throw new InvalidOperationException("wa-recv did not report its port: " + error.Result);
                // Stopped while the queue fills, so that a fill slowed down by a loaded machine is never taken for a settled queue.
                Linux.Suspend(process.Id);
                try
                {
                    placement.ToOther();
                    senders.Fill(new IPEndPoint(IPAddress.Loopback, port), offset, fill);
                }
                finally
                {
                    Linux.Resume(process.Id);
                }
                if (!process.WaitForExit(60_000)) throw new TimeoutException("wa-recv did not end");
                process.WaitForExit();
                var values = new Dictionary<string, string>();
                foreach (string part in output.Result.Trim().Split(' '))
                {
                    int eq = part.IndexOf('=');
                    if (eq > 0) values[part.Substring(0, eq)] = part.Substring(eq + 1);
                }
                long received = long.Parse(values["received"], CultureInfo.InvariantCulture);
                long cpu = NativeTools.CpuNanoseconds(error.Result, "wa-recv");
                row.CpuNs.Add((double)cpu / Math.Max(1, received));
                row.Datagrams += received;
                row.Lost += fill - received;
                if (lookup)
                {
                    if (!values.TryGetValue("wrong_peer", out string? wrong)) throw new InvalidOperationException("wa-recv --peers gave no wrong_peer: " + output.Result);
                    row.Wrong += long.Parse(wrong, CultureInfo.InvariantCulture);
                }
            }
            File.Delete(ready);
        }

        public static string Markdown(List<Row> rows, List<int> counts, int rounds, int fill)
        {
            var text = new StringBuilder();
            text.Append("| receiver (CPU ns per datagram, median of " + rounds + " rounds) |");
            foreach (int n in counts) text.Append(" N = " + n.ToString("N0", CultureInfo.InvariantCulture) + " |");
            foreach (int n in counts) if (n != counts[0]) text.Append(" x N = " + counts[0] + " at " + n.ToString("N0", CultureInfo.InvariantCulture) + " |");
            text.Append(" B/datagram | lost | wrong peer |\n|---|");
            for (int i = 0; i < 2 * counts.Count - 1; i++) text.Append("---:|");
            text.Append("---:|---:|---:|\n");
            foreach (string r in Receivers)
            {
                text.Append("| " + r + " |");
                long bytes = 0, datagrams = 0, lost = 0, wrong = 0;
                foreach (int n in counts)
                {
                    Row row = Find(rows, r, n);
                    text.Append(" " + SendNative.Median(row.CpuNs).ToString("F0", CultureInfo.InvariantCulture) + " |");
                    bytes += row.Bytes;
                    datagrams += row.Datagrams;
                    lost += row.Lost;
                    wrong += row.Wrong;
                }
                foreach (int n in counts) if (n != counts[0]) text.Append(" " + Growth(rows, r, n, counts[0]).ToString("F2", CultureInfo.InvariantCulture) + " |");
                text.Append(" " + (r.StartsWith("c-", StringComparison.Ordinal) ? "-" : FrameCounters.BytesPerDatagram(bytes, datagrams)) + " | " + lost + " | " + wrong + " |\n");
            }
            int last = counts[counts.Count - 1];
            if (last != counts[0])
            {
                string B(string row, string over) => Beyond(rows, row, over, last, counts[0]).ToString("F2", CultureInfo.InvariantCulture);
                text.Append("\nGrowth to N = " + last.ToString("N0", CultureInfo.InvariantCulture) + " beyond the C receiver's on the same traffic (target <= 1.15): library+lookup / c-recvfrom "
                    + B("library+lookup", "c-recvfrom")
                    + ", library-batch+lookup / c-recvmmsg "
                    + B("library-batch+lookup", "c-recvmmsg")
                    + "; beyond C doing the same work (a lookup in a C table of the N built as the PeerTable): library+lookup / c-recvfrom+lookup "
                    + B("library+lookup", "c-recvfrom+lookup")
                    + ", library-batch+lookup / c-recvmmsg+lookup "
                    + B("library-batch+lookup", "c-recvmmsg+lookup")
                    + " (C's lookup's own growth: c-recvmmsg+lookup / c-recvmmsg "
                    + B("c-recvmmsg+lookup", "c-recvmmsg")
                    + "); the batch's senders looked up together (TryGetMany): library-batch+lookup-many / c-recvmmsg "
                    + B("library-batch+lookup-many", "c-recvmmsg")
                    + ", / c-recvmmsg+lookup "
                    + B("library-batch+lookup-many", "c-recvmmsg+lookup")
                    + ", / library-batch+lookup "
                    + B("library-batch+lookup-many", "library-batch+lookup")
                    + "; against the bare P/Invoke floors: library+lookup / raw-recvfrom "
                    + B("library+lookup", "raw-recvfrom")
                    + ", library-batch+lookup / raw-recvmmsg "
                    + B("library-batch+lookup", "raw-recvmmsg")
                    + "; against the floor with the least lookup (the memory a table of N peers costs, which any server pays): library-batch+lookup / raw-recvmmsg+lookup "
                    + B("library-batch+lookup", "raw-recvmmsg+lookup")
                    + "; the least lookup (a one-word table) after the library's batch instead of the PeerTable: library-batch+bare-lookup / c-recvmmsg "
                    + B("library-batch+bare-lookup", "c-recvmmsg") + ".\n");
            }
            text.Append("\n(" + fill.ToString("N0", CultureInfo.InvariantCulture) + " datagrams of " + Size + " bytes per fill, one fill per row and round, sent round-robin by min(N, fill) of the N senders, starting where the last round stopped; "
                + "the growths are medians over the rounds of each round's ratio, and a growth beyond another row's the median of the rounds' quotients)\n");
            return text.ToString();
        }

        private static Row Find(List<Row> rows, string receiver, int n) => rows.Find(r => r.Receiver == receiver && r.Senders == n)!;

        /// <summary>scale.csv: runtime,receiver,n,rounds,cpu_ns_per_datagram_median,growth_to_first_n,bytes_per_datagram,lost,wrong_peer.</summary>
        public static string Csv(List<Row> rows, List<int> counts, string runtime, int rounds)
        {
            var csv = new StringBuilder("runtime,receiver,n,rounds,cpu_ns_per_datagram_median,growth_to_first_n,bytes_per_datagram,lost,wrong_peer\n");
            foreach (string r in Receivers)
            {
                foreach (int n in counts)
                {
                    Row row = Find(rows, r, n);
                    string bytes = r.StartsWith("c-", StringComparison.Ordinal) ? "" : FrameCounters.BytesPerDatagram(row.Bytes, row.Datagrams);
                    csv.Append(runtime + "," + r + "," + n.ToString(CultureInfo.InvariantCulture) + "," + rounds.ToString(CultureInfo.InvariantCulture) + ","
                        + SendNative.Median(row.CpuNs).ToString("F0", CultureInfo.InvariantCulture) + "," + Growth(rows, r, n, counts[0]).ToString("F3", CultureInfo.InvariantCulture) + ","
                        + bytes + "," + row.Lost.ToString(CultureInfo.InvariantCulture) + "," + row.Wrong.ToString(CultureInfo.InvariantCulture) + "\n");
                }
            }
            return csv.ToString();
        }

        /// <summary>
        /// The many-peers table's line for the summary: each library row's growth from the first to the last N beyond its C
        /// receiver's (the target), and beyond its C receiver's with the same lookup (the same work in C).
        /// </summary>
        public static string SummaryLine(List<Row> rows, List<int> counts, string runtime)
        {
            int first = counts[0], last = counts[counts.Count - 1];
            long lost = 0, wrong = 0, bytes = 0, datagrams = 0;
            foreach (Row r in rows)
            {
                lost += r.Lost;
                wrong += r.Wrong;
                if (!r.Receiver.StartsWith("c-", StringComparison.Ordinal))
                {
                    bytes += r.Bytes;
                    datagrams += r.Datagrams;
                }
            }
            string B(string row, string over) => Beyond(rows, row, over, last, first).ToString("F2", CultureInfo.InvariantCulture);
            double batch = Growth(rows, "library-batch+lookup", last, first), cBatch = Growth(rows, "c-recvmmsg", last, first);
            double cBatchLookup = Growth(rows, "c-recvmmsg+lookup", last, first);
            double extra = SendNative.Median(Find(rows, "library-batch+lookup", last).CpuNs) - SendNative.Median(Find(rows, "library-batch+lookup", first).CpuNs);
            return "many peers, " + runtime + ": from N = " + first + " to " + last.ToString("N0", CultureInfo.InvariantCulture) + " distinct senders the batch + PeerTable lookup grows "
                + B("library-batch+lookup", "c-recvmmsg") + "x beyond C recvmmsg's growth (target <= 1.15; "
                + batch.ToString("F2", CultureInfo.InvariantCulture) + " against " + cBatch.ToString("F2", CultureInfo.InvariantCulture) + ", "
                + (extra >= 0 ? "+" : "") + extra.ToString("F0", CultureInfo.InvariantCulture) + " ns per datagram; a one-word table in its place "
                + B("library-batch+bare-lookup", "c-recvmmsg") + "x) and "
                + B("library-batch+lookup", "c-recvmmsg+lookup") + "x beyond C recvmmsg + the same lookup's ("
                + batch.ToString("F2", CultureInfo.InvariantCulture) + " against " + cBatchLookup.ToString("F2", CultureInfo.InvariantCulture) + "; looked up together by TryGetMany "
                + B("library-batch+lookup-many", "c-recvmmsg") + "x and "
                + B("library-batch+lookup-many", "c-recvmmsg+lookup") + "x), the one-call receive + lookup "
                + B("library+lookup", "c-recvfrom") + "x beyond C recvfrom's and "
                + B("library+lookup", "c-recvfrom+lookup") + "x beyond C recvfrom + lookup's; "
                + FrameCounters.BytesPerDatagram(bytes, datagrams) + " B/datagram, " + lost + " lost, " + wrong + " wrong peer";
        }

        /// <summary>
        /// The row's growth from <paramref name="baseline"/> senders to <paramref name="n"/>: the median over the rounds of the
        /// round's ratio (both figures of a round are measured within a second of each other, so a slow spell of the machine
        /// that spans rounds cancels out).
        /// </summary>
        private static double Growth(List<Row> rows, string receiver, int n, int baseline)
        {
            Row at = Find(rows, receiver, n), from = Find(rows, receiver, baseline);
            var ratios = new List<double>();
            for (int i = 0; i < Math.Min(at.CpuNs.Count, from.CpuNs.Count); i++) ratios.Add(at.CpuNs[i] / from.CpuNs[i]);
            return SendNative.Median(ratios);
        }

        /// <summary>The median over the rounds of the round's growth of <paramref name="receiver"/> over that of <paramref name="reference"/>.</summary>
        private static double Beyond(List<Row> rows, string receiver, string reference, int n, int baseline)
        {
            Row at = Find(rows, receiver, n), from = Find(rows, receiver, baseline);
            Row refAt = Find(rows, reference, n), refFrom = Find(rows, reference, baseline);
            var ratios = new List<double>();
            int rounds = Math.Min(Math.Min(at.CpuNs.Count, from.CpuNs.Count), Math.Min(refAt.CpuNs.Count, refFrom.CpuNs.Count));
            for (int i = 0; i < rounds; i++) ratios.Add(at.CpuNs[i] / from.CpuNs[i] / (refAt.CpuNs[i] / refFrom.CpuNs[i]));
            return SendNative.Median(ratios);
        }

        /// <summary>The least a lookup can be: one word per key, linear probing, a multiplicative hash (not flood resistant).</summary>
        private sealed class BareTable
        {
            private readonly ulong[] _keys;
            private readonly int[] _values;
            private readonly int _shift;

            public BareTable(int n)
            {
                int bits = 1;
                while ((1 << bits) < 2 * n) bits++;
                _keys = new ulong[1 << bits];
                _values = new int[1 << bits];
                _shift = 64 - bits;
            }

            public void Add(ulong key, int value)
            {
                int i = (int)((key * 0x9E3779B97F4A7C15UL) >> _shift);
                while (_keys[i] != 0) i = (i + 1) & (_keys.Length - 1);
                _keys[i] = key;
                _values[i] = value;
            }

            public int Find(ulong key)
            {
                int i = (int)((key * 0x9E3779B97F4A7C15UL) >> _shift);
                while (true)
                {
                    ulong k = _keys[i];
                    if (k == key) return _values[i];
                    if (k == 0) return -1;
                    i = (i + 1) & (_keys.Length - 1);
                }
            }
        }

        /// <summary>N sender sockets on 127.2.(i / 250).(i % 250 + 1), each on its own ephemeral port.</summary>
        private sealed class Senders : IDisposable
        {
            public readonly Socket[] Sockets;
            public readonly int[] Fds;
            public readonly EndPointKey[] Keys;
            /// <summary>wa-recv --peers's list of these senders: "address port index" per line, written once.</summary>
            public readonly string PeerFile;
            private readonly byte[] _payload = new byte[Size];

            public Senders(int n)
            {
                Sockets = new Socket[n];
                Fds = new int[n];
                Keys = new EndPointKey[n];
                var list = new StringBuilder();
                for (int i = 0; i < n; i++)
                {
                    var address = new IPAddress(new byte[] { 127, 2, (byte)(i / 250), (byte)(i % 250 + 1) });
                    Sockets[i] = DatagramSockets.Bind(new IPEndPoint(address, 0));
                    Fds[i] = (int)Sockets[i].Handle;
                    var local = (IPEndPoint)Sockets[i].LocalEndPoint!;
                    Keys[i] = EndPointKey.FromIPEndPoint(local);
                    list.Append(local.Address.ToString()).Append(' ').Append(local.Port.ToString(CultureInfo.InvariantCulture)).Append(' ')
                        .Append(i.ToString(CultureInfo.InvariantCulture)).Append('\n');
                }
                PeerFile = Path.Combine(Path.GetTempPath(), "wa-scale-" + System.Diagnostics.Process.GetCurrentProcess().Id + "-" + n + ".peers");
                File.WriteAllText(PeerFile, list.ToString());
            }

            /// <summary>Datagram j of the fill comes from sender (offset + j) mod N and carries j and that sender's index.</summary>
            public void Fill(IPEndPoint to, int offset, int count)
            {
                byte* name = stackalloc byte[16];
                new Span<byte>(name, 16).Clear();
                name[0] = 2;
                name[2] = (byte)(to.Port >> 8);
                name[3] = (byte)to.Port;
                byte[] address = to.Address.GetAddressBytes();
                for (int k = 0; k < 4; k++) name[4 + k] = address[k];
                fixed (byte* payload = _payload)
                {
                    for (int j = 0; j < count; j++)
                    {
                        int sender = (int)((offset + (long)j) % Fds.Length);
                        ((int*)payload)[0] = j;
                        ((int*)payload)[1] = sender;
                        while (SendNative.SendTo(Fds[sender], payload, Size, 0, name, 16) < 0)
                        {
                            int errno = Marshal.GetLastWin32Error();
                            if (errno != 4 && errno != 11) throw new InvalidOperationException("sendto failed: errno " + errno);
                        }
                    }
                }
            }

            public void Dispose()
            {
                foreach (Socket s in Sockets) s?.Dispose();
                File.Delete(PeerFile);
            }
        }

        /// <summary>The C# receivers' socket on 127.0.0.1, its PeerTable of every sender, and the receive buffers.</summary>
        private sealed class Receiver : IDisposable
        {
            private readonly Socket _socket;
            private readonly int _fd;
            private readonly IPEndPoint _endPoint;
            private readonly PeerTable<int> _peers;
            private readonly DatagramBatch _batch = new DatagramBatch(Batch, 2048);
            private readonly byte[] _buffer = new byte[2048];
            private readonly IntPtr _native;
            private readonly RawCalls.MMsgHdr* _messages;
            private readonly byte* _names;
            private readonly byte* _data;
            private readonly BareTable _bare;
            private readonly EndPointKey[] _keys = new EndPointKey[Batch];
            private readonly int[] _values = new int[Batch];
            private readonly bool[] _found = new bool[Batch];
            private readonly int[] _sentBy = new int[Batch];

            public Receiver(int n, Senders senders, int receiveBuffer)
            {
                _socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                _socket.Blocking = false;
                Linux.SetReceiveBuffer(_socket, receiveBuffer);
                _fd = (int)_socket.Handle;
                _endPoint = (IPEndPoint)_socket.LocalEndPoint!;
                _peers = new PeerTable<int>(n);
                for (int i = 0; i < n; i++) _peers.TryAdd(senders.Keys[i], i);
                _bare = new BareTable(n);
                for (int i = 0; i < n; i++)
                {
                    var local = (IPEndPoint)senders.Sockets[i].LocalEndPoint!;
                    byte[] a = local.Address.GetAddressBytes();
                    uint address = (uint)(a[0] | a[1] << 8 | a[2] << 16 | a[3] << 24); // as in the sockaddr: network order read little-endian
                    ushort port = (ushort)((local.Port >> 8) | ((local.Port & 0xff) << 8));
                    _bare.Add(((ulong)address << 16) | port, i);
                }
                _native = Marshal.AllocHGlobal(Batch * (sizeof(RawCalls.MMsgHdr) + sizeof(RawCalls.IoVec) + 128 + 2048));
                _messages = (RawCalls.MMsgHdr*)_native;
                var iovecs = (RawCalls.IoVec*)(_messages + Batch);
                _names = (byte*)(iovecs + Batch);
                _data = _names + Batch * 128;
                for (int i = 0; i < Batch; i++)
                {
                    iovecs[i].Base = _data + i * 2048;
                    iovecs[i].Length = 2048;
                    _messages[i] = default;
                    _messages[i].Name = _names + i * 128;
                    _messages[i].NameLength = 128;
                    _messages[i].Iov = iovecs + i;
                    _messages[i].IovLength = 1;
                }
            }

            public void Drain(string name, Senders senders, int offset, int fill, CpuPlacement placement, Row row)
            {
                placement.ToOther();
                senders.Fill(_endPoint, offset, fill);
                placement.ToMeasured();
                WaitSettled();
                long wrong = 0, got = 0;
                long bytes0 = GC.GetAllocatedBytesForCurrentThread();
                long cpu0 = Linux.ThreadCpuNanoseconds();
                switch (name)
                {
                    case "library+lookup":
                        {
                            Span<byte> buffer = _buffer;
                            while (_socket.TryReceiveFrom_NonAlloc(buffer, out ReceivedDatagram datagram))
                            {
                                if (!_peers.TryGet(datagram.RemoteEndPoint, out int peer) || peer != MemoryMarshal.Cast<byte, int>(buffer)[1]) wrong++;
                                got++;
                            }
                            break;
                        }
                    case "library-batch+lookup":
                        while (true)
                        {
                            int n = _batch.Receive(_socket);
                            if (n == 0) break;
                            using (DatagramBatch.Reader reader = _batch.BeginRead())
                            {
                                for (int i = 0; i < n; i++)
                                {
                                    ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out EndPointKey from);
                                    if (!_peers.TryGet(from, out int peer) || peer != MemoryMarshal.Read<int>(datagram.Slice(4))) wrong++;
                                }
                            }
                            got += n;
                        }
                        break;
                    case "library-batch+lookup-many": // the batch's keys looked up together (PeerTable.TryGetMany: hashed first, their slots fetched ahead)
                        while (true)
                        {
                            int n = _batch.Receive(_socket);
                            if (n == 0) break;
                            using (DatagramBatch.Reader reader = _batch.BeginRead())
                            {
                                for (int i = 0; i < n; i++) _sentBy[i] = MemoryMarshal.Read<int>(reader.GetDatagram(i, out _keys[i]).Slice(4));
                                _peers.TryGetMany(new ReadOnlySpan<EndPointKey>(_keys, 0, n), _values, _found);
                                for (int i = 0; i < n; i++)
                                {
                                    if (!_found[i] || _values[i] != _sentBy[i]) wrong++;
                                }
                            }
                            got += n;
                        }
                        break;
                    case "library-batch": // the key of every sender read, no lookup: the receive's share of the growth
                        {
                            long sum = 0;
                            while (true)
                            {
                                int n = _batch.Receive(_socket);
                                if (n == 0) break;
                                using (DatagramBatch.Reader reader = _batch.BeginRead())
                                {
                                    for (int i = 0; i < n; i++)
                                    {
                                        reader.GetDatagram(i, out EndPointKey from);
                                        sum += from.Port;
                                    }
                                }
                                got += n;
                            }
                            if (sum == 0) wrong++; // no sender has port 0
                            break;
                        }
                    case "library-batch+bare-lookup": // the batch's keys looked up in the least table: what the memory costs in the library's loop
                        {
                            Span<byte> address = stackalloc byte[16];
                            while (true)
                            {
                                int n = _batch.Receive(_socket);
                                if (n == 0) break;
                                using (DatagramBatch.Reader reader = _batch.BeginRead())
                                {
                                    for (int i = 0; i < n; i++)
                                    {
                                        ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out EndPointKey from);
                                        from.TryWriteAddressBytes(address, out _);
                                        int port = from.Port;
                                        ulong word = ((ulong)MemoryMarshal.Read<uint>(address) << 16) | (ushort)((port >> 8) | ((port & 0xff) << 8));
                                        if (_bare.Find(word) != MemoryMarshal.Read<int>(datagram.Slice(4))) wrong++;
                                    }
                                }
                                got += n;
                            }
                            break;
                        }
                    case "raw-recvmmsg+lookup": // the least lookup: sender address and port as one word, a bare open-addressing table
                        while (true)
                        {
                            int n = RawCalls.RecvMMsg(_fd, _messages, Batch, SendNative.MsgDontWait, null);
                            if (n <= 0) break;
                            for (int i = 0; i < n; i++)
                            {
                                _messages[i].NameLength = 128;
                                byte* sa = _names + i * 128;
                                int peer = _bare.Find(((ulong)*(uint*)(sa + 4) << 16) | *(ushort*)(sa + 2));
                                if (peer != *(int*)(_data + i * 2048 + 4)) wrong++;
                            }
                            got += n;
                        }
                        break;
                    case "raw-recvfrom":
                        fixed (byte* buffer = _buffer)
                        {
                            uint length = 128;
                            while (RawCalls.RecvFrom(_fd, buffer, 2048, SendNative.MsgDontWait, _names, &length) >= 0)
                            {
                                length = 128;
                                got++;
                            }
                        }
                        break;
                    case "raw-recvmmsg":
                        while (true)
                        {
                            int n = RawCalls.RecvMMsg(_fd, _messages, Batch, SendNative.MsgDontWait, null);
                            if (n <= 0) break;
                            for (int i = 0; i < n; i++) _messages[i].NameLength = 128;
                            got += n;
                        }
                        break;
                    default: throw new ArgumentException("unknown receiver " + name);
                }
                long cpu = Linux.ThreadCpuNanoseconds() - cpu0;
                row.Bytes += GC.GetAllocatedBytesForCurrentThread() - bytes0;
                row.CpuNs.Add((double)cpu / Math.Max(1, got));
                row.Datagrams += got;
                row.Lost += fill - got;
                row.Wrong += wrong;
            }

            /// <summary>Waits until the queue stops growing (loopback delivers within the sends, nearly always).</summary>
            private void WaitSettled()
            {
                long last = -1;
                for (int i = 0; i < 200; i++)
                {
                    Linux.TryReadMemInfo(_socket, out _, out long queued);
                    if (queued == last) return;
                    last = queued;
                    Thread.Sleep(2);
                }
            }

            public void Dispose()
            {
                _socket.Dispose();
                _batch.Dispose();
                Marshal.FreeHGlobal(_native);
            }
        }
    }
}
