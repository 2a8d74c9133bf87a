using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// One <see cref="IPEndPointNonAlloc"/> receiving from several senders in turn. A receive may skip the
    /// rewrite when the sender repeats (the native path compares the OS's sockaddr bytes with the last ones),
    /// so these tests change the sender, and change the endpoint behind the receive's back, and check after
    /// every datagram that the key, <c>temp</c>, the hash, the port and the family all name the real sender.
    /// </summary>
    public class SenderChangeTests : IDisposable
    {
        public void Dispose() => DatagramPaths.Reset();

        // Which client sends each datagram: repeats, returns and changes, in one fixed order.
        private static readonly int[] Order = { 0, 0, 1, 0, 2, 2, 2, 1, 1, 0, 2, 0, 1, 2, 0, 0 };

        [Theory]
        [InlineData(DatagramPath.Native, Family.IPv4)]
        [InlineData(DatagramPath.Native, Family.IPv6)]
        [InlineData(DatagramPath.Native, Family.DualMode)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv4)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv6)]
        [InlineData(DatagramPath.SocketAddress, Family.DualMode)]
        [InlineData(DatagramPath.Managed, Family.IPv4)]
        [InlineData(DatagramPath.Managed, Family.IPv6)]
        [InlineData(DatagramPath.Managed, Family.DualMode)]
        public void EveryDatagramIsAttributedToItsOwnSender(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var senders = new Senders(family);
            IPEndPointNonAlloc from = senders.NewServerEndPoint();
            var buffer = new byte[64];
            for (int round = 0; round < 3; round++)
            {
                foreach (int client in Order)
                {
                    senders.Send(client, (byte)client);
                    bool useTry = round == 1;
                    int length;
                    if (useTry)
                    {
                        Assert.True(senders.Server.Poll(2_000_000, SelectMode.SelectRead));
                        Assert.True(senders.Server.TryReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from, out ReceivedDatagram datagram));
                        Assert.Equal(from.CurrentKey, datagram.RemoteEndPoint);
                        length = datagram.Length;
                    }
                    else
                    {
                        length = senders.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                    }
                    Assert.Equal(1, length);
                    Assert.Equal((byte)client, buffer[0]);
                    senders.AssertNames(from, client);
                }
            }
        }

        [Theory]
        [InlineData(DatagramPath.Native, Family.IPv4)]
        [InlineData(DatagramPath.Native, Family.IPv6)]
        [InlineData(DatagramPath.Native, Family.DualMode)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv4)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv6)]
        [InlineData(DatagramPath.Managed, Family.IPv4)]
        [InlineData(DatagramPath.Managed, Family.IPv6)]
        public void AReceiveFromTheSameSenderUndoesChangesMadeInBetween(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var senders = new Senders(family);
            IPEndPointNonAlloc from = senders.NewServerEndPoint();
            var buffer = new byte[64];
            EndPointKey elsewhere = family == Family.IPv4 ? EndPointKey.IPv4(10, 1, 2, 3, 4567) : EndPointKey.FromIPAddress(IPAddress.Parse("fe80::1234"), 4567);
            var changes = new Action[]
            {
                () => from.Set(elsewhere),
                () => from.Set(senders.Keys[1]),
                () => from.Address = family == Family.IPv4 ? IPAddress.Parse("10.9.8.7") : IPAddress.Parse("2001:db8::7"),
                () => from.temp = new IPEndPoint(IPAddress.Parse("10.0.0.1"), 1).Serialize(),
                () => from.temp = new IPEndPoint(IPAddress.Parse("2001:db8::1"), 1).Serialize(),
                () => from.Create(from.temp), // answers with a new endpoint; this one must not change
            };
            foreach (Action change in changes)
            {
                senders.Send(0, 7);
                Assert.Equal(1, senders.Server.ReceiveFrom_NonAlloc(buffer, from));
                senders.AssertNames(from, 0);
                change();
                senders.Send(0, 8);
                Assert.Equal(1, senders.Server.ReceiveFrom_NonAlloc(buffer, from));
                Assert.Equal(8, buffer[0]);
                senders.AssertNames(from, 0);
            }
        }

        /// <summary>
        /// A receiving server and three clients, each on its own port (and, for IPv4, its own address where the
        /// host sends from it: not under Wine, see <see cref="Loopback.SourceOf"/>).
        /// </summary>
        private sealed class Senders : IDisposable
        {
            private readonly Socket[] _clients = new Socket[3];
            private readonly IPEndPoint _target;
            private readonly Family _family;

            public Senders(Family family)
            {
                _family = family;
                switch (family)
                {
                    case Family.IPv4:
                        Server = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                        for (int i = 0; i < _clients.Length; i++)
                            _clients[i] = Loopback.Bound(AddressFamily.InterNetwork, new IPAddress(new byte[] { 127, 0, 0, (byte)(1 + i) }), false);
                        break;
                    case Family.IPv6:
                        Server = Loopback.Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false);
                        for (int i = 0; i < _clients.Length; i++)
                            _clients[i] = Loopback.Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false);
                        break;
                    default:
                        Server = Loopback.Bound(AddressFamily.InterNetworkV6, Loopback.MappedLoopback, true);
                        for (int i = 0; i < _clients.Length; i++)
                            _clients[i] = Loopback.Bound(AddressFamily.InterNetwork, new IPAddress(new byte[] { 127, 0, 0, (byte)(1 + i) }), false);
                        break;
                }
                Server.ReceiveTimeout = 5000;
                int port = ((IPEndPoint)Server.LocalEndPoint!).Port;
                _target = family == Family.DualMode ? new IPEndPoint(IPAddress.Loopback, port) : new IPEndPoint(IPAddress.IPv6Loopback, port);
                if (family == Family.IPv4) _target = new IPEndPoint(IPAddress.Loopback, port);
                Keys = new EndPointKey[_clients.Length];
                for (int i = 0; i < _clients.Length; i++)
                {
                    EndPointKey key = Loopback.SourceOf(_clients[i]);
                    Keys[i] = family == Family.DualMode ? key.MapToIPv6() : key; // as the server sees it
                }
            }

            public Socket Server { get; }

            /// <summary>Each client as the server sees it.</summary>
            public EndPointKey[] Keys { get; }

            public IPEndPointNonAlloc NewServerEndPoint() => new IPEndPointNonAlloc(_family == Family.IPv4 ? IPAddress.Any : IPAddress.IPv6Any, 0);

            public void Send(int client, byte value) => Assert.Equal(1, _clients[client].SendTo(new[] { value }, _target));

            public void AssertNames(IPEndPointNonAlloc endPoint, int client)
            {
                EndPointKey expected = Keys[client];
                Assert.Equal(expected, endPoint.CurrentKey);
                Assert.Equal(expected, EndPointKey.FromSocketAddress(endPoint.temp));
                Assert.Equal(expected.GetHashCode(), endPoint.GetHashCode());
                Assert.Equal(expected.Port, endPoint.Port);
                Assert.Equal(expected.AddressFamily, endPoint.AddressFamily);
                Assert.Equal(expected.ToIPEndPoint(), endPoint.DeepCopyIPEndPoint());
            }

            public void Dispose()
            {
                Server.Dispose();
                foreach (Socket client in _clients) client.Dispose();
            }
        }
    }
}
