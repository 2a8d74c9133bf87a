using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The policy: an IPv4 sender and the same sender seen IPv4-mapped (::ffff:a.b.c.d) on a dual-mode
    /// socket are one peer, stored and enumerated in IPv4 form.
    /// </summary>
    public class PeerDualModeTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void MappedAndPlainIPv4AreOnePeer(bool addMappedFirst)
        {
            EndPointKey plain = EndPointKey.IPv4(127, 0, 0, 5, 4000);
            EndPointKey mapped = plain.MapToIPv6();
            Assert.NotEqual(plain, mapped);

            var table = new PeerTable<int>(8);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(addMappedFirst ? mapped : plain, 1));
            Assert.Equal(PeerAddResult.Exists, table.TryAdd(addMappedFirst ? plain : mapped, 2));
            Assert.Equal(1, table.Count);
            Assert.True(table.TryGet(plain, out int a));
            Assert.True(table.TryGet(mapped, out int b));
            Assert.Equal(1, a);
            Assert.Equal(1, b);
            Assert.True(table.ContainsKey(mapped));
            foreach (KeyValuePair<EndPointKey, int> peer in table) Assert.Equal(plain, peer.Key); // stored in IPv4 form

            Assert.True(table.Remove(addMappedFirst ? plain : mapped));
            Assert.Equal(0, table.Count);
            Assert.False(table.TryGet(mapped, out _));
        }

        [Fact]
        public void OtherIPv6KeysAreNotFolded()
        {
            var address = new byte[16];
            address[15] = 1; // ::1
            EndPointKey v6 = EndPointKey.IPv6(address, 4000);
            EndPointKey v4 = EndPointKey.IPv4(0, 0, 0, 1, 4000);
            var table = new PeerTable<int>(8);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(v6, 1));
            Assert.Equal(PeerAddResult.Added, table.TryAdd(v4, 2));
            Assert.Equal(2, table.Count);
        }

        [Fact]
        public void PendingSetFollowsTheSamePolicy()
        {
            EndPointKey plain = EndPointKey.IPv4(127, 0, 0, 6, 4001);
            var table = new PeerTable<int>(8, 4);
            Assert.Equal(PendingObserveResult.Added, table.Pending.Observe(plain.MapToIPv6(), 1));
            Assert.Equal(PendingObserveResult.AlreadyPending, table.Pending.Observe(plain, 2));
            Assert.True(table.Pending.TryGet(plain.MapToIPv6(), out PendingPeer peer));
            Assert.Equal(plain, peer.Key);
            Assert.Equal(2, peer.Datagrams);
            Assert.Equal(PeerAddResult.Added, table.Accept(plain, 7));
            Assert.True(table.TryGet(plain.MapToIPv6(), out int value));
            Assert.Equal(7, value);
            Assert.False(table.Pending.Contains(plain));
        }

        /// <summary>
        /// Real traffic: an IPv4 client writes to a dual-mode server, which sees it IPv4-mapped. The table finds the
        /// peer by the client's IPv4 key, and the server answers to the stored (IPv4) key through its dual-mode socket.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ADualModeServerFindsAnIPv4ClientByEitherForm(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.DualMode);
            var buffer = new byte[64];
            var table = new PeerTable<int>(4);

            pair.Client.SendTo_NonAlloc(new byte[] { 42 }.AsSpan(), pair.ServerKey);
            ReceivedDatagram got = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
            Assert.True(got.RemoteEndPoint.IsIPv4MappedToIPv6);
            Assert.Equal(PeerAddResult.Added, table.TryAdd(got.RemoteEndPoint, buffer[0]));

            Assert.True(table.TryGet(pair.ClientKey, out int value));
            Assert.Equal(42, value);
            EndPointKey stored = default;
            foreach (KeyValuePair<EndPointKey, int> peer in table) stored = peer.Key;
            Assert.Equal(pair.ClientKey, stored);

            pair.Server.SendTo_NonAlloc(new byte[] { 43 }.AsSpan(), stored);
            ReceivedDatagram reply = pair.Client.ReceiveFrom_NonAlloc(buffer.AsSpan());
            Assert.Equal(1, reply.Length);
            Assert.Equal(43, buffer[0]);
            Assert.Equal(pair.ServerKey, reply.RemoteEndPoint);
        }
    }
}
