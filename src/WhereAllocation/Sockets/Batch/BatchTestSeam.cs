#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// A batch's test hooks, in one object the batch holds only when a test gave it one (<see cref="DatagramBatch.TestSeam"/>,
    /// null in production, where each hook costs one read of that field on a path that already makes a system call: a
    /// segmented send, a coalesced receive). Each hook makes the batch meet what a test cannot make a kernel do on demand.
    /// </summary>
    /// <remarks>
    /// Every field is initialised: Unity compiles the package without the tests' InternalsVisibleTo and would otherwise warn
    /// (as an error) that it is never assigned.
    /// </remarks>
    internal sealed class BatchTestSeam
    {
        /// <summary>When not 0, a segmented send fails with this OS error number (Linux's) instead of reaching the kernel.</summary>
        internal int SegmentationFault = 0;

        /// <summary>When above 0, the control room a coalesced receive offers the kernel instead of the batch's own.</summary>
        internal int ReceiveControlRoom = 0;

        /// <summary>When above 0, the room the spill offers the kernel instead of the largest datagram's, so that the kernel cuts.</summary>
        internal int SpillRoom = 0;

        /// <summary>
        /// When above 0, a coalesced receive lands in the slots themselves whenever this many are free (whatever their bytes),
        /// so that a run with more datagrams than free slots reaches the slots (no kernel coalesces more than the slots of an
        /// empty batch, <see cref="DatagramBatch.MinCoalescedReceiveCapacity"/>).
        /// </summary>
        internal int DirectFreeSlots = 0;
    }
}
