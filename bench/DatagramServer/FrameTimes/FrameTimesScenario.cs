using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The frame-time benchmark: the tick scenario's frame (K clients × E entity updates sent, then received and
    /// checked), run at a fixed rate and flat out over a live heap, the allocating way and the library's taking turns.
    /// Every frame is logged into arrays made beforehand, so logging allocates nothing.
    /// </summary>
    internal static class FrameTimesScenario
    {
        public static int Run(Options all)
        {
            FrameTimesOptions options = all.FrameTimes;
            var report = new FrameTimesReport
            {
                RuntimeLabel = FrameCounters.RuntimeLabel,
                RuntimeDescription = FrameCounters.RuntimeDescription,
                MachineDescription = Machine.Describe(),
                Date = DateTime.UtcNow.ToString("yyyy-MM-dd HH:mm 'UTC'", System.Globalization.CultureInfo.InvariantCulture),
                Options = options,
            };
            Console.WriteLine("where-allocation frame times on " + report.RuntimeDescription);
            Console.WriteLine("machine: " + report.MachineDescription + "; load average " + Machine.LoadAverage);
            Console.WriteLine("allocation counter: " + (FrameCounters.HasAllocationCounter ? "the thread's, seen to count a byte[" + AllocationCanary.Length + "] canary" : AllocationCanary.NoCounter + " (it did not see a byte[" + AllocationCanary.Length + "] canary)"));

            var watch = Stopwatch.StartNew();
            var state = new GameState(options.LiveHeapMb);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            report.LiveHeapBuildSeconds = watch.Elapsed.TotalSeconds;
            report.LiveHeapBytes = state.Bytes;
            report.HeapAfterBuild = GC.GetTotalMemory(false);
            Console.WriteLine("live heap: " + state.Count + " entities (" + (state.Bytes >> 20) + " MB), built in " + report.LiveHeapBuildSeconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture) + " s");
            Console.WriteLine("frames: " + options.Clients + " clients x " + options.Entities + " entity updates, " + options.Frames + " per way and rate, " + options.Rounds + " interleaved rounds");

            Exception? failure = null;
            var thread = new Thread(() =>
            {
                try { RunWays(options, state, report); }
                catch (Exception e) { failure = e; }
            }, 1024 * 1024) { IsBackground = true, Name = "frames" };
            thread.Start();
            thread.Join();
            if (failure != null)
            {
                Console.Error.WriteLine("DatagramServer: the frame-time run failed: " + failure);
                return 1;
            }
            GC.KeepAlive(state);
            report.TotalSeconds = watch.Elapsed.TotalSeconds;

            string output = all.ResolvedOutput;
            report.Write(output);
            Console.WriteLine();
            Console.WriteLine(report.ConsoleTable());
            Console.WriteLine("wrote frametimes.md, frametimes.csv, frames.csv, frametimes.svg in " + output);
            return report.Lost == 0 ? 0 : 3;
        }

        private static void RunWays(FrameTimesOptions options, GameState state, FrameTimesReport report)
        {
            var ways = new TickWay[] { new AllocatingWay(), new LibraryWay() };
            var frames = new TickFrame[ways.Length];
            var sockets = new List<Socket>();
            try
            {
                for (int w = 0; w < ways.Length; w++)
                {
                    frames[w] = Open(options, sockets);
                    ways[w].Prepare(frames[w]);
                }
                int sequence = 0;
                // Warm-up: every way compiled and its sockets' buffers grown before anything is logged.
                for (int w = 0; w < ways.Length; w++)
                    for (int f = 0; f < options.WarmUpFrames; f++) report.Lost += ways[w].Run(frames[w], sequence++);

                foreach (int rate in options.Rates)
                {
                    var logs = new FrameLog[ways.Length];
                    for (int w = 0; w < ways.Length; w++) logs[w] = new FrameLog(ways[w].Name, rate, options.Frames);
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    GC.Collect();
                    for (int round = 0; round < options.Rounds; round++)
                    {
                        int part = options.Frames / options.Rounds + (round < options.Frames % options.Rounds ? 1 : 0);
                        for (int turn = 0; turn < ways.Length; turn++)
                        {
                            int w = (round + turn) % ways.Length; // each round starts with the other way
                            report.Lost += RunFrames(ways[w], frames[w], state, options, rate, part, logs[w], ref sequence);
                        }
                    }
                    report.Logs.AddRange(logs);
                }
            }
            finally
            {
                foreach (Socket s in sockets) s.Dispose();
            }
        }

        private static TickFrame Open(FrameTimesOptions options, List<Socket> sockets)
        {
            var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            sockets.Add(server);
            server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var clients = new Socket[options.Clients];
            var endPoints = new IPEndPoint[options.Clients];
            for (int c = 0; c < clients.Length; c++)
            {
                clients[c] = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                sockets.Add(clients[c]);
                clients[c].Bind(new IPEndPoint(IPAddress.Loopback, 0));
                Linux.SetReceiveBuffer(clients[c], 4 * 1024 * 1024);
                clients[c].ReceiveTimeout = 2000; // only a lost update would wait this long
                endPoints[c] = (IPEndPoint)clients[c].LocalEndPoint!;
            }
            return new TickFrame(server, clients, endPoints, options.Entities, options.Size, options.BufferSize);
        }

        /// <summary>Runs <paramref name="count"/> frames at <paramref name="rate"/> per second (0: flat out), logging each.</summary>
        private static long RunFrames(TickWay way, TickFrame frame, GameState state, FrameTimesOptions options, int rate, int count, FrameLog log, ref int sequence)
        {
            long period = rate > 0 ? Stopwatch.Frequency / rate : 0;
            int updates = options.Clients * options.Entities;
            long lost = 0;
            long due = Stopwatch.GetTimestamp();
            for (int i = 0; i < count; i++)
            {
                if (period > 0) WaitUntil(due);
                long collections = FrameCounters.Collections();
                long pause = FrameCounters.PauseNanoseconds();
                long allocated = FrameCounters.AllocatedBytes();
                long cpu = Linux.ThreadCpuNanoseconds();
                long start = Stopwatch.GetTimestamp();
                lost += way.Run(frame, sequence++);
                state.Step(updates);
                long end = Stopwatch.GetTimestamp();
                log.Add(start, end, Linux.ThreadCpuNanoseconds() - cpu, FrameCounters.Collections() - collections,
                    FrameCounters.PauseNanoseconds() - pause, FrameCounters.AllocatedBytes() - allocated);
                if (period > 0)
                {
                    due += period;
                    if (due < end) due = end; // a late frame starts the next one at once, and the rate does not try to catch up
                }
            }
            return lost;
        }

        /// <summary>Sleeps to within 2 ms of <paramref name="due"/>, then spins: no allocation, a start within microseconds.</summary>
        private static void WaitUntil(long due)
        {
            long twoMs = Stopwatch.Frequency / 500;
            while (due - Stopwatch.GetTimestamp() > twoMs) Thread.Sleep(1);
            while (Stopwatch.GetTimestamp() < due) Thread.SpinWait(20);
        }
    }

    /// <summary>Every frame of one way at one rate, in arrays sized beforehand.</summary>
    internal sealed class FrameLog
    {
        public FrameLog(string way, int rate, int capacity)
        {
            Way = way;
            Rate = rate;
            Start = new long[capacity];
            WallNs = new long[capacity];
            CpuNs = new long[capacity];
            Collections = new int[capacity];
            PauseNs = new long[capacity];
            AllocatedBytes = new long[capacity];
        }

        public string Way { get; }
        public int Rate { get; }
        public int Count { get; private set; }
        public long[] Start { get; }
        public long[] WallNs { get; }
        public long[] CpuNs { get; }
        public int[] Collections { get; }
        public long[] PauseNs { get; }
        public long[] AllocatedBytes { get; }

        public void Add(long start, long end, long cpuNs, long collections, long pauseNs, long allocated)
        {
            int i = Count++;
            Start[i] = start;
            WallNs[i] = (long)((end - start) * (1e9 / Stopwatch.Frequency));
            CpuNs[i] = cpuNs;
            Collections[i] = (int)collections;
            PauseNs[i] = pauseNs;
            AllocatedBytes[i] = allocated;
        }
    }
}
