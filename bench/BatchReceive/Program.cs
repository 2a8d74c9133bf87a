using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using WhereAllocation.Bench.DatagramServer;

namespace WhereAllocation.Bench.BatchReceive
{
    /// <summary>
    /// Receive throughput of <see cref="DatagramBatch"/> against the C <c>recvmmsg</c> receiver (wa-recv --drain),
    /// on a prefilled queue: the C sender fills the receive buffer first, then only the receiver is timed, so
    /// on two cores the sender cannot set the pace. Every receiver checks every datagram (format, checksum,
    /// sequence range, duplicates) the same way; the managed ones also read each sender's key. Receivers take
    /// turns within each round (the first one changes every round), and the table gives medians over rounds.
    /// </summary>
    public static class Program
    {
        private const int DatagramSize = 64;
        private const int SlotSize = 1500; // the batch's default; wa-recv gets --size 1500 to match
        private static int s_rcvbuf = 8 * 1024 * 1024; // asked for by both receivers

        public static int Main(string[] args)
        {
            int rounds = 21, count = 0;
            int[] batches = { 1, 8, 32, 64 };
            bool single = true;
            for (int i = 0; i + 1 < args.Length; i += 2)
            {
                switch (args[i])
                {
                    case "--rounds": rounds = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--count": count = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--rcvbuf": s_rcvbuf = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--batches": batches = args[i + 1].Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture)).ToArray(); break;
                    case "--single": single = args[i + 1] != "no"; break;
                    default: Console.Error.WriteLine("unknown option " + args[i]); return 2;
                }
            }

            string native = FindNativePrograms();
            Console.WriteLine("runtime: " + (Type.GetType("Mono.Runtime") != null ? "Mono" : "CoreCLR") + ", " + RuntimeInformation.FrameworkDescription + ", " + RuntimeInformation.OSDescription);
            Console.WriteLine("machine: " + CpuModel() + ", " + Environment.ProcessorCount + " logical CPUs");
            Console.WriteLine("batch mode by default: " + DatagramBatch.DefaultMode);

            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            socket.ReceiveBufferSize = s_rcvbuf;
            socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            socket.ReceiveTimeout = 2000; // a blocking one-datagram form then ends, with an error, if a datagram is missing
            int port = ((IPEndPoint)socket.LocalEndPoint!).Port;
            Console.WriteLine("SO_RCVBUF: asked " + s_rcvbuf + ", granted " + socket.ReceiveBufferSize + " (Linux doubles the request and caps it at 2 x net.core.rmem_max)");

            if (count <= 0) count = Calibrate(socket, native, port);
            Console.WriteLine("datagrams per measurement: " + count + " x " + DatagramSize + " B, IPv4 loopback, filled by wa-sender --mode gso; " + rounds + " rounds");

            // Checked: every receiver validates every datagram (the C receiver's normal work). Count only: the
            // receivers just take the datagrams (the managed one still reads each length, sender key and
            // truncation flag), which shows the receive path alone, without the JIT's code for the check.
            var c = new Receiver("C recvmmsg 64 (wa-recv --drain)", null, true, null);
            var receivers = new List<Receiver> { c };
            foreach (int b in batches) receivers.Add(new Receiver("DatagramBatch " + b + ", MultiMessage", new DatagramBatch(b, SlotSize, DatagramBatchMode.MultiMessage), true, c));
            receivers.Add(new Receiver("DatagramBatch 64, SingleCalls", new DatagramBatch(64, SlotSize, DatagramBatchMode.SingleCalls), true, c));
            var cCount = new Receiver("C recvmmsg 64 --no-check", null, false, null);
            receivers.Add(cCount);
            receivers.Add(new Receiver("DatagramBatch 64, MultiMessage, count", new DatagramBatch(64, SlotSize, DatagramBatchMode.MultiMessage), false, cCount));
            if (single)
            {
                // One datagram per call, count only: what each call costs on top of the system call. The C
                // receiver's one recvmsg per datagram is the reference; raw P/Invoke is the least C# can do.
                var cSingle = new Receiver("C recvfrom --no-check", null, false, null) { WaRecvMethod = "recvfrom" };
                receivers.Add(cSingle);
                foreach (SingleForm form in (SingleForm[])Enum.GetValues(typeof(SingleForm)))
                    receivers.Add(new Receiver(SingleForms.Describe(form), null, false, cSingle) { Single = form });
                // One datagram per send call into the same (empty) queue, against a bare P/Invoke sendto.
                Receiver? rawSend = null;
                foreach (SendForm form in (SendForm[])Enum.GetValues(typeof(SendForm)))
                {
                    var r = new Receiver(SendForms.Describe(form), null, false, rawSend) { Send = form };
                    rawSend ??= r;
                    receivers.Add(r);
                }
                SendForms.Prepare(new IPEndPoint(IPAddress.Loopback, port));
            }
            var seen = new byte[(count + 7) / 8];

            // One unmeasured round warms the JIT and the page cache.
            foreach (Receiver r in receivers) Measure(r, socket, native, port, count, seen);
            foreach (Receiver r in receivers) r.Reset();

            for (int round = 0; round < rounds; round++)
            {
                for (int k = 0; k < receivers.Count; k++) Measure(receivers[(k + round) % receivers.Count], socket, native, port, count, seen);
                foreach (Receiver r in receivers)
                {
                    Receiver baseline = r.Baseline ?? r;
                    if (r.LastRate > 0 && baseline.LastRate > 0) r.Ratios.Add(r.LastRate / baseline.LastRate);
                    if (r.LastCpuRate > 0 && baseline.LastCpuRate > 0) r.CpuRatios.Add(r.LastCpuRate / baseline.LastCpuRate);
                }
            }

            Console.WriteLine();
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "{0,-40} {1,12} {2,22} {3,8} {4,8} {5,8} | {6,12} {7,8} {8,8} | {9,7} {10,4}",
                "receiver", "datagrams/s", "min .. max", "ns/dgram", "ratio", "ratio/r", "per CPU-s", "ratio", "ratio/r", "B alloc", "bad"));
            foreach (Receiver r in receivers)
            {
                if (r.Baseline == null && r != c)
                {
                    Console.WriteLine(r.Send != null ? "-- one datagram per send call (ratio: to raw P/Invoke sendto):"
                        : r.WaRecvMethod == "recvfrom" ? "-- one datagram per call, count only:" : "-- count only:");
                }
                double median = Median(r.Rates), cpuMedian = Median(r.CpuRates);
                double cMedian = Median((r.Baseline ?? r).Rates), cCpuMedian = Median((r.Baseline ?? r).CpuRates);
                Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "{0,-40} {1,12:N0} {2,22} {3,8:F0} {4,8:F3} {5,8:F3} | {6,12:N0} {7,8:F3} {8,8:F3} | {9,7} {10,4}",
                    r.Name, median, r.Rates.Count == 0 ? "-" : r.Rates.Min().ToString("N0", CultureInfo.InvariantCulture) + " .. " + r.Rates.Max().ToString("N0", CultureInfo.InvariantCulture),
                    median > 0 ? 1e9 / median : 0, cMedian > 0 ? median / cMedian : 0, Median(r.Ratios),
                    cpuMedian, cCpuMedian > 0 ? cpuMedian / cCpuMedian : 0, Median(r.CpuRatios),
                    r.IsManaged ? r.Allocated.ToString(CultureInfo.InvariantCulture) : "-", r.BadRounds));
            }
            Console.WriteLine("datagrams/s: wall clock over the timed loop, median of the rounds; ratio: that median / C's median; ratio/r: median over");
            Console.WriteLine("rounds of the rate / C's rate in the same round. per CPU-s: datagrams per second of the receiving thread's CPU time");
            Console.WriteLine("(C: rusage of the loop), which time spent preempted by other processes does not inflate. B alloc: managed bytes");
            Console.WriteLine("allocated by the timed loops of all rounds together. bad: rounds not counted (a datagram missing, damaged, duplicated or dropped).");
            foreach (Receiver r in receivers) r.Batch?.Dispose();
            return receivers.Any(r => r.Rates.Count == 0) ? 1 : 0;
        }

        private sealed class Receiver
        {
            internal Receiver(string name, DatagramBatch? batch, bool check, Receiver? baseline)
            {
                Name = name;
                Batch = batch;
                Check = check;
                Baseline = baseline;
            }

            internal string Name { get; }
            internal DatagramBatch? Batch { get; }
            internal SingleForm? Single { get; set; }
            internal SendForm? Send { get; set; }
            internal string WaRecvMethod { get; set; } = "recvmmsg";
            internal bool IsManaged => Batch != null || Single != null || Send != null;
            internal bool Check { get; }
            internal Receiver? Baseline { get; }
            internal List<double> Rates { get; } = new List<double>();
            internal List<double> Ratios { get; } = new List<double>();
            internal double LastRate { get; set; }
            internal List<double> CpuRates { get; } = new List<double>();
            internal List<double> CpuRatios { get; } = new List<double>();
            internal double LastCpuRate { get; set; }
            internal long Allocated { get; set; }
            internal int BadRounds { get; set; }

            internal void Reset()
            {
                Rates.Clear();
                Ratios.Clear();
                CpuRates.Clear();
                CpuRatios.Clear();
                Allocated = 0;
                BadRounds = 0;
            }
        }

        private static void Measure(Receiver receiver, Socket socket, string native, int port, int count, byte[] seen)
        {
            receiver.LastRate = 0;
            receiver.LastCpuRate = 0;
            double rate, cpuRate;
            bool good = receiver.Batch != null ? MeasureBatch(receiver, socket, native, port, count, seen, out rate, out cpuRate)
                : receiver.Single != null ? MeasureSingle(receiver, socket, native, port, count, out rate, out cpuRate)
                : receiver.Send != null ? MeasureSend(receiver, socket, count, out rate, out cpuRate)
                : MeasureC(native, count, receiver.Check, receiver.WaRecvMethod, out rate, out cpuRate);
            if (!good)
            {
                receiver.BadRounds++;
                return;
            }
            receiver.LastRate = rate;
            receiver.Rates.Add(rate);
            receiver.LastCpuRate = cpuRate;
            if (cpuRate > 0) receiver.CpuRates.Add(cpuRate);
        }

        /// <summary>Fills the socket's queue with <paramref name="count"/> datagrams, waits until it settled, then times its emptying.</summary>
#if NETCOREAPP
        // Full optimisation at once: called once per round, this loop would otherwise run as CoreCLR's quick tier-0 code.
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static bool MeasureBatch(Receiver receiver, Socket socket, string native, int port, int count, byte[] seen, out double rate, out double cpuRate)
        {
            DatagramBatch batch = receiver.Batch!;
            bool check = receiver.Check;
            rate = 0;
            cpuRate = 0;
            SocketQueue.Read(socket, out _, out uint dropsBefore);
            Fill(native, port, count);
            if (!SocketQueue.WaitUntilSettled(socket)) Console.Error.WriteLine("the queue did not settle");
            Array.Clear(seen, 0, seen.Length);

            int received = 0, bad = 0, duplicate = 0;
            EndPointKey sender = default;
            long allocatedBefore = GC.GetAllocatedBytesForCurrentThread();
            long cpuStart = SocketQueue.ThreadCpuNanoseconds();
            long start = Stopwatch.GetTimestamp();
            long last = start;
            while (received < count)
            {
                int n = batch.Receive(socket);
                if (n == 0) break;
                last = Stopwatch.GetTimestamp();
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> datagram = batch.GetDatagram(i, out EndPointKey from);
                    if (sender.IsEmpty) sender = from;
                    if (!check)
                    {
                        if (from != sender || batch.IsTruncated(i) || datagram.Length != DatagramSize) bad++;
                        continue;
                    }
                    if (from != sender || batch.IsTruncated(i) || WaFormat.Check(datagram, out long sequence) != WaCheckResult.Ok || (ulong)sequence >= (ulong)count)
                    {
                        bad++;
                        continue;
                    }
                    int at = (int)(sequence >> 3);
                    byte bit = (byte)(1 << (int)(sequence & 7));
                    if ((seen[at] & bit) != 0) duplicate++;
                    else seen[at] |= bit;
                }
                received += n;
            }
            long cpu = SocketQueue.ThreadCpuNanoseconds() - cpuStart;
            receiver.Allocated += GC.GetAllocatedBytesForCurrentThread() - allocatedBefore;
            SocketQueue.Read(socket, out _, out uint dropsAfter);
            while (batch.Receive(socket) > 0) bad++; // nothing should be left; if it is, the round does not count

            double seconds = (last - start) / (double)Stopwatch.Frequency;
            if (received != count || bad != 0 || duplicate != 0 || dropsAfter != dropsBefore || seconds <= 0)
            {
                Console.Error.WriteLine(receiver.Name + ": received " + received + " of " + count + ", bad " + bad + ", duplicate " + duplicate + ", drops " + (dropsAfter - dropsBefore));
                return false;
            }
            rate = received / seconds;
            cpuRate = cpu > 0 ? received * 1e9 / cpu : 0;
            return true;
        }

        /// <summary>Fills the queue, waits until it settled, then times one receive form taking exactly that many datagrams.</summary>
        private static bool MeasureSingle(Receiver receiver, Socket socket, string native, int port, int count, out double rate, out double cpuRate)
        {
            rate = 0;
            cpuRate = 0;
            SocketQueue.Read(socket, out _, out uint dropsBefore);
            Fill(native, port, count);
            if (!SocketQueue.WaitUntilSettled(socket)) Console.Error.WriteLine("the queue did not settle");
            SocketQueue.Read(socket, out _, out uint dropsAfter);
            if (dropsAfter != dropsBefore)
            {
                Console.Error.WriteLine(receiver.Name + ": the kernel dropped " + (dropsAfter - dropsBefore) + " while filling");
                Drain(socket);
                return false;
            }

            var timing = Timing.Start();
            int bad = SingleForms.Run(receiver.Single!.Value, socket, count, DatagramSize);
            timing.Stop(receiver, count, out double measuredRate, out double measuredCpuRate);
            int left = socket.Available;
            if (bad != 0 || left != 0)
            {
                Console.Error.WriteLine(receiver.Name + ": " + bad + " wrong, " + left + " bytes left in the queue");
                Drain(socket);
                return false;
            }
            rate = measuredRate;
            cpuRate = measuredCpuRate;
            return true;
        }

        /// <summary>The clocks around one timed loop: wall time, the thread's CPU time and its allocated bytes.</summary>
        private struct Timing
        {
            private long _allocated;
            private long _cpu;
            private long _start;

            internal static Timing Start()
            {
                Timing t;
                t._allocated = GC.GetAllocatedBytesForCurrentThread();
                t._cpu = SocketQueue.ThreadCpuNanoseconds();
                t._start = Stopwatch.GetTimestamp();
                return t;
            }

            /// <summary>Stops the clocks, adds the bytes allocated to the receiver's, and gives the rates for <paramref name="count"/> datagrams.</summary>
            internal void Stop(Receiver receiver, int count, out double rate, out double cpuRate)
            {
                long end = Stopwatch.GetTimestamp();
                long cpu = SocketQueue.ThreadCpuNanoseconds() - _cpu;
                receiver.Allocated += GC.GetAllocatedBytesForCurrentThread() - _allocated;
                rate = count / ((end - _start) / (double)Stopwatch.Frequency);
                cpuRate = cpu > 0 ? count * 1e9 / cpu : 0;
            }
        }

        private static readonly DatagramBatch s_drain = new DatagramBatch(64, SlotSize);

        /// <summary>Empties the socket's queue without waiting (outside any timed loop); returns how many datagrams it held.</summary>
        private static int Drain(Socket socket)
        {
            int total = 0, n;
            while ((n = s_drain.Receive(socket)) > 0) total += n;
            return total;
        }

        private static Socket? s_sender;
        private static readonly byte[] s_sendPayload = new byte[DatagramSize];

        /// <summary>Times one send form sending <paramref name="count"/> datagrams into the empty receive queue, then checks that all arrived.</summary>
        private static bool MeasureSend(Receiver receiver, Socket socket, int count, out double rate, out double cpuRate)
        {
            rate = 0;
            cpuRate = 0;
            if (s_sender == null)
            {
                s_sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                s_sender.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            }
            SocketQueue.Read(socket, out _, out uint dropsBefore);
            var timing = Timing.Start();
            int bad = SendForms.Run(receiver.Send!.Value, s_sender, count, s_sendPayload);
            timing.Stop(receiver, count, out double measuredRate, out double measuredCpuRate);
            SocketQueue.Read(socket, out _, out uint dropsAfter);
            int arrived = Drain(socket);
            if (bad != 0 || arrived != count || dropsAfter != dropsBefore)
            {
                Console.Error.WriteLine(receiver.Name + ": " + bad + " short sends, " + arrived + " of " + count + " arrived, " + (dropsAfter - dropsBefore) + " dropped");
                return false;
            }
            rate = measuredRate;
            cpuRate = measuredCpuRate;
            return true;
        }

        /// <summary>One run of wa-recv --drain: it binds, the sender fills its queue, it times the emptying.</summary>
        private static bool MeasureC(string native, int count, bool check, string method, out double rate, out double cpuRate)
        {
            rate = 0;
            cpuRate = 0;
            string ready = Path.Combine(Path.GetTempPath(), "wa-batch-bench-" + Process.GetCurrentProcess().Id + ".ready");
            File.Delete(ready);
            using var receiver = Start(Path.Combine(native, "wa-recv"),
                "--bind 127.0.0.1 --method " + method + " --batch 64 --size " + SlotSize + " --count " + count +
                " --rcvbuf " + s_rcvbuf + " --drain --max-seconds 20 --ready-file " + ready + (check ? "" : " --no-check"));
            var wait = Stopwatch.StartNew();
            while (!File.Exists(ready) && wait.ElapsedMilliseconds < 5000 && !receiver.HasExited) Thread.Sleep(5);
            if (!File.Exists(ready))
            {
                Console.Error.WriteLine("wa-recv did not get ready: " + receiver.StandardError.ReadToEnd());
                return false;
            }
            int port = int.Parse(File.ReadAllText(ready), CultureInfo.InvariantCulture);
            File.Delete(ready);
            Fill(native, port, count);
            if (!receiver.WaitForExit(30_000))
            {
                receiver.Kill();
                Console.Error.WriteLine("wa-recv did not finish");
                return false;
            }
            string line = receiver.StandardOutput.ReadToEnd().Trim();
            string diagnostics = receiver.StandardError.ReadToEnd();
            Dictionary<string, string> values = line.Split(' ').Select(kv => kv.Split('=')).Where(kv => kv.Length == 2).ToDictionary(kv => kv[0], kv => kv[1]);
            if (!values.TryGetValue("received", out string? received) || received != count.ToString(CultureInfo.InvariantCulture)
                || values["corrupt"] != "0" || values["duplicate"] != "0" || values["out_of_range"] != "0" || values["kernel_drops"] != "0")
            {
                Console.Error.WriteLine("wa-recv: " + line);
                return false;
            }
            rate = double.Parse(values["datagrams_per_s"], CultureInfo.InvariantCulture);
            // "wa-recv: cpu user=U sys=S cpu_ns_per_datagram=X": rusage over the timed loop only, in --drain mode
            int at = diagnostics.IndexOf("cpu_ns_per_datagram=", StringComparison.Ordinal);
            if (at >= 0)
            {
                string text = new string(diagnostics.Substring(at + "cpu_ns_per_datagram=".Length).TakeWhile(ch => char.IsDigit(ch) || ch == '.').ToArray());
                double ns = double.Parse(text, CultureInfo.InvariantCulture);
                cpuRate = ns > 0 ? 1e9 / ns : 0;
            }
            return rate > 0;
        }

        /// <summary>wa-sender: <paramref name="count"/> datagrams of 64 bytes to 127.0.0.1:<paramref name="port"/>, sequence numbers from 0.</summary>
        private static void Fill(string native, int port, int count)
        {
            using var sender = Start(Path.Combine(native, "wa-sender"), "--host 127.0.0.1 --port " + port + " --count " + count + " --size " + DatagramSize + " --mode gso");
            if (!sender.WaitForExit(30_000)) sender.Kill();
            if (sender.ExitCode != 0) throw new InvalidOperationException("wa-sender failed: " + sender.StandardError.ReadToEnd());
        }

        /// <summary>How many datagrams the queue holds: send 20 000, count what was dropped, and keep 90 % of what fit.</summary>
        private static int Calibrate(Socket socket, string native, int port)
        {
            const int Probe = 20_000;
            SocketQueue.Read(socket, out _, out uint dropsBefore);
            Fill(native, port, Probe);
            SocketQueue.WaitUntilSettled(socket);
            SocketQueue.Read(socket, out uint bytes, out uint dropsAfter);
            int queued = Probe - (int)(dropsAfter - dropsBefore);
            Drain(socket);
            Console.WriteLine("queue holds " + queued + " datagrams of " + DatagramSize + " B (" + (queued > 0 ? bytes / queued : 0) + " B of buffer each)");
            return queued < Probe ? queued * 9 / 10 : Probe;
        }

        private static Process Start(string file, string arguments)
        {
            var info = new ProcessStartInfo(file, arguments)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            return Process.Start(info) ?? throw new InvalidOperationException("could not start " + file);
        }

        private static string FindNativePrograms()
        {
            for (string? dir = AppContext.BaseDirectory; dir != null; dir = Path.GetDirectoryName(dir.TrimEnd(Path.DirectorySeparatorChar)))
            {
                string candidate = Path.Combine(dir, "bench", "native", "build");
                if (File.Exists(Path.Combine(candidate, "wa-recv")) && File.Exists(Path.Combine(candidate, "wa-sender"))) return candidate;
            }
            throw new InvalidOperationException("bench/native/build/wa-recv not found: run bench/native/build.sh (run.sh does)");
        }

        private static string CpuModel()
        {
            try
            {
                foreach (string line in File.ReadLines("/proc/cpuinfo"))
                    if (line.StartsWith("model name", StringComparison.Ordinal)) return line.Substring(line.IndexOf(':') + 1).Trim();
            }
            catch (IOException)
            {
            }
            return "unknown CPU";
        }

        private static double Median(List<double> values)
        {
            if (values.Count == 0) return 0;
            double[] sorted = values.OrderBy(v => v).ToArray();
            int mid = sorted.Length / 2;
            return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
        }
    }
}
