#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>Coalesced receive on a socket (Linux's UDP_GRO).</summary>
    public static partial class DatagramSockets
    {
        /// <summary>
        /// Lets the OS queue a run of equal datagrams from one sender (as a segmented send or a device's receive offload makes
        /// them) as one, which a <see cref="DatagramBatch"/> with <see cref="DatagramBatch.CoalescedReceive"/> on splits back into
        /// its datagrams: fewer datagrams for the kernel to queue and the receiver to take. Linux 5.0+
        /// (<see cref="DatagramBatch.IsCoalescedReceiveAvailable"/>).
        /// </summary>
        /// <remarks>Read the socket only through such batches afterwards: a one-datagram receive, or a batch with coalesced
        /// receive off, would get a coalesced run as one datagram cut to its buffer.</remarks>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="PlatformNotSupportedException">The OS has no coalesced receive (<see cref="DatagramBatch.IsCoalescedReceiveAvailable"/> is false).</exception>
        /// <exception cref="SocketException">The OS refused the option.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        public static void EnableCoalescedReceive(this Socket socket)
        {
            SocketArguments.CheckSocket(socket);
            if (!DatagramBatch.IsCoalescedReceiveAvailable)
                throw new PlatformNotSupportedException("Coalesced receive is not available here: it needs Linux 5.0+ (UDP_GRO) and the native path.");
            NativeSocketAdmin.EnableCoalescedReceive(socket);
        }
    }
}
