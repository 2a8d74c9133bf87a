using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>The batch's contract apart from delivery: modes, arguments, slots, waiting, and disposal.</summary>
    public class BatchApiTests
    {
        [Fact]
        public void ModeIsChosenByTheOperatingSystemAndCanBeForced()
        {
            bool linux = RuntimeInformation.IsOSPlatform(OSPlatform.Linux);
            Assert.Equal(linux ? DatagramBatchMode.MultiMessage : DatagramBatchMode.SingleCalls, DatagramBatch.DefaultMode);
            Assert.Equal(linux, DatagramBatch.IsModeAvailable(DatagramBatchMode.MultiMessage));
            Assert.True(DatagramBatch.IsModeAvailable(DatagramBatchMode.SingleCalls));
            Assert.False(DatagramBatch.IsModeAvailable((DatagramBatchMode)7));
            using (var automatic = new DatagramBatch(4))
            {
                Assert.Equal(DatagramBatch.DefaultMode, automatic.Mode);
                Assert.Equal(DatagramBatch.DefaultSlotSize, automatic.SlotSize);
                Assert.Equal(4, automatic.Capacity);
            }
            using (var forced = new DatagramBatch(4, 100, DatagramBatchMode.SingleCalls))
                Assert.Equal(DatagramBatchMode.SingleCalls, forced.Mode);
            if (!linux) Assert.Throws<PlatformNotSupportedException>(() => new DatagramBatch(4, 100, DatagramBatchMode.MultiMessage));
        }

        [Fact]
        public unsafe void TheNativeBlockIsOneAlignedBlockFreedOnce()
        {
            long liveBefore = DatagramBatch.LiveNativeBlocks;
            var batch = new DatagramBatch(16, 1500);
            void* block = (void*)batch.NativeBlockAddress;
            // One block per batch, counted while it lives, holding every slot, on a cache line.
            Assert.Equal(liveBefore + 1, DatagramBatch.LiveNativeBlocks);
            Assert.True(batch.NativeBlockBytes >= 16 * 1500);
            Assert.Equal(0, (long)block % 64);
            Assert.False(batch.NativeBlockFreed);
            batch.Dispose();
            Assert.True(batch.NativeBlockFreed);
            Assert.Equal(liveBefore, DatagramBatch.LiveNativeBlocks);
            batch.Dispose(); // a second Dispose frees nothing
            Assert.Equal(liveBefore, DatagramBatch.LiveNativeBlocks);
            Assert.Throws<ObjectDisposedException>(() => batch.GetDatagram(0));
        }

        [Theory]
        [InlineData(0, 1500)]
        [InlineData(-1, 1500)]
        [InlineData(1025, 1500)]
        [InlineData(8, 0)]
        [InlineData(8, 65537)]
        public void BadShapesAreRefused(int capacity, int slotSize)
        {
            Assert.Throws<ArgumentOutOfRangeException>(() => new DatagramBatch(capacity, slotSize));
        }

        [Fact]
        public void LargestShapeAndUnknownModeAreHandled()
        {
            using (var largest = new DatagramBatch(DatagramBatch.MaxCapacity, DatagramBatch.MaxSlotSize))
                Assert.Equal(DatagramBatch.MaxCapacity, largest.Capacity);
            Assert.Throws<ArgumentOutOfRangeException>(() => new DatagramBatch(4, 100, (DatagramBatchMode)7));
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void SlotsAreFilledReadAndCleared(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var batch = new DatagramBatch(2, 8, mode);
            EndPointKey to = EndPointKey.IPv4(127, 0, 0, 1, 9);
            Assert.Throws<ArgumentException>(() => batch.TryAdd(new byte[9], to));
            Assert.Throws<ArgumentException>(() => batch.TryAdd(new byte[1], default(EndPointKey)));
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.TryAdd(9, to, out _));
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.GetDatagram(0));

            Assert.True(batch.TryAdd(new byte[] { 1, 2, 3 }, to));
            Assert.True(batch.TryAdd(2, to, out Span<byte> inPlace));
            Assert.Equal(2, inPlace.Length);
            inPlace[0] = 7;
            inPlace[1] = 8;
            Assert.True(batch.IsFull);
            Assert.False(batch.TryAdd(new byte[1], to));
            Assert.False(batch.TryAdd(1, to, out Span<byte> none));
            Assert.Equal(0, none.Length);
            Assert.Equal(2, batch.Count);
            Assert.Equal(2, batch.PendingCount);

            Assert.Equal(new byte[] { 1, 2, 3 }, batch.GetDatagram(0, out EndPointKey first).ToArray());
            Assert.Equal(to, first);
            Assert.Equal(new byte[] { 7, 8 }, batch.GetDatagram(1).ToArray());
            ReceivedDatagram info = batch.GetInfo(1);
            Assert.Equal(2, info.Length);
            Assert.False(info.Truncated);
            Assert.Equal(to, info.RemoteEndPoint);
            Assert.Equal(SocketError.Success, batch.GetSendError(1));
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.GetInfo(2));
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.GetSendError(-1));

            batch.Clear();
            Assert.Equal(0, batch.Count);
            Assert.Equal(0, batch.PendingCount);
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.GetDatagram(0));
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void SocketsAreCheckedBeforeAnySystemCall(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var batch = new DatagramBatch(4, 100, mode);
            Assert.Throws<ArgumentNullException>(() => batch.Receive(null!));
            Assert.Throws<ArgumentNullException>(() => batch.Send(null!));
            using var tcp = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            Assert.Throws<ArgumentException>(() => batch.Receive(tcp));
            Assert.Throws<ArgumentException>(() => batch.Send(tcp));
            using var unbound = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            Assert.Throws<InvalidOperationException>(() => batch.Receive(unbound));
            using Socket bound = BatchTraffic.Bound(Family.IPv4);
            Assert.Throws<ArgumentOutOfRangeException>(() => batch.Receive(bound, -2));
            Assert.Equal(0, batch.Send(bound)); // nothing to send is not an error
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void EmptySocketGivesZeroWithOrWithoutWaiting(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using Socket socket = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(4, 100, mode);
            Assert.Equal(0, batch.Receive(socket));
            Assert.Equal(0, batch.Receive(socket, 0));
            Assert.Equal(0, batch.Receive(socket, 30));
            socket.Blocking = false;
            Assert.Equal(0, batch.Receive(socket, 30));
            Assert.Equal(0, batch.Count);
        }

        /// <summary>A receive that waits wakes up for a datagram sent while it waits, and takes what is queued.</summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void WaitingReceiveWakesForADatagram(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(Family.IPv4);
            using var batch = new DatagramBatch(4, 100, mode);
            var late = new Thread(() =>
            {
                Thread.Sleep(50);
                pair.Client.SendTo(new byte[] { 42 }, pair.ServerTarget);
            });
            late.Start();
            int n = batch.Receive(pair.Server, Timeout.Infinite);
            Assert.True(late.Join(10_000));
            Assert.Equal(1, n);
            Assert.Equal(1, batch.GetDatagram(0, out EndPointKey from).Length);
            Assert.Equal(pair.ClientAsSeenByServer, from);
        }

        /// <summary>A receive waiting without a timeout ends with ObjectDisposedException when another thread disposes the socket.</summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void WaitEndsWhenTheSocketIsDisposed(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            Socket socket = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(4, 100, mode);
            Exception? caught = null;
            int before = DisposeDuringWait.CountBefore();
            var waiter = new Thread(() =>
            {
                try { batch.Receive(socket, Timeout.Infinite); }
                catch (Exception e) { caught = e; }
            });
            waiter.Start();
            Assert.True(DisposeDuringWait.UntilInside(before, waiter), "the receive never reached its wait");
            socket.Dispose();
            Assert.True(waiter.Join(10_000), "the waiting receive did not end after the socket was disposed");
            Assert.True(caught?.GetType() == typeof(ObjectDisposedException), "expected ObjectDisposedException; the receive ended with " + (caught?.ToString() ?? "no exception"));
        }

        /// <summary>
        /// The single-datagram native receive shares the batch's wait: it too must end when the socket is
        /// disposed under it (on CoreCLR it used to spin forever on POLLHUP).
        /// </summary>
        [Fact]
        public void SingleDatagramWaitEndsWhenTheSocketIsDisposed()
        {
            Assert.True(Paths.TryForce(DatagramPath.Native));
            try
            {
                Socket socket = BatchTraffic.Bound(Family.IPv4);
                socket.ReceiveTimeout = 0; // wait without end
                Exception? caught = null;
                int before = DisposeDuringWait.CountBefore();
                var waiter = new Thread(() =>
                {
                    try { socket.ReceiveFrom_NonAlloc(new byte[16].AsSpan()); }
                    catch (Exception e) { caught = e; }
                });
                waiter.Start();
                Assert.True(DisposeDuringWait.UntilInside(before, waiter), "the receive never reached its wait");
                socket.Dispose();
                Assert.True(waiter.Join(10_000), "the waiting receive did not end after the socket was disposed");
                Assert.True(caught?.GetType() == typeof(ObjectDisposedException), "expected ObjectDisposedException; the receive ended with " + (caught?.ToString() ?? "no exception"));
            }
            finally
            {
                DatagramPathSettings.Reset();
            }
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void DisposedBatchOrSocketThrowsObjectDisposed(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using Socket socket = BatchTraffic.Bound(Family.IPv4);
            var batch = new DatagramBatch(4, 100, mode);
            Assert.True(batch.TryAdd(new byte[4], BatchTraffic.KeyOf(socket)));
            batch.Dispose();
            batch.Dispose(); // twice is fine
            Assert.Throws<ObjectDisposedException>(() => batch.Receive(socket));
            Assert.Throws<ObjectDisposedException>(() => batch.Send(socket));
            Assert.Throws<ObjectDisposedException>(() => batch.TryAdd(new byte[1], BatchTraffic.KeyOf(socket)));
            Assert.Throws<ObjectDisposedException>(() => batch.GetDatagram(0));
            Assert.Throws<ObjectDisposedException>(() => batch.Count);
            Assert.Throws<ObjectDisposedException>(() => batch.Clear());

            using var live = new DatagramBatch(4, 100, mode);
            Socket closed = BatchTraffic.Bound(Family.IPv4);
            closed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => live.Receive(closed));
            Assert.True(live.TryAdd(new byte[4], EndPointKey.IPv4(127, 0, 0, 1, 9)));
            Assert.Throws<ObjectDisposedException>(() => live.Send(closed));
        }

        /// <summary>Receive replaces the contents; received datagrams are not sent back by a later Send.</summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void ReceivedDatagramsAreNotPendingForSend(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(Family.IPv4);
            using var batch = new DatagramBatch(4, 100, mode);
            Assert.True(batch.TryAdd(new byte[] { 5 }, pair.ServerKey));
            pair.Client.SendTo(new byte[] { 1, 2 }, pair.ServerTarget);
            Assert.Equal(1, batch.Receive(pair.Server, 2000));
            Assert.Equal(1, batch.Count);
            Assert.Equal(0, batch.PendingCount);
            Assert.Equal(0, batch.Send(pair.Server));
            Assert.Equal(new byte[] { 1, 2 }, batch.GetDatagram(0).ToArray());
        }
    }
}
