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

        /// <summary>True when <see cref="EnableCoalescedReceive"/> and <see cref="ReceiveCoalesced"/> work here (Linux's UDP_GRO).</summary>
        internal virtual bool HasCoalescedReceive => false;

        /// <summary>Lets the OS queue a run of equal datagrams from one sender as one coalesced datagram, with its segment size.</summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such option (<see cref="HasCoalescedReceive"/> is false).</exception>
        internal virtual SocketError EnableCoalescedReceive(IntPtr socket)
        {
            throw new PlatformNotSupportedException(Name + " has no coalesced receive.");
        }

        /// <summary>
        /// Writes, at <paramref name="control"/> (<paramref name="room"/> bytes), the control message that asks a segmented send
        /// to cut its data into datagrams of <paramref name="segmentSize"/> bytes; returns the bytes it takes (the message
        /// header's control length).
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no segmentation offload (<see cref="HasSegmentationOffload"/> is false).</exception>
        internal virtual int WriteSegmentSize(byte* control, int room, int segmentSize)
        {
            throw new PlatformNotSupportedException(Name + " has no segmentation offload.");
        }

        /// <summary>
        /// One <c>sendmmsg</c> of messages that may carry a segment size (<see cref="WriteSegmentSize"/>): how many went, or -1
        /// with <paramref name="error"/>, and with <paramref name="routeCannotSegment"/> true only when the OS's error says that
        /// this socket's route cannot segment at all (not for a fault of one datagram or of the socket, and never for an error
        /// the table does not know).
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no segmentation offload (<see cref="HasSegmentationOffload"/> is false).</exception>
        internal virtual int SendSegments(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error, out bool routeCannotSegment)
        {
            throw new PlatformNotSupportedException(Name + " has no segmentation offload.");
        }

        /// <summary>
        /// The room a coalesced receive offers the OS for a datagram's control messages: enough for every one the socket's
        /// receive options can add, so that the segment size is never cut off. 0 where there is no coalesced receive.
        /// </summary>
        internal virtual int CoalescedReceiveControlRoom => 0;

        /// <summary>
        /// One receive into <paramref name="message"/> (a Linux msghdr: its scatter list, the room for the sender and for the
        /// control messages, <see cref="CoalescedReceiveControlRoom"/> bytes), of a datagram that the OS may have coalesced
        /// from a run of equal ones. Without <paramref name="wait"/> it never waits; with it, on a descriptor in blocking mode,
        /// it waits in the kernel for a datagram as <see cref="ReceiveWaiting"/> does. Returns the bytes received, or -1 with
        /// <paramref name="error"/>, and what the OS said of the datagram: <paramref name="segmentSize"/>, the size of each
        /// datagram of a coalesced run (0 for a datagram as sent); <paramref name="cut"/>, the datagram (a run: its last one)
        /// was longer than the room given; <paramref name="unsplittable"/>, the control data was cut before a segment size
        /// came, so whether it is a run, and of which size, is not known. The sender's length is in the message header.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call here (<see cref="HasCoalescedReceive"/> is false).</exception>
        internal virtual long ReceiveCoalesced(IntPtr socket, Libc.LinuxMsgHdr* message, bool wait, out int segmentSize, out bool cut, out bool unsplittable, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + " has no coalesced receive.");
        }
    }
}
