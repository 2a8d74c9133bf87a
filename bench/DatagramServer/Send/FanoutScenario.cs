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
    /// The send half (--mode send): per tick one datagram to each of N destinations (N distinct loopback sockets, addresses
    /// 127.1.x.y), through the library's one-call send (key and endpoint forms), its batch, a bare sendto / sendmmsg P/Invoke,
    /// the runtime's own SendTo (EndPoint, and SocketAddress on .NET 8+) and bench/native's wa-fanout (sendto, sendmmsg); the
    /// sending thread's CPU time around the sends only, per datagram.
    /// Every datagram is checked at its destination (its destination index and tick, exactly once) between chunks of ticks.
    /// The library's thread and wa-fanout run on the same CPU (<see cref="CpuPlacement"/>, set by <see cref="SendMode"/>).
    /// </summary>
    internal static unsafe class FanoutScenario
    {
        public const int DatagramsPerRound = 20_000;
        private const int MultiMessageBatch = 64; // as wa-fanout's sendmmsg rows

        public static readonly string[] Methods =
        {
            "library-sendto-key", "library-sendto-endpoint", "library-batch", "raw-sendto", "raw-sendmmsg", "runtime-sendto",
#if NET8_0_OR_GREATER
            "runtime-sendto-socketaddress",
#endif
            "c-sendto", "c-sendmmsg",
        };

        public sealed class Row
        {
            public string Method = "";
            public int Destinations;
            public List<double> CpuNs = new List<double>();
            public long Bytes;
            public long Datagrams;
            public long Lost;
        }

        public static List<Row> Run(Options options, string fanoutPath, string cpuArgument, Action<string> log)
        {
            var rows = new List<Row>();
            // Every N is set up at once and the rounds go over every N and every row in turn, so that a slow spell of this
            // shared machine falls on every N alike.
            var setups = new List<Destinations>();
            try
            {
                var byName = new Dictionary<string, Row>();
                foreach (int n in options.PeerCounts)
                {
                    var setup = new Destinations(n, options.Size);
                    setups.Add(setup);
                    int ticks = Math.Max(1, DatagramsPerRound / n);
                    int chunk = Math.Max(1, 256 / n);
                    foreach (string m in Methods)
                    {
                        var row = new Row { Method = m, Destinations = n };
                        byName[m + "/" + n] = row;
                        rows.Add(row);
                        if (!m.StartsWith("c-", StringComparison.Ordinal))
                            for (int w = 0; w < 2; w++) setup.Run(m, Math.Min(ticks, 2), chunk); // compile and warm every path
                    }
                }
                for (int round = 0; round < options.Rounds; round++)
                {
                    for (int s = 0; s < setups.Count; s++)
                    {
                        Destinations setup = setups[(round + s) % setups.Count];
                        int n = setup.Count;
                        int ticks = Math.Max(1, DatagramsPerRound / n);
                        int chunk = Math.Max(1, 256 / n);
                        for (int turn = 0; turn < Methods.Length; turn++)
                        {
                            string m = Methods[(round + turn) % Methods.Length];
                            Row row = byName[m + "/" + n];
                            double cpuNs;
                            long datagrams, lost, bytes = 0;
                            if (m.StartsWith("c-", StringComparison.Ordinal))
                            {
                                var values = SendNative.RunC(fanoutPath, "--dests " + n + " --ticks " + ticks + " --chunk " + chunk + " --size " + options.Size + " --method " + m.Substring(2) + cpuArgument, 120);
                                datagrams = long.Parse(values["datagrams"], CultureInfo.InvariantCulture);
                                cpuNs = long.Parse(values["cpu_ns"], CultureInfo.InvariantCulture);
                                lost = long.Parse(values["lost"], CultureInfo.InvariantCulture) + long.Parse(values["wrong"], CultureInfo.InvariantCulture);
                            }
                            else
                            {
                                Destinations.Result r = setup.Run(m, ticks, chunk);
                                datagrams = r.Datagrams;
                                cpuNs = r.CpuNs;
                                lost = r.Lost;
                                bytes = r.Bytes;
                            }
                            row.CpuNs.Add(cpuNs / datagrams);
                            row.Datagrams += datagrams;
                            row.Lost += lost;
                            row.Bytes += bytes;
                            log("send N=" + n + " " + m + ", round " + (round + 1) + ": CPU " + (cpuNs / datagrams).ToString("F0", CultureInfo.InvariantCulture) + " ns/datagram, lost " + lost);
                        }
                    }
                }
            }
            finally
            {
                foreach (Destinations setup in setups) setup.Dispose();
            }
            return rows;
        }

        public static string Markdown(List<Row> rows, List<int> counts, int rounds)
        {
            var text = new StringBuilder();
            text.Append("| sender (CPU ns per datagram, median of " + rounds + " rounds) |");
            foreach (int n in counts) text.Append(" N = " + n.ToString("N0", CultureInfo.InvariantCulture) + " |");
            text.Append(" B/datagram | lost |\n|---|");
            foreach (int n in counts) text.Append("---:|");
            text.Append("---:|---:|\n");
            foreach (string m in Methods)
            {
                text.Append("| " + m + " |");
                long bytes = 0, datagrams = 0, lost = 0;
                foreach (int n in counts)
                {
                    Row r = Find(rows, m, n);
                    text.Append(" " + SendNative.Median(r.CpuNs).ToString("F0", CultureInfo.InvariantCulture) + " |");
                    bytes += r.Bytes;
                    datagrams += r.Datagrams;
                    lost += r.Lost;
                }
                text.Append(" " + (m.StartsWith("c-", StringComparison.Ordinal) ? "-" : FrameCounters.BytesPerDatagram(bytes, datagrams)) + " | " + lost + " |\n");
            }
            Ratio(text, rows, counts, "library-batch vs c-sendmmsg (C's CPU / ours; target >= 0.95 .NET, 0.9 Mono)", "library-batch", "c-sendmmsg");
            Ratio(text, rows, counts, "library-batch vs raw-sendmmsg", "library-batch", "raw-sendmmsg");
            Ratio(text, rows, counts, "library-sendto-key vs raw-sendto (target >= 0.95)", "library-sendto-key", "raw-sendto");
            Ratio(text, rows, counts, "library-sendto-endpoint vs raw-sendto", "library-sendto-endpoint", "raw-sendto");
            Ratio(text, rows, counts, "raw-sendto vs c-sendto (the runtime's share)", "raw-sendto", "c-sendto");
            Ratio(text, rows, counts, "runtime-sendto vs raw-sendto (the runtime's own call)", "runtime-sendto", "raw-sendto");
#if NET8_0_OR_GREATER
            Ratio(text, rows, counts, "runtime-sendto-socketaddress vs raw-sendto", "runtime-sendto-socketaddress", "raw-sendto");
#endif
            return text.ToString();
        }

        private static Row Find(List<Row> rows, string method, int n) => rows.Find(r => r.Method == method && r.Destinations == n)!;

        /// <summary>The median over the rounds of CPU(<paramref name="baseline"/>) / CPU(<paramref name="method"/>): above 1 when the method costs less.</summary>
        public static double RatioMedian(List<Row> rows, int n, string method, string baseline)
        {
            Row a = Find(rows, method, n), b = Find(rows, baseline, n);
            var ratios = new List<double>();
            for (int i = 0; i < Math.Min(a.CpuNs.Count, b.CpuNs.Count); i++) ratios.Add(b.CpuNs[i] / a.CpuNs[i]);
            return SendNative.Median(ratios);
        }

        /// <summary>send.csv's fan-out rows: runtime,table,sender,n,rounds,cpu_ns_per_datagram_median,bytes_per_datagram,lost.</summary>
        public static void AppendCsv(StringBuilder csv, List<Row> rows, string runtime, int rounds)
        {
            foreach (Row r in rows)
            {
                string bytes = r.Method.StartsWith("c-", StringComparison.Ordinal) ? "" : FrameCounters.BytesPerDatagram(r.Bytes, r.Datagrams);
                csv.Append(runtime + ",fanout," + r.Method + "," + r.Destinations.ToString(CultureInfo.InvariantCulture) + "," + rounds.ToString(CultureInfo.InvariantCulture) + ","
                    + SendNative.Median(r.CpuNs).ToString("F0", CultureInfo.InvariantCulture) + "," + bytes + "," + r.Lost.ToString(CultureInfo.InvariantCulture) + "\n");
            }
        }

        /// <summary>The send table's line for the summary: the targets' ratios at N = 1 (one datagram per tick), and the batch at the largest N.</summary>
        public static string SummaryLine(List<Row> rows, List<int> counts, string runtime)
        {
            int first = counts[0], last = counts[counts.Count - 1];
            long lost = 0, bytes = 0, datagrams = 0;
            foreach (Row r in rows)
            {
                lost += r.Lost;
                // The bytes claimed are the library's (and the bare P/Invokes'); the runtime's own calls are there to allocate.
                if (!r.Method.StartsWith("c-", StringComparison.Ordinal) && !r.Method.StartsWith("runtime-", StringComparison.Ordinal))
                {
                    bytes += r.Bytes;
                    datagrams += r.Datagrams;
                }
            }
            string line = "send, " + runtime + ": at N = " + first + " (a batch of one per tick) DatagramBatch "
                + F2(RatioMedian(rows, first, "library-batch", "c-sendmmsg")) + "x C sendmmsg's CPU per datagram (target >= " + (Machine.IsMono ? "0.9" : "0.95") + "), "
                + F2(RatioMedian(rows, first, "library-batch", "raw-sendmmsg")) + "x a bare sendmmsg P/Invoke; SendTo_NonAlloc "
                + F2(RatioMedian(rows, first, "library-sendto-key", "raw-sendto")) + "x a bare sendto P/Invoke (target >= 0.95), the bare P/Invoke "
                + F2(RatioMedian(rows, first, "raw-sendto", "c-sendto")) + "x C sendto";
            if (last != first)
                line += "; at N = " + last.ToString("N0", CultureInfo.InvariantCulture) + " DatagramBatch " + F2(RatioMedian(rows, last, "library-batch", "c-sendmmsg")) + "x C sendmmsg";
            return line + "; " + FrameCounters.BytesPerDatagram(bytes, datagrams) + " B/datagram, " + lost + " lost";
        }

        private static string F2(double value) => value.ToString("F2", CultureInfo.InvariantCulture);

        /// <summary>A row of per-round ratios (baseline CPU / method CPU, the rate ratio), their median.</summary>
        private static void Ratio(StringBuilder text, List<Row> rows, List<int> counts, string label, string method, string baseline)
        {
            text.Append("| *" + label + "* |");
            foreach (int n in counts)
            {
                Row a = Find(rows, method, n), b = Find(rows, baseline, n);
                var ratios = new List<double>();
                for (int i = 0; i < Math.Min(a.CpuNs.Count, b.CpuNs.Count); i++) ratios.Add(b.CpuNs[i] / a.CpuNs[i]);
                text.Append(" " + SendNative.Median(ratios).ToString("F2", CultureInfo.InvariantCulture) + " |");
            }
            text.Append(" | |\n");
        }

        /// <summary>N receiving sockets, the sender, and every form of address the rows need, made once per N.</summary>
        private sealed class Destinations : IDisposable
        {
            public struct Result
            {
                public long Datagrams, Lost, Bytes;
                public double CpuNs;
            }

            private readonly int _n;
            private readonly int _size;

            public int Count => _n;
            private readonly Socket[] _receivers;
            private readonly int[] _receiverFds;
            private readonly Socket _sender;
            private readonly int _senderFd;
            private readonly EndPointKey[] _keys;
            private readonly IPEndPointNonAlloc[] _endPoints;
            private readonly IPEndPoint[] _plainEndPoints;
#if NET8_0_OR_GREATER
            private readonly SocketAddress[] _socketAddresses;
#endif
            private readonly byte[] _buffer;
            private readonly DatagramBatch _batch;
            private readonly IntPtr _native; // sockaddrs, per-destination buffers, iovecs and mmsghdrs for the raw rows
            private readonly byte* _names;
            private readonly byte* _buffers;
            private readonly RawCalls.MMsgHdr* _messages;

            public Destinations(int n, int size)
            {
                _n = n;
                _size = size;
                _receivers = new Socket[n];
                _receiverFds = new int[n];
                _keys = new EndPointKey[n];
                _endPoints = new IPEndPointNonAlloc[n];
                _plainEndPoints = new IPEndPoint[n];
#if NET8_0_OR_GREATER
                _socketAddresses = new SocketAddress[n];
#endif
                _buffer = new byte[size];
                _batch = new DatagramBatch(MultiMessageBatch, size);
                _sender = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                _senderFd = (int)_sender.Handle;
                _native = Marshal.AllocHGlobal(n * (16 + size + sizeof(RawCalls.IoVec) + sizeof(RawCalls.MMsgHdr)));
                _names = (byte*)_native;
                _buffers = _names + n * 16;
                var iovecs = (RawCalls.IoVec*)(_buffers + n * size);
                _messages = (RawCalls.MMsgHdr*)(iovecs + n);
                for (int i = 0; i < n; i++)
                {
                    Socket receiver = DatagramSockets.Bind(new IPEndPoint(SendNative.DestinationAddress(i), 0));
                    _receivers[i] = receiver;
                    _receiverFds[i] = (int)receiver.Handle;
                    var local = (IPEndPoint)receiver.LocalEndPoint!;
                    _keys[i] = EndPointKey.FromIPEndPoint(local);
                    _endPoints[i] = new IPEndPointNonAlloc(local.Address, local.Port);
                    _plainEndPoints[i] = local;
#if NET8_0_OR_GREATER
                    _socketAddresses[i] = local.Serialize();
#endif
                    byte* name = _names + i * 16;
                    new Span<byte>(name, 16).Clear();
                    name[0] = 2; // AF_INET, little-endian sa_family_t
                    name[2] = (byte)(local.Port >> 8);
                    name[3] = (byte)local.Port;
                    byte[] address = local.Address.GetAddressBytes();
                    for (int k = 0; k < 4; k++) name[4 + k] = address[k];
                    iovecs[i].Base = _buffers + i * size;
                    iovecs[i].Length = (nuint)size;
                    _messages[i] = default;
                    _messages[i].Name = name;
                    _messages[i].NameLength = 16;
                    _messages[i].Iov = iovecs + i;
                    _messages[i].IovLength = 1;
                }
            }

            public Result Run(string method, int ticks, int chunk)
            {
                var result = new Result();
                for (int t0 = 0; t0 < ticks; t0 += chunk)
                {
                    int t1 = Math.Min(ticks, t0 + chunk);
                    long bytes0 = GC.GetAllocatedBytesForCurrentThread();
                    long cpu0 = Linux.ThreadCpuNanoseconds();
                    for (int t = t0; t < t1; t++) Tick(method, t);
                    result.CpuNs += Linux.ThreadCpuNanoseconds() - cpu0;
                    result.Bytes += GC.GetAllocatedBytesForCurrentThread() - bytes0;
                    result.Datagrams += (long)(t1 - t0) * _n;
                    result.Lost += Drain(t0, t1);
                }
                return result;
            }

            private void Tick(string method, int tick)
            {
                switch (method)
                {
                    case "library-sendto-key":
                        for (int i = 0; i < _n; i++)
                        {
                            Stamp(_buffer, i, tick);
                            _sender.SendTo_NonAlloc(_buffer, 0, _size, SocketFlags.None, _keys[i]);
                        }
                        break;
                    case "library-sendto-endpoint":
                        for (int i = 0; i < _n; i++)
                        {
                            Stamp(_buffer, i, tick);
                            _sender.SendTo_NonAlloc(_buffer, 0, _size, SocketFlags.None, _endPoints[i]);
                        }
                        break;
                    case "library-batch":
                        for (int i = 0; i < _n; i++)
                        {
                            if (!_batch.TryAdd(_size, _keys[i], out Span<byte> slot))
                            {
                                Flush();
                                _batch.TryAdd(_size, _keys[i], out slot);
                            }
                            Stamp(slot, i, tick);
                        }
                        Flush();
                        break;
                    case "raw-sendto":
                        fixed (byte* buffer = _buffer)
                        {
                            for (int i = 0; i < _n; i++)
                            {
                                Stamp(_buffer, i, tick);
                                while (SendNative.SendTo(_senderFd, buffer, (nuint)_size, 0, _names + i * 16, 16) < 0)
                                    if (Marshal.GetLastWin32Error() != 4 && Marshal.GetLastWin32Error() != 11) throw new InvalidOperationException("sendto failed: errno " + Marshal.GetLastWin32Error());
                            }
                        }
                        break;
                    case "runtime-sendto":
                        // The runtime's own call, as a server without this library writes it: one IPEndPoint per destination, made once.
                        for (int i = 0; i < _n; i++)
                        {
                            Stamp(_buffer, i, tick);
                            _sender.SendTo(_buffer, 0, _size, SocketFlags.None, _plainEndPoints[i]);
                        }
                        break;
#if NET8_0_OR_GREATER
                    case "runtime-sendto-socketaddress":
                        for (int i = 0; i < _n; i++)
                        {
                            Stamp(_buffer, i, tick);
                            _sender.SendTo(_buffer.AsSpan(0, _size), SocketFlags.None, _socketAddresses[i]);
                        }
                        break;
#endif
                    case "raw-sendmmsg":
                        for (int i = 0; i < _n; i++) Stamp(new Span<byte>(_buffers + i * _size, _size), i, tick);
                        for (int i = 0; i < _n;)
                        {
                            int k = Math.Min(MultiMessageBatch, _n - i);
                            int sent = SendNative.SendMMsg(_senderFd, _messages + i, (uint)k, 0);
                            if (sent < 0)
                            {
                                int errno = Marshal.GetLastWin32Error();
                                if (errno == 4 || errno == 11) continue;
                                throw new InvalidOperationException("sendmmsg failed: errno " + errno);
                            }
                            i += sent;
                        }
                        break;
                    default: throw new ArgumentException("unknown send method " + method);
                }
            }

            private void Flush()
            {
                while (_batch.PendingCount > 0) _batch.Send(_sender);
                if (_batch.FailedCount > 0) throw new InvalidOperationException("the batch could not send " + _batch.FailedCount + " datagrams: " + _batch.GetSendError(0));
                _batch.Clear();
            }

            private static void Stamp(Span<byte> buffer, int destination, int tick)
            {
                Span<int> words = MemoryMarshal.Cast<byte, int>(buffer);
                words[0] = destination;
                words[1] = tick;
            }

            /// <summary>Every destination must hold exactly its datagrams of ticks t0..t1-1, in order; returns how many did not come right.</summary>
            private long Drain(int t0, int t1)
            {
                long bad = 0;
                byte* data = stackalloc byte[2048];
                for (int i = 0; i < _n; i++)
                {
                    for (int t = t0; t < t1; t++)
                    {
                        long deadline = Environment.TickCount + 1000;
                        nint got;
                        while ((got = SendNative.Recv(_receiverFds[i], data, 2048, SendNative.MsgDontWait)) < 0 && Environment.TickCount < deadline) { }
                        if (got != _size || ((int*)data)[0] != i || ((int*)data)[1] != t) bad++;
                    }
                    while (SendNative.Recv(_receiverFds[i], data, 2048, SendNative.MsgDontWait) >= 0) bad++;
                }
                return bad;
            }

            public void Dispose()
            {
                foreach (Socket s in _receivers) s?.Dispose();
                _sender.Dispose();
                _batch.Dispose();
                Marshal.FreeHGlobal(_native);
            }
        }
    }
}
