using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using WhereAllocation.Interop;
using WhereAllocation.Memory;

namespace WhereAllocation
{
    /// <summary>
    /// Many datagrams per call: a fixed number of slots in native memory, each with a buffer, an endpoint
    /// (the sender after <see cref="Receive(Socket)"/>, the recipient for <see cref="Send"/>), a length
    /// and a truncation flag. On Linux one <c>recvmmsg</c>/<c>sendmmsg</c> system call moves the whole
    /// batch (a send with one datagram left takes <c>sendto</c>, which costs the kernel less); elsewhere (or when <see cref="DatagramBatchMode.SingleCalls"/> is forced) a loop of
    /// single calls gives the same results. See <see cref="Mode"/>.
    /// </summary>
    /// <remarks>
    /// <para>After construction nothing allocates managed memory: receiving, sending, filling and
    /// reading slots cost 0 bytes per call on Mono and CoreCLR (except in
    /// <see cref="DatagramBatchMode.SingleCalls"/> mode on the <see cref="DatagramPath.Managed"/> path,
    /// and when an exception is thrown).</para>
    /// <para>One batch is used by one thread at a time, except <see cref="Dispose"/>, which may come from any
    /// thread at any moment. Every member that reads or writes the native memory (adding, reading, receiving,
    /// sending) counts itself in before its first access and out after its last, and a Dispose frees the memory
    /// only when no member is counted in (else the last one out frees it): a member ends in success or in
    /// <see cref="ObjectDisposedException"/>, and the batch never touches freed memory. The count costs each
    /// such member two interlocked operations (10-15 ns per call on CoreCLR and on Mono here). A loop that reads every
    /// received datagram pays them once with <see cref="BeginRead"/>: its <see cref="Reader"/> counts the batch in for the
    /// whole loop.</para>
    /// <para>The spans a batch hands out (<see cref="GetDatagram(int)"/>, the buffer of
    /// <see cref="TryAdd(int, in EndPointKey, out Span{byte})"/>) point into its native memory and hold no
    /// reference: they are valid until the next <see cref="Receive(Socket)"/>, <see cref="Clear"/> or
    /// <see cref="Dispose"/> of the batch. Reading or writing one while another thread disposes the batch is the
    /// caller's race, as with any pooled buffer: be done with the spans before the batch is disposed. The spans of an open
    /// <see cref="Reader"/> are the exception: the reader keeps the memory until it ends, whoever disposes the batch (end the
    /// reader before disposing the batch on the same thread, or the memory waits for the finalizer). A member of the batch or
    /// of the reader that throws <see cref="ObjectDisposedException"/> ends the open reader, so the receive loop's next step
    /// after a Dispose from another thread frees the memory.</para>
    /// <para>Endpoints: an IPv4 sender seen through a dual-mode socket is an IPv4-mapped IPv6 key
    /// (as <see cref="SocketExtensions"/> reports it); an IPv4 recipient is sent IPv4-mapped from an
    /// IPv6 socket, and an IPv4-mapped recipient as IPv4 from an IPv4 socket.</para>
    /// </remarks>
    public sealed unsafe partial class DatagramBatch : IDisposable
    {
        /// <summary>The slot size a batch gets when none is given: an Ethernet MTU.</summary>
        public const int DefaultSlotSize = 1500;

        /// <summary>The largest capacity: Linux moves at most 1024 messages per <c>recvmmsg</c>/<c>sendmmsg</c> (UIO_MAXIOV).</summary>
        public const int MaxCapacity = 1024;

        /// <summary>The largest slot size, 64 KiB: room for any UDP datagram.</summary>
        public const int MaxSlotSize = 65536;

        // Each slot's truncation is kept as Linux's MSG_TRUNC bit in its msg_flags, in every mode, so
        // that one field answers IsTruncated whichever mode filled the slot.
        private const int TruncatedFlag = 0x20;
        private const int Alignment = 16;

        // recvmmsg/sendmmsg: a working native path on an OS that has them (Linux with glibc 2.14+ or musl).
        // Read from the real OS calls and what held at start, never from a stand-in a test may have put in when this class
        // is first used: the value is kept for the process.
        private static readonly bool s_multiMessageSupported = NativeDatagramIO.SupportedAtStart && OsSocketCalls.Current.HasMultiMessage;

        private readonly DatagramBatchMode _mode;
        private readonly int _capacity;
        private readonly int _slotSize;
        private readonly NativeBlock _memory;
        private readonly int _memoryBytes;
        // Views into _memory: per slot an mmsghdr, an iovec, sockaddr storage, a send error and a buffer.
        private readonly Libc.LinuxMMsgHdr* _messages;
        private readonly Libc.IoVec* _iovecs;
        private readonly byte* _names;
        private readonly int* _sendErrors;
        private readonly byte* _buffers;
        private readonly int _stride;

        private int _count;          // datagrams in the batch: slots 0 .. _count-1
        private int _nextToSend;     // first slot Send has not tried yet
        private int _failed;         // slots Send tried and the OS (or the family check) refused
        private int _addedSince;     // slots filled for sending (their iovec lengths may be cut) since the last Receive
        private int _pendingFamilies; // families of the pending slots' sockaddrs, if known: 1 IPv4, 2 IPv6 (0 none added since emptied)
        private int _receivedSince;  // slots a receive filled (their msg_namelen is the sender's) since the last Receive
        private SocketError _deferredError; // SingleCalls: an error met after datagrams were taken, reported next time
        private volatile bool _disposed;
        // The calls in progress that touch the block (see EnterBlock): two interlocked operations per call, which
        // measured cheaper than the block's SafeHandle reference (DangerousAddRef/Release) on Mono, and the same on CoreCLR.
        private DisposeGuard _guard;

        // ReadEndPoint's cache: the raw sockaddr bytes (and length) of the last key it parsed. Length 0 never matches.
        private uint _cachedLength;
        private ulong _cachedHead, _cachedMiddle, _cachedTail;
        private uint _cachedLast;
        private EndPointKey _cachedKey;

        /// <summary>A batch of <paramref name="capacity"/> slots of <paramref name="slotSize"/> bytes, in <see cref="DefaultMode"/>.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is not 1..<see cref="MaxCapacity"/>, or <paramref name="slotSize"/> is not 1..<see cref="MaxSlotSize"/>.</exception>
        /// <exception cref="OutOfMemoryException">The native memory could not be allocated.</exception>
        public DatagramBatch(int capacity, int slotSize = DefaultSlotSize)
            : this(capacity, slotSize, DefaultMode)
        {
        }

        /// <summary>A batch of <paramref name="capacity"/> slots of <paramref name="slotSize"/> bytes that works in <paramref name="mode"/>.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is not 1..<see cref="MaxCapacity"/>, <paramref name="slotSize"/> is not 1..<see cref="MaxSlotSize"/>, or <paramref name="mode"/> is not a mode.</exception>
        /// <exception cref="PlatformNotSupportedException"><paramref name="mode"/> cannot run here (<see cref="DatagramBatchMode.MultiMessage"/> outside Linux).</exception>
        /// <exception cref="OutOfMemoryException">The native memory could not be allocated.</exception>
        public DatagramBatch(int capacity, int slotSize, DatagramBatchMode mode)
        {
            if (capacity < 1 || capacity > MaxCapacity) throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "A batch has 1.." + MaxCapacity + " slots.");
            if (slotSize < 1 || slotSize > MaxSlotSize) throw new ArgumentOutOfRangeException(nameof(slotSize), slotSize, "A slot holds 1.." + MaxSlotSize + " bytes.");
            if (mode != DatagramBatchMode.MultiMessage && mode != DatagramBatchMode.SingleCalls) throw new ArgumentOutOfRangeException(nameof(mode), mode, "Unknown batch mode.");
            if (!IsModeAvailable(mode)) throw new PlatformNotSupportedException("The " + mode + " batch mode is not available on this operating system or runtime.");
            _mode = mode;
            _capacity = capacity;
            _slotSize = slotSize;
            _stride = AlignUp(slotSize, 64);

            int messagesAt = 0;
            int iovecsAt = AlignUp(messagesAt + capacity * sizeof(Libc.LinuxMMsgHdr), Alignment);
            int namesAt = AlignUp(iovecsAt + capacity * sizeof(Libc.IoVec), Alignment);
            int errorsAt = AlignUp(namesAt + capacity * SockaddrLayout.StorageSize, Alignment);
            int buffersAt = AlignUp(errorsAt + capacity * sizeof(int), 64);
            int segmentationAt = AlignUp(buffersAt + capacity * _stride, 64);
            int total = segmentationAt + SegmentationBytes(capacity); // at most about 64 MiB, so int is enough

            _memory = AllocateNative(total);
            _memoryBytes = total;
            byte* block = (byte*)_memory.DangerousGetHandle();
            new Span<byte>(block, total).Clear();
            _messages = (Libc.LinuxMMsgHdr*)(block + messagesAt);
            _iovecs = (Libc.IoVec*)(block + iovecsAt);
            _names = block + namesAt;
            _sendErrors = (int*)(block + errorsAt);
            _buffers = block + buffersAt;
            for (int i = 0; i < capacity; i++)
            {
                _iovecs[i].Base = _buffers + (long)i * _stride;
                _iovecs[i].Length = (nuint)slotSize;
                _messages[i].Header.Name = _names + i * SockaddrLayout.StorageSize;
                _messages[i].Header.NameLength = SockaddrLayout.StorageSize;
                _messages[i].Header.Iov = _iovecs + i;
                _messages[i].Header.IovLength = 1;
            }
            InitSegmentation(block + segmentationAt);
        }

        /// <summary>
        /// The one place the batch's native memory comes from: a single block for every slot's header,
        /// iovec, sockaddr, send error and buffer, taken from <see cref="PersistentAllocator.Shared"/> (so it
        /// shows in its live bytes and leak reports, and a double free is caught) on a 64-byte boundary, and
        /// freed by <see cref="Dispose"/> or, if the batch is never disposed, by the handle's finalizer.
        /// </summary>
        private static NativeBlock AllocateNative(int bytes)
        {
            var block = new NativeBlock();
            block.Take((IntPtr)PersistentAllocator.Shared.Allocate((nuint)bytes, BlockAlignment));
            return block;
        }

        private const int BlockAlignment = 64; // a cache line: the slots' buffers start on one

        /// <summary>The native block's address and size, for tests.</summary>
        internal IntPtr NativeBlockAddress => _memory.Address;

        internal int NativeBlockBytes => _memoryBytes;

        private static int AlignUp(int value, int alignment) => (value + alignment - 1) & ~(alignment - 1);

        // ----- modes -----

        /// <summary>
        /// The mode a batch takes when none is given: <see cref="DatagramBatchMode.MultiMessage"/> where
        /// Linux's <c>recvmmsg</c>/<c>sendmmsg</c> are reachable through P/Invoke, else
        /// <see cref="DatagramBatchMode.SingleCalls"/>.
        /// </summary>
        public static DatagramBatchMode DefaultMode => s_multiMessageSupported ? DatagramBatchMode.MultiMessage : DatagramBatchMode.SingleCalls;

        /// <summary>True when a batch can work in <paramref name="mode"/> in this process.</summary>
        public static bool IsModeAvailable(DatagramBatchMode mode)
        {
            switch (mode)
            {
                case DatagramBatchMode.MultiMessage: return s_multiMessageSupported;
                case DatagramBatchMode.SingleCalls: return true;
                default: return false;
            }
        }

        /// <summary>The mode this batch works in, chosen at construction.</summary>
        public DatagramBatchMode Mode => _mode;

        // ----- shape and contents -----

        /// <summary>The number of slots.</summary>
        public int Capacity => _capacity;

        /// <summary>The bytes each slot holds; a longer received datagram is cut to this and flagged as truncated.</summary>
        public int SlotSize => _slotSize;

        /// <summary>The datagrams in the batch, in slots 0 to <c>Count - 1</c>: what the last receive got, plus what was added since.</summary>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public int Count
        {
            get
            {
                ThrowIfDisposed();
                return _count;
            }
        }

        /// <summary>True when every slot holds a datagram, so <see cref="TryAdd(ReadOnlySpan{byte}, in EndPointKey)"/> would return false.</summary>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool IsFull => Count == _capacity;

        /// <summary>The added datagrams that <see cref="Send"/> has not tried yet (more than 0 after a send that could not finish now).</summary>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public int PendingCount
        {
            get
            {
                ThrowIfDisposed();
                return _count - _nextToSend;
            }
        }

        /// <summary>The datagrams that <see cref="Send"/> tried and could not send since the batch was last emptied; <see cref="GetSendError"/> says why.</summary>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public int FailedCount
        {
            get
            {
                ThrowIfDisposed();
                return _failed;
            }
        }

        /// <summary>Empties the batch (received and added datagrams alike). The slots' memory is kept.</summary>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public void Clear()
        {
            ThrowIfDisposed();
            EndReader();
            _count = 0;
            _nextToSend = 0;
            _failed = 0;
            _pendingFamilies = 0;
        }

        // ----- reading slots -----

        /// <summary>The bytes of datagram <paramref name="index"/> (at most <see cref="SlotSize"/>), and its endpoint.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReadOnlySpan<byte> GetDatagram(int index, out EndPointKey remoteEndPoint)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                remoteEndPoint = ReadEndPoint(index);
                return new ReadOnlySpan<byte>(_buffers + (long)index * _stride, (int)_messages[index].Length);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>The bytes of datagram <paramref name="index"/> (at most <see cref="SlotSize"/>).</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReadOnlySpan<byte> GetDatagram(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return new ReadOnlySpan<byte>(_buffers + (long)index * _stride, (int)_messages[index].Length);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>Length, truncation flag and endpoint of datagram <paramref name="index"/>.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReceivedDatagram GetInfo(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return new ReceivedDatagram((int)_messages[index].Length, (_messages[index].Header.Flags & TruncatedFlag) != 0, ReadEndPoint(index));
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>True when datagram <paramref name="index"/> was longer than <see cref="SlotSize"/> and only its first <see cref="SlotSize"/> bytes were kept.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool IsTruncated(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return (_messages[index].Header.Flags & TruncatedFlag) != 0;
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>
        /// <see cref="SocketError.Success"/> unless <see cref="Send"/> tried datagram <paramref name="index"/> and
        /// could not send it; then the reason (for example AddressFamilyNotSupported for an IPv6 recipient on
        /// an IPv4 socket, NetworkUnreachable, MessageSize).
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public SocketError GetSendError(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return (SocketError)_sendErrors[index];
            }
            finally
            {
                ExitBlock();
            }
        }

        private EndPointKey ReadEndPoint(int index)
        {
            uint length = _messages[index].Header.NameLength;
            if (length > SockaddrLayout.StorageSize) length = SockaddrLayout.StorageSize;
            byte* name = _names + index * SockaddrLayout.StorageSize;
            // One-entry cache: datagrams in a row often come from one peer (always, on a client talking to its
            // server), and parsing a sockaddr costs 40-60 ns on Mono. The key depends only on the length and on
            // bytes 0..15 (IPv4) or 0..27 (IPv6), which are compared here; 8-byte aligned, as every slot's name is.
            ulong head = *(ulong*)name, middle = *(ulong*)(name + 8);
            bool wide = length > 16;
            ulong tail = wide ? *(ulong*)(name + 16) : 0;
            uint last = wide ? *(uint*)(name + 24) : 0;
            if (length == _cachedLength && head == _cachedHead && middle == _cachedMiddle && tail == _cachedTail && last == _cachedLast)
                return _cachedKey;
            return ParseEndPoint(name, length, head, middle, tail, last);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private EndPointKey ParseEndPoint(byte* name, uint length, ulong head, ulong middle, ulong tail, uint last)
        {
            EndPointKey.TryReadSockaddr(name, (int)length, NativeDatagramIO.Format, out EndPointKey key);
            _cachedLength = length;
            _cachedHead = head;
            _cachedMiddle = middle;
            _cachedTail = tail;
            _cachedLast = last;
            _cachedKey = key;
            return key;
        }

        // Per datagram: small enough to inline, with the throwing moved out of line (Mono's JIT inlines
        // no method that throws).
        private void CheckIndex(int index)
        {
            if (_disposed || (uint)index >= (uint)_count) ThrowBadIndex(index);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowBadIndex(int index)
        {
            ThrowIfDisposed();
            throw new ArgumentOutOfRangeException(nameof(index), index, "The batch holds " + _count + " datagrams.");
        }

        // ----- filling slots -----

        /// <summary>
        /// Copies <paramref name="datagram"/> into the next free slot, to be sent to <paramref name="remoteEndPoint"/>
        /// by the next <see cref="Send"/>. Returns false, and changes nothing, when the batch is full.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="datagram"/> is longer than <see cref="SlotSize"/>, or the key is empty.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool TryAdd(ReadOnlySpan<byte> datagram, in EndPointKey remoteEndPoint)
        {
            // The arguments first (they touch no native memory), then the slot under the count. Nothing between EnterBlock and
            // ExitBlock can throw, so no try/finally: on Mono a method with one keeps its locals in memory, about 100 instructions
            // per datagram here. (An asynchronous Thread.Abort in between would leave the count up: the block is then freed by
            // its finalizer instead of Dispose, never under a call.)
            if (datagram.Length > _slotSize || remoteEndPoint.IsEmpty) ThrowBadAdd(datagram.Length, remoteEndPoint.IsEmpty, nameof(datagram));
            EnterBlock();
            if (_count == _capacity)
            {
                ExitBlock();
                return false;
            }
            int index = _count;
            datagram.CopyTo(new Span<byte>(_buffers + (long)index * _stride, _slotSize));
            SetOutgoing(index, datagram.Length, remoteEndPoint);
            ExitBlock();
            return true;
        }

        /// <summary>
        /// Takes the next free slot for a datagram of <paramref name="length"/> bytes to <paramref name="remoteEndPoint"/>
        /// and gives its buffer, to be written in place (no copy). Returns false, and changes nothing, when the batch is full.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is not 0..<see cref="SlotSize"/>.</exception>
        /// <exception cref="ArgumentException">The key is empty.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool TryAdd(int length, in EndPointKey remoteEndPoint, out Span<byte> buffer)
        {
            // As the other TryAdd: the arguments first, then the slot under the count, with nothing in between that can throw.
            if ((uint)length > (uint)_slotSize || remoteEndPoint.IsEmpty) ThrowBadAdd(length, remoteEndPoint.IsEmpty, nameof(length));
            EnterBlock();
            if (_count == _capacity)
            {
                ExitBlock();
                buffer = default;
                return false;
            }
            int index = _count;
            // Not new Span<byte>(pointer, length): Mono inlines that constructor's checks with every local in memory.
            buffer = MemoryMarshal.CreateSpan(ref _buffers[(long)index * _stride], length);
            SetOutgoing(index, length, remoteEndPoint);
            ExitBlock();
            return true;
        }

        /// <summary>The exception for a refused add, in the order the checks always had: disposed, then the length, then the key.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowBadAdd(int length, bool emptyKey, string lengthName)
        {
            ThrowIfDisposed();
            if (length < 0 || length > _slotSize)
            {
                if (lengthName == "length") throw new ArgumentOutOfRangeException(lengthName, length, "A slot holds 0.." + _slotSize + " bytes.");
                throw new ArgumentException("The datagram (" + length + " bytes) is longer than a slot (" + _slotSize + " bytes).", lengthName);
            }
            if (emptyKey) throw new ArgumentException("The recipient key is empty.", "remoteEndPoint");
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)] // per datagram: one call level less on Mono and CoreCLR
        private void SetOutgoing(int index, int length, in EndPointKey remote)
        {
            ref Libc.LinuxMMsgHdr message = ref _messages[index];
            message.Length = (uint)length;
            message.Header.Flags = 0;
            message.Header.NameLength = (uint)remote.WriteSockaddrAt(_names + index * SockaddrLayout.StorageSize, NativeDatagramIO.Format);
            _iovecs[index].Length = (nuint)length; // a receive puts the slot size back (PrepareForReceive)
            _pendingFamilies |= remote.IsIPv4 ? 1 : 2; // not AddressFamily: its two compares cost Mono about 20 instructions per datagram
            _sendErrors[index] = 0;
            _count = index + 1;
            if (_addedSince < _count) _addedSince = _count;
        }

        // ----- receiving -----

        /// <summary>
        /// Receives the datagrams already queued on <paramref name="socket"/>, up to <see cref="Capacity"/>, without
        /// waiting, and returns how many (0 when none is queued; no exception). They replace the batch's contents.
        /// Does not depend on <see cref="Socket.Blocking"/>.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error (for example ConnectionReset on a connected socket). An error met after some datagrams were taken is reported by the next receive, so no datagram is lost.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed.</exception>
        public int Receive(Socket socket) => Receive(socket, 0);

        /// <summary>
        /// Waits up to <paramref name="timeoutMilliseconds"/> for at least one datagram, then receives every
        /// datagram queued, up to <see cref="Capacity"/>, and returns how many; 0 when the time passed with
        /// nothing to read (no exception). They replace the batch's contents. 0 ms does not wait,
        /// <see cref="Timeout.Infinite"/> (-1) waits until a datagram comes or the socket is disposed.
        /// <see cref="Socket.Blocking"/> and <see cref="Socket.ReceiveTimeout"/> are not consulted.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeoutMilliseconds"/> is less than -1.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error. An error met after some datagrams were taken is reported by the next receive.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed (also while waiting).</exception>
        public int Receive(Socket socket, int timeoutMilliseconds)
        {
            ThrowIfDisposed();
            SocketExtensions.CheckReceive(socket, SocketFlags.None, null);
            if (timeoutMilliseconds < Timeout.Infinite) throw SocketExtensions.Refused(socket, new ArgumentOutOfRangeException(nameof(timeoutMilliseconds), timeoutMilliseconds, "The timeout is -1 (infinite) or more."));
            if (_deferredError != SocketError.Success)
            {
                SocketError error = _deferredError;
                _deferredError = SocketError.Success;
                throw new SocketException((int)error);
            }
            EndReader(); // the received datagrams replace what a reader would still read
            EnterBlock();
            try
            {
                return ReceiveHoldingBlock(socket, timeoutMilliseconds);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>Receive's work on the block, under the reference that <see cref="Receive(Socket, int)"/> holds.</summary>
        private int ReceiveHoldingBlock(Socket socket, int timeoutMilliseconds)
        {
            PrepareForReceive();
            DatagramPath path = DatagramPaths.Active; // once per call: every slot of one call takes the same path
            int received = _mode == DatagramBatchMode.SingleCalls && path != DatagramPath.Native
                ? ReceiveOnRuntimePath(socket, path, timeoutMilliseconds)
                : ReceiveNative(socket, timeoutMilliseconds);
            _count = received;
            _nextToSend = received; // received datagrams are not for sending
            if (_receivedSince < received) _receivedSince = received;
            return received;
        }

        /// <summary>
        /// Restores what the last calls changed in the headers that a receive reads, and empties the batch. A receive reads a
        /// slot's msg_namelen (its room for the sender) and its iovec's length; it only writes msg_len and msg_flags. So a slot a
        /// receive filled needs its msg_namelen back, and only a slot filled for sending needs its iovec back too.
        /// </summary>
        private void PrepareForReceive()
        {
            int i = 0;
            for (; i < _addedSince; i++)
            {
                _messages[i].Header.NameLength = SockaddrLayout.StorageSize;
                _iovecs[i].Length = (nuint)_slotSize;
            }
            for (; i < _receivedSince; i++) _messages[i].Header.NameLength = SockaddrLayout.StorageSize;
            _addedSince = 0;
            _receivedSince = 0;
            _pendingFamilies = 0;
            _count = 0;
            _nextToSend = 0;
            _failed = 0;
        }

        private int ReceiveNative(Socket socket, int timeoutMilliseconds)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool socketAdded = false;
            bool counted = false;
            try
            {
                handle.DangerousAddRef(ref socketAdded); // throws ObjectDisposedException for a disposed socket
                SocketHandles.ThrowIfDisposedWhileHeld(socket);
                IntPtr raw = handle.DangerousGetHandle();
                long start = timeoutMilliseconds > 0 ? Stopwatch.GetTimestamp() : 0;
                bool waited = false;
                // A wait without a limit, in recvmmsg mode, where the kernel can wait (NativeDatagramIO.ReceiveWaitsInKernel): the
                // first call waits for the first datagram and takes every one queued with it, one call per batch. A limit is this
                // call's own, not the socket's SO_RCVTIMEO, so a wait with one polls.
                bool inKernel = timeoutMilliseconds == Timeout.Infinite && _mode == DatagramBatchMode.MultiMessage && !_coalescedReceive && !HasSpilled
                    && NativeDatagramIO.ReceiveWaitsInKernel && NativeDatagramIO.OwnsDescriptor(handle);
                if (inKernel && SocketHandles.CountKernelWaits && !NativeDatagramIO.KernelWaitsWatched)
                {
                    // Counted only for the tests (see SocketHandles.CountKernelWaits; on Mono each kernel call counts itself with its
                    // registration, see ReceiveManyWatched); a fall back to slices counts itself below.
                    SocketHandles.EnterWait();
                    counted = true;
                }
                while (true)
                {
                    SocketError error;
                    int received = _coalescedReceive || HasSpilled ? ReceiveCoalesced(raw, out error)
                        : _mode != DatagramBatchMode.MultiMessage ? ReceiveSingleCallsNative(raw, out error)
                        : inKernel ? (NativeDatagramIO.KernelWaitsWatched ? ReceiveManyWatched(socket, raw, out error) : NativeDatagramIO.Os.ReceiveManyWaiting(raw, _messages, _capacity, out error))
                        : NativeDatagramIO.Os.ReceiveMany(raw, _messages, _capacity, out error);
                    if (inKernel && received > 0 && _messages[0].Length == 0 && _messages[0].Header.NameLength == 0)
                    {
                        // Not a datagram: the receiving side was shut down (by Shutdown, or by CoreCLR's Dispose waking this wait).
                        // The kernel wrote the slot's room for a sender as 0: give it back for the next receive.
                        _messages[0].Header.NameLength = SockaddrLayout.StorageSize;
                        received = -1;
                        error = SocketError.Shutdown;
                    }
                    if (received > 0) return received;
                    if (error == SocketError.Interrupted) continue;
                    if (inKernel)
                    {
                        // The kernel's wait ended without a datagram: the socket's own SO_RCVTIMEO passed, or its descriptor is in
                        // non-blocking mode. The rest of this wait, which has no limit, goes on in slices.
                        inKernel = false;
                    }
                    // Nothing queued, on a socket that may be shut down for receiving: it polls readable then, and a wait would spin.
                    // Asked when a wait said readable, or when the call does not wait: a first wait on such a socket answers at once.
                    if (error == SocketError.WouldBlock && (waited || timeoutMilliseconds == 0) && NativeDatagramIO.Os.IsReceiveShutDown(raw)) error = SocketError.Shutdown;
                    if (error != SocketError.WouldBlock) throw NativeDatagramIO.Failure(socket, error);
                    int remaining = SocketWaits.Remaining(start, timeoutMilliseconds);
                    if (remaining == 0) return 0;
                    if (waited) NativeDatagramIO.PauseAfterEmptyReadiness(socket, handle); // readable, yet nothing came: no busy loop
                    if (!counted)
                    {
                        // Counted as waiting until the handle is released (see NativeDatagramIO.Receive): a call on another thread
                        // after a Dispose finds the socket disposed even while this one, woken, still holds the handle.
                        SocketHandles.EnterWait();
                        counted = true;
                    }
                    if (!NativeDatagramIO.TryWaitUntil(socket, raw, handle, false, remaining)) return 0;
                    waited = true;
                }
            }
            finally
            {
                if (socketAdded) handle.DangerousRelease();
                if (counted) SocketHandles.ExitWait();
            }
        }

        /// <summary>
        /// The kernel's wait for the batch, registered with <see cref="KernelWaitWatchdog"/> for its length (Mono on Linux, where the
        /// runtime's Dispose wakes no call that holds the handle); with every slot taken, the call that does not wait, whose
        /// "nothing queued" the caller takes for a kernel wait that ended without a datagram and goes on in slices.
        /// </summary>
        private int ReceiveManyWatched(Socket socket, IntPtr raw, out SocketError error)
        {
            int slot = KernelWaitWatchdog.Enter(socket);
            if (slot < 0) return NativeDatagramIO.Os.ReceiveMany(raw, _messages, _capacity, out error);
            int received = NativeDatagramIO.Os.ReceiveManyWaiting(raw, _messages, _capacity, out error);
            KernelWaitWatchdog.Exit(slot);
            return received;
        }

        // ----- sending -----

        /// <summary>
        /// Sends the added datagrams that have not been tried yet, in slot order, each to its own endpoint, and
        /// returns how many went in this call.
        /// </summary>
        /// <remarks>
        /// <para>A datagram the OS refuses (an unreachable network, an IPv6 recipient on an IPv4 socket, a
        /// datagram too long for the path...) does not stop the others: its slot records the reason
        /// (<see cref="GetSendError"/>, <see cref="FailedCount"/>) and sending goes on with the next one.</para>
        /// <para>A partial send is reported, never hidden: when a non-blocking socket's send buffer is full the
        /// call returns early and <see cref="PendingCount"/> says how many are left; call <see cref="Send"/>
        /// again later to send the rest. A blocking socket waits for room instead.</para>
        /// <para>An unbound socket is bound to the any-address first, as the runtime's SendTo does.</para>
        /// </remarks>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed.</exception>
        public int Send(Socket socket)
        {
            if (_disposed) ThrowDisposed(); // written out: one call level less per tick on Mono
            SocketExtensions.CheckSocket(socket);
            if (_nextToSend >= _count) return 0;
            if (!socket.IsBound && !socket.Connected) PathCalls.BindAnyOnce(socket);
            // The batch counted in, and on the native path the socket's handle held, under one try/finally (each one costs a
            // method's locals their registers on Mono).
            EnterBlock();
            SafeHandle? handle = null;
            bool socketAdded = false;
            try
            {
                FitPendingToSocket(socket.AddressFamily);
                DatagramPath path = DatagramPaths.Active; // once per call: every slot of one call takes the same path
                if (_mode == DatagramBatchMode.SingleCalls && path != DatagramPath.Native)
                    return SendLoop(socket, path, IntPtr.Zero, null);
                handle = SocketHandles.Get(socket);
                handle.DangerousAddRef(ref socketAdded);
                SocketHandles.ThrowIfDisposedWhileHeld(socket);
                return SendOnHandle(socket, handle.DangerousGetHandle(), handle);
            }
            finally
            {
                if (socketAdded) handle!.DangerousRelease();
                ExitBlock();
            }
        }

        /// <summary>
        /// The native send under the socket's handle reference. Apart from <see cref="Send"/>, whose try/finally would keep
        /// this method's locals in memory on Mono.
        /// </summary>
        private int SendOnHandle(Socket socket, IntPtr raw, SafeHandle handle)
        {
            // The common case in one step: no slot refused or failed since the batch was emptied, nothing to segment, so one
            // sendmmsg of every pending slot. What it leaves (a full send buffer, an error) goes on as in the loop.
            if (_failed == 0 && _mode == DatagramBatchMode.MultiMessage && (!_segmentation || _count - _nextToSend == 1))
            {
                int pending = _count - _nextToSend;
                SocketError error;
                int went = pending == 1 ? SendOne(raw, _nextToSend, out error) : NativeDatagramIO.Os.SendMany(raw, _messages + _nextToSend, pending, out error);
                if (went == pending)
                {
                    _nextToSend = _count;
                    return went;
                }
                int sent = 0;
                if (!AfterSend(socket, raw, handle, went > 0 ? went : 0, error, ref sent)) return sent;
                return sent + SendLoop(socket, DatagramPath.Native, raw, handle);
            }
            return SendLoop(socket, DatagramPath.Native, raw, handle);
        }

        /// <summary>Sends runs of sendable slots until all are tried or the socket cannot take more now.</summary>
        private int SendLoop(Socket socket, DatagramPath path, IntPtr raw, SafeHandle? handle)
        {
            int sent = 0;
            while (_nextToSend < _count)
            {
                if (_sendErrors[_nextToSend] != 0)
                {
                    _nextToSend++; // refused before any system call (see FitPendingToSocket)
                    continue;
                }
                // The slots up to the next refused one; with no slot refused or failed since the batch was emptied, all of them.
                int end = _count;
                if (_failed != 0)
                {
                    end = _nextToSend + 1;
                    while (end < _count && _sendErrors[end] == 0) end++;
                }

                SocketError error;
                int went;
                if (handle == null) went = SendSingleCallsOnRuntimePath(socket, path, _nextToSend, end, out error);
                else if (_mode != DatagramBatchMode.MultiMessage) went = SendSingleCallsNative(raw, _nextToSend, end, out error);
                else if (_segmentation && end - _nextToSend > 1) went = SendSegmented(raw, _nextToSend, end, out error);
                else went = SendPlain(raw, _nextToSend, end, out error);
                if (!AfterSend(socket, raw, handle, went, error, ref sent)) break;
            }
            return sent;
        }

        /// <summary>
        /// Takes the result of one send call that started at the first pending slot: <paramref name="went"/> slots went, then
        /// <paramref name="error"/>. Returns false when sending must stop for now (a full send buffer on a socket that does not
        /// wait); an error of a datagram is recorded on its slot and sending goes on with the next.
        /// </summary>
        private bool AfterSend(Socket socket, IntPtr raw, SafeHandle? handle, int went, SocketError error, ref int sent)
        {
            _nextToSend += went;
            sent += went;
            if (error == SocketError.Success || error == SocketError.Interrupted) return true;
            if (error == SocketError.WouldBlock)
            {
                // The native sends never wait (where the OS can say so per call): a blocking socket waits for room here.
                // The socket's mode is asked only now, when it matters (a Send that found room never asks it).
                if (handle != null && socket.Blocking)
                {
                    NativeDatagramIO.TryWaitUntil(socket, raw, handle, true, Timeout.Infinite);
                    return true;
                }
                return false; // PendingCount tells the caller what is left
            }
            _sendErrors[_nextToSend] = (int)error;
            _failed++;
            _nextToSend++;
            return true;
        }

        /// <summary>
        /// Gives every pending slot a sockaddr of the socket's family and its exact length; a recipient the
        /// socket cannot reach by family (IPv6 on an IPv4 socket) is marked AddressFamilyNotSupported.
        /// </summary>
        /// <remarks>
        /// A slot's sockaddr was written from its key by <see cref="SetOutgoing"/> (or here, for an earlier socket), so its family
        /// field says which family it is: a slot already of the socket's family costs one comparison, and only the others are
        /// parsed and written again.
        /// </remarks>
        private void FitPendingToSocket(AddressFamily socketFamily)
        {
            // Every slot added since the batch was emptied, or fitted last time, has the socket's family: nothing to look at.
            int family = socketFamily == AddressFamily.InterNetwork ? 1 : 2;
            if (_pendingFamilies == family) return;
            _pendingFamilies = family; // after this loop every pending slot is of the socket's family, or refused
            SockaddrFormat format = NativeDatagramIO.Format;
            int wanted = EndPointKey.SockaddrFamily(socketFamily, format);
            for (int i = _nextToSend; i < _count; i++)
            {
                byte* name = _names + i * SockaddrLayout.StorageSize;
                if (_sendErrors[i] == 0 && EndPointKey.ReadSockaddrFamily(name, format) != wanted) FitToSocket(i, name, socketFamily, format);
            }
        }

        /// <summary>Writes slot <paramref name="index"/>'s recipient again in the socket's family, or refuses it when the socket cannot reach it.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void FitToSocket(int index, byte* name, AddressFamily socketFamily, SockaddrFormat format)
        {
            ref Libc.LinuxMMsgHdr message = ref _messages[index];
            if (!EndPointKey.TryReadSockaddr(name, (int)message.Header.NameLength, format, out EndPointKey key))
            {
                Refuse(index);
                return;
            }
            if (socketFamily == AddressFamily.InterNetworkV6) key = key.MapToIPv6(); // the OS says so if the socket is not dual-mode
            else if (key.IsIPv4MappedToIPv6) key = key.MapToIPv4();
            else
            {
                Refuse(index);
                return;
            }
            message.Header.NameLength = (uint)key.WriteSockaddrAt(name, format);
        }

        private void Refuse(int index)
        {
            _sendErrors[index] = (int)SocketError.AddressFamilyNotSupported;
            _failed++;
        }

        // ----- lifetime -----

        /// <summary>
        /// Frees the native memory, from any thread. Later calls throw <see cref="ObjectDisposedException"/>. A call
        /// in progress on another thread keeps the memory until it returns (it ends in success or in
        /// ObjectDisposedException), then frees it; the spans the batch handed out are not kept (see the class remarks).
        /// A <see cref="Receive(Socket, int)"/> waiting on another thread is such a call: it keeps the memory until a
        /// datagram comes, its timeout passes or its socket is disposed, so dispose the socket first to end it at once.
        /// </summary>
        public void Dispose()
        {
            _disposed = true;
            if (_guard.TryMarkDisposed(out bool freeNow) && freeNow) FreeMemory();
        }

        private void ThrowIfDisposed()
        {
            if (_disposed) ThrowDisposed();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowDisposed()
        {
            // The batch's user is here, and will not read on: end its open reader, whose count would otherwise keep the
            // block until the finalizer (the last count out frees it now).
            EndReader();
            throw new ObjectDisposedException(nameof(DatagramBatch));
        }

        /// <summary>
        /// Counts a public call in for as long as it touches the native block (counted out by <see cref="ExitBlock"/>
        /// in a finally), so that a Dispose on another thread frees the block only after the call's last access.
        /// Throws ObjectDisposedException once the batch is disposed.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void EnterBlock()
        {
            if (!_guard.TryEnter()) ThrowDisposed();
        }

        /// <summary>Counts the call out; the last one out after a Dispose frees the block.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void ExitBlock()
        {
            if (_guard.Exit()) FreeMemory();
        }

        /// <summary>Frees the native block, and coalesced receive's own block if it was made.</summary>
        private void FreeMemory()
        {
            _memory.Dispose();
            _coalescedMemory?.Dispose();
        }

        /// <summary>Owns the batch's native block and frees it once: at Dispose (by the last call out), or by its finalizer if the batch is never disposed.</summary>
        private sealed class NativeBlock : SafeHandle
        {
            internal NativeBlock()
                : base(IntPtr.Zero, true)
            {
            }

            public override bool IsInvalid => handle == IntPtr.Zero;

            internal void Take(IntPtr memory) => SetHandle(memory);

            protected override bool ReleaseHandle()
            {
                PersistentAllocator.Shared.Free((void*)handle);
                return true;
            }

            /// <summary>The block's address, for tests.</summary>
            internal IntPtr Address => handle;
        }
    }
}
