using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Every datagram delivered exactly once and intact, in both batch modes: numbered datagrams with a
    /// checksum, batch sizes 1, 7 and 64, IPv4, IPv6 and an IPv4 sender into a dual-mode socket; mixed
    /// sizes with 0-length and longer-than-slot datagrams; many senders into one socket; fan-out to many peers.
    /// </summary>
    public class BatchDeliveryTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary>Every batch mode × every family × batches of 1, 7 and 64 slots.</summary>
        public static IEnumerable<object?[]> ModesFamiliesAndBatchSizes => Matrix.Product(Matrix.BatchModesWithFamilies, new[] { 1, 7, 64 });

        [Theory]
        [MemberData(nameof(ModesFamiliesAndBatchSizes))]
        public void EveryDatagramArrivesOnceAndIntact(DatagramBatchMode mode, Family family, int batchSize)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            const int Total = 1000;
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(batchSize, DatagramBatch.DefaultSlotSize, mode);
            using var receiver = new DatagramBatch(batchSize, DatagramBatch.DefaultSlotSize, mode);
            Assert.Equal(mode, sender.Mode);
            var seen = new int[Total];
            int received = 0;
            // Send in rounds of 100 and receive in between, so that batches meet partly filled queues too.
            for (uint first = 0; first < Total; first += 100)
            {
                BatchTraffic.SendNumbered(sender, pair.Client, pair.ServerKey, first, 100);
                received += BatchTraffic.ReceiveNumbered(receiver, pair.Server, pair.ClientAsSeenByServer, 0, seen, (int)first + 100 - received);
            }
            Assert.Equal(Total, received);
            BatchTraffic.AssertExactlyOnce(seen, receiver, pair.Server);
        }

        /// <summary>The runtime's own paths (every one but Native) × every family.</summary>
        public static TheoryData<DatagramPath, Family> RuntimePathsWithFamilies => Matrix.PathsWithFamiliesWhere((p, f) => p != DatagramPath.Native);

        /// <summary>The loop of single calls on the runtime's own paths (SocketAddress on .NET 8+, the managed fallback) gives the same results.</summary>
        [Theory]
        [MemberData(nameof(RuntimePathsWithFamilies))]
        public void SingleCallsOnTheRuntimePathsDeliverTheSame(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return; // Paths.TryForce asserted that this runtime refuses it explicitly.
            const int Total = 300;
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(7, DatagramBatch.DefaultSlotSize, DatagramBatchMode.SingleCalls);
            using var receiver = new DatagramBatch(7, DatagramBatch.DefaultSlotSize, DatagramBatchMode.SingleCalls);
            var seen = new int[Total];
            BatchTraffic.SendNumbered(sender, pair.Client, pair.ServerKey, 0, Total);
            Assert.Equal(Total, BatchTraffic.ReceiveNumbered(receiver, pair.Server, pair.ClientAsSeenByServer, 0, seen, Total));
            BatchTraffic.AssertExactlyOnce(seen, receiver, pair.Server);
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModesWithFamilies), MemberType = typeof(Matrix))]
        public void MixedSizesAreCutToTheSlotAndFlagged(DatagramBatchMode mode, Family family)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            const int Slot = 256;
            int[] sizes = { 0, 1, 10, 255, 256, 257, 0, 1000, 4096, 3, Slot };
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(sizes.Length, 4096, mode);
            using var receiver = new DatagramBatch(16, Slot, mode);
            var payload = new byte[4096];
            foreach (int size in sizes)
            {
                for (int j = 0; j < size; j++) payload[j] = (byte)(size + j * 13);
                Assert.True(sender.TryAdd(payload.AsSpan(0, size), pair.ServerKey));
            }
            Assert.Equal(sizes.Length, sender.Send(pair.Client));

            int got = 0;
            while (got < sizes.Length)
            {
                int n = receiver.Receive(pair.Server, 2000);
                Assert.True(n > 0, "only " + got + " of " + sizes.Length + " datagrams arrived");
                for (int i = 0; i < n; i++, got++)
                {
                    int size = sizes[got]; // one sender on loopback: datagrams stay in order
                    ReadOnlySpan<byte> datagram = receiver.GetDatagram(i, out EndPointKey from);
                    ReceivedDatagram info = receiver.GetInfo(i);
                    Assert.Equal(Math.Min(size, Slot), datagram.Length);
                    Assert.Equal(size > Slot, info.Truncated);
                    Assert.Equal(size > Slot, receiver.IsTruncated(i));
                    Assert.Equal(pair.ClientAsSeenByServer, from);
                    for (int j = 0; j < datagram.Length; j++) Assert.Equal((byte)(size + j * 13), System.Runtime.InteropServices.MemoryMarshal.Read<byte>(datagram.Slice(j)));
                }
            }
            Assert.Equal(0, receiver.Receive(pair.Server));
        }

        /// <summary>Two IPv4 senders into one dual-mode socket: each datagram carries its own sender's (IPv4-mapped) key.</summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void ManySendersIntoOneDualModeSocket(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(Family.DualMode);
            using Socket second = BatchTraffic.Bound(Family.IPv4);
            using var sender = new DatagramBatch(16, 512, mode);
            using var receiver = new DatagramBatch(64, 512, mode);
            // Interleave the two senders' batches so the receiver's batches mix them.
            for (uint round = 0; round < 5; round++)
            {
                BatchTraffic.SendNumbered(sender, pair.Client, pair.ServerKey, round * 16, 16);
                BatchTraffic.SendNumbered(sender, second, pair.ServerKey, 1000 + round * 16, 16);
            }
            EndPointKey firstKey = pair.ClientAsSeenByServer;
            EndPointKey secondKey = BatchTraffic.KeyOf(second).MapToIPv6();
            Assert.True(firstKey.IsIPv4MappedToIPv6);
            Assert.NotEqual(firstKey, secondKey);
            var seen = new int[2, 80];
            int got = 0;
            while (got < 160)
            {
                int n = receiver.Receive(pair.Server, 2000);
                Assert.True(n > 0, "only " + got + " of 160 datagrams arrived");
                for (int i = 0; i < n; i++)
                {
                    Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey from), out uint sequence));
                    int who = sequence >= 1000 ? 1 : 0;
                    Assert.Equal(who == 0 ? firstKey : secondKey, from);
                    seen[who, sequence % 1000]++;
                }
                got += n;
            }
            for (int who = 0; who < 2; who++)
                for (int s = 0; s < 80; s++) Assert.Equal(1, seen[who, s]);
        }

        /// <summary>
        /// Every batch mode × every sending family with the peers it can send to: its own family, and IPv4 peers from a
        /// dual-mode socket.
        /// </summary>
        public static IEnumerable<object?[]> ModesSendersAndPeers
        {
            get
            {
                var rows = new List<object?[]>();
                foreach (DatagramBatchMode mode in Matrix.EveryBatchMode)
                    foreach (Family sender in Matrix.EveryFamily)
                        foreach (Family peer in Matrix.EveryFamily)
                            if (peer == sender || (sender == Family.DualMode && peer == Family.IPv4)) rows.Add(new object?[] { mode, sender, peer });
                return rows;
            }
        }

        /// <summary>One batch, one socket, many recipients: each datagram reaches its own peer, in order.</summary>
        [Theory]
        [MemberData(nameof(ModesSendersAndPeers))]
        public void FanOutToManyPeers(DatagramBatchMode mode, Family senderFamily, Family peerFamily)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            const int Peers = 3, PerPeer = 10;
            using Socket from = BatchTraffic.Bound(senderFamily);
            var peers = new Socket[Peers];
            for (int p = 0; p < Peers; p++) peers[p] = BatchTraffic.Bound(peerFamily);
            try
            {
                using var sender = new DatagramBatch(Peers * PerPeer, 512, mode);
                using var receiver = new DatagramBatch(64, 512, mode);
                var scratch = new byte[64];
                for (uint k = 0; k < Peers * PerPeer; k++)
                {
                    int length = TestDatagram.Write(scratch, k, 20);
                    Assert.True(sender.TryAdd(scratch.AsSpan(0, length), BatchTraffic.KeyOf(peers[k % Peers])));
                }
                Assert.Equal(Peers * PerPeer, sender.Send(from));
                Assert.Equal(0, sender.FailedCount);

                EndPointKey fromKey = BatchTraffic.KeyOf(from);
                for (int p = 0; p < Peers; p++)
                {
                    // What the peer sees: IPv4-mapped when the peer is dual-mode and the sender reached it over IPv4.
                    EndPointKey expected = peerFamily == Family.DualMode ? fromKey.MapToIPv6() : fromKey;
                    uint next = (uint)p;
                    while (next < Peers * PerPeer)
                    {
                        int n = receiver.Receive(peers[p], 2000);
                        Assert.True(n > 0, "peer " + p + " is missing datagram " + next);
                        for (int i = 0; i < n; i++, next += Peers)
                        {
                            Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey seenFrom), out uint sequence));
                            Assert.Equal(next, sequence);
                            Assert.Equal(expected, seenFrom);
                        }
                    }
                    Assert.Equal(0, receiver.Receive(peers[p]));
                }
            }
            finally
            {
                foreach (Socket peer in peers) peer.Dispose();
            }
        }
    }
}
