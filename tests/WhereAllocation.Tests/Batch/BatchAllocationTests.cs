using System;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// 0 managed bytes per batch call after warm-up, on CoreCLR and Mono: fill, send, receive (waiting and
    /// not) and read every slot, 10 000 times, for IPv4, IPv6 and dual mode, in both modes.
    /// </summary>
    public class BatchAllocationTests : IDisposable
    {
        private const int Calls = 10_000;
        private const int PerCall = 8;

        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [MemberData(nameof(Matrix.BatchModesWithFamilies), MemberType = typeof(Matrix))]
        public void BatchCallsAllocateNothing(DatagramBatchMode mode, Family family)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var pair = new Loopback(family);
            long bytes = MeasureRoundTrips(pair, mode, out long datagrams);
            Assert.True(datagrams > (long)Calls * PerCall, "only " + datagrams + " datagrams went round");
            Assert.Equal(0, bytes);
        }

        /// <summary>The loop of single calls on .NET 8's SocketAddress path is allocation free too (Mono has no such path).</summary>
        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void SingleCallsOnTheSocketAddressPathAllocateNothing(Family family)
        {
            if (!Paths.TryForce(DatagramPath.SocketAddress)) return; // asserted that Mono refuses it explicitly
            using var pair = new Loopback(family);
            long bytes = MeasureRoundTrips(pair, DatagramBatchMode.SingleCalls, out long datagrams);
            Assert.True(datagrams > (long)Calls * PerCall);
            Assert.Equal(0, bytes);
        }

        /// <summary>The meter can fail here too: on the managed fallback path the same loop allocates.</summary>
        [Fact]
        public void SingleCallsOnTheManagedPathAllocateSoTheMeterCanFail()
        {
            Assert.True(Paths.TryForce(DatagramPath.Managed));
            using var pair = new Loopback(Family.IPv4);
            long bytes = MeasureRoundTrips(pair, DatagramBatchMode.SingleCalls, out _);
            Assert.True(bytes >= Calls, "the managed path allocated only " + bytes + " B over " + Calls + " calls");
        }

        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void EmptyReceiveAllocatesNothing(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using Socket socket = BatchTraffic.Bound(Family.IPv4);
            using var batch = new DatagramBatch(64, 1500, mode);
            int any = 0;
            long bytes = Allocations.Measure(() => any += batch.Receive(socket), Calls);
            Assert.Equal(0, any);
            Assert.Equal(0, bytes);
        }

        private static long MeasureRoundTrips(Loopback pair, DatagramBatchMode mode, out long datagrams)
        {
            using var sender = new DatagramBatch(PerCall, 256, mode);
            using var receiver = new DatagramBatch(PerCall, 256, mode);
            var payload = new byte[64];
            EndPointKey server = pair.ServerKey;
            EndPointKey expected = pair.ClientAsSeenByServer;
            long total = 0;
            int wrong = 0;
            long bytes = Allocations.Measure(() =>
            {
                sender.Clear();
                for (int k = 0; k < PerCall; k++) sender.TryAdd(payload, server);
                sender.Send(pair.Client);
                int got = 0;
                while (got < PerCall)
                {
                    int n = got == 0 ? receiver.Receive(pair.Server, 1000) : receiver.Receive(pair.Server);
                    if (n == 0) break;
                    for (int i = 0; i < n; i++)
                    {
                        if (receiver.GetDatagram(i, out EndPointKey from).Length != payload.Length || from != expected) wrong++;
                    }
                    got += n;
                }
                total += got;
            }, Calls);
            Assert.Equal(0, wrong);
            datagrams = total;
            return bytes;
        }
    }
}
