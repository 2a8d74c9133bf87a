#nullable enable
using System;
using System.Net.Sockets;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>Segmentation offload (many equal datagrams to one peer in one send) and coalesced receive: only where the OS has them.</summary>
    internal abstract unsafe partial class OsSocketCalls
    {
        /// <summary>True when a send of Linux mmsghdrs may carry a segment size (UDP_SEGMENT) that the OS honours.</summary>
        internal virtual bool HasSegmentationOffload => false;

        /// <summary>True when <see cref="EnableCoalescedReceive"/> and <see cref="ReceiveMessage"/> work here (Linux's UDP_GRO).</summary>
        internal virtual bool HasCoalescedReceive => false;

        /// <summary>Lets the OS queue a run of equal datagrams from one sender as one coalesced datagram, with its segment size.</summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such option (<see cref="HasCoalescedReceive"/> is false).</exception>
        internal virtual SocketError EnableCoalescedReceive(IntPtr socket)
        {
            throw new PlatformNotSupportedException(Name + " has no coalesced receive.");
        }

        /// <summary>
        /// One <c>sendmmsg</c> of messages that may carry a segment size: how many went, or -1 with <paramref name="error"/>, and
        /// with <paramref name="routeCannotSegment"/> true only when the OS's error says that this socket's route cannot segment at
        /// all (not for a fault of one datagram or of the socket, and never for an error the table does not know).
        /// <paramref name="faultForTests"/>: when not 0, the OS's error number that the call fails with, without reaching the kernel.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no segmentation offload (<see cref="HasSegmentationOffload"/> is false).</exception>
        internal virtual int SendSegments(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, int faultForTests, out SocketError error, out bool routeCannotSegment)
        {
            throw new PlatformNotSupportedException(Name + " has no segmentation offload.");
        }

        /// <summary>
        /// One non-blocking receive into a Linux msghdr (scatter list and control messages). Returns the bytes received, or
        /// with <paramref name="peek"/> the queued datagram's real length (it stays queued); -1 with <paramref name="error"/>.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call here (<see cref="HasCoalescedReceive"/> is false).</exception>
        internal virtual long ReceiveMessage(IntPtr socket, Libc.LinuxMsgHdr* message, bool peek, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + " has no coalesced receive.");
        }
    }
}
