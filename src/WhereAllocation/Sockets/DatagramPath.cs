#nullable enable
namespace WhereAllocation
{
    /// <summary>The ways the library can move a datagram; <see cref="DatagramPathSettings"/> says which one runs.</summary>
    public enum DatagramPath
    {
        /// <summary>
        /// The operating system's own calls (<c>recvfrom</c>/<c>sendto</c>; Winsock on Windows) through
        /// P/Invoke on the socket's handle, with the sender's address written to stack memory. Zero
        /// allocation on Mono, CoreCLR and AOT. Linux, macOS, Windows.
        /// </summary>
        Native = 0,

        /// <summary>
        /// The runtime's <c>ReceiveFrom(Span&lt;byte&gt;, SocketFlags, SocketAddress)</c> and
        /// <c>SendTo(ReadOnlySpan&lt;byte&gt;, SocketFlags, SocketAddress)</c> overloads, with cached
        /// socket addresses. Zero allocation. .NET 8 and newer only.
        /// </summary>
        SocketAddress = 1,

        /// <summary>
        /// The runtime's <c>ReceiveFrom(byte[], …, ref EndPoint)</c> and <c>SendTo(byte[], …, EndPoint)</c>
        /// with an <see cref="IPEndPointNonAlloc"/> that overwrites itself. The last resort: it still
        /// allocates on receive (on Mono 96 B per IPv4 datagram), but works wherever sockets do.
        /// </summary>
        Managed = 2,
    }
}
