using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Segmentation offload in DatagramBatch.Send and coalesced receive: the same datagrams, results and errors as a send
    /// slot by slot, runs cut where they must be, a refused run sent again datagram by datagram, 0 B; where the OS has
    /// neither, the switches say so.
    /// </summary>
    public class SegmentationTests
    {
        private static bool Linux => RuntimeInformation.IsOSPlatform(OSPlatform.Linux);

        [Fact]
        public void SwitchesAreOnWhereAvailableAndRefusedElsewhere()
        {
            using var batch = new DatagramBatch(128, 1500);
            using var single = new DatagramBatch(128, 1500, DatagramBatchMode.SingleCalls);
            Assert.False(single.SegmentationOffload);
            Assert.False(single.CoalescedReceive);
            Assert.Throws<PlatformNotSupportedException>(() => single.SegmentationOffload = true);
            Assert.Throws<PlatformNotSupportedException>(() => single.CoalescedReceive = true);
            single.SegmentationOffload = false;
            Assert.False(batch.CoalescedReceive); // opt-in
            if (Linux)
            {
                Assert.True(DatagramBatch.IsSegmentationOffloadAvailable, "UDP_SEGMENT should be available on " + Runtime.Describe());
                Assert.True(DatagramBatch.IsCoalescedReceiveAvailable, "UDP_GRO should be available on " + Runtime.Describe());
                Assert.True(batch.SegmentationOffload);
                batch.SegmentationOffload = false;
                Assert.False(batch.SegmentationOffload);
                batch.SegmentationOffload = true;
                batch.CoalescedReceive = true;
                Assert.True(batch.CoalescedReceive);
                using var small = new DatagramBatch(64, 1500);
                Assert.Throws<InvalidOperationException>(() => small.CoalescedReceive = true);
                using var tiny = new DatagramBatch(128, 100);
                Assert.Throws<InvalidOperationException>(() => tiny.CoalescedReceive = true);
                using Socket socket = BatchTraffic.Bound(Family.IPv4);
                socket.EnableCoalescedReceive();
            }
            else
            {
                Assert.False(DatagramBatch.IsSegmentationOffloadAvailable);
                Assert.False(DatagramBatch.IsCoalescedReceiveAvailable);
                Assert.False(batch.SegmentationOffload);
                Assert.Throws<PlatformNotSupportedException>(() => batch.SegmentationOffload = true);
                Assert.Throws<PlatformNotSupportedException>(() => batch.CoalescedReceive = true);
                using Socket socket = BatchTraffic.Bound(Family.IPv4);
                Assert.Throws<PlatformNotSupportedException>(() => socket.EnableCoalescedReceive());
            }
            batch.Dispose();
            Assert.Throws<ObjectDisposedException>(() => batch.SegmentationOffload);
        }

        // Slots: recipient (0: A, 1: B) and total length. Runs (offload on): 0-4, 5-7, 8-9 (shorter last), 12-75 (64, the limit),
        // 76-81; 10 (a shorter datagram cannot start a run of longer ones) and 11 and 82-87 alone.
        private static void Pattern(List<int> to, List<int> lengths)
        {
            for (int i = 0; i < 5; i++) Add(to, lengths, 0, 100);
            for (int i = 0; i < 3; i++) Add(to, lengths, 1, 100);
            Add(to, lengths, 0, 100);
            Add(to, lengths, 0, 60);
            Add(to, lengths, 0, 60);
            Add(to, lengths, 0, 100);
            for (int i = 0; i < 70; i++) Add(to, lengths, 1, 200);
            for (int i = 0; i < 6; i++) Add(to, lengths, i & 1, 80);
        }

        private static void Add(List<int> to, List<int> lengths, int recipient, int length)
        {
            to.Add(recipient);
            lengths.Add(length);
        }

        [Theory]
        [InlineData(Family.IPv4, true)]
        [InlineData(Family.IPv6, true)]
        [InlineData(Family.DualMode, true)]
        [InlineData(Family.IPv4, false)]
        public void MixedRunsSplitAndEveryDatagramArrivesInOrder(Family family, bool offload)
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            using Socket sender = BatchTraffic.Bound(family);
            using Socket a = BatchTraffic.Bound(family == Family.DualMode ? Family.IPv4 : family);
            using Socket b = BatchTraffic.Bound(family == Family.DualMode ? Family.IPv4 : family);
            using var batch = new DatagramBatch(128, 256);
            if (batch.SegmentationOffload != offload && !offload) batch.SegmentationOffload = false;
            bool segmenting = batch.SegmentationOffload;
            var to = new List<int>();
            var lengths = new List<int>();
            Pattern(to, lengths);
            EndPointKey[] keys = { BatchTraffic.KeyOf(a), BatchTraffic.KeyOf(b) };
            var scratch = new byte[256];
            for (int i = 0; i < to.Count; i++)
            {
                int length = TestDatagram.Write(scratch, (uint)i, lengths[i] - TestDatagram.Overhead);
                Assert.True(batch.TryAdd(scratch.AsSpan(0, length), keys[to[i]]));
            }

            Assert.Equal(to.Count, batch.Send(sender));
            Assert.Equal(0, batch.PendingCount);
            Assert.Equal(0, batch.FailedCount);
            Assert.Equal(segmenting ? 5 : 0, watched.SegmentedSends);
            Assert.Equal(segmenting ? 80 : 0, watched.SegmentedDatagrams);
            Assert.Equal(Linux && offload, segmenting);

            EndPointKey from = BatchTraffic.KeyOf(sender);
            if (family == Family.DualMode) from = from.MapToIPv4();
            ExpectInOrder(a, from, to, lengths, 0);
            ExpectInOrder(b, from, to, lengths, 1);
        }

        /// <summary>Receives everything sent to <paramref name="socket"/> and asserts it is exactly its slots, whole and in slot order.</summary>
        private static void ExpectInOrder(Socket socket, EndPointKey from, List<int> to, List<int> lengths, int recipient)
        {
            var expected = new List<int>();
            for (int i = 0; i < to.Count; i++) if (to[i] == recipient) expected.Add(i);
            using var receiver = new DatagramBatch(256, 512);
            int got = 0;
            while (got < expected.Count)
            {
                int n = receiver.Receive(socket, 2000);
                Assert.True(n > 0, "datagram " + got + " of " + expected.Count + " did not arrive");
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> datagram = receiver.GetDatagram(i, out EndPointKey sender);
                    Assert.True(TestDatagram.Check(datagram, out uint sequence), "damaged datagram (" + datagram.Length + " bytes)");
                    Assert.Equal(expected[got], (int)sequence);
                    Assert.Equal(lengths[(int)sequence], datagram.Length);
                    Assert.Equal(from, sender);
                    got++;
                }
            }
            Assert.Equal(0, receiver.Receive(socket));
        }

        /// <summary>
        /// A run the kernel refuses (forced, by Linux's error number: EIO, as from a device that cannot segment; EINVAL, as for a
        /// segment longer than the path allows; others a segmented send can meet) goes again datagram by datagram in the same
        /// call: nothing lost, nothing reordered, no slot failed. After EIO the batch stops segmenting; after any other error,
        /// one the error table does not know included, it keeps trying.
        /// </summary>
        [Theory]
        [InlineData(5, false)]    // EIO
        [InlineData(22, true)]    // EINVAL
        [InlineData(92, true)]    // ENOPROTOOPT: an ICMP "protocol unreachable" pending on a connected socket
        [InlineData(95, true)]    // EOPNOTSUPP: an ICMP "source route failed"
        [InlineData(32, true)]    // EPIPE: the socket was shut down for sending
        [InlineData(105, true)]   // ENOBUFS
        [InlineData(4095, true)]  // no errno the table knows
        public void RefusedRunIsSentDatagramByDatagram(int fault, bool keepsSegmenting)
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket a = BatchTraffic.Bound(Family.IPv4);
            using Socket b = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(128, 256);
            if (!batch.SegmentationOffload)
            {
                Assert.False(Linux, "offload should be on by default on Linux");
                return; // the switch's refusal elsewhere is asserted above
            }
            watched.FailSegmentsWith = fault;
            var to = new List<int>();
            var lengths = new List<int>();
            Pattern(to, lengths);
            EndPointKey[] keys = { BatchTraffic.KeyOf(a), BatchTraffic.KeyOf(b) };
            var scratch = new byte[256];
            for (int i = 0; i < to.Count; i++)
            {
                int length = TestDatagram.Write(scratch, (uint)i, lengths[i] - TestDatagram.Overhead);
                Assert.True(batch.TryAdd(scratch.AsSpan(0, length), keys[to[i]]));
            }
            int sent = 0;
            for (int call = 0; call < 100 && batch.PendingCount > 0; call++) sent += batch.Send(sender);
            Assert.Equal(to.Count, sent);
            Assert.Equal(0, batch.FailedCount);
            Assert.Equal(0, watched.SegmentedSends);
            Assert.Equal(keepsSegmenting, batch.SegmentationOffload);
            for (int i = 0; i < to.Count; i++) Assert.Equal(SocketError.Success, batch.GetSendError(i));
            EndPointKey from = BatchTraffic.KeyOf(sender);
            ExpectInOrder(a, from, to, lengths, 0);
            ExpectInOrder(b, from, to, lengths, 1);
        }

        /// <summary>
        /// Errors stay per slot inside runs: a run to port 0 (the kernel refuses it, EINVAL) fails slot by slot with the error a
        /// single send gets; an IPv6 recipient on an IPv4 socket in the middle of a run is refused alone and cuts the run in two.
        /// </summary>
        [Fact]
        public void ErrorsInsideRunsAreReportedPerSlot()
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket a = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(32, 256);
            EndPointKey good = BatchTraffic.KeyOf(a);
            Span<byte> address = stackalloc byte[16];
            good.CopyAddressBytes(address);
            EndPointKey portZero = EndPointKey.IPv4(address.Slice(0, 4), 0);
            EndPointKey v6 = EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.IPv6Loopback, good.Port));
            var refused = Assert.Throws<SocketException>(() => sender.SendTo(new byte[8], portZero.ToIPEndPoint())).SocketErrorCode;
            EndPointKey[] to = { good, good, good, portZero, portZero, portZero, good, good, v6, good, good };
            var scratch = new byte[256];
            for (int i = 0; i < to.Length; i++)
            {
                int length = TestDatagram.Write(scratch, (uint)i, 90);
                Assert.True(batch.TryAdd(scratch.AsSpan(0, length), to[i]));
            }
            int sent = 0;
            for (int call = 0; call < 20 && batch.PendingCount > 0; call++) sent += batch.Send(sender);
            Assert.Equal(7, sent);
            Assert.Equal(4, batch.FailedCount);
            for (int i = 0; i < to.Length; i++)
            {
                SocketError expected = i >= 3 && i <= 5 ? refused : i == 8 ? SocketError.AddressFamilyNotSupported : SocketError.Success;
                Assert.Equal(expected, batch.GetSendError(i));
            }
            if (batch.SegmentationOffload) Assert.Equal(3, watched.SegmentedSends); // 0-2, 6-7, 9-10
            var lengths = new List<int>();
            var recipients = new List<int>();
            for (int i = 0; i < to.Length; i++)
            {
                recipients.Add(to[i].Equals(good) ? 0 : 1);
                lengths.Add(100);
            }
            ExpectInOrder(a, BatchTraffic.KeyOf(sender), recipients, lengths, 0);
        }

        [Theory]
        [InlineData(true)]
        [InlineData(false)]
        public void SendingRunsAllocatesNothing(bool coalesced)
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            if (!DatagramBatch.IsSegmentationOffloadAvailable)
            {
                // Without offload a batch sends as BatchAllocationTests measures; the refusal is asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere.
                Assert.False(Linux, "offload should be available on " + Runtime.Describe());
                return;
            }
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket peer = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(16, 1500);
            using var receiver = new DatagramBatch(128, 1500);
            if (coalesced && DatagramBatch.IsCoalescedReceiveAvailable)
            {
                peer.EnableCoalescedReceive();
                receiver.CoalescedReceive = true;
            }
            EndPointKey key = BatchTraffic.KeyOf(peer);
            var payload = new byte[1200];
            int lost = 0;
            long bytes = Allocations.Measure(() =>
            {
                batch.Clear();
                for (int i = 0; i < 16; i++) batch.TryAdd(payload, key);
                batch.Send(sender);
                int got = 0;
                for (int tries = 0; got < 16 && tries < 4; tries++) got += receiver.Receive(peer, 1000);
                if (got != 16) lost++;
            });
            Assert.Equal(0, bytes);
            Assert.Equal(0, lost);
            if (Linux) Assert.True(watched.SegmentedSends > 0);
            if (Linux && coalesced) Assert.True(watched.CoalescedReceives > 0, "no datagram arrived coalesced");
        }

        /// <summary>
        /// A segmented burst to a socket with coalesced receive arrives as one coalesced datagram, and the batch hands every
        /// segment back as its own datagram with its sender, whole and in order; a plain sender in between is unaffected.
        /// Segment sizes below, at and above... the slot's: moved back, in place, and cut.
        /// </summary>
        [Theory]
        [InlineData(Family.IPv4, 100, 64)]
        [InlineData(Family.IPv4, 1400, 46)]
        [InlineData(Family.IPv4, 1500, 43)]
        [InlineData(Family.IPv6, 1000, 60)]
        public void CoalescedBurstArrivesDatagramByDatagram(Family family, int size, int count)
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            if (!DatagramBatch.IsCoalescedReceiveAvailable)
            {
                Assert.False(Linux, "coalesced receive should be available on " + Runtime.Describe());
                return; // the refusal is asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere
            }
            using Socket sender = BatchTraffic.Bound(family);
            using Socket other = BatchTraffic.Bound(family);
            using Socket peer = BatchTraffic.Bound(family);
            peer.EnableCoalescedReceive();
            EndPointKey key = BatchTraffic.KeyOf(peer);
            using var batch = new DatagramBatch(64, 1500);
            var scratch = new byte[1500];
            for (int burst = 0; burst < 3; burst++)
            {
                for (int i = 0; i < count; i++)
                {
                    uint sequence = (uint)(burst * count + i);
                    int length = TestDatagram.Write(scratch, sequence, (i == count - 1 ? size / 2 : size) - TestDatagram.Overhead);
                    Assert.True(batch.TryAdd(scratch.AsSpan(0, length), key));
                }
                Assert.Equal(count, batch.Send(sender));
                batch.Clear();
                other.SendTo(new byte[] { 7, (byte)burst }, peer.LocalEndPoint!);
            }
            Assert.Equal(3, watched.SegmentedSends);

            using var receiver = new DatagramBatch(128, 1500);
            receiver.CoalescedReceive = true;
            EndPointKey from = BatchTraffic.KeyOf(sender);
            EndPointKey otherKey = BatchTraffic.KeyOf(other);
            int next = 0, others = 0, receives = 0;
            while (next < 3 * count || others < 3)
            {
                int n = receiver.Receive(peer, 2000);
                Assert.True(n > 0, "datagram " + next + " of " + 3 * count + " did not arrive");
                receives++;
                using var reader = receiver.BeginRead();
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out EndPointKey source);
                    if (source.Equals(otherKey))
                    {
                        Assert.Equal(2, datagram.Length);
                        Assert.Equal(others++, (int)MemoryMarshal.Read<byte>(datagram.Slice(1)));
                        continue;
                    }
                    Assert.Equal(from, source);
                    Assert.True(TestDatagram.Check(datagram, out uint sequence), "damaged datagram " + next + " (" + datagram.Length + " bytes)");
                    Assert.Equal(next, (int)sequence);
                    Assert.Equal(next % count == count - 1 ? size / 2 : size, datagram.Length);
                    next++;
                }
            }
            Assert.Equal(0, receiver.Receive(peer));
            Assert.Equal(3, watched.CoalescedReceives);
            Assert.Equal(3 * count, watched.CoalescedDatagrams);
        }

        /// <summary>
        /// With fewer free slots than a coalesced datagram holds, the batch takes it anyway (into its spill), fills the slots left
        /// with its first segments, and hands out the rest, in order, first thing in the next receive: nothing dropped, nothing
        /// left queued, no peek.
        /// </summary>
        [Fact]
        public void CoalescedDatagramThatDoesNotFitIsFinishedByTheNextReceive()
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            if (!DatagramBatch.IsCoalescedReceiveAvailable) return; // refusal asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket peer = BatchTraffic.Bound(Family.IPv4);
            peer.EnableCoalescedReceive();
            EndPointKey key = BatchTraffic.KeyOf(peer);
            using var batch = new DatagramBatch(64, 600);
            var scratch = new byte[600];
            for (int burst = 0; burst < 3; burst++)
            {
                for (int i = 0; i < 50; i++)
                {
                    int length = TestDatagram.Write(scratch, (uint)(burst * 50 + i), 500);
                    Assert.True(batch.TryAdd(scratch.AsSpan(0, length), key));
                }
                Assert.Equal(50, batch.Send(sender));
                batch.Clear();
            }
            using var receiver = new DatagramBatch(128, 600);
            receiver.CoalescedReceive = true;
            Assert.Equal(128, receiver.Receive(peer, 2000));
            EndPointKey from = BatchTraffic.KeyOf(sender);
            for (int i = 0; i < 128; i++)
            {
                Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey source), out uint sequence));
                Assert.Equal(i, (int)sequence);
                Assert.Equal(from, source);
                Assert.False(receiver.IsTruncated(i));
            }
            Assert.Equal(22, receiver.Receive(peer, 2000));
            for (int i = 0; i < 22; i++)
            {
                Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey source), out uint sequence));
                Assert.Equal(128 + i, (int)sequence);
                Assert.Equal(from, source);
            }
            Assert.Equal(3, watched.CoalescedReceives);
            Assert.Equal(150, watched.CoalescedDatagrams);
            Assert.True(watched.SpilledReceives > 0);
            Assert.Equal(0, receiver.Receive(peer));
        }

        /// <summary>
        /// A datagram the kernel itself cut (MSG_TRUNC: its receive had less room than the datagram; forced by giving the spill
        /// less room than the largest datagram) is flagged: a single one in its slot, a run in its last, shorter segment; the
        /// segments before the cut are whole.
        /// </summary>
        [Fact]
        public void DatagramTheKernelCutIsFlagged()
        {
            using BatchOs watched = BatchOs.Install(); // counts what the batches hand the kernel
            if (!DatagramBatch.IsCoalescedReceiveAvailable) return; // refusal asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket peer = BatchTraffic.Bound(Family.IPv4);
            peer.EnableCoalescedReceive();
            using var receiver = new DatagramBatch(128, 1500);
            receiver.CoalescedReceive = true;
            watched.SpillRoom = 950;
            sender.SendTo(new byte[] { 1 }, peer.LocalEndPoint!); // lands in the slots: the rest goes through the spill
            sender.SendTo(new byte[1200], peer.LocalEndPoint!);
            using (var run = new DatagramBatch(10, 100))
            {
                var scratch = new byte[100];
                for (int i = 0; i < 10; i++)
                {
                    int length = TestDatagram.Write(scratch, (uint)i, 100 - TestDatagram.Overhead);
                    Assert.True(run.TryAdd(scratch.AsSpan(0, length), BatchTraffic.KeyOf(peer)));
                }
                Assert.Equal(10, run.Send(sender));
                Assert.Equal(1, watched.SegmentedSends);
            }
            Assert.Equal(12, receiver.Receive(peer, 2000));
            Assert.False(receiver.IsTruncated(0));
            Assert.Equal(950, receiver.GetDatagram(1).Length);
            Assert.True(receiver.IsTruncated(1), "a datagram the kernel cut was not flagged");
            for (int i = 0; i < 9; i++)
            {
                Assert.True(TestDatagram.Check(receiver.GetDatagram(2 + i), out uint sequence));
                Assert.Equal(i, (int)sequence);
                Assert.False(receiver.IsTruncated(2 + i));
            }
            Assert.Equal(50, receiver.GetDatagram(11).Length);
            Assert.True(receiver.IsTruncated(11), "the run's last segment, cut by the kernel, was not flagged");
        }

        /// <summary>
        /// Two threads read one socket with coalesced receive, each through its own batch, while runs of ten arrive between
        /// single datagrams: every datagram sent is received exactly once, whole, by one of them. A batch never peeks, so the
        /// other reader cannot take a datagram between a batch's look at it and its receive (with a peek, a larger run taken in
        /// that window had its segments beyond the free slots dropped). Bounded: each round waits at most 5 s.
        /// </summary>
        [Fact]
        public void TwoReadersOfOneSocketLoseNothing()
        {
            if (!DatagramBatch.IsCoalescedReceiveAvailable) return; // refusal asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket peer = BatchTraffic.Bound(Family.IPv4);
            peer.EnableCoalescedReceive();
            EndPointKey key = BatchTraffic.KeyOf(peer);
            const int rounds = 40, runsPerRound = 5, perRun = 10;
            const int perRound = runsPerRound * (perRun + 1);
            var seen = new int[rounds * perRound];
            int received = 0, damaged = 0;
            bool stop = false;
            var readers = new Thread[2];
            for (int r = 0; r < readers.Length; r++)
            {
                readers[r] = new Thread(() =>
                {
                    using var batch = new DatagramBatch(128, 1500);
                    batch.CoalescedReceive = true;
                    while (!Volatile.Read(ref stop))
                    {
                        int n = batch.Receive(peer, 50);
                        for (int i = 0; i < n; i++)
                        {
                            if (!TestDatagram.Check(batch.GetDatagram(i), out uint sequence) || sequence >= seen.Length || batch.IsTruncated(i)) Interlocked.Increment(ref damaged);
                            else Interlocked.Increment(ref seen[sequence]);
                        }
                        Interlocked.Add(ref received, n);
                    }
                }) { IsBackground = true };
                readers[r].Start();
            }
            using var run = new DatagramBatch(perRun, 200);
            var scratch = new byte[200];
            uint next = 0;
            for (int round = 0; round < rounds; round++)
            {
                for (int k = 0; k < runsPerRound; k++)
                {
                    int length = TestDatagram.Write(scratch, next++, 20);
                    sender.SendTo(scratch, 0, length, SocketFlags.None, peer.LocalEndPoint!);
                    run.Clear();
                    for (int i = 0; i < perRun; i++)
                    {
                        length = TestDatagram.Write(scratch, next++, 100);
                        Assert.True(run.TryAdd(scratch.AsSpan(0, length), key));
                    }
                    Assert.Equal(perRun, run.Send(sender));
                }
                // Paced by the readers, so that the socket's buffer never overflows: the round is taken before the next is sent.
                for (int waited = 0; Volatile.Read(ref received) + Volatile.Read(ref damaged) < (round + 1) * perRound && waited < 5000; waited += 5) Thread.Sleep(5);
            }
            Volatile.Write(ref stop, true);
            foreach (Thread reader in readers) Assert.True(reader.Join(5000), "a reader did not end");
            Assert.Equal(0, damaged);
            var wrong = new List<string>();
            for (int i = 0; i < seen.Length; i++) if (seen[i] != 1) wrong.Add(i + ": " + seen[i] + " times");
            Assert.True(wrong.Count == 0, "datagrams not received exactly once: " + string.Join(", ", wrong.GetRange(0, Math.Min(20, wrong.Count))));
        }

        /// <summary>
        /// A run with more datagrams than free slots that lands in the slots themselves fills them with its first datagrams and
        /// keeps the rest, in order, for the next receive, which hands them out without receiving anything. No kernel coalesces
        /// more datagrams than an empty batch's slots, so the run is coalesced by the OS seam's stand-in: 130 datagrams of 250
        /// bytes, coming as one into the 128 slots of an empty batch.
        /// </summary>
        [Fact]
        public void RunLongerThanTheFreeSlotsInTheSlotsKeepsItsRest()
        {
            if (!DatagramBatch.IsCoalescedReceiveAvailable) return; // refusal asserted in SwitchesAreOnWhereAvailableAndRefusedElsewhere
            using BatchOs watched = BatchOs.Install();
            using Socket sender = BatchTraffic.Bound(Family.IPv4);
            using Socket peer = BatchTraffic.Bound(Family.IPv4);
            peer.EnableCoalescedReceive();
            using var receiver = new DatagramBatch(128, 1500);
            receiver.CoalescedReceive = true;
            const int run = 130;
            var scratch = new byte[300];
            for (int i = 0; i < run; i++)
            {
                int length = TestDatagram.Write(scratch, (uint)i, 250 - TestDatagram.Overhead);
                Assert.Equal(250, length);
                sender.SendTo(scratch, 0, length, SocketFlags.None, peer.LocalEndPoint!);
            }
            Assert.True(peer.Poll(2_000_000, SelectMode.SelectRead), "the datagrams did not arrive");
            watched.CoalesceNext = run;
            EndPointKey from = BatchTraffic.KeyOf(sender);
            Assert.Equal(128, receiver.Receive(peer, 2000));
            Assert.Equal(0, watched.CoalesceNext); // the stand-in's run was taken
            for (int i = 0; i < 128; i++)
            {
                Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey source), out uint sequence), "datagram " + i + " of the run damaged");
                Assert.Equal(i, (int)sequence);
                Assert.Equal(from, source);
                Assert.False(receiver.IsTruncated(i));
            }
            long received = watched.Received;
            Assert.Equal(2, receiver.Receive(peer, 2000));
            Assert.Equal(received, watched.Received); // the run's rest, kept from the slots: nothing received for it
            for (int i = 0; i < 2; i++)
            {
                Assert.True(TestDatagram.Check(receiver.GetDatagram(i, out EndPointKey source), out uint sequence), "datagram " + (128 + i) + " of the run damaged");
                Assert.Equal(128 + i, (int)sequence);
                Assert.Equal(from, source);
                Assert.False(receiver.IsTruncated(i));
            }
            Assert.Equal(0, receiver.Receive(peer));
            Assert.Equal(1, watched.CoalescedReceives);
            Assert.Equal(run, watched.CoalescedDatagrams);
        }
    }
}
