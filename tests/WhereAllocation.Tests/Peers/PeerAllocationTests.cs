using System.Collections.Generic;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// 0 B per lookup, add, remove, enumeration, observation and acceptance in a table made to its size,
    /// measured over 10 000 calls after warm-up, on CoreCLR and on Mono alike.
    /// </summary>
    public class PeerAllocationTests
    {
        private const int Calls = 10_000;

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void LookupAllocatesNothing(bool ipv6)
        {
            EndPointKey[] keys = ipv6 ? PeerKeys.XorCollidingIPv6(4096, 0) : PeerKeys.DistinctLoopback(4096, seed: 7);
            var table = new PeerTable<string>(4096);
            for (int i = 0; i < keys.Length; i++) table.TryAdd(keys[i], "peer " + i);
            EndPointKey missing = ipv6 ? PeerKeys.XorCollidingIPv6(1, 1)[0] : EndPointKey.IPv4(127, 1, 2, 3, 4);
            int n = 0, found = 0;
            long bytes = Allocations.Measure(() =>
            {
                if (table.TryGet(keys[n++ & 4095], out string? peer) && peer != null) found++;
                if (table.TryGet(missing, out _)) found = -1_000_000;
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.True(found >= Calls);
        }

        [Fact]
        public void LookupOfManyAllocatesNothing()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(4096, seed: 10);
            var table = new PeerTable<string>(4096);
            for (int i = 0; i < keys.Length; i++) table.TryAdd(keys[i], "peer " + i);
            var values = new string[100];
            var found = new bool[100];
            int n = 0, hits = 0;
            long bytes = Allocations.Measure(() =>
            {
                // 100 keys: a step of 64 and part of another
                hits += table.TryGetMany(new System.ReadOnlySpan<EndPointKey>(keys, (n++ & 31) * 100, 100), values, found);
            }, Calls / 10);
            Assert.Equal(0, bytes);
            Assert.True(hits >= Calls / 10 * 100);
        }

        [Fact]
        public void DualModeLookupAllocatesNothing()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(1024, seed: 8);
            var mapped = new EndPointKey[keys.Length];
            var table = new PeerTable<int>(1024);
            for (int i = 0; i < keys.Length; i++)
            {
                table.TryAdd(keys[i], i);
                mapped[i] = keys[i].MapToIPv6();
            }
            int n = 0, found = 0;
            long bytes = Allocations.Measure(() =>
            {
                if (table.TryGet(mapped[n++ & 1023], out _)) found++;
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.True(found >= Calls);
        }

        [Fact]
        public void SteadyStateAddAndRemoveAllocateNothing()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(8192, seed: 9);
            var table = new PeerTable<object>(4096);
            var value = new object();
            for (int i = 0; i < 4096; i++) table.TryAdd(keys[i], value);
            // Each call retires the oldest peer and admits a new one: the table stays full, churning through 8192 keys.
            int n = 0, failures = 0;
            long bytes = Allocations.Measure(() =>
            {
                if (!table.Remove(keys[n & 8191])) failures++;
                if (table.TryAdd(keys[(n + 4096) & 8191], value) != PeerAddResult.Added) failures++;
                if (table.TryAdd(keys[(n + 4097) & 8191], value) != PeerAddResult.Full) failures++;
                n++;
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.Equal(0, failures);
            Assert.Equal(4096, table.Count);
        }

        [Fact]
        public void ForeachAllocatesNothing()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(64, seed: 10);
            var table = new PeerTable<int>(64);
            for (int i = 0; i < keys.Length; i++) table.TryAdd(keys[i], i);
            long sum = 0;
            long bytes = Allocations.Measure(() =>
            {
                foreach (KeyValuePair<EndPointKey, int> peer in table) sum += peer.Value;
                foreach (PendingPeer pending in table.Pending) sum += pending.Datagrams;
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.True(sum > 0);
        }

        [Fact]
        public void PendingObserveEvictAndAcceptAllocateNothing()
        {
            var table = new PeerTable<int>(256, 64);
            EndPointKey[] strangers = PeerKeys.DistinctLoopback(8192, seed: 11);
            int n = 0, accepted = 0;
            long bytes = Allocations.Measure(() =>
            {
                EndPointKey sender = strangers[n & 8191];
                if (!table.TryGet(sender, out _))
                {
                    table.Pending.Observe(sender, n);
                    table.Pending.Observe(sender, n + 1);
                    if ((n & 7) == 0 && table.Accept(sender, n) == PeerAddResult.Added)
                    {
                        accepted++;
                        table.Remove(sender); // keep room so that Accept keeps adding
                    }
                }
                n++;
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.True(accepted > 0);
            Assert.Equal(64, table.Pending.Count);
        }
    }
}
