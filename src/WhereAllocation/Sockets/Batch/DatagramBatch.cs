#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using WhereAllocation.Interop;

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
        private bool _sendWaitCounted; // Send waited for room: counted among the library's waits until it released the socket's handle
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
        /// The one place the batch's native memory comes from: a single block for every slot's header, iovec, sockaddr,
        /// send error and buffer, on a 64-byte boundary, freed once by <see cref="Dispose"/> or, if the batch is never
        /// disposed, by the handle's finalizer. One allocation per batch, never per datagram; the sockets package takes it
        /// from the OS's heap itself rather than from an allocator package, so that it depends on nothing (docs/ARCHITECTURE.md).
        /// </summary>
        private static NativeBlock AllocateNative(int bytes)
        {
            var block = new NativeBlock();
            block.Take((nuint)bytes);
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
#if !NET8_0_OR_GREATER
            // On netstandard2.1 (Mono, Unity), which has no aligned allocation: the start that AllocHGlobal returned, kept
            // to free it; the handle is that start rounded up to BlockAlignment.
            private IntPtr _start;
#endif

            internal NativeBlock()
                : base(IntPtr.Zero, true)
            {
            }

            public override bool IsInvalid => handle == IntPtr.Zero;

            /// <summary>Allocates <paramref name="bytes"/> on a <see cref="BlockAlignment"/> boundary (throws OutOfMemoryException when the heap refuses).</summary>
            internal void Take(nuint bytes)
            {
#if NET8_0_OR_GREATER
                SetHandle((IntPtr)NativeMemory.AlignedAlloc(bytes, BlockAlignment));
#else
                // The constructor runs before this: a block taken here is freed by ReleaseHandle even if the batch's
                // constructor throws afterwards (the finalizer, since the batch is never returned).
                _start = Marshal.AllocHGlobal((IntPtr)(long)(bytes + BlockAlignment - 1));
                SetHandle((IntPtr)(((long)_start + BlockAlignment - 1) & ~(long)(BlockAlignment - 1)));
#endif
                Interlocked.Increment(ref s_liveBlocks);
            }

            protected override bool ReleaseHandle()
            {
#if NET8_0_OR_GREATER
                NativeMemory.AlignedFree((void*)handle);
#else
                Marshal.FreeHGlobal(_start);
#endif
                Interlocked.Decrement(ref s_liveBlocks);
                Volatile.Write(ref _freed, true);
                return true;
            }

            /// <summary>The block's address, for tests.</summary>
            internal IntPtr Address => handle;

            /// <summary>True once the block went back to the heap (a closed handle that a call still holds is not freed yet).</summary>
            internal bool Freed => Volatile.Read(ref _freed);

            private bool _freed;
        }

        // Batch blocks allocated and not yet freed, in the process: for the tests and the leak check.
        private static long s_liveBlocks;

        /// <summary>Batch blocks allocated and not yet freed in the process (for tests).</summary>
        internal static long LiveNativeBlocks => Interlocked.Read(ref s_liveBlocks);

        /// <summary>True once the batch's native block has been freed (for tests).</summary>
        internal bool NativeBlockFreed => _memory.Freed;
    }
}
