using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The library's promise, measured: after warm-up, 10 000 receives and 10 000 sends allocate exactly
    /// 0 bytes on the native path (every runtime) and the SocketAddress path (.NET 8+), for IPv4, IPv6 and
    /// a dual-mode socket receiving from an IPv4 sender.
    /// </summary>
    public class AllocationTests : IDisposable
    {
        private const int Calls = 10_000;

        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [MemberData(nameof(Matrix.AllocationFreePathsWithFamilies), MemberType = typeof(Matrix))]
        public void CompatibleReceiveAndSendAllocateNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return; // Paths.TryForce asserted that this runtime refuses it explicitly.
            using var pair = new Loopback(family);
            var buffer = new byte[1500];
            var payload = new byte[64];
            var toServer = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            int last = 0;

            long sendBytes = Allocations.Measure(() =>
            {
                pair.Client.SendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, toServer);
                last = pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
            }, Calls);

            Assert.Equal(payload.Length, last);
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            Assert.Equal(0, sendBytes);
        }

        [Theory]
        [MemberData(nameof(Matrix.AllocationFreePathsWithFamilies), MemberType = typeof(Matrix))]
        public void ReceiveAloneAllocatesNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            var buffer = new byte[1500];
            var payload = new byte[64];
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            // Queue datagrams with the runtime's own Send on the connected client, in rounds small enough for the receive
            // buffer, and meter only the receives (up to three passes, as Allocations.Measure explains). Not the runtime's
            // SendTo: on Mono it serialises the endpoint on every call, and that garbage brought collections into the
            // measurement; under Boehm, whose count is process-wide, what the finalizer thread then allocated was counted
            // too (144 B in one CI run). Send on a connected socket allocates nothing (mono-boehm: no collection over
            // 200 000 of them, where SendTo made 60).
            pair.Client.Connect(pair.ServerTarget);
            const int Round = 500;
            for (int i = 0; i < Round; i++) pair.Client.Send(payload);
            for (int i = 0; i < Round; i++) pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            GC.Collect();
            GC.WaitForPendingFinalizers(); // what earlier tests left to finalizers runs now, not inside the window
            long bytes = long.MaxValue;
            using AllocationWindow window = AllocationWindow.Open(Calls);
            for (int pass = 0; pass < 3 && bytes != 0; pass++)
            {
                long total = 0;
                for (int round = 0; round < (window.Calls + Round - 1) / Round; round++)
                {
                    for (int i = 0; i < Round; i++) pair.Client.Send(payload);
                    long before = window.Read();
                    for (int i = 0; i < Round; i++) pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                    total += window.Read() - before;
                }
                bytes = Math.Min(bytes, total);
            }
            Assert.Equal(0, bytes);
        }

        [Theory]
        [MemberData(nameof(Matrix.AllocationFreePathsWithFamilies), MemberType = typeof(Matrix))]
        public void KeyAndSpanOverloadsAllocateNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            var buffer = new byte[1500];
            var payload = new byte[64];
            EndPointKey server = pair.ServerKey;
            ReceivedDatagram got = default;
            long bytes = Allocations.Measure(() =>
            {
                pair.Client.SendTo_NonAlloc(payload.AsSpan(), server);
                got = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
            }, Calls);
            Assert.Equal(0, bytes);
            Assert.Equal(64, got.Length);
            Assert.Equal(pair.ClientAsSeenByServer, got.RemoteEndPoint);
        }

        [Theory]
        [MemberData(nameof(Matrix.AllocationFreePaths), MemberType = typeof(Matrix))]
        public void EmptyNonBlockingTryReceiveAllocatesNothing(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Server.Blocking = false;
            var buffer = new byte[1500];
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            bool any = false;
            long bytes = Allocations.Measure(() => any |= pair.Server.TryReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from, out _), Calls);
            Assert.False(any);
            Assert.Equal(0, bytes);
        }

        /// <summary>The meter can fail: the runtime's own ReceiveFrom with a plain IPEndPoint allocates.</summary>
        [Fact]
        public void PlainReceiveFromAllocatesSoTheMeterCanFail()
        {
            using var pair = new Loopback(Family.IPv4);
            var buffer = new byte[1500];
            var payload = new byte[64];
            EndPoint any = new IPEndPoint(IPAddress.Any, 0);
            long bytes = Allocations.Measure(() =>
            {
                pair.Client.SendTo(payload, pair.ServerTarget);
                pair.Server.ReceiveFrom(buffer, ref any);
            }, 1000, 50);
            Assert.True(bytes > 1000, "plain ReceiveFrom+SendTo allocated only " + bytes + " B over 1000 calls");
        }
    }
}
