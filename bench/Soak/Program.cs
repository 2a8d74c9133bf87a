using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The soak benchmark: self-checking datagrams through every receive member of the library with its matching
    /// send member, on every datagram path the runtime has, for IPv4, IPv6 and dual-mode sockets, at a rate the
    /// receiver sustains (a flow-control window in the process). One row per segment: sent, received, the
    /// kernel's drops (the socket's own counter, and the system-wide /proc/net/snmp counters apart), lost
    /// (sent − received − socket drops; must be 0), bad datagrams, rate and managed allocation. Exit code 1 when
    /// anything was lost or bad anywhere, 2 for a bad option.
    /// </summary>
    public static class Program
    {
        private const int ReceiveTimeoutMs = 1000;

        private sealed class Options
        {
            internal long Total = 10_000_000;
            internal long WarmUpPerSegment = 2000;
            internal int Senders = 4;
            internal int Window = 1024;
            internal int MaxLength = 512;
            internal int ReceiveBuffer = 4 * 1024 * 1024;
            internal string? Only;
        }

        public static int Main(string[] args)
        {
            var o = new Options();
            for (int i = 0; i < args.Length; i++)
            {
                string arg = args[i];
                string? value = i + 1 < args.Length ? args[i + 1] : null;
                switch (arg)
                {
                    case "--quick": o.Total = 300_000; o.WarmUpPerSegment = 300; continue;
                    case "--total": o.Total = ParseLong(value); break;
                    case "--warmup": o.WarmUpPerSegment = ParseLong(value); break;
                    case "--senders": o.Senders = (int)ParseLong(value); break;
                    case "--window": o.Window = (int)ParseLong(value); break;
                    case "--max-length": o.MaxLength = (int)ParseLong(value); break;
                    case "--rcvbuf": o.ReceiveBuffer = (int)ParseLong(value); break;
                    case "--only": o.Only = value; break;
                    default: return Usage("unknown option " + arg);
                }
                i++;
            }
            if (o.Total < 1 || o.WarmUpPerSegment < 0 || o.Senders < 1 || o.Senders > 1000 || o.Window < 2 * Sender.BatchCapacity
                || o.MaxLength < SoakDatagram.MinLength || o.MaxLength > Receiver.BufferSize || o.ReceiveBuffer < 1)
                return Usage("an option is out of range");

            string? selfCheck = CheckerSelfTest.Run();
            if (selfCheck != null)
            {
                Console.WriteLine(selfCheck);
                return 1;
            }

            var wall = Stopwatch.StartNew();
            List<Segment> segments = Segment.All(o.Total, o.Only);
            if (segments.Count == 0) return Usage("--only matches no segment");
            PrintSetup(o, segments);

            var window = new FlowWindow(o.Window);
            var workers = new Workers();
            using (Socket idle = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0)))
            {
                // .NET's Socket.Poll allocates 56 B on the first call that times out, once; the receive loops call it
                // when a queue is empty, which a short warm-up may never meet. Have it happen here, unmeasured.
                workers.Receive.Begin(() => idle.Poll(1000, SelectMode.SelectRead));
                workers.Receive.Wait(5000);
            }
            bool failed = false;
            if (o.WarmUpPerSegment > 0)
            {
                // One unreported pass over every segment first: the JIT, type loading and first-use caches allocate
                // then, not in the measured pass.
                var warm = new SegmentResult("warm-up");
                foreach (Segment s in Segment.All(o.WarmUpPerSegment * segments.Count, o.Only))
                {
                    SegmentResult r = RunSegment(s, o, window, workers);
                    warm.Add(r);
                    if (r.Failed) Console.WriteLine("warm-up failed: " + r.Row() + (r.Problem == null ? "" : "  " + r.Problem));
                    if (workers.Stuck) break;
                }
                failed |= warm.Failed;
                Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "warm-up: {0} datagrams over {1} segments in {2:F1} s: lost {3}, bad {4}",
                    warm.Sent, segments.Count, wall.Elapsed.TotalSeconds, warm.Lost, warm.Bad));
                Console.WriteLine();
                if (workers.Stuck)
                {
                    Console.WriteLine("a worker thread is stuck in the warm-up: nothing measured");
                    return 1;
                }
            }

            double warmUpSeconds = wall.Elapsed.TotalSeconds;
            Console.WriteLine(SegmentResult.Header);
            var total = new SegmentResult("total (" + segments.Count + " segments)");
            var problems = new List<string>();
            foreach (Segment s in segments)
            {
                SegmentResult r = RunSegment(s, o, window, workers);
                Console.WriteLine(r.Row());
                if (r.Problem != null) problems.Add(r.Label.Trim() + ": " + r.Problem);
                total.Add(r);
                failed |= r.Failed;
                if (workers.Stuck)
                {
                    problems.Add("a worker thread is stuck: the remaining segments were not run");
                    break;
                }
            }
            Console.WriteLine(new string('-', SegmentResult.Header.Length));
            Console.WriteLine(total.Row());
            foreach (string p in problems) Console.WriteLine("problem: " + p);
            if (total.SocketDrops != 0)
                Console.WriteLine("note: the kernel dropped " + total.SocketDrops + " datagrams at the receiving sockets: the flow-control window did not keep the queues short enough (accounted, not lost)");
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "wall time: {0:F1} s ({1:F1} s warm-up, {2:F1} s in measured segments); result: {3}",
                wall.Elapsed.TotalSeconds, warmUpSeconds, total.Seconds, failed ? "FAILED (lost, bad or send errors above)" : "lost 0, bad 0"));
            DatagramPathSettings.Reset();
            return failed ? 1 : 0;
        }

        /// <summary>The receiving and the sending thread, alive for the whole run.</summary>
        private sealed class Workers
        {
            internal Worker Receive { get; } = new Worker("soak receive");
            internal Worker Send { get; } = new Worker("soak send");

            /// <summary>True once a segment's thread did not end in time: no later segment can use them.</summary>
            internal bool Stuck { get; set; }
        }

        /// <summary>Runs one segment on fresh sockets and returns its row.</summary>
        private static SegmentResult RunSegment(Segment segment, Options o, FlowWindow window, Workers workers)
        {
            DatagramPathSettings.Force(segment.Path);
            var result = new SegmentResult(string.Format(CultureInfo.InvariantCulture, "{0,2} {1,-5} {2,-5} {3,-13} {4}",
                segment.Id, segment.ReceiveName, segment.SendName, segment.Path, segment.Family));
            using var sockets = new SegmentSockets(segment.Family, o.Senders, o.ReceiveBuffer, ReceiveTimeoutMs);
            var quota = new long[o.Senders];
            for (int i = 0; i < quota.Length; i++) quota[i] = segment.Planned / o.Senders + (i < segment.Planned % o.Senders ? 1 : 0);
            var check = new Checker(segment.Id, sockets.SenderKeys, quota, o.MaxLength);
            window.Reset();
            using var go = new ManualResetEventSlim(false);
            using var ready = new CountdownEvent(2);
            var receiver = new Receiver(segment, sockets, window, check, go);
            var sender = new Sender(segment, sockets, window, quota, o.MaxLength, go);
            Action receive = () => { ready.Signal(); receiver.Run(); }, send = () => { ready.Signal(); sender.Run(); };

            long dropsBefore = sockets.Receiver.GetDatagramStatus().DroppedDatagrams;
            UdpCounters snmpBefore = UdpCounters.Read();
            workers.Receive.Begin(receive);
            workers.Send.Begin(send);
            ready.Wait();
            long processBefore = ProcessAllocatedBytes();
            long start = Stopwatch.GetTimestamp();
            go.Set();

            // Bounded: the loops end by themselves (see Receiver, FlowWindow); this is the last resort.
            int deadlineMs = 30000 + (int)Math.Min(int.MaxValue - 30000, segment.Planned / 10);
            bool ended = workers.Receive.Wait(deadlineMs);
            if (!ended)
            {
                receiver.Abort();
                ended = workers.Receive.Wait(5000);
            }
            ended &= workers.Send.Wait(ended ? 10000 : 1);
            long end = Stopwatch.GetTimestamp();
            long processAfter = ProcessAllocatedBytes();
            workers.Stuck |= !ended;

            long dropsAfter = sockets.Receiver.GetDatagramStatus().DroppedDatagrams;
            result.Snmp = UdpCounters.Delta(snmpBefore, UdpCounters.Read());
            result.SocketDrops = dropsBefore < 0 || dropsAfter < 0 ? -1 : dropsAfter - dropsBefore;
            result.Seconds = (double)(end - start) / Stopwatch.Frequency;
            result.Sent = sender.Sent;
            result.Received = check.Received;
            result.Bad = check.Bad;
            result.OutOfOrder = check.OutOfOrder;
            result.SendErrors = sender.SendErrors;
            result.ReceiveBytes = receiver.AllocatedBytes;
            result.SendBytes = sender.AllocatedBytes;
            result.ProcessBytes = processBefore < 0 ? -1 : processAfter - processBefore;
            var problem = new List<string>();
            if (!ended) problem.Add("a thread did not end within " + deadlineMs + " ms");
            if (receiver.Failure != null) problem.Add("receiver: " + receiver.Failure.GetType().Name + ": " + receiver.Failure.Message);
            if (sender.Failure != null) problem.Add("sender: " + sender.Failure.GetType().Name + ": " + sender.Failure.Message);
            if (sender.GaveUp) problem.Add("the sender gave up: the receiver took nothing for 5 s");
            if (sender.SendErrors != 0) problem.Add(sender.SendErrors + " send errors");
            if (check.Bad != 0) problem.Add(check.Describe());
            if (result.Sent != segment.Planned && problem.Count == 0) problem.Add("sent " + result.Sent + " of " + segment.Planned);
            if (problem.Count > 0) result.Problem = string.Join("; ", problem);
            return result;
        }

        /// <summary>Managed bytes allocated by the whole process so far (.NET); -1 on Mono, which has no such counter in netstandard2.1.</summary>
        private static long ProcessAllocatedBytes()
        {
#if NET
            return GC.GetTotalAllocatedBytes(true);
#else
            return -1;
#endif
        }

        private static void PrintSetup(Options o, List<Segment> segments)
        {
            bool mono = Type.GetType("Mono.Runtime") != null;
            Console.WriteLine("runtime: " + (mono ? "Mono" : "CoreCLR") + ", " + RuntimeInformation.FrameworkDescription + ", " + RuntimeInformation.OSDescription);
            Console.WriteLine("machine: " + CpuModel() + ", " + Environment.ProcessorCount + " logical CPUs");
            var paths = new List<string>();
            foreach (DatagramPath p in new[] { DatagramPath.Native, DatagramPath.SocketAddress, DatagramPath.Managed })
                paths.Add(p + (DatagramPathSettings.IsAvailable(p) ? "" : " (not available)"));
            var modes = new List<string>();
            foreach (DatagramBatchMode m in new[] { DatagramBatchMode.MultiMessage, DatagramBatchMode.SingleCalls })
                modes.Add(m + (DatagramBatch.IsModeAvailable(m) ? "" : " (not available)"));
            Console.WriteLine("datagram paths: " + string.Join(", ", paths) + "; batch modes: " + string.Join(", ", modes));
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "{0} datagrams over {1} segments ({2} each), {3} senders per segment (one sending thread), {4}..{5} bytes each, window {6} datagrams",
                o.Total, segments.Count, segments[0].Planned, o.Senders, SoakDatagram.MinLength, o.MaxLength, o.Window));
            ProbeWindow(o);
            Console.WriteLine("checker self-check passed: crafted corrupt, duplicate, wrong-sender, truncated and out-of-order datagrams were each caught");
            Console.WriteLine("receive members: R1 ReceiveFrom(byte[],int,int,flags,IPEndPointNonAlloc)  R2 ReceiveFrom(byte[],IPEndPointNonAlloc)  R3 ReceiveFrom(byte[],int,int,flags,out EndPointKey)");
            Console.WriteLine("                 R4 ReceiveFrom(Span,flags)  R5 TryReceiveFrom(byte[],int,int,flags,IPEndPointNonAlloc,out ReceivedDatagram)  R6 TryReceiveFrom(Span,out ReceivedDatagram,flags)");
            Console.WriteLine("                 B1 DatagramBatch.Receive(socket)  B2 DatagramBatch.Receive(socket, 200)   (-MM MultiMessage, -SC SingleCalls; batches of " + Receiver.BatchCapacity + ")");
            Console.WriteLine("send members:    S1 SendTo(byte[],int,int,flags,IPEndPointNonAlloc)  S2 SendTo(ReadOnlySpan,in EndPointKey,flags)  S3 SendTo(byte[],int,int,flags,in EndPointKey)");
            Console.WriteLine("                 B3 DatagramBatch.Send(socket) (batches of " + Sender.BatchCapacity + ", same mode as the receiving batch)");
            Console.WriteLine("families: IPv4 (127.0.0.1), IPv6 (::1, IPv6-only), Dual (IPv4 senders to a dual-mode receiver on ::ffff:127.0.0.1)");
            Console.WriteLine("columns: sock drops = the receiving socket's DatagramSocketStatus.DroppedDatagrams; snmp4/snmp6 = system-wide Udp InErrors/RcvbufErrors");
            Console.WriteLine("  and Udp6InErrors/Udp6RcvbufErrors deltas (every process's sockets); lost = sent - received - sock drops; bad = corrupt + duplicate +");
            Console.WriteLine("  wrong sender + truncated + receive errors; ooo = out of order (reported, not bad); recv B / send B = managed bytes allocated by the");
            Console.WriteLine("  receiving / sending thread (GC.GetAllocatedBytesForCurrentThread); process B = GC.GetTotalAllocatedBytes(true) over the segment (.NET only)");
            Console.WriteLine();
        }

        /// <summary>
        /// Shows that a full window fits the receive buffer: sends <see cref="Options.Window"/> datagrams of the longest
        /// length to a socket set up like a segment's receiver and reads how many bytes the kernel charged for them.
        /// </summary>
        private static void ProbeWindow(Options o)
        {
            using Socket receiver = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            receiver.ReceiveBufferSize = o.ReceiveBuffer;
            using Socket sender = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            EndPointKey target = EndPointKey.FromIPEndPoint((IPEndPoint)receiver.LocalEndPoint!);
            var datagram = new byte[o.MaxLength];
            for (int i = 0; i < o.Window; i++) sender.SendTo_NonAlloc(datagram, 0, datagram.Length, SocketFlags.None, target);
            DatagramSocketStatus status = receiver.GetDatagramStatus();
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "SO_RCVBUF: asked {0}, granted {1}; a full window of {2} datagrams of {3} bytes is charged {4} bytes ({5:F0} %), dropped {6}",
                o.ReceiveBuffer, status.ReceiveBufferBytes, o.Window, o.MaxLength, status.QueuedReceiveBytes,
                status.ReceiveBufferBytes > 0 ? 100.0 * status.QueuedReceiveBytes / status.ReceiveBufferBytes : 0, status.DroppedDatagrams));
        }

        private static string CpuModel()
        {
            try
            {
                foreach (string line in File.ReadAllLines("/proc/cpuinfo"))
                {
                    if (line.StartsWith("model name", StringComparison.Ordinal)) return line.Substring(line.IndexOf(':') + 1).Trim();
                }
            }
            catch (IOException)
            {
            }
            return "unknown CPU";
        }

        private static long ParseLong(string? value)
        {
            if (value == null || !long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out long n)) return -1;
            return n;
        }

        private static int Usage(string problem)
        {
            Console.Error.WriteLine(problem);
            Console.Error.WriteLine("usage: Soak [--total N] [--quick] [--warmup N-per-segment] [--senders K] [--window W] [--max-length L] [--rcvbuf BYTES] [--only SUBSTRING]");
            return 2;
        }
    }
}
