using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// TrySendTo_NonAlloc beyond its contract cells (Sockets/ContractTests.cs): 0 B per call on the Native and SocketAddress
    /// paths, sent or refused for a full buffer, and arguments checked as SendTo_NonAlloc checks them.
    /// </summary>
    public class TrySendTests : IDisposable
    {
        private const int Calls = 10_000;

        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary>The allocation-free paths on IPv4 and in dual mode (why not IPv6: below).</summary>
        public static TheoryData<DatagramPath, Family> SendCases => Matrix.PathsWithFamiliesWhere((p, f) => p != DatagramPath.Managed && f != Family.IPv6);

        // IPv4 and dual mode (an IPv6 socket, the IPv4 key sent IPv4-mapped): both sockaddr forms. Not plain IPv6 as well:
        // under Wine each case takes over a minute, and its send is the dual-mode one's.
        [Theory]
        [MemberData(nameof(SendCases))]
        public void SendingAllocatesNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return; // Paths.TryForce asserted that this runtime refuses it explicitly.
            using var pair = new Loopback(family);
            var payload = new byte[64];
            var buffer = new byte[1500];
            var toServer = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            EndPointKey server = pair.ServerKey;
            int call = 0, sent = 0, received = 0;

            // One send per call, the three overloads in turn, and its receive: under Wine every socket call costs
            // 100-200 us, so the measured loop stays at two calls per iteration.
            long bytes = Allocations.Measure(() =>
            {
                bool ok;
                switch (call++ % 3)
                {
                    case 0: ok = pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), server); break;
                    case 1: ok = pair.Client.TrySendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, server); break;
                    default: ok = pair.Client.TrySendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, toServer); break;
                }
                if (ok) sent++;
                received += pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()).Length;
            }, Calls);

            Assert.Equal(0, bytes);
            Assert.Equal(sent * payload.Length, received);
        }

        [Theory]
        [InlineData(Family.IPv4, false)]
        [InlineData(Family.DualMode, true)]
        public void RefusingForAFullBufferAllocatesNothing(Family family, bool blocking)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(family);
            pair.Client.Blocking = blocking;
            var payload = new byte[64];
            EndPointKey server = pair.ServerKey;
            pair.Client.SendTo_NonAlloc(payload.AsSpan(), server); // binds the client before the stand-in is in
            pair.Server.ReceiveFrom_NonAlloc(new byte[1500].AsSpan());
            int refused = 0;
            using (FullSendBuffer full = FullSendBuffer.Install())
            {
                full.Refusing = true;
                long bytes = Allocations.Measure(() =>
                {
                    if (!pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), server)) refused++;
                }, Calls);
                Assert.Equal(0, bytes);
                Assert.Equal(full.Refused, refused);
            }
            Assert.True(refused >= Calls);
            Assert.Equal(0, pair.Server.Available);
        }

        [Fact]
        public void ArgumentsAreCheckedBeforeAnySend()
        {
            using var pair = new Loopback(Family.IPv4);
            var payload = new byte[8];
            EndPointKey server = pair.ServerKey;
            Assert.Throws<ArgumentNullException>(() => SocketExtensions.TrySendTo_NonAlloc(null!, payload.AsSpan(), server));
            Assert.Throws<ArgumentNullException>(() => pair.Client.TrySendTo_NonAlloc(null!, 0, 0, SocketFlags.None, server));
            Assert.Throws<ArgumentNullException>(() => pair.Client.TrySendTo_NonAlloc(payload, 0, 8, SocketFlags.None, (IPEndPointNonAlloc)null!));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Client.TrySendTo_NonAlloc(payload, 4, 5, SocketFlags.None, server));
            Assert.Throws<ArgumentException>(() => pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), default(EndPointKey)));
            Assert.Throws<ArgumentException>(() => pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), SocketFlags.Peek, server));
            Assert.Throws<ArgumentException>(() => pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), EndPointKey.FromIPAddress(IPAddress.IPv6Loopback, server.Port)));
            pair.Server.Blocking = false;
            Assert.False(pair.Server.Poll(200_000, SelectMode.SelectRead), "a refused call sent something");
        }
    }
}
