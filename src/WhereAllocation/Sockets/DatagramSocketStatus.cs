#nullable enable
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// What the operating system says about one datagram socket: the buffers it really gave it, the datagrams it
    /// dropped because the receive queue was full, and the bytes queued now. A figure the OS does not keep for
    /// a socket is -1 ("not available"), never a guess. See <see cref="DatagramSockets.GetDatagramStatus"/>.
    /// </summary>
    [StructLayout(LayoutKind.Auto)]
    public readonly struct DatagramSocketStatus
    {
        /// <summary>Creates a status; -1 for a figure that is not available.</summary>
        public DatagramSocketStatus(int receiveBufferBytes, int sendBufferBytes, long droppedDatagrams, int queuedReceiveBytes)
        {
            ReceiveBufferBytes = receiveBufferBytes;
            SendBufferBytes = sendBufferBytes;
            DroppedDatagrams = droppedDatagrams;
            QueuedReceiveBytes = queuedReceiveBytes;
        }

        /// <summary>
        /// The receive buffer as the OS reports it (SO_RCVBUF), in bytes; -1 when not available. On Linux this is twice
        /// what was asked for (the kernel counts its bookkeeping in it), capped at twice <c>net.core.rmem_max</c>.
        /// </summary>
        public int ReceiveBufferBytes { get; }

        /// <summary>The send buffer as the OS reports it (SO_SNDBUF), in bytes; -1 when not available. Linux doubles it as for receive.</summary>
        public int SendBufferBytes { get; }

        /// <summary>
        /// Datagrams the OS dropped for this socket since it was created, because its receive queue was full; -1 when
        /// the OS does not count them per socket (Linux 4.15 and later does; Windows and macOS do not).
        /// </summary>
        public long DroppedDatagrams { get; }

        /// <summary>Bytes waiting in the receive queue now, as the OS accounts them (with its per-datagram overhead); -1 when not available (Linux only).</summary>
        public int QueuedReceiveBytes { get; }

        /// <summary>True when <see cref="DroppedDatagrams"/> is a real count.</summary>
        public bool HasDropCount => DroppedDatagrams >= 0;
    }
}
