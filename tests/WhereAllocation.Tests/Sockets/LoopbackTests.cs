using System;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Every overload, on every path this runtime has, over IPv4, IPv6 and dual mode: datagrams carry a
    /// sequence number and a checksum, and the test checks that none is lost, reordered, altered or
    /// attributed to the wrong sender.
    /// </summary>
    public class LoopbackTests : IDisposable
    {
        private const int Count = 300;

        public void Dispose() => DatagramPathSettings.Reset();

        public enum Overload
        {
            CompatOffsetSize,
            CompatWholeBuffer,
            CompatTry,
            KeyArray,
            Span,
            SpanTry,
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]
        public void EveryOverloadDeliversEveryDatagramIntactAndInOrder(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            foreach (Overload overload in (Overload[])Enum.GetValues(typeof(Overload)))
            {
                using var pair = new Loopback(family);
                RoundTrip(pair, overload);
            }
        }

        private static void RoundTrip(Loopback pair, Overload overload)
        {
            var send = new byte[1500];
            var receive = new byte[1600];
            var toServer = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            for (uint seq = 0; seq < Count; seq++)
            {
                int length = TestDatagram.Write(send, seq, (int)(seq * 37 % 1400));
                // Alternate the two send forms so both are covered by every receive form.
                int sent = seq % 2 == 0
                    ? pair.Client.SendTo_NonAlloc(send, 0, length, SocketFlags.None, toServer)
                    : pair.Client.SendTo_NonAlloc(send.AsSpan(0, length), pair.ServerKey);
                Assert.Equal(length, sent);

                int offset = (int)(seq % 3); // the offset overloads must respect it
                int got;
                EndPointKey sender;
                switch (overload)
                {
                    case Overload.CompatOffsetSize:
                        got = pair.Server.ReceiveFrom_NonAlloc(receive, offset, receive.Length - offset, SocketFlags.None, from);
                        sender = from.CurrentKey;
                        break;
                    case Overload.CompatWholeBuffer:
                        offset = 0;
                        got = pair.Server.ReceiveFrom_NonAlloc(receive, from);
                        sender = from.CurrentKey;
                        break;
                    case Overload.CompatTry:
                        Assert.True(Poll(pair.Server));
                        Assert.True(pair.Server.TryReceiveFrom_NonAlloc(receive, offset, receive.Length - offset, SocketFlags.None, from, out ReceivedDatagram d1));
                        Assert.False(d1.Truncated);
                        Assert.Equal(d1.RemoteEndPoint, from.CurrentKey);
                        got = d1.Length;
                        sender = from.CurrentKey;
                        break;
                    case Overload.KeyArray:
                        got = pair.Server.ReceiveFrom_NonAlloc(receive, offset, receive.Length - offset, SocketFlags.None, out sender);
                        break;
                    case Overload.Span:
                        ReceivedDatagram d2 = pair.Server.ReceiveFrom_NonAlloc(receive.AsSpan(offset));
                        Assert.False(d2.Truncated);
                        got = d2.Length;
                        sender = d2.RemoteEndPoint;
                        break;
                    default:
                        Assert.True(Poll(pair.Server));
                        Assert.True(pair.Server.TryReceiveFrom_NonAlloc(receive.AsSpan(offset), out ReceivedDatagram d3));
                        got = d3.Length;
                        sender = d3.RemoteEndPoint;
                        break;
                }

                Assert.Equal(length, got);
                Assert.True(TestDatagram.Check(receive.AsSpan(offset, got), out uint receivedSeq), overload + ": datagram " + seq + " altered");
                Assert.Equal(seq, receivedSeq);
                Assert.Equal(pair.ClientAsSeenByServer, sender);
            }
        }

        /// <summary>Waits (bounded) until the socket has a datagram, for the non-blocking Try forms.</summary>
        private static bool Poll(Socket socket) => socket.Poll(2_000_000, SelectMode.SelectRead);

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void TheServerAnswersTheRealSender(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.DualMode);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[64];
            pair.Client.SendTo(new byte[] { 42 }, pair.ServerTarget);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            // Answer through the received endpoint: an IPv4-mapped sender on a dual-mode socket.
            Assert.Equal(2, pair.Server.SendTo_NonAlloc(new byte[] { 43, 44 }, 0, 2, SocketFlags.None, from));
            var back = new IPEndPointNonAlloc(System.Net.IPAddress.Any, 0);
            Assert.Equal(2, pair.Client.ReceiveFrom_NonAlloc(buffer, back));
            Assert.Equal(43, buffer[0]);
            Assert.Equal(pair.ServerTarget, back.DeepCopyIPEndPoint());
        }
    }
}
