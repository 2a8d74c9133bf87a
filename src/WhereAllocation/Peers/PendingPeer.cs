#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>What the pending set knows about one sender it has not been told to accept.</summary>
    [StructLayout(LayoutKind.Auto)]
    public readonly struct PendingPeer
    {
        /// <summary>Creates a record.</summary>
        public PendingPeer(EndPointKey key, long firstSeen, long lastSeen, int datagrams)
        {
            Key = key;
            FirstSeen = firstSeen;
            LastSeen = lastSeen;
            Datagrams = datagrams;
        }

        /// <summary>The sender, in canonical form (<see cref="EndPointKey.Canonical"/>).</summary>
        public EndPointKey Key { get; }

        /// <summary>The time given to <see cref="PendingPeerSet.Observe"/> when the sender was first seen.</summary>
        public long FirstSeen { get; }

        /// <summary>The time given to <see cref="PendingPeerSet.Observe"/> when the sender was last seen.</summary>
        public long LastSeen { get; }

        /// <summary>How many times <see cref="PendingPeerSet.Observe"/> saw the sender while pending (saturates at <see cref="int.MaxValue"/>).</summary>
        public int Datagrams { get; }
    }
}
