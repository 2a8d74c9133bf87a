using System;
using System.Net.Sockets;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Coalesced receive: on a socket where <see cref="DatagramSockets.EnableCoalescedReceive"/> let the kernel queue a run of
    /// equal datagrams from one sender as one, the batch splits each run back into its datagrams, one slot each.
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>
        /// The fewest slots a batch needs for <see cref="CoalescedReceive"/>: the most datagrams Linux coalesces into one
        /// (64 on older kernels, 128 on newer ones), so a coalesced datagram always fits an empty batch.
        /// </summary>
        public const int MinCoalescedReceiveCapacity = 128;

        /// <summary>The payload room a batch needs for <see cref="CoalescedReceive"/>: the largest coalesced datagram.</summary>
        private const int CoalescedReceiveRoom = 65535;

        private bool _coalescedReceive;

        /// <summary>Coalesced datagrams the batch split since it was made, and the datagrams they held (for tests and benchmarks).</summary>
        internal long CoalescedReceives, CoalescedDatagrams;

        /// <summary>
        /// True when <see cref="CoalescedReceive"/> can be turned on in this process: Linux 5.0 or later (UDP_GRO) with the native
        /// path. False on other operating systems, where no datagram is ever coalesced.
        /// </summary>
        public static bool IsCoalescedReceiveAvailable =>
            s_multiMessageSupported && NativeDatagramIO.Os.HasCoalescedReceive;

        /// <summary>
        /// Whether <see cref="Receive(Socket, int)"/> reads coalesced datagrams and splits each into its segments, one slot per
        /// datagram the sender sent, each with its length and the sender's endpoint, in order. Turn it on for every batch that
        /// reads a socket on which <see cref="DatagramSockets.EnableCoalescedReceive"/> was called; off by default.
        /// </summary>
        /// <remarks>
        /// <para>On, a receive costs one system call per datagram as queued (a coalesced run counting one), plus one that peeks at
        /// the next datagram's size when fewer than <see cref="MinCoalescedReceiveCapacity"/> slots (or 65 535 bytes) are left,
        /// so that a run is taken only when it fits whole; a larger batch peeks less. Off, a batch receives with
        /// <c>recvmmsg</c> and a coalesced datagram would fill one slot, cut to <see cref="SlotSize"/>: so never read a socket with
        /// coalesced receive through a batch with this off, nor through the one-datagram receives.</para>
        /// <para>Allocates nothing. A datagram longer than <see cref="SlotSize"/> is cut and flagged, as without coalescing.</para>
        /// </remarks>
        /// <exception cref="PlatformNotSupportedException">Set to true where coalesced receive is not available (<see cref="IsCoalescedReceiveAvailable"/>), or on a batch in <see cref="DatagramBatchMode.SingleCalls"/> mode.</exception>
        /// <exception cref="InvalidOperationException">Set to true on a batch with fewer than <see cref="MinCoalescedReceiveCapacity"/> slots, or less than 65 535 bytes in all.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool CoalescedReceive
        {
            get
            {
                ThrowIfDisposed();
                return _coalescedReceive;
            }
            set
            {
                ThrowIfDisposed();
                if (value)
                {
                    if (!IsCoalescedReceiveAvailable || _mode != DatagramBatchMode.MultiMessage)
                        throw new PlatformNotSupportedException("Coalesced receive is not available here: it needs Linux 5.0+ (UDP_GRO) and a batch in MultiMessage mode.");
                    if (_capacity < MinCoalescedReceiveCapacity || (long)_capacity * _slotSize < CoalescedReceiveRoom)
                        throw new InvalidOperationException("Coalesced receive needs a batch of at least " + MinCoalescedReceiveCapacity + " slots and 65 535 bytes in all; this one has " + _capacity + " slots of " + _slotSize + " bytes.");
                }
                _coalescedReceive = value;
            }
        }

        /// <summary>
        /// Receives datagram after datagram, each over the free slots' buffers in order (their iovecs are consecutive), and splits a
        /// coalesced one into its segments, one slot each. Returns how many slots were filled; 0 with <paramref name="error"/>.
        /// </summary>
        private int ReceiveCoalesced(IntPtr raw, out SocketError error)
        {
            error = SocketError.Success;
            int next = 0;
            Libc.LinuxMsgHdr header;
            while (next < _capacity)
            {
                int free = _capacity - next;
                SocketError failure;
                if (free < MinCoalescedReceiveCapacity || (long)free * _slotSize < CoalescedReceiveRoom)
                {
                    // Take the next datagram only if all of its segments fit in the slots left.
                    header = default;
                    header.Control = _receiveControl;
                    header.ControlLength = ControlSpace * 2;
                    long queued = NativeDatagramIO.Os.ReceiveMessage(raw, &header, true, out failure);
                    if (queued >= 0)
                    {
                        int size = SegmentSize(&header);
                        long segments = size > 0 ? (queued + size - 1) / size : 1;
                        if (segments > free || (size > 0 && queued > (long)free * _slotSize)) break;
                    }
                    else if (Stop(failure, next, ref error)) break;
                    else continue;
                }

                header = default;
                header.Name = _names + next * SockaddrLayout.StorageSize;
                header.NameLength = SockaddrLayout.StorageSize;
                header.Iov = _iovecs + next;
                header.IovLength = (nuint)free;
                header.Control = _receiveControl;
                header.ControlLength = ControlSpace * 2;
                long length = NativeDatagramIO.Os.ReceiveMessage(raw, &header, false, out failure);
                if (length < 0)
                {
                    if (Stop(failure, next, ref error)) break;
                    continue;
                }
                next += Split(next, free, (int)length, SegmentSize(&header), (int)header.NameLength);
            }
            return next;
        }

        /// <summary>True when the receive loop ends at <paramref name="failure"/>: with the error when nothing was taken, else kept for the next receive.</summary>
        private bool Stop(SocketError failure, int taken, ref SocketError error)
        {
            if (failure == SocketError.Interrupted) return false;
            if (taken == 0) error = failure;
            else if (failure != SocketError.WouldBlock) _deferredError = failure; // as recvmmsg does: the datagrams stay, the error comes next time
            return true;
        }

        /// <summary>The segment size of a coalesced datagram (UDP_GRO's control message), or 0 for a datagram as sent.</summary>
        private static int SegmentSize(Libc.LinuxMsgHdr* header)
        {
            byte* control = (byte*)header->Control;
            long used = (long)header->ControlLength;
            int head = CmsgHeaderSize;
            long at = 0;
            while (at + head <= used)
            {
                byte* message = control + at;
                long length = (long)*(nuint*)message;
                if (length < head) break;
                if (*(int*)(message + sizeof(nuint)) == LinuxSocketCalls.SolUdp && *(int*)(message + sizeof(nuint) + 4) == LinuxSocketCalls.UdpGro && length >= head + sizeof(int))
                    return *(int*)(message + head);
                at += AlignUp((int)length, sizeof(nuint));
            }
            return 0;
        }

        /// <summary>
        /// Splits <paramref name="length"/> bytes received over the slots from <paramref name="first"/> (filled a whole slot after
        /// another) into segments of <paramref name="segmentSize"/>, each moved to the start of its own slot. Returns the slots filled.
        /// </summary>
        private int Split(int first, int free, int length, int segmentSize, int nameLength)
        {
            if (segmentSize <= 0 || length <= segmentSize)
            {
                // One datagram as sent: a longer one than a slot spilled into the next slots' buffers and is cut here.
                Store(first, Math.Min(length, _slotSize), length > _slotSize, nameLength);
                return 1;
            }
            int segments = (length + segmentSize - 1) / segmentSize;
            if (segments > free) segments = free; // cannot happen on a known kernel (see MinCoalescedReceiveCapacity)
            CoalescedReceives++;
            CoalescedDatagrams += segments;
            byte* name = _names + first * SockaddrLayout.StorageSize;
            // A segment never moves to a slot before the one where its bytes begin when it is no longer than a slot, and
            // never after when it is longer; so moving the last first (or the first first) never overwrites bytes still to move.
            bool lastFirst = segmentSize <= _slotSize;
            for (int k = 0; k < segments; k++)
            {
                int t = lastFirst ? segments - 1 - k : k;
                int start = t * segmentSize;
                int size = Math.Min(segmentSize, length - start);
                int kept = Math.Min(size, _slotSize);
                int slot = first + t;
                MoveSegment(first, start, slot, kept);
                Store(slot, kept, size > _slotSize, nameLength);
                if (t > 0) Buffer.MemoryCopy(name, _names + slot * SockaddrLayout.StorageSize, SockaddrLayout.StorageSize, nameLength);
            }
            return segments;
        }

        /// <summary>
        /// Moves <paramref name="size"/> bytes (at most a slot) found at offset <paramref name="offset"/> of the slots from
        /// <paramref name="first"/> read as one run of slot-size pieces, to the start of slot <paramref name="slot"/>.
        /// </summary>
        private void MoveSegment(int first, int offset, int slot, int size)
        {
            int from = first + offset / _slotSize;
            int at = offset % _slotSize;
            if (from == slot && at == 0) return;
            int head = Math.Min(size, _slotSize - at); // the part in slot 'from'; the rest begins slot 'from + 1'
            byte* target = _buffers + (long)slot * _stride;
            byte* source = _buffers + (long)from * _stride + at;
            byte* rest = _buffers + (long)(from + 1) * _stride;
            if (slot == from)
            {
                Buffer.MemoryCopy(source, target, head, head);
                if (size > head) Buffer.MemoryCopy(rest, target + head, size - head, size - head);
            }
            else
            {
                if (size > head) Buffer.MemoryCopy(rest, target + head, size - head, size - head);
                Buffer.MemoryCopy(source, target, head, head);
            }
        }
    }
}
