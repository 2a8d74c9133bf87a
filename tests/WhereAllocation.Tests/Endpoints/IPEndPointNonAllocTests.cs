using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    public class IPEndPointNonAllocTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        [Fact]
        public void ConstructorsDescribeTheGivenEndpoint()
        {
            var fromLong = new IPEndPointNonAlloc(0x0100007F, 7777); // 127.0.0.1 in the legacy little-endian long
            Assert.Equal(EndPointKey.IPv4(127, 0, 0, 1, 7777), fromLong.CurrentKey);
            Assert.Equal(IPAddress.Loopback, fromLong.Address);
            var fromAddress = new IPEndPointNonAlloc(IPAddress.IPv6Loopback, 7778);
            Assert.Equal(AddressFamily.InterNetworkV6, fromAddress.AddressFamily);
            Assert.Equal(7778, fromAddress.Port);
            Assert.Equal("[::1]:7778", fromAddress.ToString());
            Assert.Same(fromAddress.temp, fromAddress.Serialize());
            Assert.Equal(new IPEndPoint(IPAddress.IPv6Loopback, 7778).Serialize(), fromAddress.temp);
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void AfterAReceiveEveryMemberNamesTheSender(Family family)
        {
            using var pair = new Loopback(family);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[100];
            pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
            Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(buffer, from));

            IPEndPoint sender = pair.ClientAsSeenByServer.ToIPEndPoint();
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            Assert.Equal(sender.Address, from.Address);
            Assert.Equal(sender.Port, from.Port);
            Assert.Equal(sender.AddressFamily, from.AddressFamily);
            Assert.Equal(sender.ToString(), from.ToString());
            Assert.True(from.Equals(sender));
            Assert.True(from.Equals((object)pair.ClientAsSeenByServer.ToIPEndPoint()));
            Assert.Equal(sender.Serialize(), from.temp);
            Assert.Equal(pair.ClientAsSeenByServer, EndPointKey.FromSocketAddress(from.temp));
            Assert.Equal(pair.ClientAsSeenByServer.GetHashCode(), from.GetHashCode());
        }

        [Fact]
        public void TempHashIsStableForOneSenderAndFollowsAChangeOfSender()
        {
            using var pair = new Loopback(Family.IPv4);
            using Socket other = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            pair.Client.SendTo(buffer, pair.ServerTarget);
            pair.Server.ReceiveFrom_NonAlloc(buffer, from);
            int first = from.temp.GetHashCode();
            pair.Client.SendTo(buffer, pair.ServerTarget);
            pair.Server.ReceiveFrom_NonAlloc(buffer, from);
            Assert.Equal(first, from.temp.GetHashCode());
            other.SendTo(buffer, pair.ServerTarget);
            pair.Server.ReceiveFrom_NonAlloc(buffer, from);
            Assert.Equal(EndPointKey.FromIPEndPoint((IPEndPoint)other.LocalEndPoint!), EndPointKey.FromSocketAddress(from.temp));
            Assert.NotEqual(first, from.temp.GetHashCode());
        }

        [Fact]
        public void DeepCopyIsIndependentAndAllocatesOnlyTheEndpoint()
        {
            using var pair = new Loopback(Family.IPv4);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            pair.Client.SendTo(buffer, pair.ServerTarget);
            pair.Server.ReceiveFrom_NonAlloc(buffer, from);
            IPEndPoint copy = from.DeepCopyIPEndPoint();
            Assert.Equal(pair.ClientEndPoint, copy);
            Assert.IsNotType<IPEndPointNonAlloc>(copy);
            from.Set(EndPointKey.IPv4(10, 0, 0, 1, 1)); // the next "receive" must not change the copy
            Assert.Equal(pair.ClientEndPoint, copy);

            // Exactly what building one IPEndPoint with its own IPAddress costs on this runtime.
            long reference = Allocations.Measure(() => new IPEndPoint(new IPAddress(0x0100007FL), 1), 1000, 100);
            long deepCopy = Allocations.Measure(() => from.DeepCopyIPEndPoint(), 1000, 100);
            Assert.True(reference > 0);
            Allocations.AssertSameCost(reference, deepCopy);
        }

        /// <summary>The old class answered Create() with itself, so Mono's LocalEndPoint (built through the last endpoint given to ReceiveFrom) overwrote the sender.</summary>
        [Fact]
        public void CreateMakesANewEndpointAndLeavesTheSenderAlone()
        {
            var endPoint = new IPEndPointNonAlloc(IPAddress.Parse("192.0.2.1"), 1000);
            SocketAddress other = new IPEndPoint(IPAddress.Parse("198.51.100.7"), 2000).Serialize();
            EndPoint created = endPoint.Create(other);
            Assert.NotSame(endPoint, created);
            Assert.Equal(new IPEndPoint(IPAddress.Parse("198.51.100.7"), 2000), created);
            Assert.Equal(EndPointKey.IPv4(192, 0, 2, 1, 1000), endPoint.CurrentKey);
        }

        [Fact]
        public void SettingAddressUpdatesTheKey()
        {
            var endPoint = new IPEndPointNonAlloc(IPAddress.Loopback, 5);
            endPoint.Address = IPAddress.Parse("::1");
            Assert.Equal(AddressFamily.InterNetworkV6, endPoint.AddressFamily);
            Assert.Equal(EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.IPv6Loopback, 5)), endPoint.CurrentKey);
            Assert.Throws<ArgumentNullException>(() => endPoint.Address = null!);
            Assert.Throws<ArgumentException>(() => endPoint.Set(default));
        }
    }
}
