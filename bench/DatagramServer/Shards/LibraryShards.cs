using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The library's side of the shard scenario: a <see cref="DatagramShardGroup"/> group of N sockets on one loopback
    /// port, one thread per shard pinned to its own CPU (<see cref="DatagramShardGroup.PinCurrentThread"/>), each draining
    /// its shard with its own <see cref="DatagramBatch"/> and decoding and checking every datagram exactly as the
    /// library-batch method does. Per fill, the sender fills every shard's queue from many source ports; once the
    /// queues settled, every thread is let go at once and drains its shard until it is empty.
    /// </summary>
    internal static class LibraryShards
    {
        public const string Name = "library-shards";
        private const int BatchSize = 64;
        private static readonly TimeSpan FillTimeout = TimeSpan.FromSeconds(30);

        /// <summary>One warm-up fill, then <c>--shard-fills</c> measured fills, added to <paramref name="row"/>.</summary>
        public static void Run(int shardCount, Options options, NativeTools tools, int inject, ShardRow row, Progress progress)
        {
            int fills = options.ShardFills + 1; // fill 0 warms up: compiled code, touched buffers, bound native calls
            long perFill = (long)options.ShardFill * shardCount;
            using DatagramShardGroup shards = DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), shardCount);
            var to = new IPEndPoint(IPAddress.Loopback, shards.LocalEndPoint.Port);
            using var waker = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            waker.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var gate = new Gate();
            var readers = new ShardReader[shardCount];
            var threads = new Thread[shardCount];
            for (int i = 0; i < shardCount; i++)
            {
                Linux.SetReceiveBuffer(shards[i].Socket, options.ReceiveBuffer);
                var reader = readers[i] = new ShardReader(shards[i].Socket, fills + 1, (fills + 1) * perFill, options.BufferSize);
                int cpu = (options.ReceiverCpu + i) % Environment.ProcessorCount;
                threads[i] = new Thread(() => reader.Run(gate, cpu), 1024 * 1024) { IsBackground = true, Name = "shard " + i };
            }

            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            int gen0 = GC.CollectionCount(0);
            foreach (Thread t in threads) t.Start();

            long sent = 0;
            int opened = 0;
            try
            {
                for (int fill = 0; fill < fills; fill++)
                {
                    if (fill == 0 && inject > 0) ManagedRunner.Inject(waker, to, options.Size, inject);
                    Process sender = tools.StartSender(to.Port, perFill, options.Size, fill * perFill, options.SenderCpu, options.SenderMode, options.Sources);
                    sent += NativeTools.FinishSender(sender, FillTimeout).Sent;
                    foreach (DatagramShard shard in EachShard(shards)) ManagedRunner.Settle(shard.Socket);
                    gate.Open();
                    opened++;
                    AwaitFill(readers, opened, shardCount + " shards, fill " + (fill + 1) + " of " + fills, progress);
                }
                // A datagram the kernel queued after the queues looked settled is still there: one more (unmeasured) pass.
                if (ReadTotal(readers) < sent + inject - Drops(shards))
                {
                    gate.Open();
                    opened++;
                    AwaitFill(readers, opened, "sweep", progress);
                }
            }
            finally
            {
                gate.Stop();
                foreach (Thread t in threads) t.Join(10_000);
            }
            foreach (ShardReader reader in readers)
                if (reader.Failure != null) throw new InvalidOperationException(Name + ": a shard's receive loop failed: " + reader.Failure.Message, reader.Failure);

            row.Gen0 = (row.Gen0 ?? 0) + GC.CollectionCount(0) - gen0;
            row.Sent += sent;
            row.Injected += inject;
            row.KernelDrops += Drops(shards);
            long allocated = 0;
            for (int fill = 1; fill < fills; fill++)
            {
                long read = 0, cpu = 0, start = long.MaxValue, last = 0, fewest = long.MaxValue;
                foreach (ShardReader r in readers)
                {
                    read += r.FillRead[fill];
                    cpu += r.FillCpu[fill];
                    allocated += r.FillAllocated[fill];
                    start = Math.Min(start, r.FillStart[fill]);
                    if (r.FillRead[fill] > 0) last = Math.Max(last, r.FillLast[fill]);
                    fewest = Math.Min(fewest, r.FillRead[fill]);
                }
                if (read == 0 || last <= start) continue;
                row.FillRates.Add(read / ((last - start) / (double)Stopwatch.Frequency));
                row.FillCpuNs.Add((double)cpu / read);
                row.SmallestShare = Math.Min(row.SmallestShare, (double)fewest * shardCount / read);
            }
            row.AllocatedBytes = FrameCounters.HasAllocationCounter ? (row.AllocatedBytes ?? 0) + allocated : (long?)null; // none under Boehm: its counter says 0
            // Every shard's datagrams, the warm-up fill's included (they were sent); a sequence two shards saw is a duplicate.
            ulong[] union = new ulong[readers[0].Seen.Length];
            foreach (ShardReader r in readers)
            {
                row.Read += r.Read;
                row.Corrupt += r.Corrupt;
                row.OutOfRange += r.OutOfRange;
                row.Duplicate += r.Duplicate;
                for (int w = 0; w < union.Length; w++)
                {
                    row.Duplicate += PopCount(union[w] & r.Seen[w]);
                    union[w] |= r.Seen[w];
                }
            }
            foreach (ulong word in union) row.Received += PopCount(word);
        }

        private static System.Collections.Generic.IEnumerable<DatagramShard> EachShard(DatagramShardGroup shards)
        {
            for (int i = 0; i < shards.Count; i++) yield return shards[i];
        }

        private static long Drops(DatagramShardGroup shards)
        {
            long drops = 0;
            foreach (DatagramShard shard in EachShard(shards)) drops += Linux.Drops(shard.Socket);
            return drops;
        }

        private static long ReadTotal(ShardReader[] readers)
        {
            long total = 0;
            foreach (ShardReader r in readers) total += Volatile.Read(ref r.Read);
            return total;
        }

        private static void AwaitFill(ShardReader[] readers, int fills, string what, Progress progress)
        {
            var watch = Stopwatch.StartNew();
            foreach (ShardReader r in readers)
            {
                while (Volatile.Read(ref r.Finished) < fills && r.Failure == null)
                {
                    if (watch.Elapsed > FillTimeout) throw new TimeoutException(Name + ": a shard did not finish its fill in " + FillTimeout.TotalSeconds + " s");
                    Thread.Sleep(1);
                }
            }
            progress.Show(Name, what);
        }

        private static int PopCount(ulong value)
        {
            int count = 0;
            while (value != 0)
            {
                value &= value - 1;
                count++;
            }
            return count;
        }

        /// <summary>Lets every shard thread start a fill at once (a lock and a pulse, no polling delay).</summary>
        private sealed class Gate
        {
            private int _opened;
            private bool _stopped;

            /// <summary>Waits until fill <paramref name="fill"/> (0-based) is opened: true; false once stopped.</summary>
            public bool WaitFor(int fill)
            {
                lock (this)
                {
                    while (_opened <= fill && !_stopped) Monitor.Wait(this, 100);
                    return _opened > fill;
                }
            }

            public void Open()
            {
                lock (this)
                {
                    _opened++;
                    Monitor.PulseAll(this);
                }
            }

            public void Stop()
            {
                lock (this)
                {
                    _stopped = true;
                    Monitor.PulseAll(this);
                }
            }
        }

        /// <summary>One shard's thread: drains its socket once per fill, counts and checks every datagram, times every fill.</summary>
        private sealed class ShardReader
        {
            private readonly Socket _socket;
            private readonly int _bufferSize;
            public readonly long[] FillStart, FillLast, FillRead, FillCpu, FillAllocated;
            public readonly ulong[] Seen;
            private readonly long _range;
            public long Read;
            public long Corrupt, Duplicate, OutOfRange;
            public int Finished;
            public Exception? Failure;

            public ShardReader(Socket socket, int fills, long range, int bufferSize)
            {
                _socket = socket;
                _bufferSize = bufferSize;
                _range = range;
                Seen = new ulong[(range + 63) / 64];
                FillStart = new long[fills];
                FillLast = new long[fills];
                FillRead = new long[fills];
                FillCpu = new long[fills];
                FillAllocated = new long[fills];
            }

            public void Run(Gate gate, int cpu)
            {
                try
                {
                    if (DatagramShardGroup.CanPinThreads) DatagramShardGroup.PinCurrentThread(cpu);
                    Drain(gate);
                }
                catch (Exception e)
                {
                    Failure = e;
                }
            }

            private void Drain(Gate gate)
            {
                var chars = new char[_bufferSize];
                Encoding utf8 = Encoding.UTF8;
                using var batch = new DatagramBatch(BatchSize, _bufferSize);
                for (int fill = 0; fill < FillStart.Length && gate.WaitFor(fill); fill++)
                {
                    long allocated = GC.GetAllocatedBytesForCurrentThread();
                    long cpu = Linux.ThreadCpuNanoseconds();
                    long start = Stopwatch.GetTimestamp(), last = 0, read = 0;
                    while (true)
                    {
                        int received = batch.Receive(_socket); // never waits: the queue was filled before the gate opened
                        if (received == 0) break;
                        last = Stopwatch.GetTimestamp();
                        using DatagramBatch.Reader reader = batch.BeginRead();
                        for (int i = 0; i < received; i++)
                        {
                            ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out bool truncated);
                            if (truncated)
                            {
                                Corrupt++;
                                continue;
                            }
                            int count = utf8.GetChars(datagram, chars);
                            Record(WaFormat.Check(chars, count, out long sequence), sequence);
                        }
                        read += received;
                    }
                    FillCpu[fill] = Linux.ThreadCpuNanoseconds() - cpu;
                    FillAllocated[fill] = GC.GetAllocatedBytesForCurrentThread() - allocated;
                    FillStart[fill] = start;
                    FillLast[fill] = last;
                    FillRead[fill] = read;
                    Volatile.Write(ref Read, Read + read);
                    Volatile.Write(ref Finished, fill + 1);
                }
            }

            private void Record(WaCheckResult result, long sequence)
            {
                if (result != WaCheckResult.Ok)
                {
                    Corrupt++;
                    return;
                }
                if ((ulong)sequence >= (ulong)_range)
                {
                    OutOfRange++;
                    return;
                }
                ulong bit = 1UL << (int)(sequence & 63);
                ref ulong word = ref Seen[sequence >> 6];
                if ((word & bit) != 0)
                {
                    Duplicate++;
                    return;
                }
                word |= bit;
            }
        }
    }
}
