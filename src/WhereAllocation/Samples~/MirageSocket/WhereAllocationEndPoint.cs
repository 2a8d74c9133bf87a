#nullable enable
using System;
using System.Net;
using Mirage.SocketLayer;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// Where <see cref="WhereAllocationSocket"/> binds (a server) or which server it talks to (a client).
    /// <see cref="WhereAllocationSocketFactory"/> makes them from its settings; make one yourself to drive the socket
    /// without the factory.
    /// </summary>
    public sealed class WhereAllocationEndPoint : IBindEndPoint, IConnectEndPoint
    {
        /// <summary>An address and port; <paramref name="dualMode"/> only with an IPv6 address (a server bound to
        /// <c>IPAddress.IPv6Any</c> with it accepts IPv4 clients too, as IPv4-mapped addresses).</summary>
        /// <exception cref="ArgumentNullException"><paramref name="endPoint"/> is null.</exception>
        public WhereAllocationEndPoint(IPEndPoint endPoint, bool dualMode = false)
        {
            EndPoint = endPoint ?? throw new ArgumentNullException(nameof(endPoint));
            DualMode = dualMode;
        }

        /// <summary>The address and port.</summary>
        public IPEndPoint EndPoint { get; }

        /// <summary>For a server on an IPv6 address: IPv4 clients accepted too.</summary>
        public bool DualMode { get; }

        /// <summary>The address and port, as text.</summary>
        public override string ToString() => EndPoint + (DualMode ? " (dual-mode)" : "");
    }
}
