#nullable enable
using System.Net;

namespace WhereAllocation
{
    /// <summary>
    /// What <see cref="IPEndPointNonAlloc.DeepCopyIPEndPoint"/> returns: an <see cref="IPEndPoint"/> whose
    /// <see cref="IPEndPoint.Address"/> and <see cref="IPEndPoint.Port"/> are the copied values, so the runtime
    /// (ToString, Serialize, SendTo, ReceiveFrom, Create) treats it as a plain one, but which hashes and compares
    /// like the <see cref="IPEndPointNonAlloc"/> it was copied from: <see cref="GetHashCode"/> is the seeded hash of
    /// its <see cref="EndPointKey"/>, and <see cref="Equals(object)"/> compares keys. So a table keyed by copies
    /// is found with the live endpoint.
    /// </summary>
    internal sealed class IPEndPointCopy : IPEndPoint
    {
        /// <summary>An endpoint for <paramref name="address"/> (which the copy owns) and <paramref name="port"/>.</summary>
        internal IPEndPointCopy(IPAddress address, int port) : base(address, port)
        {
        }

        // The key is read from the base fields on every call, not stored: IPEndPoint's Address and Port setters are
        // not virtual (Mono 6.8, .NET 8) and IPAddress is itself mutable (ScopeId), so a stored key could go stale;
        // and reading writes nothing, so threads that share a table of copies may hash them at the same time.
        private EndPointKey Key => EndPointKey.FromIPAddress(Address, Port);

        /// <summary>
        /// The seeded hash of this endpoint's <see cref="EndPointKey"/>: the same as
        /// <see cref="IPEndPointNonAlloc.GetHashCode"/> of a live endpoint naming it. Does not allocate.
        /// </summary>
        public override int GetHashCode() => Key.GetHashCode();

        /// <summary>
        /// True when <paramref name="comparand"/> is an <see cref="IPEndPoint"/> naming the same address, port and
        /// scope id (for an <see cref="IPEndPointNonAlloc"/>: its current endpoint). Does not allocate.
        /// </summary>
        public override bool Equals(object? comparand) => comparand is IPEndPoint endPoint && Key.Names(endPoint);
    }
}
