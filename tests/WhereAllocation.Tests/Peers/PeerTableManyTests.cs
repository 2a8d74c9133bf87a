using System;
using System.Collections.Generic;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>PeerTable.TryGetMany: the answers of TryGet, key by key, for any number of keys.</summary>
    public class PeerTableManyTests
    {
        /// <summary>
        /// Present and absent keys mixed, some IPv4-mapped, in spans that end inside a step of 64, at its end, and after
        /// several; with keys spread by the hash, and with keys chosen so that the hash puts every one in one cluster
        /// wrapping round the array (homes 4093..4100 of 4096: found under this process's seed, the table's own hash).
        /// </summary>
        [Theory]
        [InlineData(false, 0)]
        [InlineData(false, 1)]
        [InlineData(false, 63)]
        [InlineData(false, 64)]
        [InlineData(false, 65)]
        [InlineData(false, 1000)]
        [InlineData(true, 200)]
        public void AgreesWithTryGet(bool oneCluster, int length)
        {
            Assert.Equal(4096, PeerTable<int>.SlotCountFor(2000));
            EndPointKey[] pool = oneCluster ? PeerKeys.WithHomes(3000, 4093, 8, 4096) : PeerKeys.DistinctLoopback(3000, seed: 11);
            var table = new PeerTable<int>(2000, null);
            for (int i = 0; i < 2000; i++) Assert.Equal(PeerAddResult.Added, table.TryAdd(pool[i], i));

            var random = new Random(12 + length);
            var keys = new EndPointKey[length];
            for (int i = 0; i < length; i++)
            {
                EndPointKey key = pool[random.Next(pool.Length)]; // a third of the pool is absent
                keys[i] = random.Next(4) == 0 ? key.MapToIPv6() : key;
            }
            var values = new int[length + 3];
            var found = new bool[length + 3];
            for (int i = 0; i < values.Length; i++)
            {
                values[i] = -7;
                found[i] = true;
            }

            int hits = table.TryGetMany(keys, values, found);

            int expectedHits = 0;
            for (int i = 0; i < length; i++)
            {
                bool has = table.TryGet(keys[i], out int value);
                Assert.Equal(has, found[i]);
                Assert.Equal(has ? value : 0, values[i]);
                if (has) expectedHits++;
            }
            Assert.Equal(expectedHits, hits);
            for (int i = length; i < values.Length; i++)
            {
                Assert.Equal(-7, values[i]); // nothing past the keys is written
                Assert.True(found[i]);
            }
            if (length >= 64) Assert.InRange(hits, length / 2, length - 1);
        }

        [Fact]
        public void AMissGivesDefaultForReferenceValues()
        {
            var table = new PeerTable<string>(4);
            EndPointKey a = EndPointKey.IPv4(127, 0, 0, 1, 1000), b = EndPointKey.IPv4(127, 0, 0, 1, 1001);
            table.TryAdd(a, "a");
            var values = new[] { "x", "y" };
            var found = new bool[2];
            Assert.Equal(1, table.TryGetMany(new[] { b, a }, values, found));
            Assert.Null(values[0]);
            Assert.False(found[0]);
            Assert.Equal("a", values[1]);
            Assert.True(found[1]);
        }

        [Fact]
        public void ShortOutputsAreRefused()
        {
            var table = new PeerTable<int>(4);
            var keys = new EndPointKey[3];
            Assert.Throws<ArgumentException>("values", () => table.TryGetMany(keys, new int[2], new bool[3]));
            Assert.Throws<ArgumentException>("found", () => table.TryGetMany(keys, new int[3], new bool[2]));
        }
    }
}
