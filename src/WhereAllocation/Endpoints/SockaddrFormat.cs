#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// The byte layout of an operating system's <c>sockaddr_in</c> / <c>sockaddr_in6</c>, for
    /// <see cref="EndPointKey.TryReadSockaddr(System.ReadOnlySpan{byte}, SockaddrFormat, out EndPointKey)"/> and <see cref="EndPointKey.WriteSockaddr"/>.
    /// </summary>
    public enum SockaddrFormat
    {
        /// <summary>Linux: 16-bit host-order family (AF_INET = 2, AF_INET6 = 10).</summary>
        Linux = 0,
        /// <summary>macOS, iOS and the BSDs' layout: a length byte, then an 8-bit family (AF_INET = 2, AF_INET6 = 30 as on macOS).</summary>
        Bsd = 1,
        /// <summary>Windows: 16-bit little-endian family (AF_INET = 2, AF_INET6 = 23).</summary>
        Windows = 2,
    }
}
