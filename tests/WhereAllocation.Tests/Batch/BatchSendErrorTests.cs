using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A datagram that cannot be sent never takes the others with it: it is recorded in its slot and the
    /// batch goes on. Two kinds: refused before any system call (an IPv6 recipient on an IPv4 socket) and
    /// refused by the OS in the middle of a <c>sendmmsg</c> or of the single calls (destination port 0: Linux
    /// refuses it with EINVAL; the expected code is the one the runtime's own SendTo gets on this OS).
    /// </summary>
    public class BatchSendErrorTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [MemberData(nameof(Matrix.BatchModesWithFamilies), MemberType = typeof(Matrix))]
        public void OsRefusalInTheMiddleDropsNothingElse(DatagramBatchMode mode, Family family)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(8, 512, mode);
            using var receiver = new DatagramBatch(8, 512, mode);
            EndPointKey portZero = PortZero(pair.ServerKey);
            SocketError refused = PortZeroError(pair.Client, portZero);
            var scratch = new byte[64];
            // Slots: 0 ok, 1 port 0, 2 ok, 3 ok, 4 port 0, 5 port 0, 6 ok
            bool[] bad = { false, true, false, false, true, true, false };
            for (uint k = 0; k < bad.Length; k++)
            {
                int length = TestDatagram.Write(scratch, k, 8);
                Assert.True(sender.TryAdd(scratch.AsSpan(0, length), bad[k] ? portZero : pair.ServerKey));
            }

            Assert.Equal(4, sender.Send(pair.Client));
            Assert.Equal(3, sender.FailedCount);
            Assert.Equal(0, sender.PendingCount);
            for (int k = 0; k < bad.Length; k++)
                Assert.Equal(bad[k] ? refused : SocketError.Success, sender.GetSendError(k));
            Assert.Equal(0, sender.Send(pair.Client)); // nothing left to try

            var seen = new int[bad.Length];
            Assert.Equal(4, BatchTraffic.ReceiveNumbered(receiver, pair.Server, pair.ClientAsSeenByServer, 0, seen, 4));
            for (int k = 0; k < bad.Length; k++) Assert.Equal(bad[k] ? 0 : 1, seen[k]);
            Assert.Equal(0, receiver.Receive(pair.Server));
        }

        /// <summary>
        /// A batch with one datagram to send (one per tick, or the last one left) sends it with the one-datagram call on Linux
        /// instead of a <c>sendmmsg</c> of one: the same answers, the OS's refusal recorded on its slot, then a good one sent, each
        /// a batch of one, tick after tick, and the last slot of a batch refused alone.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModesWithFamilies), MemberType = typeof(Matrix))]
        public void ABatchOfOneGetsTheSameAnswers(DatagramBatchMode mode, Family family)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(family);
            using var sender = new DatagramBatch(4, 512, mode);
            using var receiver = new DatagramBatch(4, 512, mode);
            EndPointKey portZero = PortZero(pair.ServerKey);
            SocketError refused = PortZeroError(pair.Client, portZero);
            var scratch = new byte[64];
            var seen = new int[6];
            for (uint tick = 0; tick < 4; tick++)
            {
                bool bad = tick % 2 == 0;
                sender.Clear();
                int length = TestDatagram.Write(scratch, tick, 8);
                Assert.True(sender.TryAdd(scratch.AsSpan(0, length), bad ? portZero : pair.ServerKey));
                Assert.Equal(bad ? 0 : 1, sender.Send(pair.Client));
                Assert.Equal(bad ? 1 : 0, sender.FailedCount);
                Assert.Equal(0, sender.PendingCount);
                Assert.Equal(bad ? refused : SocketError.Success, sender.GetSendError(0));
            }

            // Two slots, the second refused: the first goes with the batch's call, the second alone, and is recorded.
            sender.Clear();
            for (uint k = 4; k < 6; k++)
            {
                int length = TestDatagram.Write(scratch, k, 8);
                Assert.True(sender.TryAdd(scratch.AsSpan(0, length), k == 5 ? portZero : pair.ServerKey));
            }
            Assert.Equal(1, sender.Send(pair.Client));
            Assert.Equal(1, sender.FailedCount);
            Assert.Equal(SocketError.Success, sender.GetSendError(0));
            Assert.Equal(refused, sender.GetSendError(1));

            Assert.Equal(3, BatchTraffic.ReceiveNumbered(receiver, pair.Server, pair.ClientAsSeenByServer, 0, seen, 3));
            Assert.Equal(new[] { 0, 1, 0, 1, 1, 0 }, seen);
            Assert.Equal(0, receiver.Receive(pair.Server));
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void IPv6RecipientOnAnIPv4SocketIsRefusedAlone(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(Family.IPv4);
            using var sender = new DatagramBatch(4, 512, mode);
            using var receiver = new DatagramBatch(4, 512, mode);
            var scratch = new byte[64];
            EndPointKey v6 = EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.IPv6Loopback, pair.ServerKey.Port));
            EndPointKey mapped = pair.ServerKey.MapToIPv6(); // an IPv4-mapped key is sent as IPv4 from an IPv4 socket
            EndPointKey[] to = { pair.ServerKey, v6, mapped, pair.ServerKey };
            for (uint k = 0; k < to.Length; k++)
            {
                int length = TestDatagram.Write(scratch, k, 8);
                Assert.True(sender.TryAdd(scratch.AsSpan(0, length), to[k]));
            }
            Assert.Equal(3, sender.Send(pair.Client));
            Assert.Equal(1, sender.FailedCount);
            Assert.Equal(SocketError.AddressFamilyNotSupported, sender.GetSendError(1));
            Assert.Equal(SocketError.Success, sender.GetSendError(2));

            var seen = new int[to.Length];
            Assert.Equal(3, BatchTraffic.ReceiveNumbered(receiver, pair.Server, pair.ClientAsSeenByServer, 0, seen, 3));
            Assert.Equal(new[] { 1, 0, 1, 1 }, seen);
        }

        /// <summary>
        /// A dual-mode socket bound to ::ffff:127.0.0.1 (loopback only) cannot reach the IPv6 loopback: the OS
        /// refuses those datagrams, and the IPv4 ones in the same batch still go.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void DualModeSocketSendsItsIPv4SlotsWhenIPv6OnesFail(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using Socket dual = BatchTraffic.Bound(Family.DualMode);
            using Socket v4Peer = BatchTraffic.Bound(Family.IPv4);
            using Socket v6Peer = BatchTraffic.Bound(Family.IPv6);
            using var sender = new DatagramBatch(4, 512, mode);
            using var receiver = new DatagramBatch(4, 512, mode);
            var scratch = new byte[64];
            EndPointKey[] to = { BatchTraffic.KeyOf(v4Peer), BatchTraffic.KeyOf(v6Peer), BatchTraffic.KeyOf(v4Peer) };
            for (uint k = 0; k < to.Length; k++)
            {
                int length = TestDatagram.Write(scratch, k, 8);
                Assert.True(sender.TryAdd(scratch.AsSpan(0, length), to[k]));
            }
            Assert.Equal(2, sender.Send(dual));
            Assert.Equal(1, sender.FailedCount);
            Assert.NotEqual(SocketError.Success, sender.GetSendError(1));

            var seen = new int[to.Length];
            Assert.Equal(2, BatchTraffic.ReceiveNumbered(receiver, v4Peer, BatchTraffic.KeyOf(dual), 0, seen, 2));
            Assert.Equal(new[] { 1, 0, 1 }, seen);
            Assert.Equal(0, receiver.Receive(v6Peer));
        }

        /// <summary>
        /// The OS's error for a receive is thrown, not swallowed: ICMP port unreachable on a connected socket, reported
        /// as the runtime reports it (ConnectionRefused on Linux, ConnectionReset on Windows; nothing under Wine).
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void ReceiveReportsAClosedPortAsTheRuntimeDoes(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            SocketError refused = Loopback.ClosedPortError();
            using Socket closed = BatchTraffic.Bound(Family.IPv4);
            var nobody = (IPEndPoint)closed.LocalEndPoint!;
            closed.Dispose(); // its port is now closed
            using Socket client = BatchTraffic.Bound(Family.IPv4);
            client.Connect(nobody);
            client.Send(new byte[8]);
            using var receiver = new DatagramBatch(4, 512, mode);
            if (refused == SocketError.TimedOut)
            {
                // The host reports nothing (Wine): the wait ends empty, without an error the OS did not give.
                Assert.Equal(0, receiver.Receive(client, 2000));
                return;
            }
            var e = Assert.Throws<SocketException>(() => receiver.Receive(client, 2000));
            Assert.Equal(refused, e.SocketErrorCode);
            Assert.Equal(0, receiver.Receive(client)); // reported once
        }

        /// <summary>The batch relies on recognising IPv4-mapped keys (<c>::ffff:a.b.c.d</c>) to send them from IPv4 sockets.</summary>
        [Fact]
        public void MappedKeysAreRecognised()
        {
            EndPointKey v4 = EndPointKey.IPv4(10, 1, 2, 3, 5);
            EndPointKey mapped = EndPointKey.FromIPAddress(IPAddress.Parse("::ffff:10.1.2.3"), 5);
            Assert.True(mapped.IsIPv4MappedToIPv6);
            Assert.Equal(mapped, v4.MapToIPv6());
            Assert.Equal(v4, mapped.MapToIPv4());
            Assert.Equal(v4, mapped.Canonical());
            Assert.False(EndPointKey.FromIPAddress(IPAddress.IPv6Loopback, 5).IsIPv4MappedToIPv6);
            Assert.False(EndPointKey.FromIPAddress(IPAddress.Parse("::10.1.2.3"), 5).IsIPv4MappedToIPv6);
            Assert.False(EndPointKey.FromIPAddress(IPAddress.Parse("::ffff:0:10.1.2.3"), 5).IsIPv4MappedToIPv6);
        }

        /// <summary>
        /// The error the runtime's own SendTo reports for destination port 0 from <paramref name="socket"/>: the OS's
        /// refusal, which the batch must record as it is (Linux: EINVAL, asserted; Windows has its own code).
        /// </summary>
        private static SocketError PortZeroError(Socket socket, EndPointKey portZero)
        {
            var e = Assert.Throws<SocketException>(() => socket.SendTo(new byte[8], portZero.ToIPEndPoint()));
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) Assert.Equal(SocketError.InvalidArgument, e.SocketErrorCode);
            return e.SocketErrorCode;
        }

        private static EndPointKey PortZero(EndPointKey key)
        {
            Span<byte> address = stackalloc byte[16];
            int n = key.CopyAddressBytes(address);
            return n == 4 ? EndPointKey.IPv4(address.Slice(0, 4), 0) : EndPointKey.IPv6(address, 0, key.ScopeId);
        }
    }
}
