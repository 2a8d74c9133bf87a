using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Written exactly in the shape of the old usage guide: poll, receive into one reused
    /// IPEndPointNonAlloc, key connections by temp's hash, DeepCopyIPEndPoint() once per new connection,
    /// answer with SendTo_NonAlloc. The guide's part (marked below) must compile and work unchanged; the checks
    /// after it are the test's own.
    /// </summary>
    public class CompatibilityTests
    {
        [Fact]
        public void TheOldUsageGuideCompilesAndWorks()
        {
            Socket socket = new Socket(AddressFamily.InterNetworkV6, SocketType.Dgram, ProtocolType.Udp);
            socket.DualMode = true;
            socket.Bind(new IPEndPoint(Loopback.MappedLoopback, 0));
            int port = ((IPEndPoint)socket.LocalEndPoint!).Port;

            var clients = new Socket[3];
            for (int i = 0; i < clients.Length; i++)
            {
                // The test's peers (not the guide's code): hardened, so that Mono cannot give two of them one port.
                clients[i] = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                clients[i].ReceiveTimeout = 5000;
            }

            // --- the server, as the guide wrote it ---
            byte[] buffer = new byte[1200];
            IPEndPointNonAlloc reusableClientEP = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            Dictionary<int, IPEndPoint> connections = new Dictionary<int, IPEndPoint>();

            for (int round = 0; round < 5; round++)
            {
                for (int i = 0; i < clients.Length; i++)
                    clients[i].SendTo(new byte[] { (byte)i, (byte)round }, new IPEndPoint(IPAddress.Loopback, port));

                int handled = 0;
                while (handled < clients.Length && socket.Poll(2_000_000, SelectMode.SelectRead))
                {
                    int msgLength = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, reusableClientEP);
                    int connectionId = reusableClientEP.temp.GetHashCode();
                    if (!connections.ContainsKey(connectionId))
                    {
                        connections[connectionId] = reusableClientEP.DeepCopyIPEndPoint();
                    }
                    socket.SendTo_NonAlloc(buffer, 0, msgLength, SocketFlags.None, reusableClientEP);
                    handled++;
                }
                Assert.Equal(clients.Length, handled);
            }

            // Three clients, three connections, each stored endpoint naming its own client. Compared by key: the
            // stored copies hash with the library's seeded hash, plain IPEndPoints with the runtime's, so the two
            // kinds cannot share one hash set (see DeepCopyIPEndPoint's remarks).
            Assert.Equal(clients.Length, connections.Count);
            var expected = new HashSet<EndPointKey>();
            foreach (Socket client in clients) expected.Add(EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.Parse("::ffff:127.0.0.1"), ((IPEndPoint)client.LocalEndPoint!).Port)));
            var stored = new HashSet<EndPointKey>();
            foreach (IPEndPoint endPoint in connections.Values) stored.Add(EndPointKey.FromIPEndPoint(endPoint));
            Assert.True(expected.SetEquals(stored));

            // Every client got each of its own datagrams back, in order.
            var reply = new byte[16];
            for (int i = 0; i < clients.Length; i++)
            {
                for (int round = 0; round < 5; round++)
                {
                    EndPoint from = new IPEndPoint(IPAddress.Any, 0);
                    Assert.Equal(2, clients[i].ReceiveFrom(reply, ref from));
                    Assert.Equal((byte)i, reply[0]);
                    Assert.Equal((byte)round, reply[1]);
                }
                clients[i].Dispose();
            }
            socket.Dispose();
        }
    }
}
