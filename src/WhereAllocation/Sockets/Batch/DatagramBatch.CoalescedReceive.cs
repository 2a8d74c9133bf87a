#nullable enable
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

        /// <summary>Room for the control messages of one receive: as much as the OS says it may write (<see cref="OsSocketCalls.CoalescedReceiveControlRoom"/>).</summary>
        private static readonly int s_receiveControlRoom = OsSocketCalls.Current.CoalescedReceiveControlRoom;

        private bool _coalescedReceive;

        // Coalesced receive's own native block (made when it is first turned on): the control room, then one iovec, one sockaddr
        // and a buffer for a whole coalesced datagram: the spill, which takes a datagram when the free slots could not hold it
        // and hands its segments out over this receive and the next ones.
        private NativeBlock? _coalescedMemory;
        private byte* _receiveControl;
        private Libc.IoVec* _spillVector;
        private byte* _spillName;
        private byte* _spill;
        private int _spillLength, _spillOffset, _spillSegment, _spillNameLength;
        private bool _spillCut, _spillUnsplittable;

        // The datagrams the spill still holds: counted, not read off its bytes, since a datagram of 0 bytes is one too.
        private int _spillDatagrams;

        /// <summary>True while datagrams taken from the socket wait in the spill for the next receive.</summary>
        private bool HasSpilled => _spillDatagrams > 0;

        /// <summary>
        /// True when <see cref="CoalescedReceive"/> can be turned on in this process: Linux 5.0 or later (UDP_GRO) with the native
        /// path. False on other operating systems, where no datagram is ever coalesced.
        /// </summary>
        public static bool IsCoalescedReceiveAvailable =>
            s_multiMessageSupported && OsSocketCalls.InUse.HasCoalescedReceive;

        /// <summary>
        /// Whether <see cref="Receive(Socket, int)"/> reads coalesced datagrams and splits each into its segments, one slot per
        /// datagram the sender sent, each with its length and the sender's endpoint, in order. Turn it on for every batch that
        /// reads a socket on which <see cref="DatagramSockets.EnableCoalescedReceive"/> was called; off by default.
        /// </summary>
        /// <remarks>
        /// <para>On, a receive costs one system call per datagram as queued (a coalesced run counting one). While at least
        /// <see cref="MinCoalescedReceiveCapacity"/> slots (and 65 535 bytes) are free, a datagram lands in the slots themselves;
        /// after that it lands in the batch's spill, a buffer that holds the largest coalesced datagram, and is copied to the
        /// free slots from there. Segments that find no free slot stay in the spill, in order, and are the first datagrams of the
        /// next <see cref="Receive(Socket, int)"/> (whichever socket it is given: read one socket per batch), and <see cref="Clear"/>
        /// keeps them: nothing taken from the socket is ever dropped, and nothing is peeked at (so another reader of the socket
        /// cannot change what the batch takes between two of its calls). Off, a batch receives with
        /// <c>recvmmsg</c> and a coalesced datagram would fill one slot, cut to <see cref="SlotSize"/>: so never read a socket with
        /// coalesced receive through a batch with this off, nor through the one-datagram receives.</para>
        /// <para>A datagram longer than <see cref="SlotSize"/> is cut and flagged (<see cref="IsTruncated"/>), as without
        /// coalescing, and so is one the kernel cut (its MSG_TRUNC is read for every datagram). The batch offers room for every
        /// control message the socket's receive options can add (timestamps in every form, drop counts, marks, the IP level's
        /// packet information, hop limits, traffic classes, options and extension headers); should the kernel still cut the
        /// control data (MSG_CTRUNC) before the segment size, the run cannot be split: it comes in one slot, flagged truncated,
        /// never as one datagram that looks whole.</para>
        /// <para>Turning it on the first time takes a native block of about 97 KiB for the batch (the spill and the control
        /// room, freed with the batch); receiving allocates nothing.</para>
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
                    if (_coalescedMemory == null) AllocateCoalescedPart();
                }
                _coalescedReceive = value;
            }
        }

        private void AllocateCoalescedPart()
        {
            int vectorAt = AlignUp(s_receiveControlRoom, 64);
            int nameAt = vectorAt + AlignUp(sizeof(Libc.IoVec), 64);
            int spillAt = nameAt + AlignUp(SockaddrLayout.StorageSize, 64);
            int total = spillAt + AlignUp(CoalescedReceiveRoom, 64);
            NativeBlock block = AllocateNative(total);
            byte* start = (byte*)block.DangerousGetHandle();
            new Span<byte>(start, total).Clear();
            _receiveControl = start;
            _spillVector = (Libc.IoVec*)(start + vectorAt);
            _spillName = start + nameAt;
            _spill = start + spillAt;
            _spillVector->Base = _spill;
            _spillVector->Length = (nuint)CoalescedReceiveRoom;
            _coalescedMemory = block;
        }

        /// <summary>
        /// Takes what the spill still holds, then datagram after datagram: over the free slots' buffers (their iovecs are
        /// consecutive) while they can hold any datagram, into the spill after that; a coalesced one is split into its segments,
        /// one slot each. With <paramref name="wait"/>, when the spill held nothing, the first receive waits in the kernel for a
        /// datagram (see <see cref="OsSocketCalls.ReceiveCoalesced"/>); every other never waits. Returns how many slots were
        /// filled; 0 with <paramref name="error"/>.
        /// </summary>
        private int ReceiveCoalesced(IntPtr raw, bool wait, out SocketError error)
        {
            error = SocketError.Success;
            int next = HasSpilled ? DrainSpill(0) : 0;
            wait &= next == 0;
            OsSocketCalls os = OsSocketCalls.InUse;
            Libc.LinuxMsgHdr header;
            while (next < _capacity && _coalescedReceive)
            {
                int free = _capacity - next;
                bool direct = free >= MinCoalescedReceiveCapacity && (long)free * _slotSize >= CoalescedReceiveRoom;
                header = default;
                header.NameLength = SockaddrLayout.StorageSize;
                header.Control = _receiveControl;
                header.ControlLength = (nuint)s_receiveControlRoom;
                if (direct)
                {
                    header.Name = _names + next * SockaddrLayout.StorageSize;
                    header.Iov = _iovecs + next;
                    header.IovLength = (nuint)free;
                }
                else
                {
                    header.Name = _spillName;
                    header.Iov = _spillVector;
                    header.IovLength = 1;
                }
                long length = os.ReceiveCoalesced(raw, &header, wait, out int segmentSize, out bool cut, out bool unsplittable, out SocketError failure);
                if (wait && ReceiveShutdown.IsReport(length, (int)header.NameLength)) length = ReceiveShutdown.Reported(out failure);
                wait = false;
                if (length < 0)
                {
                    if (Stop(failure, next, ref error)) break;
                    continue;
                }
                if (direct)
                {
                    next += Split(next, free, (int)length, segmentSize, unsplittable, cut, (int)header.NameLength);
                }
                else
                {
                    Spill(0, (int)length, segmentSize, unsplittable, cut, (int)header.NameLength);
                    next = DrainSpill(next);
                }
            }
            return next;
        }

        /// <summary>True when the receive loop ends at <paramref name="failure"/>: with the error when nothing was taken, else kept for the next receive.</summary>
        private bool Stop(SocketError failure, int taken, ref SocketError error)
        {
            if (failure == SocketError.Interrupted && taken > 0) return false;
            if (taken == 0) error = failure;
            else if (failure != SocketError.WouldBlock) _deferredError = failure; // as recvmmsg does: the datagrams stay, the error comes next time
            return true;
        }

        /// <summary>
        /// Splits <paramref name="length"/> bytes received over the slots from <paramref name="first"/> (filled a whole slot after
        /// another) into segments of <paramref name="segmentSize"/>, each moved to the start of its own slot; segments beyond the
        /// <paramref name="free"/> slots go to the spill. Returns the slots filled.
        /// </summary>
        private int Split(int first, int free, int length, int segmentSize, bool unsplittable, bool cut, int nameLength)
        {
            if (unsplittable || segmentSize <= 0 || length <= segmentSize)
            {
                // One datagram as sent, or one that cannot be split: a longer one than a slot spilled into the next slots'
                // buffers and is cut here; one the kernel cut, or that may be a run, is flagged too.
                Store(first, Math.Min(length, _slotSize), length > _slotSize || cut || unsplittable, nameLength);
                return 1;
            }
            int segments = (length + segmentSize - 1) / segmentSize;
            if (segments > free)
            {
                // More segments than slots (no known kernel coalesces that many): the rest waits in the spill, in order.
                int kept = free * segmentSize;
                CopyFromSlots(first, kept, _spill, length - kept);
                Buffer.MemoryCopy(_names + first * SockaddrLayout.StorageSize, _spillName, SockaddrLayout.StorageSize, nameLength);
                Spill(kept, length, segmentSize, false, cut, nameLength);
                segments = free;
                length = kept;
                cut = false;
            }
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
                Store(slot, kept, size > _slotSize || (cut && t == segments - 1), nameLength);
                if (t > 0) Buffer.MemoryCopy(name, _names + slot * SockaddrLayout.StorageSize, SockaddrLayout.StorageSize, nameLength);
            }
            return segments;
        }

        /// <summary>
        /// The spill's buffer now holds, from its start, bytes <paramref name="offset"/>..<paramref name="length"/>-1 of a datagram
        /// (all of it when it was received there, offset 0; the segments the slots could not take otherwise), its sender in the
        /// spill's sockaddr: they are handed out from the next free slot on.
        /// </summary>
        private void Spill(int offset, int length, int segmentSize, bool unsplittable, bool cut, int nameLength)
        {
            _spillOffset = 0;
            _spillLength = length - offset;
            _spillSegment = unsplittable || length <= segmentSize ? 0 : segmentSize;
            _spillDatagrams = _spillSegment > 0 ? (_spillLength + _spillSegment - 1) / _spillSegment : 1;
            _spillUnsplittable = unsplittable;
            _spillCut = cut;
            _spillNameLength = nameLength;
        }

        /// <summary>Hands the spill's segments to the slots from <paramref name="first"/> on, in order; returns the next free slot.</summary>
        private int DrainSpill(int first)
        {
            int slot = first;
            while (slot < _capacity && _spillDatagrams > 0)
            {
                int size = _spillSegment > 0 ? Math.Min(_spillSegment, _spillLength - _spillOffset) : _spillLength - _spillOffset;
                int kept = Math.Min(size, _slotSize);
                bool last = _spillOffset + size >= _spillLength;
                Buffer.MemoryCopy(_spill + _spillOffset, _buffers + (long)slot * _stride, kept, kept);
                Buffer.MemoryCopy(_spillName, _names + slot * SockaddrLayout.StorageSize, SockaddrLayout.StorageSize, _spillNameLength);
                Store(slot, kept, size > _slotSize || _spillUnsplittable || (_spillCut && last), _spillNameLength);
                _spillOffset += size;
                _spillDatagrams--;
                slot++;
            }
            return slot;
        }

        /// <summary>Copies <paramref name="size"/> bytes found at <paramref name="offset"/> of the slots from <paramref name="first"/>, read as one run of slot-size pieces.</summary>
        private void CopyFromSlots(int first, int offset, byte* to, int size)
        {
            while (size > 0)
            {
                int slot = first + offset / _slotSize;
                int at = offset % _slotSize;
                int piece = Math.Min(size, _slotSize - at);
                Buffer.MemoryCopy(_buffers + (long)slot * _stride + at, to, piece, piece);
                to += piece;
                offset += piece;
                size -= piece;
            }
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
