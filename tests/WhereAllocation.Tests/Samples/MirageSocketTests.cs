using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Mirage.SocketLayer;
using WhereAllocation.Samples;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The Unity package's Mirage sample (src/WhereAllocation/Samples~/MirageSocket): its socket driven as Mirage's
    /// <c>Peer</c> drives a stateless socket (SetTickEvents, then Bind or Connect; Tick; connections looked up by handle in
    /// a dictionary, a new one stored as <c>CreateCopy()</c>), against the stand-in of Mirage's interfaces
    /// (tests/Unity/StandIns/Mirage): each row of the sample README's table, and 0 B per datagram once connected.
    /// Mirage's own Peer drives it in bench/Mirage.
    /// </summary>
    public class MirageSocketTests : IDisposable
    {
        private const int PacketSize = 1232;   // the factory's MaxPacketSize, as Mirage's UdpMTU
        private readonly List<IDisposable> _owned = new List<IDisposable>();

        public void Dispose()
        {
            foreach (IDisposable owned in _owned) owned.Dispose();
            DatagramPathSettings.Reset();
        }

        public static TheoryData<Family> Families => new TheoryData<Family> { Family.IPv4, Family.DualMode };

        /// <summary>What Mirage's Peer does with a stateless socket's datagrams, reduced to what the tests look at.</summary>
        private sealed class PeerLike : IDisposable
        {
            public readonly WhereAllocationSocket Socket;
            public readonly Dictionary<IConnectionHandle, int> Connections = new Dictionary<IConnectionHandle, int>();
            public readonly List<string> Warnings = new List<string>();
            public IConnectionHandle? LastHandle;
            public EndPointKey LastSender;
            public int Received, ReceivedBytes, LastLength;
            public byte LastFirst;
            public bool Echo, CloseOnData;
            private readonly byte[] _first = new byte[1];

            public PeerLike()
            {
                Socket = new WhereAllocationSocket(Warnings.Add);
                ((ISocket)Socket).SetTickEvents(PacketSize, OnData, (handle, data, reason) => throw new InvalidOperationException("a stateless socket never disconnects a handle"));
            }

            public ISocket AsMirage => Socket;

            private void OnData(IConnectionHandle handle, ReadOnlySpan<byte> data)
            {
                Received++;
                ReceivedBytes += data.Length;
                LastLength = data.Length;
                // Not data[0]: Mono 6.8's ReadOnlySpan<T> indexer lacks the modreq(In) of .NET Standard 2.1's reference
                // assembly (MissingMethodException there); Unity compiles against its own class libraries.
                _first[0] = 0;
                if (data.Length > 0) data.Slice(0, 1).CopyTo(_first);
                LastFirst = _first[0];
                LastHandle = handle;
                LastSender = ((WhereAllocationConnectionHandle)handle).Key;
                if (!Connections.ContainsKey(handle)) Connections.Add(handle.CreateCopy(), Connections.Count + 1);
                if (Echo) Socket.Send(handle, data);
                if (CloseOnData) AsMirage.Close();
            }

            public void Dispose() => AsMirage.Close();
        }

        private PeerLike Server(Family family)
        {
            var server = new PeerLike();
            _owned.Add(server);
            server.AsMirage.Bind(family == Family.IPv4
                ? new WhereAllocationEndPoint(new IPEndPoint(IPAddress.Loopback, 0))
                : new WhereAllocationEndPoint(new IPEndPoint(Loopback.MappedLoopback, 0), dualMode: true));
            return server;
        }

        // What a client sends to: the IPv4 loopback and the server's port (a dual-mode server takes IPv4 clients).
        private static IPEndPoint Target(PeerLike server) => new IPEndPoint(IPAddress.Loopback, server.Socket.LocalEndPoint!.Port);

        private (PeerLike Client, IConnectionHandle ToServer) Client(PeerLike server)
        {
            var client = new PeerLike();
            _owned.Add(client);
            IConnectionHandle toServer = client.AsMirage.Connect(new WhereAllocationEndPoint(Target(server)));
            return (client, toServer);
        }

        private Socket Plain()
        {
            Socket socket = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            _owned.Add(socket);
            return socket;
        }

        // What the server sees as a plain IPv4 client's address: IPv4-mapped on a dual-mode socket.
        private static EndPointKey SeenAs(Family family, Socket client) =>
            family == Family.DualMode ? Loopback.SourceOf(client).MapToIPv6() : Loopback.SourceOf(client);

        [Theory]
        [MemberData(nameof(Families))]
        public void EachDatagramReachesMirageWithItsSenderAndUnknownSendersBecomeCopies(Family family)
        {
            PeerLike server = Server(family);
            Socket[] clients = { Plain(), Plain(), Plain() };
            var handles = new HashSet<IConnectionHandle>(new ReferenceComparer());
            for (int round = 0; round < 2; round++)
            {
                for (byte i = 0; i < clients.Length; i++)
                {
                    Assert.True(clients[i].TrySendTo_NonAlloc(new byte[] { i, 1, 2 }.AsSpan(), EndPointKey.FromIPEndPoint(Target(server))));
                    server.AsMirage.Tick();
                    Assert.Equal(round * clients.Length + i + 1, server.Received);
                    Assert.Equal(SeenAs(family, clients[i]), server.LastSender);   // each datagram's sender, as the socket saw it
                    Assert.Equal(i, server.LastFirst);
                    handles.Add(server.LastHandle!);
                }
            }
            // One handle object reported every datagram (reused); each unknown sender became one connection, stored as
            // a copy that equals the handle it was made from and hashes as it does, and no other copy was made.
            Assert.Single(handles);
            Assert.Equal(clients.Length, server.Connections.Count);
            foreach (IConnectionHandle copy in server.Connections.Keys)
            {
                Assert.NotSame(server.LastHandle, copy);
                Assert.False(copy.IsStateful);
            }
            var last = new WhereAllocationConnectionHandle(SeenAs(family, clients[2]));
            Assert.True(server.Connections.TryGetValue(last, out int id));
            Assert.Equal(3, id);
            Assert.Equal(last.GetHashCode(), server.LastHandle!.GetHashCode());
            Assert.Empty(server.Warnings);
            Assert.False(server.AsMirage.Poll());   // Tick delivered everything; Mirage's poll loop after it finds nothing
        }

        [Theory]
        [MemberData(nameof(Families))]
        public void OnceConnectedReceivingAndSendingAllocateNothing(Family family)
        {
            PeerLike server = Server(family);
            server.Echo = true;
            (PeerLike client, IConnectionHandle toServer) = Client(server);
            var payload = new byte[100];
            client.Socket.Send(toServer, payload);   // the connection: its handle copied once
            server.AsMirage.Tick();
            client.AsMirage.Tick();
            Assert.Single(server.Connections);
            Assert.Equal(1, client.Received);
            int sent = 0;

            // A round trip per call: the client's send, the server's tick (receive, look-up, echo), the client's tick.
            long bytes = Allocations.Measure(() =>
            {
                client.Socket.Send(toServer, payload);
                sent++;
                server.AsMirage.Tick();
                client.AsMirage.Tick();
            }, 2000, 500);

            Assert.Equal(0, bytes);
            Assert.Equal(sent + 1, server.Received);
            Assert.Equal(sent + 1, client.Received);
            Assert.Single(server.Connections);
            Assert.Equal(0, server.Socket.DroppedSends + client.Socket.DroppedSends);
            // The oracle sees this loop's one allocation, a new peer's handle copy, when it happens on every call.
            Assert.True(Allocations.Measure(() => server.LastHandle!.CreateCopy(), 2000, 500) > 0, "the oracle (" + AllocationOracle.Describe() + ") saw no handle copy");
        }

        [Fact]
        public void AClientPassesOnlyItsServersDatagrams()
        {
            PeerLike server = Server(Family.IPv4);
            server.Echo = true;
            (PeerLike client, IConnectionHandle toServer) = Client(server);
            Socket stranger = Plain();
            var clientAddress = EndPointKey.FromIPEndPoint(client.Socket.LocalEndPoint!);
            stranger.SendTo_NonAlloc(new byte[] { 9 }.AsSpan(), clientAddress);
            stranger.SendTo_NonAlloc(new byte[] { 9 }.AsSpan(), clientAddress);
            client.AsMirage.Tick();
            Assert.Equal(0, client.Received);
            Assert.Equal(2, client.Socket.StrangerDatagrams);
            Assert.Single(client.Warnings);
            Assert.Contains("StrangerDatagrams", client.Warnings[0]);

            client.Socket.Send(toServer, new byte[] { 7 });
            server.AsMirage.Tick();
            client.AsMirage.Tick();
            Assert.Equal(1, client.Received);
            Assert.Same(toServer, client.LastHandle);
            Assert.Equal(7, client.LastFirst);
        }

        [Theory]
        [MemberData(nameof(Families))]
        public void AFullSendBufferDropsTheDatagramCountsItAndWarnsOnce(Family family)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;   // the full buffer is the OS seam's, on the native path
            PeerLike server = Server(family);
            (PeerLike client, IConnectionHandle toServer) = Client(server);
            client.Socket.Send(toServer, new byte[] { 1 });
            server.AsMirage.Tick();
            IConnectionHandle toClient = First(server.Connections.Keys);
            using (FullSendBuffer full = FullSendBuffer.Install())
            {
                full.Refusing = true;
                for (int i = 0; i < 3; i++) server.Socket.Send(toClient, new byte[] { 2 });   // neither waits nor throws
                Assert.Equal(3, server.Socket.DroppedSends);
                Assert.Equal(3, full.Refused);
                var refused = new byte[] { 2 };
                long bytes = Allocations.Measure(() => server.Socket.Send(toClient, refused), 2000, 500);
                Assert.Equal(0, bytes);
                full.Refusing = false;
                server.Socket.Send(toClient, new byte[] { 3 });
            }
            client.AsMirage.Tick();
            Assert.Equal(1, client.Received);   // only the send after the buffer had room again
            Assert.Equal(3, client.LastFirst);
            Assert.Single(server.Warnings);
            Assert.Contains("DroppedSends", server.Warnings[0]);
        }

        [Theory]
        [MemberData(nameof(Families))]
        public void AResetIsNoErrorAndTheNextDatagramArrives(Family family)
        {
            PeerLike server = Server(family);
            Socket client = Plain();
            EndPointKey target = EndPointKey.FromIPEndPoint(Target(server));
            // A send to a port nobody holds: the OS answers with ICMP port unreachable.
            server.Socket.Send(new WhereAllocationConnectionHandle(EndPointKey.FromIPEndPoint(Loopback.ClosedPort(Family.IPv4))), new byte[] { 1 });
            client.SendTo_NonAlloc(new byte[] { 5 }.AsSpan(), target);
            server.AsMirage.Tick();
            Assert.Equal(1, server.Received);
            Assert.Equal(5, server.LastFirst);

            // Windows' reports of it, which a receive there meets (the OS seam's stand-in, on the native path).
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using (WindowsLikeResets resets = WindowsLikeResets.Install())
            {
                resets.QueueResets(2);
                client.SendTo_NonAlloc(new byte[] { 6 }.AsSpan(), target);
                server.AsMirage.Tick();
                Assert.Equal(0, resets.Pending);
            }
            Assert.Equal(2, server.Received);
            Assert.Equal(6, server.LastFirst);
            Assert.Empty(server.Warnings);
        }

        [Theory]
        [MemberData(nameof(Families))]
        public void AClosedSocketTicksNothingAndRefusesSends(Family family)
        {
            PeerLike server = Server(family);
            Socket client = Plain();
            EndPointKey target = EndPointKey.FromIPEndPoint(Target(server));
            var sender = new WhereAllocationConnectionHandle(SeenAs(family, client));

            // Closed by a message handler during a tick: the tick ends after that datagram.
            server.CloseOnData = true;
            client.SendTo_NonAlloc(new byte[] { 1 }.AsSpan(), target);
            client.SendTo_NonAlloc(new byte[] { 2 }.AsSpan(), target);
            server.AsMirage.Tick();
            Assert.Equal(1, server.Received);
            Assert.Null(server.Socket.LocalEndPoint);

            server.AsMirage.Tick();   // closed: nothing, no exception
            server.AsMirage.Close();  // again: no exception
            Assert.Equal(1, server.Received);
            Assert.Throws<ObjectDisposedException>(() => server.Socket.Send(sender, new byte[] { 3 }));
            Assert.False(server.AsMirage.Poll());
            Assert.Throws<NotSupportedException>(() => server.AsMirage.Receive(new byte[16], out _));
        }

        [Fact]
        public void ALongDatagramIsDroppedAndCountedAndAnEmptyOneIgnored()
        {
            PeerLike server = Server(Family.IPv4);
            Socket client = Plain();
            EndPointKey target = EndPointKey.FromIPEndPoint(Target(server));
            client.SendTo_NonAlloc(new byte[PacketSize + 1].AsSpan(), target);
            client.SendTo_NonAlloc(new byte[PacketSize + 200].AsSpan(), target);
            client.SendTo_NonAlloc(Span<byte>.Empty, target);
            client.SendTo_NonAlloc(new byte[PacketSize].AsSpan(), target);
            server.AsMirage.Tick();
            Assert.Equal(1, server.Received);
            Assert.Equal(PacketSize, server.LastLength);
            Assert.Equal(2, server.Socket.TruncatedDatagrams);
            Assert.Single(server.Warnings);
            Assert.Contains("TruncatedDatagrams", server.Warnings[0]);
        }

        /// <summary>
        /// A tick takes at most MaxDatagramsPerTick datagrams and leaves the rest queued for the next: 25 queued, 10 a tick,
        /// every tick bounded, all 25 delivered, the ticks that stopped at the bound counted. A drain without a bound takes
        /// all 25 in one tick and fails here.
        /// </summary>
        [Fact]
        public void ATickTakesAtMostItsLimitAndTheNextTickTheRest()
        {
            PeerLike server = Server(Family.IPv4);
            Assert.Equal(10_000, server.Socket.MaxDatagramsPerTick);
            Assert.Throws<ArgumentOutOfRangeException>(() => server.Socket.MaxDatagramsPerTick = 0);
            server.Socket.MaxDatagramsPerTick = 10;
            Socket client = Plain();
            EndPointKey target = EndPointKey.FromIPEndPoint(Target(server));
            for (int i = 0; i < 25; i++) client.SendTo_NonAlloc(new byte[] { (byte)i }.AsSpan(), target);
            int ticks = 0, atLimit = 0;
            var deadline = System.Diagnostics.Stopwatch.StartNew();
            while (server.Received < 25 && deadline.ElapsedMilliseconds < 5000)
            {
                int before = server.Received;
                server.AsMirage.Tick();
                int taken = server.Received - before;
                Assert.InRange(taken, 0, 10);
                if (taken == 10) atLimit++;
                ticks++;
                if (taken == 0) System.Threading.Thread.Sleep(1);
            }
            Assert.Equal(25, server.Received);
            Assert.True(atLimit >= 2, "ticks at the limit: " + atLimit + " of " + ticks);
            Assert.Equal(atLimit, server.Socket.TicksAtLimit);
            Assert.Equal(24, server.LastFirst);
        }

        private static IConnectionHandle First(IEnumerable<IConnectionHandle> handles)
        {
            foreach (IConnectionHandle handle in handles) return handle;
            throw new InvalidOperationException("no connection");
        }

        private sealed class ReferenceComparer : IEqualityComparer<IConnectionHandle>
        {
            public bool Equals(IConnectionHandle? x, IConnectionHandle? y) => ReferenceEquals(x, y);
            public int GetHashCode(IConnectionHandle obj) => System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(obj);
        }
    }
}
