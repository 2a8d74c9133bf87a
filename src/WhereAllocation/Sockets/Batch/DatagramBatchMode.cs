#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// How a <see cref="DatagramBatch"/> talks to the operating system. Both modes have the same API and
    /// the same results; they differ only in the number of system calls. <see cref="DatagramBatch.DefaultMode"/>
    /// says which one a new batch takes here; the constructor can force either one where it is available.
    /// </summary>
    public enum DatagramBatchMode
    {
        /// <summary>
        /// Linux's <c>recvmmsg</c> and <c>sendmmsg</c>: up to <see cref="DatagramBatch.Capacity"/> datagrams
        /// per system call, straight into and out of the batch's native memory. Zero allocation on Mono,
        /// CoreCLR and AOT. Linux only. It does not depend on <see cref="DatagramPathSettings.Active"/>.
        /// </summary>
        MultiMessage = 0,

        /// <summary>
        /// One system call per datagram, on the single-datagram path that <see cref="DatagramPathSettings.Active"/>
        /// names: the OS's <c>recvfrom</c>/<c>sendto</c> on the batch's native memory where P/Invoke works
        /// (zero allocation), else the runtime's own calls (zero allocation on the .NET 8+
        /// <see cref="DatagramPath.SocketAddress"/> path; the <see cref="DatagramPath.Managed"/> path allocates).
        /// Available everywhere.
        /// </summary>
        SingleCalls = 1,
    }
}
