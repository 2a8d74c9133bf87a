using System;
using System.Net.Sockets;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// <see cref="DatagramBatch.BeginRead"/>: the reader reads what the batch's own members read, ends at its Dispose or at
    /// the batch's next Receive, Clear or BeginRead, keeps the native block alive while open (also across a Dispose from
    /// another thread), counts the batch out exactly once, and allocates nothing, on CoreCLR and Mono.
    /// </summary>
    public class BatchReaderTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary>Every batch mode on IPv4 and in dual mode; MultiMessage also on IPv6.</summary>
        public static TheoryData<DatagramBatchMode, Family> ReaderCases => Matrix.BatchModesWithFamiliesWhere((m, f) => m == DatagramBatchMode.MultiMessage || f != Family.IPv6);

        [Theory]
        [MemberData(nameof(ReaderCases))]
        public void TheReaderReadsWhatTheBatchReads(DatagramBatchMode mode, Family family)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(32, 512, mode);
            using var batch = new DatagramBatch(32, 64, mode); // 64-byte slots: the longer payloads arrive cut
            BatchTraffic.SendNumbered(sender, pair.Client, pair.ServerKey, 100, 32);
            int received = 0;
            while (received == 0) received = batch.Receive(pair.Server, 2000);
            int cut = 0;
            using (DatagramBatch.Reader reader = batch.BeginRead())
            {
                Assert.Equal(received, reader.Count);
                for (int i = 0; i < reader.Count; i++)
                {
                    ReadOnlySpan<byte> mine = reader.GetDatagram(i, out bool truncated);
                    Assert.True(mine.SequenceEqual(batch.GetDatagram(i)));
                    Assert.True(reader.GetDatagram(i).SequenceEqual(mine));
                    Assert.True(reader.GetDatagram(i, out EndPointKey from).SequenceEqual(mine));
                    Assert.Equal(pair.ClientAsSeenByServer, from);
                    Assert.Equal(batch.IsTruncated(i), truncated);
                    Assert.Equal(truncated, reader.IsTruncated(i));
                    Assert.Equal(batch.GetInfo(i), reader.GetInfo(i));
                    if (truncated) cut++;
                    else Assert.True(TestDatagram.Check(mine, out _), "datagram " + i + " is damaged");
                }
                Assert.Throws<ArgumentOutOfRangeException>(() => ReadAt(batch, received));
            }
            Assert.True(cut > 0, "no datagram was longer than a slot: the flag was not tested");
        }

        [Fact]
        public unsafe void TheReaderEndsAtReceiveClearAndBeginReadAndCountsOutOnce()
        {
            using Socket socket = BatchTraffic.Bound(Family.IPv4);
            var batch = new DatagramBatch(8, 64);
            DatagramBatch.Reader first = batch.BeginRead();
            Assert.Equal(0, first.Count);
            batch.Receive(socket); // nothing queued; the reader ended all the same
            Assert.IsType<InvalidOperationException>(ReadFailure(first));
            DatagramBatch.Reader second = batch.BeginRead();
            batch.Clear();
            Assert.IsType<InvalidOperationException>(ReadFailure(second));
            DatagramBatch.Reader third = batch.BeginRead();
            DatagramBatch.Reader fourth = batch.BeginRead();
            Assert.IsType<InvalidOperationException>(ReadFailure(third));
            DatagramBatch.Reader copy = fourth;
            fourth.Dispose();
            copy.Dispose();  // the same reader again: counted out once only
            third.Dispose(); // ended long ago: nothing
            first.Dispose();
            Assert.IsType<InvalidOperationException>(ReadFailure(copy));
            // No reader holds the block now, so Dispose frees it at once.
            Assert.True(!batch.NativeBlockFreed);
            batch.Dispose();
            Assert.True(batch.NativeBlockFreed);
            Assert.Throws<ObjectDisposedException>(() => batch.BeginRead());
        }

        [Fact]
        public void ADefaultReaderReadsNothing()
        {
            DatagramBatch.Reader none = default;
            Assert.Equal(0, none.Count);
            Assert.IsType<InvalidOperationException>(ReadFailure(none));
            none.Dispose();
        }

        [Fact]
        public unsafe void AnOpenReaderKeepsTheBlockAcrossADisposeFromAnotherThread()
        {
            using var pair = new Loopback(Family.IPv4);
            var batch = new DatagramBatch(16, 256);
            var payload = new byte[40];
            int length = TestDatagram.Write(payload, 7, 20);
            pair.Client.SendTo_NonAlloc(payload, 0, length, SocketFlags.None, pair.ServerKey);
            Assert.Equal(1, batch.Receive(pair.Server, 2000));
            DatagramBatch.Reader reader = batch.BeginRead();
            ReadOnlySpan<byte> datagram = reader.GetDatagram(0);
            var disposer = new Thread(batch.Dispose);
            disposer.Start();
            Assert.True(disposer.Join(10_000));
            // Disposed, but the reader still holds the block: the span reads the datagram, not freed memory.
            Assert.True(!batch.NativeBlockFreed);
            Assert.True(TestDatagram.Check(datagram, out uint sequence));
            Assert.Equal(7u, sequence);
            Assert.IsType<ObjectDisposedException>(ReadFailure(reader));
            reader.Dispose(); // the last one out frees it
            Assert.True(batch.NativeBlockFreed);
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void ReadingThroughAReaderAllocatesNothing(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(Family.DualMode);
            using var sender = new DatagramBatch(8, 64, mode);
            using var batch = new DatagramBatch(8, 64, mode);
            var payload = new byte[48];
            EndPointKey to = pair.ServerKey;
            long total = 0;
            int wrong = 0;
            long bytes = Allocations.Measure(() =>
            {
                sender.Clear();
                for (int k = 0; k < 8; k++) sender.TryAdd(payload, to);
                sender.Send(pair.Client);
                int got = 0;
                while (got < 8)
                {
                    if (batch.Receive(pair.Server, 1000) == 0) break;
                    using DatagramBatch.Reader reader = batch.BeginRead();
                    for (int i = 0; i < reader.Count; i++)
                    {
                        if (reader.GetDatagram(i, out bool truncated).Length != payload.Length || truncated) wrong++;
                        if (reader.GetDatagram(i, out EndPointKey from).Length != payload.Length || from != pair.ClientAsSeenByServer) wrong++;
                    }
                    got += reader.Count;
                }
                total += got;
            }, 10_000);
            Assert.Equal(0, wrong);
            Assert.True(total >= 80_000, "only " + total + " datagrams went round");
            Assert.Equal(0, bytes);
        }

        /// <summary>
        /// One batch used for everything in turn: short datagrams sent from it, then long ones received into it, from an IPv4
        /// socket (16-byte senders), then an IPv6 one (28-byte senders): what a send or a receive changed in its headers is
        /// put back before the next receive, so nothing arrives cut and every sender reads whole.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void OneBatchSendsThenReceivesOnBothFamilies(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var v4 = new Loopback(Family.IPv4);
            using var v6 = new Loopback(Family.IPv6);
            using var batch = new DatagramBatch(8, 256, mode);
            var longer = new byte[200];
            for (int round = 0; round < 3; round++)
            {
                foreach (Loopback pair in new[] { v4, v6 })
                {
                    if (pair == v4)
                    {
                        // Sent from the batch: its iovecs are cut to 10 bytes. (Not before the IPv6 receive, which must find
                        // room for a 28-byte sender in slots that last held 16-byte ones.)
                        batch.Clear();
                        for (int k = 0; k < 8; k++) Assert.True(batch.TryAdd(new byte[10], pair.ServerKey));
                        Assert.Equal(8, batch.Send(pair.Client));
                        int drained = 0;
                        while (drained < 8) drained += batch.Receive(pair.Server, 2000);
                    }
                    for (int k = 0; k < 8; k++) pair.Client.SendTo_NonAlloc(longer, 0, longer.Length, SocketFlags.None, pair.ServerKey);
                    int received = 0;
                    while (received < 8)
                    {
                        int n = batch.Receive(pair.Server, 2000);
                        Assert.True(n > 0);
                        using DatagramBatch.Reader reader = batch.BeginRead();
                        for (int i = 0; i < n; i++)
                        {
                            Assert.Equal(longer.Length, reader.GetDatagram(i, out bool truncated).Length);
                            Assert.False(truncated);
                            reader.GetDatagram(i, out EndPointKey from);
                            Assert.Equal(pair.ClientAsSeenByServer, from);
                        }
                        received += n;
                    }
                }
            }
        }

        private static int ReadAt(DatagramBatch batch, int index)
        {
            using DatagramBatch.Reader reader = batch.BeginRead();
            return reader.GetDatagram(index).Length;
        }

        /// <summary>What reading slot 0 through <paramref name="reader"/> throws (a ref struct cannot be captured by a lambda for Assert.Throws).</summary>
        private static Exception? ReadFailure(DatagramBatch.Reader reader)
        {
            try
            {
                _ = reader.GetDatagram(0).Length;
                return null;
            }
            catch (Exception e)
            {
                return e;
            }
        }
    }
}
