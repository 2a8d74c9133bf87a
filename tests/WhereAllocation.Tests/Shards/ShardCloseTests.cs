using System;
using System.Diagnostics;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Closing one shard loses only what was queued on it: the other shards still hold every datagram their
    /// clients sent, intact and in order; afterwards the kernel spreads all clients over the shards left.
    /// </summary>
    public class ShardCloseTests
    {
        private const int Shards = 3;
        private const int Clients = 36;
        private const int PerClient = 100; // 3 600 queued in all, about 1 200 per shard: well inside the queues

        [Theory]
        [InlineData(Family.IPv4, 0)]
        [InlineData(Family.IPv4, 2)]
        [InlineData(Family.IPv6, 1)]
        [InlineData(Family.DualMode, 0)]
        public void ClosingOneShardKeepsWhatTheOthersQueued(Family family, int closed)
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using var traffic = new ShardTraffic(family, Shards, Clients);
            int[] shardOf = traffic.Discover(-1);
            var scratch = new byte[ShardTraffic.DatagramBytes];
            for (int k = 0; k < PerClient; k++)
                for (int c = 0; c < Clients; c++) traffic.Send(c, k, scratch);
            traffic.Settle();
            Assert.Equal(0, traffic.Drops());

            traffic.Shards[closed].Close();
            Assert.True(traffic.Shards[closed].IsClosed);
            Assert.Equal(Shards - 1, traffic.Shards.OpenCount);
            traffic.Shards[closed].Close(); // a second close does nothing
            Assert.Equal(Shards - 1, traffic.Shards.OpenCount);

            using var batch = new DatagramBatch(64, 64);
            for (int s = 0; s < Shards; s++)
            {
                if (s == closed)
                {
                    Assert.Throws<ObjectDisposedException>(() => batch.Receive(traffic.Shards[s].Socket));
                    continue;
                }
                var next = new int[Clients];
                int expected = 0;
                for (int c = 0; c < Clients; c++) if (shardOf[c] == s) expected += PerClient;
                int received = 0;
                while (true)
                {
                    int n = batch.Receive(traffic.Shards[s].Socket, received < expected ? 2000 : 0);
                    if (n == 0) break;
                    for (int i = 0; i < n; i++)
                    {
                        Assert.True(ShardTraffic.TryRead(batch.GetDatagram(i), out int client, out int sequence));
                        Assert.Equal(s, shardOf[client]);
                        Assert.Equal(next[client], sequence);
                        next[client]++;
                    }
                    received += n;
                }
                Assert.Equal(expected, received);
            }

            // The group is smaller now: every client reaches one of the shards left, and stays there.
            int[] after = traffic.Discover(1000);
            for (int k = 1; k < 20; k++)
                for (int c = 0; c < Clients; c++) traffic.Send(c, 1000 + k, scratch);
            traffic.Settle();
            for (int s = 0; s < Shards; s++)
            {
                if (s == closed) continue;
                int expected = 0;
                for (int c = 0; c < Clients; c++)
                {
                    Assert.NotEqual(closed, after[c]);
                    if (after[c] == s) expected += 19;
                }
                int received = 0;
                while (true)
                {
                    int n = batch.Receive(traffic.Shards[s].Socket, received < expected ? 2000 : 0);
                    if (n == 0) break;
                    for (int i = 0; i < n; i++)
                    {
                        Assert.True(ShardTraffic.TryRead(batch.GetDatagram(i), out int client, out _));
                        Assert.Equal(s, after[client]);
                    }
                    received += n;
                }
                Assert.Equal(expected, received);
            }
        }

        [Fact]
        public void DisposeClosesEveryShardAndEndsAWaitingReceive()
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            var traffic = new ShardTraffic(Family.IPv4, 2, 1);
            Exception? ended = null;
            int before = DisposeDuringWait.CountBefore();
            var waiting = new Thread(() =>
            {
                using var batch = new DatagramBatch(8, 64);
                try
                {
                    batch.Receive(traffic.Shards[1].Socket, 20_000);
                }
                catch (Exception e)
                {
                    ended = e;
                }
            });
            waiting.Start();
            Assert.True(DisposeDuringWait.UntilInside(before, waiting), "the receive never reached its wait");
            var watch = Stopwatch.StartNew();
            traffic.Dispose();
            Assert.True(waiting.Join(10_000));
            Assert.True(watch.ElapsedMilliseconds < 10_000);
            Assert.IsType<ObjectDisposedException>(ended);
            Assert.Equal(0, traffic.Shards.OpenCount);
            for (int s = 0; s < 2; s++) Assert.True(traffic.Shards[s].IsClosed);
            traffic.Shards.Dispose(); // twice is harmless
            Assert.Equal(0, traffic.Shards.OpenCount);
        }
    }
}
