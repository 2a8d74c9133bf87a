#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>What one receive produced: how many bytes were stored, whether the datagram was cut, and who sent it.</summary>
    [StructLayout(LayoutKind.Auto)]
    public readonly struct ReceivedDatagram
    {
        /// <summary>Creates a result.</summary>
        public ReceivedDatagram(int length, bool truncated, EndPointKey remoteEndPoint)
        {
            Length = length;
            Truncated = truncated;
            RemoteEndPoint = remoteEndPoint;
        }

        /// <summary>The number of bytes stored in the buffer (at most its length).</summary>
        public int Length { get; }

        /// <summary>True when the datagram was longer than the buffer and only its first <see cref="Length"/> bytes were kept.</summary>
        public bool Truncated { get; }

        /// <summary>
        /// The sender, as a value that a table can keep. Read without allocating: <see cref="EndPointKey.Port"/>,
        /// <see cref="EndPointKey.AddressFamily"/>, <see cref="EndPointKey.TryWriteAddressBytes"/> (the address bytes),
        /// <see cref="EndPointKey.TryFormat"/> (<c>a.b.c.d:port</c> or <c>[v6]:port</c> for a log) and
        /// <see cref="EndPointKey.IsIPv4MappedToIPv6"/>; <see cref="EndPointKey.ToIPEndPoint"/> and
        /// <see cref="EndPointKey.ToIPAddress"/> give the runtime's types, allocating.
        /// </summary>
        public EndPointKey RemoteEndPoint { get; }
    }
}
