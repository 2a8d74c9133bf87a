using System;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>0 managed bytes per batch on every shard, on CoreCLR and Mono: a receive and a read of the datagram and its sender, 10 000 times per shard.</summary>
    public class ShardAllocationTests
    {
        private const int Calls = 10_000;

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void ABatchOnEveryShardAllocatesNothing(Family family)
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using var traffic = new ShardTraffic(family, 3, 24);
            int[] shardOf = traffic.Discover(-1);
            var scratch = new byte[ShardTraffic.DatagramBytes];
            using var batch = new DatagramBatch(8, 64);
            for (int s = 0; s < traffic.Shards.Count; s++)
            {
                int client = Array.IndexOf(shardOf, s);
                Assert.True(client >= 0, "no client of 24 reaches shard " + s);
                DatagramShard shard = traffic.Shards[s];
                int port = ((System.Net.IPEndPoint)traffic.Clients[client].LocalEndPoint!).Port;
                int sequence = 0, wrong = 0;
                long received = 0;
                long bytes = Allocations.Measure(() =>
                {
                    traffic.Send(client, sequence++, scratch);
                    int n = batch.Receive(shard.Socket, 1000);
                    for (int i = 0; i < n; i++)
                    {
                        if (!ShardTraffic.TryRead(batch.GetDatagram(i, out EndPointKey from), out int c, out _) || c != client || from.Port != port) wrong++;
                    }
                    received += n;
                }, Calls);
                Assert.Equal(0, wrong);
                Assert.True(received >= Calls, "shard " + s + " received only " + received);
                Assert.Equal(0, bytes);
            }
        }
    }
}
