using System;
using System.Collections.Generic;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>The peer table's contract: exact lookups, a hard cap, removal, enumeration.</summary>
    public class PeerTableTests
    {
        [Fact]
        public void TenThousandDistinctEndpointsStayDistinctAndAreFoundExactly()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(10_000, seed: 1);
            var table = new PeerTable<int>(10_000);
            for (int i = 0; i < keys.Length; i++) Assert.Equal(PeerAddResult.Added, table.TryAdd(keys[i], i));
            Assert.Equal(10_000, table.Count);

            for (int i = 0; i < keys.Length; i++)
            {
                Assert.True(table.TryGet(keys[i], out int value), keys[i] + " was not found");
                Assert.Equal(i, value);
                Assert.Equal(PeerAddResult.Exists, table.TryAdd(keys[i], -1));
            }
            // Keys that differ in one place only are absent: port + 1 (unless that key is one of ours).
            var present = new HashSet<EndPointKey>(keys);
            int absentChecked = 0;
            foreach (EndPointKey key in keys)
            {
                EndPointKey other = EndPointKey.FromIPAddress(key.ToIPAddress(), (key.Port + 1) & 0xFFFF);
                if (present.Contains(other)) continue;
                Assert.False(table.TryGet(other, out _), other + " was found but never added");
                absentChecked++;
            }
            Assert.True(absentChecked > 9_000);

            // Every peer is enumerated once, with its own value.
            var seen = new bool[keys.Length];
            foreach (KeyValuePair<EndPointKey, int> peer in table)
            {
                Assert.Equal(keys[peer.Value], peer.Key);
                Assert.False(seen[peer.Value]);
                seen[peer.Value] = true;
            }
            Assert.DoesNotContain(false, seen);
        }

        [Fact]
        public void TheOldXorHashCollisionPairStaysTwoPeers()
        {
            EndPointKey a = EndPointKey.IPv4(192, 168, 0, 1, 8080);
            EndPointKey b = EndPointKey.IPv4(192, 168, 0, 2, 8083);
            Assert.Equal(PeerKeys.XorHash(a), PeerKeys.XorHash(b)); // they do collide under address ^ port
            Assert.NotEqual(a, b);

            var table = new PeerTable<string>(16);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(a, "a"));
            Assert.Equal(PeerAddResult.Added, table.TryAdd(b, "b"));
            Assert.Equal(2, table.Count);
            Assert.True(table.TryGet(a, out string? va));
            Assert.True(table.TryGet(b, out string? vb));
            Assert.Equal("a", va);
            Assert.Equal("b", vb);
            Assert.True(table.Remove(a));
            Assert.False(table.TryGet(a, out _));
            Assert.True(table.TryGet(b, out vb));
            Assert.Equal("b", vb);
        }

        [Fact]
        public void CapacityIsAHardCapWithAClearResult()
        {
            var table = new PeerTable<int>(3);
            Assert.Equal(3, table.Capacity);
            for (int i = 0; i < 3; i++) Assert.Equal(PeerAddResult.Added, table.TryAdd(EndPointKey.IPv4(127, 0, 0, 1, 1000 + i), i));
            EndPointKey extra = EndPointKey.IPv4(127, 0, 0, 1, 2000);
            Assert.Equal(PeerAddResult.Full, table.TryAdd(extra, 9));
            Assert.Equal(PeerAddResult.Exists, table.TryAdd(EndPointKey.IPv4(127, 0, 0, 1, 1000), 9)); // Exists wins over Full
            Assert.Equal(3, table.Count);
            Assert.False(table.ContainsKey(extra));
            Assert.True(table.Remove(EndPointKey.IPv4(127, 0, 0, 1, 1001), out int removed));
            Assert.Equal(1, removed);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(extra, 9));
            Assert.Equal(PeerAddResult.Full, table.TryAdd(EndPointKey.IPv4(127, 0, 0, 1, 2001), 10));
        }

        [Theory]
        [InlineData(1, 2)]
        [InlineData(3, 4)]
        [InlineData(12, 16)]
        [InlineData(13, 32)]
        [InlineData(100_000, 262_144)]
        public void SlotsArePowersOfTwoWithLoadAtMostThreeQuarters(int capacity, int slots)
        {
            Assert.Equal(slots, PeerTable<int>.SlotCountFor(capacity));
            Assert.True(capacity * 4 <= slots * 3);
        }

        [Fact]
        public void BadArgumentsAreRefused()
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new PeerTable<int>(0));
            Assert.Throws<ArgumentOutOfRangeException>(() => new PeerTable<int>(PeerTable<int>.MaxCapacity + 1));
            Assert.Throws<ArgumentOutOfRangeException>(() => new PeerTable<int>(10, 0));
            var table = new PeerTable<int>(4);
            Assert.Throws<ArgumentException>(() => table.TryAdd(default(EndPointKey), 1));
            Assert.Throws<ArgumentException>(() => table.Accept(default(EndPointKey), 1));
            Assert.False(table.TryGet(default(EndPointKey), out _));
            Assert.False(table.Remove(default(EndPointKey)));
        }

        [Fact]
        public void IPv6PeersDifferByScopeAndPort()
        {
            var address = new byte[16];
            address[0] = 0xfe; address[1] = 0x80; address[15] = 1;
            var table = new PeerTable<int>(8);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(EndPointKey.IPv6(address, 5000, 1), 1));
            Assert.Equal(PeerAddResult.Added, table.TryAdd(EndPointKey.IPv6(address, 5000, 2), 2));
            Assert.Equal(PeerAddResult.Added, table.TryAdd(EndPointKey.IPv6(address, 5001, 1), 3));
            Assert.True(table.TryGet(EndPointKey.IPv6(address, 5000, 2), out int v));
            Assert.Equal(2, v);
            Assert.False(table.TryGet(EndPointKey.IPv6(address, 5000, 3), out _));
        }

        [Fact]
        public void ValueRefChangesTheStoredValueAndAMissTouchesNoPeer()
        {
            var table = new PeerTable<long>(4);
            EndPointKey key = EndPointKey.IPv4(127, 0, 0, 1, 7);
            table.TryAdd(key, 10);
            ref long value = ref table.GetValueRef(key, out bool exists);
            Assert.True(exists);
            value += 5;
            Assert.True(table.TryGet(key, out long read));
            Assert.Equal(15, read);

            ref long scratch = ref table.GetValueRef(EndPointKey.IPv4(127, 0, 0, 1, 8), out exists);
            Assert.False(exists);
            Assert.Equal(0, scratch);
            scratch = 99;
            Assert.Equal(0, table.GetValueRef(EndPointKey.IPv4(127, 0, 0, 1, 9), out _)); // reset on each miss
            Assert.Equal(1, table.Count);
        }

        [Fact]
        public void ClearEmptiesTheTable()
        {
            var table = new PeerTable<int>(100);
            EndPointKey[] keys = PeerKeys.DistinctLoopback(100, seed: 2);
            for (int i = 0; i < keys.Length; i++) table.TryAdd(keys[i], i);
            table.Clear();
            Assert.Equal(0, table.Count);
            foreach (EndPointKey key in keys) Assert.False(table.ContainsKey(key));
            foreach (KeyValuePair<EndPointKey, int> unused in table) Assert.Fail("a cleared table enumerated " + unused.Key);
            for (int i = 0; i < keys.Length; i++) Assert.Equal(PeerAddResult.Added, table.TryAdd(keys[i], i));
        }

        /// <summary>
        /// Random adds and removes against a Dictionary model. With keys clustered (8 home slots at the end of
        /// the 512 slots) every entry sits in one long cluster that wraps around the end of the array, which is where
        /// Robin Hood displacement and backward-shift removal go wrong if they are wrong.
        /// </summary>
        [Theory]
        [InlineData(false, 2000, 3000, 200_000)]
        [InlineData(true, 200, 300, 40_000)]
        public void RandomChurnAgreesWithADictionary(bool clustered, int capacity, int pool, int operations)
        {
            // Clustered: homes 505..512 (mod 512), one cluster wrapping round the end.
            if (clustered) Assert.Equal(512, PeerTable<int>.SlotCountFor(capacity));
            EndPointKey[] keys = clustered ? PeerKeys.WithHomes(pool, 505, 8, 512) : PeerKeys.DistinctLoopback(pool, seed: 3);
            var table = new PeerTable<int>(capacity, null);
            var model = new Dictionary<EndPointKey, int>();
            var random = new Random(4);
            for (int op = 0; op < operations; op++)
            {
                EndPointKey key = keys[random.Next(pool)];
                int roll = random.Next(100);
                if (roll < 55)
                {
                    PeerAddResult result = table.TryAdd(key, op);
                    PeerAddResult expected = model.ContainsKey(key) ? PeerAddResult.Exists : model.Count >= capacity ? PeerAddResult.Full : PeerAddResult.Added;
                    Assert.Equal(expected, result);
                    if (result == PeerAddResult.Added) model.Add(key, op);
                }
                else if (roll < 90)
                {
                    bool removed = table.Remove(key, out int value);
                    Assert.Equal(model.TryGetValue(key, out int expected), removed);
                    if (removed)
                    {
                        Assert.Equal(expected, value);
                        model.Remove(key);
                    }
                }
                else
                {
                    Assert.Equal(model.TryGetValue(key, out int expected), table.TryGet(key, out int value));
                    if (model.ContainsKey(key)) Assert.Equal(expected, value);
                }
                Assert.Equal(model.Count, table.Count);
                if (op % (operations / 20) == 0) AssertSame(model, table, keys);
            }
            AssertSame(model, table, keys);
        }

        private static void AssertSame(Dictionary<EndPointKey, int> model, PeerTable<int> table, EndPointKey[] pool)
        {
            foreach (EndPointKey key in pool)
            {
                bool has = table.TryGet(key, out int value);
                Assert.Equal(model.ContainsKey(key), has);
                if (has) Assert.Equal(model[key], value);
            }
            int enumerated = 0;
            foreach (KeyValuePair<EndPointKey, int> peer in table)
            {
                Assert.Equal(model[peer.Key], peer.Value);
                enumerated++;
            }
            Assert.Equal(model.Count, enumerated);
        }

        /// <summary>Removing the current peer inside foreach visits every peer exactly once, clusters and wrap-around included.</summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ForeachMayRemoveTheCurrentPeer(bool clustered)
        {
            // Clustered: homes 509..513 (mod 512), near the end of the slots, so the clusters wrap.
            Assert.Equal(512, PeerTable<int>.SlotCountFor(300));
            EndPointKey[] keys = clustered ? PeerKeys.WithHomes(300, 509, 5, 512) : PeerKeys.DistinctLoopback(300, seed: 5);
            var table = new PeerTable<int>(300, null);
            for (int i = 0; i < keys.Length; i++) Assert.Equal(PeerAddResult.Added, table.TryAdd(keys[i], i));

            var visits = new int[keys.Length];
            foreach (KeyValuePair<EndPointKey, int> peer in table)
            {
                visits[peer.Value]++;
                if (peer.Value % 3 != 0) Assert.True(table.Remove(peer.Key));
            }
            for (int i = 0; i < keys.Length; i++)
            {
                Assert.Equal(1, visits[i]);
                Assert.Equal(i % 3 == 0, table.ContainsKey(keys[i]));
            }
            Assert.Equal(100, table.Count);

            // Removing everything while walking empties the table.
            int walked = 0;
            foreach (KeyValuePair<EndPointKey, int> peer in table)
            {
                walked++;
                table.Remove(peer.Key);
            }
            Assert.Equal(100, walked);
            Assert.Equal(0, table.Count);
        }

        [Fact]
        public void ForeachRefusesAddsAndSeveralRemovalsPerStep()
        {
            EndPointKey[] keys = PeerKeys.DistinctLoopback(10, seed: 6);
            var table = new PeerTable<int>(20);
            for (int i = 0; i < keys.Length; i++) table.TryAdd(keys[i], i);

            PeerTable<int>.Enumerator adding = table.GetEnumerator();
            Assert.True(adding.MoveNext());
            table.TryAdd(EndPointKey.IPv4(127, 9, 9, 9, 9), 99);
            Assert.Throws<InvalidOperationException>(() => adding.MoveNext());

            PeerTable<int>.Enumerator removing = table.GetEnumerator();
            Assert.True(removing.MoveNext());
            table.Remove(keys[0]);
            table.Remove(keys[1]);
            Assert.Throws<InvalidOperationException>(() => removing.MoveNext());

            PeerTable<int>.Enumerator clearing = table.GetEnumerator();
            Assert.True(clearing.MoveNext());
            table.Clear();
            Assert.Throws<InvalidOperationException>(() => clearing.MoveNext());
        }
    }
}
