using System;
using System.Collections.Generic;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Dispose from another thread while one thread fills, sends, receives and reads a batch: every call ends in
    /// success or ObjectDisposedException, and the batch never touches its freed block. test.sh runs this class
    /// again with <c>MALLOC_MMAP_THRESHOLD_=131072</c>, so that each batch's block (more than 128 KiB) is unmapped
    /// at free and a late access faults instead of passing silently. The worker dereferences only the spans of an open
    /// reader (which keeps the block until it ends); any other span racing with Dispose is the caller's race, not the batch's.
    /// </summary>
    // The trait selects the class for test.sh's rerun under MALLOC_MMAP_THRESHOLD_ (dotnet test --filter and xunit's console -trait).
    [Trait("Category", "DisposeRace")]
    public class BatchDisposeRaceTests : IDisposable
    {
        private const int Rounds = 50;
        private const int Capacity = 1024;
        private const int SlotSize = 128;
        private const int MaxCallsPerRound = 10_000;

        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary><see cref="Matrix.BatchModesOnTheirPaths"/>, each case with a seed of its own (1, 2, …) for the random delays.</summary>
        public static IEnumerable<object?[]> ModesOnTheirPathsWithSeeds
        {
            get
            {
                var rows = new List<object?[]>();
                foreach (object?[] row in Matrix.BatchModesOnTheirPaths) rows.Add(new[] { row[0], row[1], rows.Count + 1 });
                return rows;
            }
        }

        [Theory]
        [MemberData(nameof(ModesOnTheirPathsWithSeeds))]
        public void DisposeFromAnotherThreadEndsEveryCallInSuccessOrObjectDisposed(DatagramBatchMode mode, DatagramPath path, int seed)
        {
            if (!BatchModes.TryUse(mode) || !Paths.TryForce(path)) return;
            using Socket socket = BatchTraffic.Bound(Family.IPv4);
            socket.Blocking = false;
            EndPointKey self = BatchTraffic.KeyOf(socket);
            var payload = new byte[16];
            var random = new Random(seed);
            // One round fills, sends and receives the whole batch a few times over: a few ms per pass
            // (more on the single-call modes), so the dispose lands anywhere in it.
            int maxDelay = mode == DatagramBatchMode.MultiMessage ? 3000 : 8000;
            for (int round = 0; round < Rounds; round++)
            {
                var batch = new DatagramBatch(Capacity, SlotSize, mode);
                Assert.True(batch.NativeBlockBytes >= 128 * 1024, "the block must be large enough for malloc to map it on its own");
                DisposeRace.Round(() => FillSendReceiveRead(batch, socket, self, payload), batch.Dispose, random, maxDelay, MaxCallsPerRound);
                AssertEveryMemberThrowsObjectDisposed(batch, socket, self, payload);
                while (socket.Available > 0) socket.Receive(new byte[256]); // what a disposed batch did not take
            }
        }

        private static void FillSendReceiveRead(DatagramBatch batch, Socket socket, EndPointKey to, byte[] payload)
        {
            while (true)
            {
                if (!batch.TryAdd(payload, to)) break;
                if (!batch.TryAdd(payload.Length, to, out Span<byte> _)) break; // written in place by a caller: not here
            }
            int n = batch.Count;
            batch.Send(socket);
            for (int i = 0; i < n; i++) _ = batch.GetSendError(i);
            int received = batch.Receive(socket);
            for (int i = 0; i < received; i++)
            {
                int length = batch.GetDatagram(i, out EndPointKey from).Length;
                ReceivedDatagram info = batch.GetInfo(i);
                if (info.Length != length || from != info.RemoteEndPoint || batch.IsTruncated(i)) Assert.Fail("slot " + i + " reads inconsistently");
                _ = batch.GetDatagram(i).Length;
            }
            // Through a reader the spans stay valid until it ends, whoever disposes the batch: these are read, byte by byte.
            using (DatagramBatch.Reader reader = batch.BeginRead())
            {
                for (int i = 0; i < reader.Count; i++)
                {
                    ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out bool truncated);
                    int sum = 0;
                    for (int b = 0; b < datagram.Length; b++) sum += MemoryMarshal.Read<byte>(datagram.Slice(b));
                    if (truncated || sum != 0) Assert.Fail("slot " + i + " reads " + sum + " through a reader, not the zeros sent");
                }
            }
            _ = batch.PendingCount + batch.FailedCount + (batch.IsFull ? 1 : 0);
            batch.Clear();
        }

        private static void AssertEveryMemberThrowsObjectDisposed(DatagramBatch batch, Socket socket, EndPointKey to, byte[] payload)
        {
            Assert.Throws<ObjectDisposedException>(() => batch.TryAdd(payload, to));
            Assert.Throws<ObjectDisposedException>(() => batch.TryAdd(1, to, out _));
            Assert.Throws<ObjectDisposedException>(() => batch.GetDatagram(0));
            Assert.Throws<ObjectDisposedException>(() => batch.GetDatagram(0, out _));
            Assert.Throws<ObjectDisposedException>(() => batch.GetInfo(0));
            Assert.Throws<ObjectDisposedException>(() => batch.IsTruncated(0));
            Assert.Throws<ObjectDisposedException>(() => batch.GetSendError(0));
            Assert.Throws<ObjectDisposedException>(() => batch.Receive(socket));
            Assert.Throws<ObjectDisposedException>(() => batch.BeginRead().Count);
            Assert.Throws<ObjectDisposedException>(() => batch.Send(socket));
            Assert.Throws<ObjectDisposedException>(() => batch.Clear());
            Assert.Throws<ObjectDisposedException>(() => batch.Count);
            batch.Dispose(); // again: nothing more to free
        }
    }
}
