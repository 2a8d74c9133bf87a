#nullable enable
namespace WhereAllocation
{
    /// <summary>What <see cref="PendingPeerSet.Observe"/> did with a sender.</summary>
    public enum PendingObserveResult
    {
        /// <summary>The sender is new and now pending; the set had room.</summary>
        Added,

        /// <summary>The sender was already pending; its last-seen time and datagram count were updated.</summary>
        AlreadyPending,

        /// <summary>The sender is new and now pending; the set was full, so the sender pending longest was dropped to make room.</summary>
        AddedEvictingOldest,
    }
}
