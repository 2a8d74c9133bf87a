using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>The socket families the suite runs every loopback test over.</summary>
    public enum Family
    {
        /// <summary>IPv4 sender to an IPv4 socket on 127.0.0.1.</summary>
        IPv4,
        /// <summary>IPv6 sender to an IPv6 socket on ::1.</summary>
        IPv6,
        /// <summary>IPv4 sender to a dual-mode IPv6 socket bound to ::ffff:127.0.0.1.</summary>
        DualMode,
    }

    /// <summary>A receiving socket and a sending socket on loopback, both bound, both disposed together.</summary>
    public sealed class Loopback : IDisposable
    {
        public static readonly IPAddress MappedLoopback = IPAddress.Parse("::ffff:127.0.0.1");

        public Socket Server { get; }
        public Socket Client { get; }
        public IPEndPoint ServerEndPoint { get; }
        public IPEndPoint ClientEndPoint { get; }
        public Family Family { get; }

        public Loopback(Family family, int receiveTimeoutMs = 5000)
        {
            Family = family;
            switch (family)
            {
                case Family.IPv4:
                    Server = Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                    Client = Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                    break;
                case Family.IPv6:
                    Server = Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false);
                    Client = Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false);
                    break;
                default:
                    Server = Bound(AddressFamily.InterNetworkV6, MappedLoopback, true);
                    Client = Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                    break;
            }
            Server.ReceiveTimeout = receiveTimeoutMs;
            Client.ReceiveTimeout = receiveTimeoutMs;
            ServerEndPoint = (IPEndPoint)Server.LocalEndPoint!;
            ClientEndPoint = (IPEndPoint)Client.LocalEndPoint!;
            // The address a client sends to: the IPv4 loopback for the dual-mode server.
            ServerTarget = family == Family.DualMode ? new IPEndPoint(IPAddress.Loopback, ServerEndPoint.Port) : ServerEndPoint;
            ServerKey = EndPointKey.FromIPEndPoint(ServerTarget);
            ClientKey = EndPointKey.FromIPEndPoint(ClientEndPoint);
            // What the server sees as the sender: IPv4-mapped on the dual-mode socket.
            ClientAsSeenByServer = family == Family.DualMode ? ClientKey.MapToIPv6() : ClientKey;
        }

        public IPEndPoint ServerTarget { get; }
        public EndPointKey ServerKey { get; }
        public EndPointKey ClientKey { get; }
        public EndPointKey ClientAsSeenByServer { get; }

        /// <summary>An endpoint of the family a server of this kind receives into.</summary>
        public IPEndPointNonAlloc NewServerEndPoint() => new IPEndPointNonAlloc(Family == Family.IPv4 ? IPAddress.Any : IPAddress.IPv6Any, 0);

        public static Socket Bound(AddressFamily family, IPAddress address, bool dualMode)
        {
            // Hardened: Mono's sockets share ports by accident otherwise (SO_REUSEADDR), which made tests flaky.
            Socket socket = DatagramSockets.Create(family, dualMode);
            socket.ReceiveBufferSize = 4 * 1024 * 1024;
            socket.Bind(new IPEndPoint(address, 0));
            return socket;
        }

        /// <summary>
        /// The sender a peer sees for <paramref name="socket"/>: its local endpoint, except under Wine for an IPv4
        /// socket bound to a loopback address other than 127.0.0.1.
        /// </summary>
        public static EndPointKey SourceOf(Socket socket)
        {
            var local = (IPEndPoint)socket.LocalEndPoint!;
            // Wine 8 binds a UDP socket asked for 127.0.0.2 (or any other 127.x address but 127.0.0.1) to 0.0.0.0 in its
            // wineserver (seen with strace) and still reports the asked address as local: its datagrams leave from 127.0.0.1.
            if (Runtime.IsWine && local.AddressFamily == AddressFamily.InterNetwork && !local.Address.Equals(IPAddress.Loopback))
                return EndPointKey.IPv4(127, 0, 0, 1, local.Port);
            return EndPointKey.FromIPEndPoint(local);
        }

        /// <summary>
        /// What the runtime's own <c>Socket.Receive</c> reports on a connected datagram socket whose datagram met a
        /// closed port (ICMP port unreachable), asserted against what this OS is known to do: ConnectionRefused on
        /// Linux (ECONNREFUSED), ConnectionReset on Windows (WSAECONNRESET, Winsock's report of a port unreachable
        /// on a datagram socket), TimedOut under Wine 8, which drops the ICMP error and reports nothing. The library
        /// must report the same on every path.
        /// </summary>
        public static SocketError ClosedPortError()
        {
            IPEndPoint closed = ClosedPort(Family.IPv4);
            using Socket client = Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            client.ReceiveTimeout = 2000;
            client.Connect(closed);
            client.Send(new byte[] { 1 });
            SocketError error = Assert.Throws<SocketException>(() => client.Receive(new byte[16])).SocketErrorCode;
            SocketError known = Runtime.IsWine ? SocketError.TimedOut
                : RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? SocketError.ConnectionReset
                : SocketError.ConnectionRefused;
            Assert.True(known == error, "the runtime reports " + error + " for a closed port on " + Runtime.Describe() + "; expected " + known);
            return error;
        }

        /// <summary>
        /// A loopback port nobody holds: bound by a socket of <paramref name="family"/> (IPv6 for <see cref="Family.IPv6"/>,
        /// IPv4 otherwise) that is closed again before this returns.
        /// </summary>
        public static IPEndPoint ClosedPort(Family family)
        {
            bool v6 = family == Family.IPv6;
            IPAddress loopback = v6 ? IPAddress.IPv6Loopback : IPAddress.Loopback;
            using Socket gone = Bound(v6 ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork, loopback, false);
            return new IPEndPoint(loopback, ((IPEndPoint)gone.LocalEndPoint!).Port);
        }

        public void Dispose()
        {
            Server.Dispose();
            Client.Dispose();
        }
    }
}
