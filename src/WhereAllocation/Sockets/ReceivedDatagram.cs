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

        /// <summary>The sender.</summary>
        public EndPointKey RemoteEndPoint { get; }
    }
}
