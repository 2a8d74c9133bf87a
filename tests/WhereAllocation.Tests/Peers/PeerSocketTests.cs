using System;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Real senders: a few hundred sockets bound to 127.0.0.2, 127.0.0.3, … (Linux and Windows route all of
    /// 127.0.0.0/8 to loopback) write to one server socket, which keys them in a peer table by what it receives.
    /// Under Wine they all send from 127.0.0.1 and differ by port only (<see cref="Loopback.SourceOf"/>).
    /// </summary>
    public class PeerSocketTests : IDisposable
    {
        private const int Addresses = 250;        // 127.0.0.2 .. 127.0.0.251
        private const int SecondPortEvery = 10;   // and a second socket (another port) on every tenth address
        private readonly List<Socket> _sockets = new List<Socket>();

        public void Dispose()
        {
            foreach (Socket socket in _sockets) socket.Dispose();
            DatagramPathSettings.Reset();
        }

        /// <summary>Every path but Managed, with an IPv4 server and with a dual-mode one.</summary>
        public static IEnumerable<object?[]> SenderCases => Matrix.Product(Matrix.PathsWhere(p => p != DatagramPath.Managed), Matrix.Booleans);

        [Theory]
        [MemberData(nameof(SenderCases))]
        public void HundredsOfRealSendersAreDistinctPeers(DatagramPath path, bool dualModeServer)
        {
            if (!Paths.TryForce(path)) return;
            Socket server = dualModeServer
                ? Loopback.Bound(AddressFamily.InterNetworkV6, Loopback.MappedLoopback, true)
                : Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            _sockets.Add(server);
            server.ReceiveTimeout = 5000;
            EndPointKey serverKey = EndPointKey.IPv4(127, 0, 0, 1, ((IPEndPoint)server.LocalEndPoint!).Port);

            var clients = new List<Socket>();
            var clientKeys = new List<EndPointKey>();
            for (int a = 0; a < Addresses; a++)
            {
                int copies = a % SecondPortEvery == 0 ? 2 : 1;
                for (int c = 0; c < copies; c++)
                {
                    Socket client = Loopback.Bound(AddressFamily.InterNetwork, new IPAddress(new byte[] { 127, 0, 0, (byte)(2 + a) }), false);
                    _sockets.Add(client);
                    clients.Add(client);
                    clientKeys.Add(Loopback.SourceOf(client));
                }
            }
            Assert.Equal(Addresses + Addresses / SecondPortEvery, clients.Count);

            // Each client sends its index, twice; the server keys peers by sender and checks every datagram.
            var payload = new byte[4];
            for (int round = 0; round < 2; round++)
            {
                for (int i = 0; i < clients.Count; i++)
                {
                    BinaryPrimitives.WriteInt32LittleEndian(payload, i);
                    clients[i].SendTo_NonAlloc(payload.AsSpan(), serverKey);
                }
            }

            var table = new PeerTable<int>(clients.Count);
            var buffer = new byte[64];
            int added = 0, found = 0;
            for (int n = 0; n < 2 * clients.Count; n++)
            {
                ReceivedDatagram datagram = server.ReceiveFrom_NonAlloc(buffer.AsSpan());
                Assert.Equal(4, datagram.Length);
                Assert.Equal(dualModeServer, datagram.RemoteEndPoint.IsIPv4MappedToIPv6);
                int sender = BinaryPrimitives.ReadInt32LittleEndian(buffer);
                Assert.Equal(clientKeys[sender], datagram.RemoteEndPoint.Canonical());
                if (table.TryGet(datagram.RemoteEndPoint, out int known))
                {
                    Assert.Equal(sender, known);
                    found++;
                }
                else
                {
                    Assert.Equal(PeerAddResult.Added, table.TryAdd(datagram.RemoteEndPoint, sender));
                    added++;
                }
            }
            Assert.Equal(clients.Count, added);
            Assert.Equal(clients.Count, found);
            Assert.Equal(clients.Count, table.Count);
            for (int i = 0; i < clientKeys.Count; i++)
            {
                Assert.True(table.TryGet(clientKeys[i], out int value));
                Assert.Equal(i, value);
            }
        }
    }
}
