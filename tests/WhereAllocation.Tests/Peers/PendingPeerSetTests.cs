using System;
using System.Collections.Generic;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>The pending set: bounded, oldest out first, and the only way into the table through Accept.</summary>
    public class PendingPeersTests
    {
        private static EndPointKey Sender(int i) => EndPointKey.IPv4(127, (byte)(i >> 16), (byte)(i >> 8), (byte)i, 1000 + i % 50_000);

        [Fact]
        public void ANewSenderPushesOutTheOldestWhenFull()
        {
            var pending = new PendingPeerSet(3);
            Assert.Equal(PendingObserveResult.Added, pending.Observe(Sender(1), 10));
            Assert.Equal(PendingObserveResult.Added, pending.Observe(Sender(2), 11));
            Assert.Equal(PendingObserveResult.Added, pending.Observe(Sender(3), 12));
            Assert.Equal(PendingObserveResult.AlreadyPending, pending.Observe(Sender(1), 13)); // seen again: still the oldest
            Assert.Equal(PendingObserveResult.AddedEvictingOldest, pending.Observe(Sender(4), 14));
            Assert.Equal(3, pending.Count);
            Assert.False(pending.Contains(Sender(1)));
            Assert.True(pending.TryPeekOldest(out PendingPeer oldest));
            Assert.Equal(Sender(2), oldest.Key);

            var order = new List<EndPointKey>();
            foreach (PendingPeer peer in pending) order.Add(peer.Key);
            Assert.Equal(new[] { Sender(2), Sender(3), Sender(4) }, order);
        }

        [Fact]
        public void ObservingAgainCountsAndUpdatesLastSeen()
        {
            var pending = new PendingPeerSet(4);
            pending.Observe(Sender(1), 100);
            pending.Observe(Sender(1), 150);
            pending.Observe(Sender(1), 175);
            Assert.True(pending.TryGet(Sender(1), out PendingPeer peer));
            Assert.Equal(100, peer.FirstSeen);
            Assert.Equal(175, peer.LastSeen);
            Assert.Equal(3, peer.Datagrams);
            Assert.False(pending.TryGet(Sender(2), out _));
        }

        [Fact]
        public void RemoveAndExpiry()
        {
            var pending = new PendingPeerSet(8);
            for (int i = 0; i < 6; i++) pending.Observe(Sender(i), 100 + i);
            Assert.True(pending.Remove(Sender(4)));
            Assert.False(pending.Remove(Sender(4)));
            Assert.Equal(3, pending.RemoveFirstSeenBefore(103)); // 0, 1, 2
            Assert.Equal(2, pending.Count);
            Assert.True(pending.Contains(Sender(3)));
            Assert.True(pending.Contains(Sender(5)));
            pending.Clear();
            Assert.Equal(0, pending.Count);
            Assert.False(pending.TryPeekOldest(out _));
            for (int i = 0; i < 8; i++) Assert.Equal(PendingObserveResult.Added, pending.Observe(Sender(100 + i), 200)); // every entry reusable
            Assert.Equal(PendingObserveResult.AddedEvictingOldest, pending.Observe(Sender(200), 201));
        }

        [Fact]
        public void AcceptMovesAPendingSenderIntoTheTable()
        {
            var table = new PeerTable<string>(2, 4);
            Assert.Equal(PeerAddResult.NotPending, table.Accept(Sender(1), "never seen"));
            Assert.Equal(0, table.Count);

            table.Pending.Observe(Sender(1), 1);
            table.Pending.Observe(Sender(2), 2);
            table.Pending.Observe(Sender(3), 3);
            Assert.Equal(PeerAddResult.Added, table.Accept(Sender(1), "one"));
            Assert.False(table.Pending.Contains(Sender(1)));
            Assert.Equal(PeerAddResult.Added, table.Accept(Sender(2), "two"));
            Assert.Equal(PeerAddResult.Full, table.Accept(Sender(3), "three")); // the table is full: stays pending
            Assert.True(table.Pending.Contains(Sender(3)));
            Assert.Equal(2, table.Count);

            table.Pending.Observe(Sender(1), 4); // a peer seen by the pending set too...
            Assert.Equal(PeerAddResult.Exists, table.Accept(Sender(1), "again"));
            Assert.False(table.Pending.Contains(Sender(1))); // ...is no longer pending
            Assert.True(table.TryGet(Sender(1), out string? value));
            Assert.Equal("one", value);

            Assert.True(table.Remove(Sender(2)));
            Assert.Equal(PeerAddResult.Added, table.TryAdd(Sender(3), "direct")); // TryAdd also takes it off the pending set
            Assert.False(table.Pending.Contains(Sender(3)));
        }

        [Fact]
        public void DefaultPendingCapacityIsAtMost256()
        {
            Assert.Equal(10, new PeerTable<int>(10).Pending.Capacity);
            Assert.Equal(256, new PeerTable<int>(100_000).Pending.Capacity);
            Assert.Throws<ArgumentOutOfRangeException>(() => new PendingPeerSet(0));
            Assert.Throws<ArgumentException>(() => new PendingPeerSet(1).Observe(default(EndPointKey), 0));
        }

        [Fact]
        public void EnumerationRefusesChanges()
        {
            var pending = new PendingPeerSet(4);
            pending.Observe(Sender(1), 1);
            pending.Observe(Sender(2), 2);
            PendingPeerSet.Enumerator e = pending.GetEnumerator();
            Assert.True(e.MoveNext());
            pending.Observe(Sender(1), 3); // an update of a pending sender is not a change of the set
            Assert.True(e.MoveNext());
            pending.Observe(Sender(3), 4);
            Assert.Throws<InvalidOperationException>(() => e.MoveNext());
        }

        /// <summary>
        /// 100 000 distinct senders arrive, the way a spoofed flood does, through the server's usual path: a peer
        /// is looked up, a stranger is observed as pending, and one in 97 "answers" and is accepted. The pending
        /// set never exceeds its bound and the table never exceeds its cap.
        /// </summary>
        [Fact]
        public void BoundsHoldUnderAHundredThousandDistinctSenders()
        {
            const int Capacity = 1000, PendingCapacity = 256, Senders = 100_000;
            var table = new PeerTable<int>(Capacity, PendingCapacity);
            int added = 0, full = 0, evictions = 0, maxPending = 0, maxPeers = 0;
            for (int i = 0; i < Senders; i++)
            {
                EndPointKey sender = Sender(i);
                Assert.False(table.TryGet(sender, out _));
                PendingObserveResult observed = table.Pending.Observe(sender, i);
                Assert.NotEqual(PendingObserveResult.AlreadyPending, observed);
                if (observed == PendingObserveResult.AddedEvictingOldest) evictions++;
                if (i % 97 == 0)
                {
                    PeerAddResult result = table.Accept(sender, i);
                    if (result == PeerAddResult.Added) added++;
                    else if (result == PeerAddResult.Full) full++;
                    else Assert.Fail("unexpected " + result);
                }
                maxPending = Math.Max(maxPending, table.Pending.Count);
                maxPeers = Math.Max(maxPeers, table.Count);
            }
            Assert.Equal(PendingCapacity, maxPending);
            Assert.Equal(PendingCapacity, table.Pending.Count);
            Assert.Equal(Capacity, maxPeers);
            Assert.Equal(Capacity, added);
            Assert.Equal((Senders + 96) / 97 - Capacity, full);
            Assert.Equal(Senders - PendingCapacity - Capacity, evictions); // every other stranger was pushed out
            for (int i = 0; i < 97 * Capacity; i += 97) Assert.True(table.ContainsKey(Sender(i))); // the first accepted are the peers
        }
    }
}
