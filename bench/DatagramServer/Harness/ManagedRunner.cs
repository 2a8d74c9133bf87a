using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Runs one C# receiver: a loopback socket with the requested SO_RCVBUF, the method's receive loop on a
    /// thread pinned to the receiver's CPU, wa-sender pinned to the other. Stream mode sends everything at
    /// full speed while the receiver reads; drain mode fills the queue in rounds and lets the receiver
    /// drain each one alone.
    /// </summary>
    internal static class ManagedRunner
    {
        private static readonly TimeSpan SenderTimeout = TimeSpan.FromSeconds(120);
        private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(10);

        /// <summary>One run of <paramref name="method"/>: <paramref name="count"/> datagrams, <paramref name="inject"/> corrupted ones sent first.</summary>
        public static ResultRow Run(ManagedMethod method, Options options, NativeTools tools, long count, int inject, Progress? progress)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            int granted = Linux.SetReceiveBuffer(socket, options.ReceiveBuffer);
            // Read before any receive: Mono builds LocalEndPoint through the last endpoint given to ReceiveFrom.
            var receiverEndPoint = new IPEndPoint(IPAddress.Loopback, ((IPEndPoint)socket.LocalEndPoint!).Port);
            using var waker = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            waker.Bind(new IPEndPoint(IPAddress.Loopback, 0));

            bool drain = options.Drains;
            var run = new ReceiveRun(0, count, options.BufferSize, options.Size, drain);
            var receiver = new Thread(() =>
            {
                Linux.PinCurrentThread(options.ReceiverCpu);
                try { method.Receive(socket, run); }
                catch (Exception e) { run.Failure = e; }
            }, 1024 * 1024) { IsBackground = true, Name = "receiver " + method.Name };

            // Start from an empty young generation, so that only the run's own allocations can start a GC.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            int gen0 = GC.CollectionCount(0), gen1 = GC.CollectionCount(1), gen2 = GC.CollectionCount(2);

            receiver.Start();
            var wait = Stopwatch.StartNew();
            while (!run.Started && receiver.IsAlive && wait.Elapsed < StopTimeout) Thread.Sleep(1);
            // Let the receiver find its socket empty and wait, in the warm-up as in the measured run: the
            // first call of each native function (the library's recvfrom, poll, getsockopt) binds it, and
            // that allocates a few dozen bytes once per process on the calling thread. 250 ms, longer than the
            // library's 100 ms poll slice, so the warm-up run also takes the slice-timeout branch once (its first
            // Socket.Available call initialises the runtime's ioctl path, which allocates once).
            Thread.Sleep(250);

            var row = new ResultRow(options.RuntimeLabel, options.ModeName, method.Name)
            {
                ReceiveBufferGranted = granted,
                Injected = inject,
            };
            if (drain) Drain(row, run, receiver, socket, waker, receiverEndPoint, options, tools, count, inject, progress);
            else Stream(row, run, receiver, socket, waker, receiverEndPoint, options, tools, count, inject, progress);

            if (!receiver.Join(StopTimeout))
            {
                Linux.DumpThreadsIfMono(method.Name + ": the receiving thread did not stop");
                throw new TimeoutException(method.Name + ": the receiving thread did not stop");
            }
            if (run.Failure != null) throw new InvalidOperationException(method.Name + ": the receive loop failed: " + run.Failure.Message, run.Failure);

            row.Gen0 = GC.CollectionCount(0) - gen0;
            row.Gen1 = GC.CollectionCount(1) - gen1;
            row.Gen2 = GC.CollectionCount(2) - gen2;
            row.Read = run.Read;
            row.Received = run.Valid;
            row.Corrupt = run.Corrupt;
            row.Duplicate = run.Duplicate;
            row.OutOfRange = run.OutOfRange;
            row.Seconds = run.Seconds;
            row.AllocatedBytes = run.AllocatedBytes;
            row.CpuNanoseconds = run.CpuNanoseconds;
            return row;
        }

        private static void Stream(ResultRow row, ReceiveRun run, Thread receiver, Socket socket, Socket waker, IPEndPoint to,
            Options options, NativeTools tools, long count, int inject, Progress? progress)
        {
            Inject(waker, to, options.Size, inject);
            Process sender = tools.StartSender(to.Port, count, options.Size, 0, options.SenderCpu, options.SenderMode);
            while (!sender.WaitForExit(200))
                progress?.Show(row.Method, Progress.Count(run.Read) + " read, " + Progress.Count(Linux.Drops(socket)) + " dropped by the kernel so far");
            SenderResult sent = NativeTools.FinishSender(sender, SenderTimeout);
            row.Sent = sent.Sent;
            row.SenderMode = sent.Mode;
            // Every datagram is now queued or dropped (a few may still be on their way through the kernel:
            // then the drop counter moves once more and the receiver ends by idle time instead of count).
            run.SetTarget(sent.Sent + inject - Linux.Drops(socket));
            row.KernelDrops = AwaitEnd(row, run, receiver, socket, waker, to, options, progress);
        }

        private static void Drain(ResultRow row, ReceiveRun run, Thread receiver, Socket socket, Socket waker, IPEndPoint to,
            Options options, NativeTools tools, long count, int inject, Progress? progress)
        {
            long sentTotal = 0;
            int rounds = 0;
            bool stopped = false;
            for (long first = 0; first < count && !stopped; first += options.DrainRound)
            {
                long n = Math.Min(options.DrainRound, count - first);
                if (first == 0) Inject(waker, to, options.Size, inject);
                Process sender = tools.StartSender(to.Port, n, options.Size, first, options.SenderCpu, options.SenderMode);
                SenderResult sent = NativeTools.FinishSender(sender, SenderTimeout);
                sentTotal += sent.Sent;
                row.SenderMode = sent.Mode;
                Settle(socket);
                run.SetTarget(sentTotal + inject - Linux.Drops(socket));
                run.OpenRound();
                rounds++;
                // Wait for the receiver to drain the round; if it stalls, something was lost: stop the run.
                long lastRead = -1;
                var idle = Stopwatch.StartNew();
                while (run.FinishedRounds < rounds && receiver.IsAlive)
                {
                    Thread.Sleep(1);
                    long read = run.Read;
                    if (read != lastRead)
                    {
                        lastRead = read;
                        idle.Restart();
                    }
                    else if (idle.ElapsedMilliseconds >= options.IdleMs)
                    {
                        stopped = true;
                        break;
                    }
                }
                progress?.Show(row.Method, Progress.Count(run.Read) + " read in " + rounds + " rounds, " + Progress.Count(Linux.Drops(socket)) + " dropped by the kernel");
            }
            row.Sent = sentTotal;
            row.KernelDrops = Linux.Drops(socket);
            row.StoppedBy = stopped ? "idle" : "count";
            Stop(run, receiver, waker, to);
        }

        /// <summary>
        /// Waits for the receiver to read everything the kernel accepted. If it reads nothing for the idle
        /// time it is stopped instead. Returns the socket's drop count, read before any wake-up is sent.
        /// </summary>
        private static long AwaitEnd(ResultRow row, ReceiveRun run, Thread receiver, Socket socket, Socket waker, IPEndPoint to,
            Options options, Progress? progress)
        {
            long lastRead = -1;
            var idle = Stopwatch.StartNew();
            while (true)
            {
                if (receiver.Join(20))
                {
                    row.StoppedBy = "count";
                    return Linux.Drops(socket);
                }
                long read = run.Read;
                if (read != lastRead)
                {
                    lastRead = read;
                    idle.Restart();
                    progress?.Show(row.Method, Progress.Count(read) + " read, " + Progress.Count(Linux.Drops(socket)) + " dropped by the kernel");
                }
                else if (idle.ElapsedMilliseconds >= options.IdleMs)
                {
                    long drops = Linux.Drops(socket);
                    row.StoppedBy = "idle";
                    Stop(run, receiver, waker, to);
                    return drops;
                }
            }
        }

        private static void Stop(ReceiveRun run, Thread receiver, Socket waker, IPEndPoint to)
        {
            var watch = Stopwatch.StartNew();
            do
            {
                run.RequestStop(waker, to);
            }
            while (!receiver.Join(50) && watch.Elapsed < StopTimeout);
        }

        /// <summary>Waits until the socket's queue and drop counter stop moving: the kernel has finished with the last sends.</summary>
        public static void Settle(Socket socket)
        {
            Linux.TryReadMemInfo(socket, out long drops, out long queued);
            for (int i = 0; i < 200; i++)
            {
                Thread.Sleep(1);
                Linux.TryReadMemInfo(socket, out long drops2, out long queued2);
                if (drops2 == drops && queued2 == queued) return;
                drops = drops2;
                queued = queued2;
            }
        }

        /// <summary>--inject-corrupt: <paramref name="count"/> datagrams of the right size with one byte changed, which every receiver must reject.</summary>
        public static void Inject(Socket from, EndPoint to, int size, int count)
        {
            var datagram = new byte[size];
            for (int k = 0; k < count; k++)
            {
                WaFormat.Fill(datagram, 0, size, k);
                int position = k % size;
                datagram[position] = (byte)(datagram[position] == (byte)'x' ? 'y' : 'x');
                from.SendTo(datagram, to);
            }
        }
    }
}
