#nullable enable
using System;
using System.Net.Sockets;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Segmentation offload in <see cref="Send"/>: consecutive slots to one recipient with one length (the last of the run
    /// may be shorter) leave in one send that the kernel (or the network device) cuts into the same datagrams.
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>The most datagrams one segmented send carries: Linux's limit since 4.18 (later kernels allow more).</summary>
        private const int MaxSegmentsPerSend = 64;

        /// <summary>The most payload one segmented send carries: what one IPv4 datagram can hold (65 535 - 20 - 8).</summary>
        private const int MaxSegmentedPayload = 65507;

        /// <summary>Room for one control message per header: CMSG_SPACE of a 2- or 4-byte value is 24 bytes on 64-bit, 16 on 32-bit.</summary>
        private const int ControlSpace = 32;

        // The part of the native block that segmentation uses: per slot a spare mmsghdr, room for its control message and
        // the first slot of the run it carries (one more, for the end).
        private Libc.LinuxMMsgHdr* _runMessages;
        private byte* _runControls;
        private int* _runStarts;
        private bool _segmentation;

        private static int SegmentationBytes(int capacity) =>
            capacity * (sizeof(Libc.LinuxMMsgHdr) + ControlSpace) + AlignUp((capacity + 1) * sizeof(int), 64);

        /// <summary>Points the views at their part of the native block (zeroed by the constructor) and takes the default switch.</summary>
        private void InitSegmentation(byte* part)
        {
            _runMessages = (Libc.LinuxMMsgHdr*)part;
            _runControls = part + _capacity * sizeof(Libc.LinuxMMsgHdr);
            _runStarts = (int*)(_runControls + _capacity * ControlSpace);
            _segmentation = CanSegment(_mode);
        }

        private static bool CanSegment(DatagramBatchMode mode) =>
            mode == DatagramBatchMode.MultiMessage && s_multiMessageSupported && OsSocketCalls.InUse.HasSegmentationOffload;

        /// <summary>
        /// True when <see cref="SegmentationOffload"/> can be on in this process: Linux 4.18 or later (UDP_SEGMENT) with
        /// <c>sendmmsg</c> reachable through P/Invoke. False on other operating systems, where a batch sends each datagram by itself.
        /// </summary>
        public static bool IsSegmentationOffloadAvailable => CanSegment(DatagramBatchMode.MultiMessage);

        /// <summary>
        /// Whether <see cref="Send"/> hands runs of equal datagrams to one recipient to the kernel as one segmented send. On by
        /// default wherever it is available (<see cref="IsSegmentationOffloadAvailable"/>, in <see cref="DatagramBatchMode.MultiMessage"/>
        /// mode); false, and not settable to true, elsewhere.
        /// </summary>
        /// <remarks>
        /// <para>A run is consecutive pending slots with the same recipient and the same length, the last of them possibly shorter,
        /// at most 64 datagrams and 65 507 bytes. It leaves in one send that the kernel (on loopback) or a network device able to
        /// segment cuts into the same datagrams a slot-by-slot send would give: the receiver cannot tell the difference, and every
        /// slot keeps its own result (<see cref="PendingCount"/>, <see cref="FailedCount"/>, <see cref="GetSendError"/>).
        /// Nothing is reordered: the runs and the single datagrams between them go in slot order.</para>
        /// <para>When the kernel refuses a run (a device that cannot segment: EIO; a segment longer than the path allows: EINVAL),
        /// the run is sent again datagram by datagram in the same call, so a refusal costs one extra system call and no datagram.
        /// After the one refusal that says the socket's route cannot segment at all (EIO: the device cannot checksum the segments,
        /// or the route goes through IPsec) the batch turns the switch off; no other error does (a datagram's or the socket's own
        /// fault, such as a send after <c>Shutdown(Send)</c>, is reported per slot and the switch stays). Turning it off costs
        /// nothing else: the batch then sends exactly as without offload.</para>
        /// </remarks>
        /// <exception cref="PlatformNotSupportedException">Set to true where the offload is not available, or on a batch in <see cref="DatagramBatchMode.SingleCalls"/> mode.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool SegmentationOffload
        {
            get
            {
                ThrowIfDisposed();
                return _segmentation;
            }
            set
            {
                ThrowIfDisposed();
                if (value && !CanSegment(_mode))
                    throw new PlatformNotSupportedException("Segmentation offload is not available here: it needs Linux 4.18+ (UDP_SEGMENT) and a batch in MultiMessage mode.");
                _segmentation = value;
            }
        }

        /// <summary>The exclusive end of the run that starts at slot <paramref name="start"/> (start + 1 when it is a single datagram).</summary>
        private int RunEnd(int start, int end)
        {
            uint size = _messages[start].Length;
            if (size == 0) return start + 1;
            int limit = MaxSegmentedPayload / (int)size;
            if (limit < 2) return start + 1;
            if (limit > MaxSegmentsPerSend) limit = MaxSegmentsPerSend;
            int stop = end - start > limit ? start + limit : end;
            int next = start + 1;
            uint nameLength = _messages[start].Header.NameLength;
            if (nameLength <= 16)
            {
                // An IPv4 recipient (16 bytes) compared as two words with the run's first, in the loop: once per datagram of a burst.
                byte* first = _names + start * SockaddrLayout.StorageSize;
                ulong a = *(ulong*)first, b = *(ulong*)(first + 8);
                while (next < stop)
                {
                    ref Libc.LinuxMMsgHdr message = ref _messages[next];
                    byte* name = _names + next * SockaddrLayout.StorageSize;
                    if (message.Length != size || message.Header.NameLength != nameLength || *(ulong*)name != a || *(ulong*)(name + 8) != b) break;
                    next++;
                }
            }
            else
            {
                while (next < stop && _messages[next].Length == size && SameRecipient(start, next)) next++;
            }
            // The last datagram of a run may be shorter (not empty): the kernel gives the remainder to the last segment.
            if (next < stop && _messages[next].Length < size && _messages[next].Length != 0 && SameRecipient(start, next)) next++;
            return next;
        }

        private bool SameRecipient(int a, int b)
        {
            uint length = _messages[a].Header.NameLength;
            if (_messages[b].Header.NameLength != length) return false;
            byte* x = _names + a * SockaddrLayout.StorageSize;
            byte* y = _names + b * SockaddrLayout.StorageSize;
            // Slots' names are 8-byte aligned; compare the whole sockaddr (16 bytes IPv4, 28 IPv6), a word at a time.
            if (*(ulong*)x != *(ulong*)y || *(ulong*)(x + 8) != *(ulong*)(y + 8)) return false;
            if (length <= 16) return true;
            return *(ulong*)(x + 16) == *(ulong*)(y + 16) && *(uint*)(x + 24) == *(uint*)(y + 24);
        }

        /// <summary>
        /// One <c>sendmmsg</c> of slots <paramref name="start"/>..<paramref name="end"/>-1 with each run as one segmented message;
        /// returns how many slots went. A batch with no run in the range sends as without offload.
        /// </summary>
        private int SendSegmented(IntPtr raw, int start, int end, out SocketError error)
        {
            int first = start;
            int firstEnd = 0;
            for (; first < end; first++)
            {
                firstEnd = RunEnd(first, end);
                if (firstEnd - first > 1) break;
            }
            if (first == end) return SendPlain(raw, start, end, out error);

            // Slots before the first run go as themselves, then runs and singles in slot order.
            int messages = 0;
            for (int i = start; i < first; i++) AddRunMessage(ref messages, i, i + 1);
            AddRunMessage(ref messages, first, firstEnd);
            for (int i = firstEnd; i < end;)
            {
                int next = RunEnd(i, end);
                AddRunMessage(ref messages, i, next);
                i = next;
            }
            _runStarts[messages] = end;

            int sent = OsSocketCalls.InUse.SendSegments(raw, _runMessages, messages, out error, out bool routeCannotSegment);
            if (sent > 0) return _runStarts[sent] - start;
            if (_runStarts[1] - start < 2 || error == SocketError.WouldBlock || error == SocketError.Interrupted) return 0;

            // The kernel refused the run in the first message: it goes again datagram by datagram, where a real fault of a
            // datagram (not of the segmentation) is reported for its own slot.
            if (routeCannotSegment) _segmentation = false; // EIO: this route cannot segment; no other error turns it off
            return SendPlain(raw, start, _runStarts[1], out error);
        }


        /// <summary>Writes message <paramref name="messages"/> (then counts it) for slots <paramref name="start"/>..<paramref name="end"/>-1.</summary>
        private void AddRunMessage(ref int messages, int start, int end)
        {
            ref Libc.LinuxMMsgHdr message = ref _runMessages[messages];
            message.Header = _messages[start].Header; // name, its length, the slot's iovec (its length fitted by FitPendingToSocket)
            _runStarts[messages] = start;
            int count = end - start;
            if (count > 1)
            {
                // The run's iovecs are consecutive, so the message gathers the slots' buffers in order; the kernel cuts the
                // whole at the segment size, which is the run's first length.
                message.Header.IovLength = (nuint)count;
                byte* control = _runControls + messages * ControlSpace;
                message.Header.Control = control;
                message.Header.ControlLength = (nuint)OsSocketCalls.InUse.WriteSegmentSize(control, ControlSpace, (int)_messages[start].Length);
            }
            else
            {
                message.Header.IovLength = 1;
                message.Header.Control = null;
                message.Header.ControlLength = 0;
            }
            messages++;
        }
    }
}
