#nullable enable
using System;
using Mirage.SocketLayer;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// A peer's address and port as Mirage sees it: a stateless <see cref="IConnectionHandle"/> that holds an
    /// <see cref="EndPointKey"/> (a value, compared and hashed without allocating). Mirage's <c>Peer</c> keys its
    /// connections by it; two handles are equal when their keys are.
    /// </summary>
    /// <remarks>
    /// The socket hands Mirage one handle per socket for every received datagram, its key set to the sender; Mirage
    /// keeps none of them, only the copy <see cref="CreateCopy"/> makes when a sender becomes a connection, which is
    /// the one allocation of a new peer. A copy's key never changes.
    /// </remarks>
    public sealed class WhereAllocationConnectionHandle : IConnectionHandle, IEquatable<WhereAllocationConnectionHandle>
    {
        private EndPointKey _key;

        /// <summary>A handle for <paramref name="key"/>.</summary>
        public WhereAllocationConnectionHandle(EndPointKey key)
        {
            _key = key;
        }

        /// <summary>The peer's address and port.</summary>
        public EndPointKey Key => _key;

        // The socket's reused receive handle is pointed at each datagram's sender; no other handle changes.
        internal void Set(in EndPointKey key) => _key = key;

        /// <summary>False: one socket serves every peer; Mirage tells peers apart by this handle's key.</summary>
        public bool IsStateful => false;

        /// <summary>Not used for a stateless handle (Mirage looks its connection up by the key).</summary>
        public ISocketLayerConnection? SocketLayerConnection { get; set; }

        /// <summary>False: Mirage itself sends the disconnect message and lingers.</summary>
        public bool SupportsGracefulDisconnect => false;

        /// <summary>Does nothing: there is no per-peer state to close.</summary>
        public void Disconnect(string? gracefulDisconnectReason)
        {
        }

        /// <summary>A new handle with the same key: the one allocation per new connection.</summary>
        public IConnectionHandle CreateCopy() => new WhereAllocationConnectionHandle(_key);

        /// <summary>Whether <paramref name="other"/> holds the same address and port.</summary>
        public bool Equals(WhereAllocationConnectionHandle? other) => !ReferenceEquals(other, null) && other._key == _key;

        /// <summary>Whether <paramref name="obj"/> is a handle of this kind with the same address and port.</summary>
        public override bool Equals(object? obj) => obj is WhereAllocationConnectionHandle other && other._key == _key;

        /// <summary>The key's hash (seeded per process, allocation free).</summary>
        public override int GetHashCode() => _key.GetHashCode();

        /// <summary>The address and port, as text (allocates: for logs).</summary>
        public override string ToString() => _key.ToString();
    }
}
