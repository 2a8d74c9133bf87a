using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>Bad input and faults: each has one clear outcome, and no datagram is lost to a bad argument.</summary>
    public class FaultTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        private static void AssertStillQueued(Loopback pair, byte marker)
        {
            var buffer = new byte[16];
            ReceivedDatagram d = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
            Assert.Equal(1, d.Length);
            Assert.Equal(marker, buffer[0]);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void BadBuffersThrowBeforeAnyDatagramIsRead(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            pair.Client.SendTo(new byte[] { 7 }, pair.ServerTarget);
            var buffer = new byte[10];
            Assert.Throws<ArgumentNullException>(() => pair.Server.ReceiveFrom_NonAlloc(null!, 0, 1, SocketFlags.None, from));
            Assert.Throws<ArgumentNullException>(() => pair.Server.ReceiveFrom_NonAlloc(null!, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, -1, 1, SocketFlags.None, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 11, 0, SocketFlags.None, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 5, 6, SocketFlags.None, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, -1, SocketFlags.None, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Server.TryReceiveFrom_NonAlloc(buffer, 0, 11, SocketFlags.None, from, out _));
            Assert.Throws<ArgumentNullException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, 1, SocketFlags.None, (IPEndPointNonAlloc)null!));
            Assert.Throws<ArgumentNullException>(() => SocketExtensions.ReceiveFrom_NonAlloc(null!, buffer, from));
            Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, 1, SocketFlags.OutOfBand, from));
            Assert.Throws<ArgumentNullException>(() => pair.Client.SendTo_NonAlloc(null!, 0, 1, SocketFlags.None, from));
            Assert.Throws<ArgumentOutOfRangeException>(() => pair.Client.SendTo_NonAlloc(buffer, 3, 8, SocketFlags.None, from));
            Assert.Throws<ArgumentNullException>(() => pair.Client.SendTo_NonAlloc(buffer, 0, 1, SocketFlags.None, (IPEndPointNonAlloc)null!));
            Assert.Throws<ArgumentException>(() => pair.Client.SendTo_NonAlloc(buffer.AsSpan(), default(EndPointKey)));
            Assert.Throws<ArgumentException>(() => pair.Client.SendTo_NonAlloc(buffer.AsSpan(), SocketFlags.Peek, pair.ServerKey));
            AssertStillQueued(pair, 7);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AnEndpointOfTheWrongFamilyIsRefusedBeforeTheDatagramIsRead(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            var buffer = new byte[16];
            using (var pair = new Loopback(Family.IPv4))
            {
                pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
                var v6 = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
                var e = Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, v6));
                Assert.Contains("InterNetworkV6", e.Message);
                AssertStillQueued(pair, 1);
                // An IPv6 destination cannot be reached from an IPv4 socket.
                Assert.Throws<ArgumentException>(() => pair.Client.SendTo_NonAlloc(buffer, 0, 1, SocketFlags.None, v6));
            }
            using (var pair = new Loopback(Family.IPv6))
            {
                pair.Client.SendTo(new byte[] { 2 }, pair.ServerTarget);
                var v4 = new IPEndPointNonAlloc(IPAddress.Any, 0);
                Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, v4)); // IPv6-only socket
                AssertStillQueued(pair, 2);
            }
            using (var pair = new Loopback(Family.DualMode))
            {
                pair.Client.SendTo(new byte[] { 3 }, pair.ServerTarget);
                var v4 = new IPEndPointNonAlloc(IPAddress.Any, 0); // accepted: dual mode gives IPv4 senders IPv4-mapped
                Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, v4));
                Assert.Equal(pair.ClientAsSeenByServer, v4.CurrentKey);
                Assert.True(v4.CurrentKey.IsIPv4MappedToIPv6);
            }
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void LocalAndRemoteEndPointStayCorrectAfterManyReceives(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Server.Connect(pair.ClientEndPoint); // a connected server socket has a RemoteEndPoint too
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            for (int i = 0; i < 50; i++)
            {
                pair.Client.SendTo(buffer, pair.ServerTarget);
                pair.Server.ReceiveFrom_NonAlloc(buffer, from);
            }
            Assert.Equal(pair.ServerEndPoint, pair.Server.LocalEndPoint);
            Assert.IsNotType<IPEndPointNonAlloc>(pair.Server.LocalEndPoint);
            Assert.Equal(pair.ClientEndPoint, pair.Server.RemoteEndPoint);
            // ...and reading them did not disturb the endpoint received into.
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
        }

        /// <summary>Every path on IPv4; all but Managed also on IPv6.</summary>
        public static TheoryData<DatagramPath, Family> CutCases => Matrix.PathsWithFamiliesWhere((p, f) => f == Family.IPv4 || (f == Family.IPv6 && p != DatagramPath.Managed));

        [Theory]
        [MemberData(nameof(CutCases))]
        public void ALongDatagramIsCutAndSaysSo(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            var payload = new byte[100];
            for (int i = 0; i < payload.Length; i++) payload[i] = (byte)i;
            var small = new byte[40];

            pair.Client.SendTo(payload, pair.ServerTarget);
            ReceivedDatagram d = pair.Server.ReceiveFrom_NonAlloc(small.AsSpan());
            Assert.True(d.Truncated);
            Assert.Equal(40, d.Length);
            Assert.Equal(payload.AsSpan(0, 40).ToArray(), small);
            Assert.Equal(pair.ClientAsSeenByServer, d.RemoteEndPoint);

            pair.Client.SendTo(payload, pair.ServerTarget);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(small, 0, small.Length, SocketFlags.None, from));
            Assert.Equal(SocketError.MessageSize, e.SocketErrorCode);
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);

            pair.Client.SendTo(payload, pair.ServerTarget);
            Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
            Assert.True(pair.Server.TryReceiveFrom_NonAlloc(small.AsSpan(), out ReceivedDatagram t));
            Assert.True(t.Truncated);
            Assert.Equal(40, t.Length);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AZeroLengthDatagramIsZeroBytesFromTheRightSender(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Client.SendTo(new byte[0], pair.ServerTarget);
            pair.Client.SendTo(new byte[] { 9 }, pair.ServerTarget);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            Assert.Equal(0, pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, from)); // and the next one is not swallowed
            Assert.Equal(9, buffer[0]);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ADisposedSocketThrowsObjectDisposed(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            var pair = new Loopback(Family.IPv4);
            IPEndPointNonAlloc to = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            pair.Dispose();
            var buffer = new byte[16];
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, 16, SocketFlags.None, to));
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()));
            Assert.Throws<ObjectDisposedException>(() => pair.Client.SendTo_NonAlloc(buffer, 0, 16, SocketFlags.None, to));
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AnEmptyNonBlockingSocketGivesNothingWithoutAnException(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Server.Blocking = false;
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            Assert.False(pair.Server.TryReceiveFrom_NonAlloc(buffer, 0, 16, SocketFlags.None, from, out _));
            Assert.False(pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
            // The compatible method keeps the runtime's contract: WouldBlock.
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            Assert.Equal(SocketError.WouldBlock, e.SocketErrorCode);
            // A blocking socket's Try form does not block either.
            pair.Server.Blocking = true;
            var watch = Stopwatch.StartNew();
            Assert.False(pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
            Assert.True(watch.ElapsedMilliseconds < 2000);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ABlockingReceiveHonoursTheReceiveTimeout(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4, receiveTimeoutMs: 200);
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()));
            Assert.True(e.SocketErrorCode == SocketError.TimedOut || e.SocketErrorCode == SocketError.WouldBlock, e.SocketErrorCode.ToString());
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ABlockingReceiveWaitsForADatagramThatComesLater(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4, receiveTimeoutMs: 5000);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            for (int form = 0; form < 2; form++)
            {
                var late = new Thread(() =>
                {
                    Thread.Sleep(150);
                    pair.Client.SendTo(new byte[] { (byte)(40 + form), 2 }, pair.ServerTarget);
                });
                late.Start();
                var watch = Stopwatch.StartNew();
                int length;
                EndPointKey sender;
                if (form == 0)
                {
                    length = pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                    sender = from.CurrentKey;
                }
                else
                {
                    ReceivedDatagram datagram = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
                    length = datagram.Length;
                    sender = datagram.RemoteEndPoint;
                }
                Assert.True(late.Join(5000));
                Assert.Equal(2, length);
                Assert.Equal(40 + form, buffer[0]);
                Assert.Equal(pair.ClientAsSeenByServer, sender);
                Assert.True(watch.ElapsedMilliseconds >= 100, "returned after " + watch.ElapsedMilliseconds + " ms, before the datagram was sent");
            }
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void TheChecksStillHoldAfterTheEndpointHasReceivedOnTheSocket(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            pair.Client.SendTo(new byte[] { 2 }, pair.ServerTarget);
            // A bad flag, and an endpoint turned IPv6, on the socket it has just received on: refused before reading.
            Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.OutOfBand, from));
            from.Set(EndPointKey.FromIPAddress(IPAddress.IPv6Loopback, 5));
            Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            from.Set(EndPointKey.IPv4(127, 0, 0, 1, 5));
            from.Address = IPAddress.IPv6Loopback; // the endpoint's family changed through its base class's setter
            Assert.Throws<ArgumentException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            Assert.Throws<ArgumentNullException>(() => ((Socket)null!).ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            AssertStillQueued(pair, 2);
            // Back to IPv4, it receives again; on another socket the checks run for that one.
            from.Set(EndPointKey.IPv4(127, 0, 0, 1, 5));
            using Socket v6 = Loopback.Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false);
            Assert.Throws<ArgumentException>(() => v6.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            pair.Client.SendTo(new byte[] { 3 }, pair.ServerTarget);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            Assert.Equal(3, buffer[0]);
            // The socket it has passed the checks with, disposed: both forms say so.
            pair.Server.Dispose();
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
        }

        /// <summary>Every path on IPv4; Native also on IPv6.</summary>
        public static TheoryData<DatagramPath, Family> TooLongCases => Matrix.PathsWithFamiliesWhere((p, f) => f == Family.IPv4 || (f == Family.IPv6 && p == DatagramPath.Native));

        [Theory]
        [MemberData(nameof(TooLongCases))]
        public void ADatagramTooLongToSendIsRefusedWithMessageSize(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            var huge = new byte[70_000]; // more than a UDP datagram can carry
            var to = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            var e1 = Assert.Throws<SocketException>(() => pair.Client.SendTo_NonAlloc(huge, 0, huge.Length, SocketFlags.None, to));
            Assert.Equal(SocketError.MessageSize, e1.SocketErrorCode);
            var e2 = Assert.Throws<SocketException>(() => pair.Client.SendTo_NonAlloc(huge.AsSpan(), pair.ServerKey));
            Assert.Equal(SocketError.MessageSize, e2.SocketErrorCode);
            // The socket still works afterwards.
            Assert.Equal(3, pair.Client.SendTo_NonAlloc(new byte[] { 1, 2, 3 }.AsSpan(), pair.ServerKey));
            Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()).Length);
        }

        /// <summary>Every path on IPv4; Native also in dual mode.</summary>
        public static TheoryData<DatagramPath, Family> PeekCases => Matrix.PathsWithFamiliesWhere((p, f) => f == Family.IPv4 || (f == Family.DualMode && p == DatagramPath.Native));

        [Theory]
        [MemberData(nameof(PeekCases))]
        public void PeekLeavesTheDatagramQueued(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            bool hostPeeks = RuntimePeekLeavesTheDatagram(pair);
            pair.Client.SendTo(new byte[] { 9, 8, 7 }, pair.ServerTarget);
            Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.Peek, from));
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            if (path == DatagramPath.Managed && !hostPeeks)
            {
                // Wine 8: the runtime's own ReceiveFrom(byte[], ..., SocketFlags.Peek, ref EndPoint) takes the datagram
                // off the queue, and the managed path is that call: the peek above got it, and it is gone.
                Assert.True(Runtime.IsWine, "the runtime's own Peek took the datagram on " + Runtime.Describe());
                Assert.False(pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
                return;
            }
            ReceivedDatagram peeked = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan(4), SocketFlags.Peek);
            Assert.Equal(3, peeked.Length);
            Assert.Equal(pair.ClientAsSeenByServer, peeked.RemoteEndPoint);
            Array.Clear(buffer, 0, buffer.Length);
            Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            Assert.Equal(new byte[] { 9, 8, 7 }, buffer.AsSpan(0, 3).ToArray());
            Assert.False(pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
        }

        /// <summary>Whether the runtime's own ReceiveFrom with SocketFlags.Peek leaves a datagram queued on this host.</summary>
        private static bool RuntimePeekLeavesTheDatagram(Loopback pair)
        {
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            EndPoint sender = pair.NewServerEndPoint().DeepCopyIPEndPoint();
            Assert.Equal(1, pair.Server.ReceiveFrom(new byte[16], 0, 16, SocketFlags.Peek, ref sender));
            if (!pair.Server.Poll(500_000, SelectMode.SelectRead)) return false;
            Assert.Equal(1, pair.Server.ReceiveFrom(new byte[16], ref sender));
            return true;
        }

        [Fact]
        public void DisposingASocketWakesANativeBlockingReceive()
        {
            Assert.True(Paths.TryForce(DatagramPath.Native));
            var pair = new Loopback(Family.IPv4, receiveTimeoutMs: 0);
            DisposeDuringWait.AssertEndsWithObjectDisposed(() => pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()), pair.Dispose);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void APortNobodyListensOnIsReportedAsTheRuntimeReportsIt(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            SocketError refused = Loopback.ClosedPortError(); // ConnectionRefused on Linux, ConnectionReset on Windows
            IPEndPoint closed = Loopback.ClosedPort(Family.IPv4);
            using Socket client = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            client.ReceiveTimeout = 2000;
            // A connected datagram socket hears the ICMP "port unreachable" on its next call (Wine: it hears nothing,
            // and the receive ends at its ReceiveTimeout).
            client.Connect(closed);
            client.SendTo_NonAlloc(new byte[] { 1 }.AsSpan(), EndPointKey.IPv4(127, 0, 0, 1, closed.Port));
            var e = Assert.Throws<SocketException>(() => client.ReceiveFrom_NonAlloc(new byte[16].AsSpan()));
            Assert.Equal(refused, e.SocketErrorCode);
        }

        [Fact]
        public void SocketsTheLibraryCannotServeAreRefused()
        {
            var buffer = new byte[16];
            using (var tcp = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
                Assert.Throws<ArgumentException>(() => tcp.ReceiveFrom_NonAlloc(buffer.AsSpan()));
            using (var unbound = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp))
                Assert.Throws<InvalidOperationException>(() => unbound.ReceiveFrom_NonAlloc(buffer.AsSpan()));
        }

        [Fact]
        public void AnIPv4MappedDestinationIsSentAsIPv4FromAnIPv4Socket()
        {
            using var pair = new Loopback(Family.IPv4);
            Assert.Equal(1, pair.Client.SendTo_NonAlloc(new byte[] { 5 }.AsSpan(), pair.ServerKey.MapToIPv6()));
            AssertStillQueued(pair, 5);
        }

        [Fact]
        public void ThePathIsObservableAndForceable()
        {
            Assert.Equal(DatagramPath.Native, DatagramPathSettings.Default); // Linux and Windows, with P/Invoke, on both runtimes
            Assert.Equal(DatagramPathSettings.Default, DatagramPathSettings.Active);
            DatagramPathSettings.Force(DatagramPath.Managed);
            Assert.Equal(DatagramPath.Managed, DatagramPathSettings.Active);
            DatagramPathSettings.Reset();
            Assert.Equal(DatagramPath.Native, DatagramPathSettings.Active);
            Assert.Equal(!LibraryBuild.IsNetStandard, DatagramPathSettings.IsAvailable(DatagramPath.SocketAddress)); // the net8.0 build's path
            if (LibraryBuild.IsNetStandard) Assert.Throws<PlatformNotSupportedException>(() => DatagramPathSettings.Force(DatagramPath.SocketAddress));
            Assert.Throws<PlatformNotSupportedException>(() => DatagramPathSettings.Force((DatagramPath)99));
        }
    }
}
