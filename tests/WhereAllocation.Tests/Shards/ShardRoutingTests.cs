using System;
using System.Diagnostics;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Every client's datagrams reach one shard, and only that one: many clients, thousands of datagrams each, a
    /// thread per shard that keeps its clients in a PeerTable of its own, without a lock. Afterwards every client is
    /// in exactly one table, with all its datagrams, in order.
    /// </summary>
    public class ShardRoutingTests
    {
        private const int Shards = 3;       // not 2: nothing may assume the machine's core count
        private const int Clients = 48;
        private const int PerClient = 2000;
        private const int PerRound = 40;    // per client; a round (1 920 datagrams) fits the shards' queues

        private struct ClientState
        {
            public int Id;
            public int Count;
            public int OutOfOrder;
        }

        private sealed class ShardReader
        {
            public readonly PeerTable<ClientState> Peers = new PeerTable<ClientState>(Clients);
            public long Received;
            public int Damaged;
            public int WrongSender;
            public Exception? Failure;
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void EveryClientStaysOnOneShard(Family family)
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using var traffic = new ShardTraffic(family, Shards, Clients);
            var readers = new ShardReader[Shards];
            var threads = new Thread[Shards];
            int stop = 0;
            for (int s = 0; s < Shards; s++)
            {
                var reader = readers[s] = new ShardReader();
                DatagramShard shard = traffic.Shards[s];
                threads[s] = new Thread(() =>
                {
                    try { Read(shard, reader, ref stop); }
                    catch (Exception e) { reader.Failure = e; }
                }) { IsBackground = true, Name = "shard " + s };
                threads[s].Start();
            }

            var scratch = new byte[ShardTraffic.DatagramBytes];
            long sent = 0;
            var watch = Stopwatch.StartNew();
            try
            {
                for (int first = 0; first < PerClient; first += PerRound)
                {
                    for (int c = 0; c < Clients; c++)
                        for (int k = first; k < first + PerRound; k++) traffic.Send(c, k, scratch);
                    sent += (long)Clients * PerRound;
                    // Let the shards drain the round before the next one, so no queue overflows.
                    while (Total(readers) < sent && watch.ElapsedMilliseconds < 60_000 && AllAlive(threads)) Thread.Sleep(1);
                    Assert.True(Total(readers) == sent, "after " + watch.ElapsedMilliseconds + " ms the shards had " + Total(readers) + " of " + sent
                        + " datagrams (kernel drops: " + traffic.Drops() + ")" + Failures(readers));
                }
            }
            finally
            {
                Volatile.Write(ref stop, 1);
                foreach (Thread t in threads) Assert.True(t.Join(10_000));
            }
            Assert.Equal("", Failures(readers));

            var owners = new int[Clients];
            for (int s = 0; s < Shards; s++)
            {
                ShardReader reader = readers[s];
                Assert.Equal(0, reader.Damaged);
                Assert.Equal(0, reader.WrongSender);
                foreach (var peer in reader.Peers)
                {
                    ClientState state = peer.Value;
                    owners[state.Id]++;
                    Assert.Equal(PerClient, state.Count);
                    Assert.Equal(0, state.OutOfOrder);
                    Assert.Equal(traffic.Clients[state.Id].LocalEndPoint, peer.Key.ToIPEndPoint());
                }
                // 48 clients over 3 shards: a shard with none has probability 3 x (2/3)^48, about 10^-8.
                Assert.True(reader.Peers.Count > 0, "shard " + s + " got no client");
            }
            for (int c = 0; c < Clients; c++) Assert.True(owners[c] == 1, "client " + c + " is in " + owners[c] + " shards' tables");
        }

        private static void Read(DatagramShard shard, ShardReader reader, ref int stop)
        {
            using var batch = new DatagramBatch(64, 64);
            while (true)
            {
                int n = batch.Receive(shard.Socket, 20);
                if (n == 0)
                {
                    if (Volatile.Read(ref stop) != 0) return;
                    continue;
                }
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> datagram = batch.GetDatagram(i, out EndPointKey from);
                    if (!ShardTraffic.TryRead(datagram, out int client, out int sequence))
                    {
                        reader.Damaged++;
                        continue;
                    }
                    // No lock: only this thread touches this table, and the kernel sends each client to one shard.
                    ref ClientState state = ref reader.Peers.GetValueRef(from, out bool known);
                    if (!known)
                    {
                        Assert.Equal(PeerAddResult.Added, reader.Peers.TryAdd(from, new ClientState { Id = client }));
                        state = ref reader.Peers.GetValueRef(from, out known);
                    }
                    if (state.Id != client) reader.WrongSender++;
                    if (sequence != state.Count) state.OutOfOrder++;
                    state.Count++;
                }
                Volatile.Write(ref reader.Received, reader.Received + n);
            }
        }

        private static long Total(ShardReader[] readers)
        {
            long total = 0;
            foreach (ShardReader r in readers) total += Volatile.Read(ref r.Received);
            return total;
        }

        private static bool AllAlive(Thread[] threads)
        {
            foreach (Thread t in threads) if (!t.IsAlive) return false;
            return true;
        }

        private static string Failures(ShardReader[] readers)
        {
            string text = "";
            for (int s = 0; s < readers.Length; s++)
                if (readers[s].Failure != null) text += "; shard " + s + ": " + readers[s].Failure;
            return text;
        }
    }
}
