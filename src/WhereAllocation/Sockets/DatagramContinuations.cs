#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// Where an await on an <see cref="AsyncDatagramSocket"/> resumes after it really waited (an await that completes at
    /// once, with a datagram already queued, simply goes on on the caller's thread). Either way, an awaiter that
    /// captured a <see cref="System.Threading.SynchronizationContext"/> (a plain <c>await</c> on a thread that has one,
    /// such as Unity's main thread) or a non-default TaskScheduler resumes there instead, as it asked.
    /// </summary>
    public enum DatagramContinuations
    {
        /// <summary>
        /// On a thread-pool thread, without the ExecutionContext unless the awaiter asked for it. Allocation free on .NET 8
        /// and newer (the library's operation is itself the pool's work item). On Mono the runtime's pool allocates an item
        /// per hand-over (about 50-64 bytes: a 40-byte work item, its share of the pool queue's segments, a boxed Boolean when a pool thread goes back to the runtime; measured on Mono 6.8), so <see cref="IoThread"/> is the default there. A cancellation
        /// or a Dispose resumes a waiting awaiter this way in both modes.
        /// </summary>
        ThreadPool = 0,

        /// <summary>
        /// Inline on the library's I/O thread, right after the datagram was received (or sent): no hand-over at all, so no
        /// allocation on any runtime and the shortest latency. The code after the await then runs on that one thread,
        /// which serves every socket of the process: it must not block. A loop that keeps finding datagrams queued gives
        /// way to the other sockets every 256 immediate results.
        /// </summary>
        IoThread = 1,
    }
}
