using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>A receiving server and three clients, each on its own port (and, for IPv4, its own address).</summary>
    public sealed class Senders : IDisposable
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
                EndPointKey key = Loopback.SourceOf(_clients[i]); // where the host really sends from (see there)
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
