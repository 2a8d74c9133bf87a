using System;
using System.Net.Sockets;
using System.Threading;
using WhereAllocation.Interop;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with what a batch's segmented sends and coalesced receives hand the kernel, and what the
    /// kernel answers, seen and counted at the library's OS seam; and with the faults a test cannot make a kernel produce on
    /// demand, made here instead: a segmented send refused with an error number, less room for the control data than the
    /// messages need, less room in the spill than a datagram needs, a coalesced run of more datagrams than the free slots
    /// (no kernel coalesces more than an empty batch's slots). Everything else goes to the real OS unchanged.
    /// </summary>
    internal sealed unsafe class BatchOs : RealOsCalls
    {
        private long _segmentedSends, _segmentedDatagrams, _coalescedReceives, _coalescedDatagrams, _spilledReceives, _received;

        private BatchOs()
            : base("with a batch's segmented sends and coalesced receives watched")
        {
        }

        public static BatchOs Install() => Installed(new BatchOs());

        // ----- what tests read -----

        /// <summary>Segmented sends that went (a message with a segment size the kernel took), and the datagrams they carried.</summary>
        public long SegmentedSends => Interlocked.Read(ref _segmentedSends);

        public long SegmentedDatagrams => Interlocked.Read(ref _segmentedDatagrams);

        /// <summary>Coalesced receives that came as a run (a segment size, more bytes than one segment), and the datagrams they held.</summary>
        public long CoalescedReceives => Interlocked.Read(ref _coalescedReceives);

        public long CoalescedDatagrams => Interlocked.Read(ref _coalescedDatagrams);

        /// <summary>Coalesced receives that took a datagram into the batch's spill (one buffer for the message, not the free slots).</summary>
        public long SpilledReceives => Interlocked.Read(ref _spilledReceives);

        /// <summary>Coalesced receives that took a datagram at all.</summary>
        public long Received => Interlocked.Read(ref _received);

        // ----- what tests set -----

        /// <summary>When not 0, a segmented send fails with this OS error number (Linux's), as the kernel would: the messages before the first segmented one go, then that one fails.</summary>
        public int FailSegmentsWith { get; set; }

        /// <summary>When above 0, the room for control data a coalesced receive gives the kernel, instead of the batch's own.</summary>
        public int ControlRoom { get; set; }

        /// <summary>When above 0, the room a receive into the spill gives the kernel, instead of the largest datagram's: the kernel cuts.</summary>
        public int SpillRoom { get; set; }

        /// <summary>
        /// When above 0, the next coalesced receive into the slots (more than one iovec) is a run this stand-in coalesces itself:
        /// it takes this many datagrams of one size and one sender queued on the socket, lays them out over the iovecs as the
        /// kernel lays out a coalesced datagram, and answers with their segment size, as a kernel would that coalesced them.
        /// </summary>
        public int CoalesceNext { get; set; }

        // ----- the calls -----

        internal override bool HasMultiMessage => Os.HasMultiMessage;
        internal override bool HasWaitingReceive => Os.HasWaitingReceive;
        internal override bool HasSegmentationOffload => Os.HasSegmentationOffload;
        internal override bool HasCoalescedReceive => Os.HasCoalescedReceive;
        internal override int CoalescedReceiveControlRoom => Os.CoalescedReceiveControlRoom;
        internal override bool IsReceiveShutDown(IntPtr socket) => Os.IsReceiveShutDown(socket);
        internal override SocketError EnableCoalescedReceive(IntPtr socket) => Os.EnableCoalescedReceive(socket);
        internal override int WriteSegmentSize(byte* control, int room, int segmentSize) => Os.WriteSegmentSize(control, room, segmentSize);
        internal override long ReceiveWaiting(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error) => Os.ReceiveWaiting(socket, payload, size, peek, address, addressLength, out error);
        internal override int ReceiveMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error) => Os.ReceiveMany(socket, messages, count, out error);
        internal override int ReceiveManyWaiting(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error) => Os.ReceiveManyWaiting(socket, messages, count, out error);
        internal override int SendMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error) => Os.SendMany(socket, messages, count, out error);

        internal override int SendSegments(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error, out bool routeCannotSegment)
        {
            int fault = FailSegmentsWith;
            if (fault != 0)
            {
                // As the kernel would: the messages before the first segmented one go, then that one fails.
                int before = 0;
                while (before < count && messages[before].Header.ControlLength == 0) before++;
                if (before == 0) return ((LinuxSocketCalls)Os).SegmentedSendFailed(fault, out error, out routeCannotSegment);
                count = before;
            }
            int sent = Os.SendSegments(socket, messages, count, out error, out routeCannotSegment);
            for (int m = 0; m < sent; m++)
            {
                if (messages[m].Header.ControlLength == 0) continue;
                Interlocked.Increment(ref _segmentedSends);
                Interlocked.Add(ref _segmentedDatagrams, (long)messages[m].Header.IovLength);
            }
            return sent;
        }

        internal override long ReceiveCoalesced(IntPtr socket, Libc.LinuxMsgHdr* message, bool wait, out int segmentSize, out bool cut, out bool unsplittable, out SocketError error)
        {
            bool spill = message->IovLength == 1;
            if (!spill && CoalesceNext > 0)
            {
                int count = CoalesceNext;
                CoalesceNext = 0;
                return Coalesce(socket, message, count, out segmentSize, out cut, out unsplittable, out error);
            }
            nuint controlLength = message->ControlLength;
            if (ControlRoom > 0 && (nuint)ControlRoom < controlLength) message->ControlLength = (nuint)ControlRoom;
            nuint spillLength = message->Iov->Length;
            if (spill && SpillRoom > 0) message->Iov->Length = (nuint)SpillRoom;
            long length = Os.ReceiveCoalesced(socket, message, wait, out segmentSize, out cut, out unsplittable, out error);
            message->Iov->Length = spillLength; // the batch's own room, as it was
            if (length < 0) return length;
            Interlocked.Increment(ref _received);
            if (spill) Interlocked.Increment(ref _spilledReceives);
            if (!unsplittable && segmentSize > 0 && length > segmentSize)
            {
                Interlocked.Increment(ref _coalescedReceives);
                Interlocked.Add(ref _coalescedDatagrams, (length + segmentSize - 1) / segmentSize);
            }
            return length;
        }

        /// <summary>
        /// Takes <paramref name="count"/> queued datagrams of one size and sender and answers them as one coalesced datagram: their
        /// bytes one after another over the message's iovecs (each filled before the next), the sender in its name, and their size
        /// as the segment size.
        /// </summary>
        private long Coalesce(IntPtr socket, Libc.LinuxMsgHdr* message, int count, out int segmentSize, out bool cut, out bool unsplittable, out SocketError error)
        {
            cut = unsplittable = false;
            segmentSize = 0;
            var datagram = new byte[65536];
            long total = 0;
            int iov = 0;
            nuint at = 0;
            for (int i = 0; i < count; i++)
            {
                int nameLength = (int)message->NameLength;
                long length;
                fixed (byte* into = datagram) length = Os.Receive(socket, into, datagram.Length, false, (byte*)message->Name, &nameLength, out error);
                if (length < 0) throw new InvalidOperationException("the stand-in found " + i + " of the " + count + " datagrams it was to coalesce: " + error);
                if (i == 0) segmentSize = (int)length;
                else if (length != segmentSize) throw new InvalidOperationException("the stand-in coalesces datagrams of one size: " + length + " after " + segmentSize);
                message->NameLength = (uint)nameLength;
                for (int k = 0; k < length; k++)
                {
                    while (at == message->Iov[iov].Length)
                    {
                        iov++;
                        at = 0;
                        if ((nuint)iov == message->IovLength) throw new InvalidOperationException("the run the stand-in coalesces does not fit the iovecs");
                    }
                    ((byte*)message->Iov[iov].Base)[at++] = datagram[k];
                }
                total += length;
            }
            message->Flags = 0;
            message->ControlLength = 0;
            error = SocketError.Success;
            Interlocked.Increment(ref _received);
            Interlocked.Increment(ref _coalescedReceives);
            Interlocked.Add(ref _coalescedDatagrams, count);
            return total;
        }
    }
}
