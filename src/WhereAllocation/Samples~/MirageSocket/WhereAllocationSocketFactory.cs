using System;
using System.Net;
using System.Net.Sockets;
using Mirage.SocketLayer;
using UnityEngine;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// Makes <see cref="WhereAllocationSocket"/>s for Mirage: put it on the NetworkManager's GameObject and drag it into
    /// the <c>SocketFactory</c> field of <c>NetworkServer</c> and of <c>NetworkClient</c>, in place of Mirage's
    /// <c>UdpSocketFactory</c>. Its fields are that factory's address and port, and the server's address family.
    /// </summary>
    public sealed class WhereAllocationSocketFactory : SocketFactory, IHasAddress, IHasPort
    {
        /// <summary>The server's address or host name, for a client (a host name is looked up once, at connect).</summary>
        public string Address = "localhost";

        /// <summary>The server's port: where a server listens and a client sends.</summary>
        public ushort Port = 7777;

        /// <summary>A server on IPv6's any-address accepting IPv4 clients too (true, the default, as Mirage's own UDP
        /// socket), or on IPv4 only (false).</summary>
        public bool DualMode = true;

        // Mirage's UdpMTU.MaxPacketSize: the 1280-byte minimum IPv6 MTU less the IPv6 and UDP headers (40 + 8).
        private const int PacketSize = 1280 - 48;

        string IHasAddress.Address
        {
            get => Address;
            set => Address = value;
        }

        int IHasPort.Port
        {
            get => Port;
            set => Port = checked((ushort)value);
        }

        /// <summary>1232 bytes, as Mirage's UDP socket.</summary>
        public override int MaxPacketSize => PacketSize;

        /// <summary>False on WebGL, which has no UDP sockets.</summary>
        public override bool IsSupported => Application.platform != RuntimePlatform.WebGLPlayer;

        /// <summary>A new server socket.</summary>
        /// <exception cref="NotSupportedException">On WebGL.</exception>
        public override ISocket CreateServerSocket()
        {
            ThrowIfUnsupported();
            return new WhereAllocationSocket(Debug.LogWarning);
        }

        /// <summary>A new client socket.</summary>
        /// <exception cref="NotSupportedException">On WebGL.</exception>
        public override ISocket CreateClientSocket()
        {
            ThrowIfUnsupported();
            return new WhereAllocationSocket(Debug.LogWarning);
        }

        /// <summary>The server's address: IPv6's any-address dual-mode, or IPv4's, on <see cref="Port"/>.</summary>
        public override IBindEndPoint GetBindEndPoint() => DualMode
            ? new WhereAllocationEndPoint(new IPEndPoint(IPAddress.IPv6Any, Port), dualMode: true)
            : new WhereAllocationEndPoint(new IPEndPoint(IPAddress.Any, Port));

        /// <summary>The server a client sends to: <paramref name="address"/> (else <see cref="Address"/>) and
        /// <paramref name="port"/> (else <see cref="Port"/>).</summary>
        /// <exception cref="SocketException">HostNotFound: the host name has no address.</exception>
        public override IConnectEndPoint GetConnectEndPoint(string address = null, ushort? port = null)
        {
            string host = address ?? Address;
            if (!IPAddress.TryParse(host, out IPAddress ip))
            {
                IPAddress[] found = Dns.GetHostAddresses(host);
                if (found.Length == 0) throw new SocketException((int)SocketError.HostNotFound);
                ip = found[0];
            }
            return new WhereAllocationEndPoint(new IPEndPoint(ip, port ?? Port));
        }

        private static void ThrowIfUnsupported()
        {
            if (Application.platform == RuntimePlatform.WebGLPlayer)
                throw new NotSupportedException("WebGL has no UDP sockets: use a WebSocket factory there.");
        }
    }
}
