using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Windows' best-known UDP trap: after a send to a closed port, the next receive on the socket fails with
    /// WSAECONNRESET. An unconnected (server) socket must keep receiving from its other peers; a connected one
    /// must hear about its peer. Linux and Wine never report this to unconnected sockets, so the native path is
    /// tested through <see cref="WindowsLikeResets"/>, which adds the report at the OS boundary.
    /// </summary>
    public class ResetReportTests : IDisposable
    {
        public void Dispose()
        {
            OsSocketCalls.InUse = null!;
            DatagramPathSettings.Reset();
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void AnUnconnectedSocketReceivesFromItsOtherPeersThroughReports(Family family)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(family);
            using WindowsLikeResets resets = WindowsLikeResets.Install();
            var buffer = new byte[64];
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            using var batch = new DatagramBatch(8, 64, DatagramBatchMode.SingleCalls);
            for (int form = 0; form < 6; form++)
            {
                resets.QueueResets(2); // two earlier sends met closed ports
                pair.Client.SendTo(new byte[] { (byte)form }, pair.ServerTarget);
                Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
                EndPointKey sender;
                switch (form)
                {
                    case 0:
                        Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
                        sender = from.CurrentKey;
                        break;
                    case 1:
                        Assert.True(pair.Server.TryReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from, out _));
                        sender = from.CurrentKey;
                        break;
                    case 2:
                        sender = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()).RemoteEndPoint;
                        break;
                    case 3:
                        Assert.True(pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out ReceivedDatagram d));
                        sender = d.RemoteEndPoint;
                        break;
                    case 4:
                        Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out sender));
                        break;
                    default:
                        Assert.Equal(1, batch.Receive(pair.Server, 2000));
                        batch.GetDatagram(0, out sender).CopyTo(buffer);
                        break;
                }
                Assert.Equal((byte)form, buffer[0]);
                Assert.Equal(pair.ClientAsSeenByServer, sender);
                Assert.Equal(0, resets.Pending); // both reports were consumed on the way
            }
        }

        [Fact]
        public void ReportsAloneLeaveATryReceiveWithNothingAndNoError()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4);
            using WindowsLikeResets resets = WindowsLikeResets.Install();
            resets.QueueResets(3);
            Assert.False(pair.Server.TryReceiveFrom_NonAlloc(new byte[16].AsSpan(), out _));
            Assert.Equal(0, resets.Pending);
        }

        [Fact]
        public void AConnectedSocketHearsAboutItsPeer()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Server.Connect(pair.ClientEndPoint);
            using WindowsLikeResets resets = WindowsLikeResets.Install();
            resets.QueueResets(1);
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()));
            Assert.Equal(SocketError.ConnectionReset, e.SocketErrorCode);
            // Reported once: the next datagram comes through.
            pair.Client.SendTo(new byte[] { 5 }, pair.ServerTarget);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()).Length);
        }

        [Fact]
        public void HardenTurnsTheReportsOffWhereTheOsHasThem()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using WindowsLikeResets resets = WindowsLikeResets.Install();
            using Socket socket = DatagramSockets.Create(AddressFamily.InterNetwork);
            Assert.True(resets.ReportsTurnedOff);
        }

        [Theory]
        [InlineData(SocketError.ConnectionReset, false, true)]
        [InlineData(SocketError.NetworkReset, false, true)]
        [InlineData(SocketError.ConnectionReset, true, false)]
        [InlineData(SocketError.ConnectionRefused, false, false)]
        [InlineData(SocketError.MessageSize, false, false)]
        public void TheRuntimePathsSkipOnlyResetReportsOnUnconnectedSockets(SocketError error, bool connected, bool skipped)
        {
            // The runtime's own receive cannot be made to fail this way on Linux: its decision is tested alone.
            using var pair = new Loopback(Family.IPv4);
            if (connected) pair.Server.Connect(pair.ClientEndPoint);
            Assert.Equal(skipped, RuntimeReceive.IsResetReportToSkip(pair.Server, new SocketException((int)error)));
            pair.Server.Dispose();
            Assert.Throws<ObjectDisposedException>(() => RuntimeReceive.IsResetReportToSkip(pair.Server, new SocketException((int)error)));
        }
    }
}
