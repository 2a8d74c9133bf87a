#nullable enable
namespace WhereAllocation
{
    /// <summary>What <see cref="PeerTable{T}.TryAdd"/> or <see cref="PeerTable{T}.Accept"/> did.</summary>
    public enum PeerAddResult
    {
        /// <summary>The peer was added with the given value.</summary>
        Added,

        /// <summary>The peer was already in the table; its value was left as it was.</summary>
        Exists,

        /// <summary>The table holds <see cref="PeerTable{T}.Capacity"/> peers; nothing was added. It never grows.</summary>
        Full,

        /// <summary><see cref="PeerTable{T}.Accept"/> only: the sender was not in the pending set (never seen, evicted or expired); nothing was added.</summary>
        NotPending,
    }
}
