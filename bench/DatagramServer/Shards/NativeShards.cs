using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The C side of the shard scenario: bench/native's wa-shards, N SO_REUSEPORT sockets on one loopback port drained
    /// in parallel by pinned threads, one process per fill, stopped (SIGSTOP) while the sender fills its queues.
    /// </summary>
    internal static class NativeShards
    {
        public const string Name = "c-shards";
        private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);
        private static int s_readyFiles;

        /// <summary><c>--shard-fills</c> fills, each a new wa-shards, added to <paramref name="row"/>.</summary>
        public static void Run(int shardCount, Options options, NativeTools tools, int inject, ShardRow row, Progress progress)
        {
            long perFill = (long)options.ShardFill * shardCount;
            using var injector = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            injector.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            for (int fill = 0; fill < options.ShardFills; fill++)
            {
                int extra = fill == 0 ? inject : 0;
                string ready = Path.Combine(Path.GetTempPath(), "wa-shards-" + Process.GetCurrentProcess().Id + "-" + Interlocked.Increment(ref s_readyFiles) + ".port");
                Process receiver = tools.StartShards(shardCount, perFill, 0, options.BufferSize, options.ReceiverCpu, options.ReceiveBuffer, 60, ready);
                bool finished = false;
                try
                {
                    int port = NativeTools.WaitForPort(receiver, ready, TimeSpan.FromSeconds(10));
                    var to = new IPEndPoint(IPAddress.Loopback, port);
                    Linux.Suspend(receiver.Id);
                    if (extra > 0) ManagedRunner.Inject(injector, to, options.Size, extra);
                    Process sender = tools.StartSender(port, perFill, options.Size, 0, options.SenderCpu, options.SenderMode, options.Sources);
                    SenderResult sent = NativeTools.FinishSender(sender, Timeout);
                    Linux.Resume(receiver.Id);
                    Dictionary<string, string> result = NativeTools.FinishReceiver(receiver, Timeout, out string diagnostics, "wa-shards");
                    finished = true;
                    Add(row, shardCount, sent.Sent, extra, result, diagnostics);
                    progress.Show(Name, shardCount + " shards, fill " + (fill + 1) + " of " + options.ShardFills);
                }
                finally
                {
                    if (!finished) NativeTools.Abandon(receiver);
                    File.Delete(ready);
                }
            }
        }

        private static void Add(ShardRow row, int shardCount, long sent, int injected, Dictionary<string, string> r, string diagnostics)
        {
            long read = NativeTools.Long(r, "received");
            long corrupt = NativeTools.Long(r, "corrupt");
            long duplicate = NativeTools.Long(r, "duplicate");
            long outOfRange = NativeTools.Long(r, "out_of_range");
            if (NativeTools.Long(r, "shards") != shardCount) throw new FormatException("wa-shards ran with another shard count");
            row.Sent += sent;
            row.Injected += injected;
            row.Read += read;
            row.Corrupt += corrupt;
            row.Duplicate += duplicate;
            row.OutOfRange += outOfRange;
            row.Received += read - corrupt - duplicate - outOfRange;
            row.KernelDrops += NativeTools.Long(r, "kernel_drops");
            double seconds = NativeTools.Double(r, "seconds");
            if (seconds > 0 && read > 0)
            {
                row.FillRates.Add(read / seconds);
                row.FillCpuNs.Add((double)NativeTools.CpuNanoseconds(diagnostics, "wa-shards") / read);
            }
            long fewest = long.MaxValue;
            string[] perShard = r.TryGetValue("shard_received", out string? list) ? list.Split(',') : new string[0];
            foreach (string count in perShard) fewest = Math.Min(fewest, long.Parse(count, CultureInfo.InvariantCulture));
            if (perShard.Length == shardCount && read > 0) row.SmallestShare = Math.Min(row.SmallestShare, (double)fewest * shardCount / read);
        }
    }
}
