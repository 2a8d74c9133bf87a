#nullable enable
using System;
using System.Runtime.CompilerServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// Memory for one frame: a bump allocator over one native block. Each allocation is the previous
    /// one's end rounded up to the alignment asked for, so consecutive allocations are apart by the
    /// alignment padding only; <see cref="Reset"/> at the end of the frame gives everything back at once.
    /// When the block is full, allocation goes on in overflow blocks from the native heap (never a failure,
    /// never managed memory); <see cref="Reset"/> frees them, and <see cref="HighWaterMark"/> tells the
    /// most a frame has used, so that the block can be sized to make overflow rare.
    /// </summary>
    /// <remarks>
    /// One thread at a time: like a per-thread temp allocator, it has no lock. Give each thread its own.
    /// <see cref="NativeAllocator.Dispose()"/> is the exception: it may come from any thread, also during a
    /// call, and the blocks are freed once no call that touches them (<see cref="Reset"/>, a clearing or
    /// overflowing allocation, <see cref="Owns"/>, <see cref="NativeBytes"/>) is in progress; those calls count
    /// themselves in and out with two interlocked operations. The allocation fast path, a pointer bump, does
    /// not: it touches no native memory, and after Dispose it falls through to a slow path that throws
    /// <see cref="ObjectDisposedException"/>.
    /// <see cref="Free(void*)"/> only checks that the pointer is this frame's and does nothing else.
    /// A <see cref="NativeView{T}"/> from this allocator throws when used after <see cref="Reset"/> (always
    /// on); a raw pointer cannot be checked, so Debug builds of the library fill the used part of the block
    /// with 0xDD at each reset.
    /// </remarks>
    public sealed unsafe class FrameAllocator : NativeAllocator
    {
        /// <summary>The block size used when none is given: 64 KiB.</summary>
        public const int DefaultBlockSize = 64 * 1024;

        private byte* _block;          // the main block, kept from frame to frame
        private readonly nuint _blockSize;
        private byte* _current;        // start of the block being bumped (the main block or the newest overflow block)
        private nuint _cursor;         // next free address in the current block
        private nuint _limit;          // end of the current block
        private byte* _overflow;       // newest overflow block; each starts with an OverflowHeader
        private nuint _retiredBytes;   // bytes used this frame in blocks that are no longer current
        private nuint _highWater;
        private long _frame;
        private long _overflowBlocksTotal;
        private DisposeGuard _guard;     // the calls that touch the blocks, so that Dispose from another thread frees after them

        private struct OverflowHeader
        {
            internal byte* Previous;
            internal nuint Size; // bytes after the header
        }

        private static readonly nuint HeaderSize = (nuint)((sizeof(OverflowHeader) + 15) & ~15);

        /// <summary>A frame allocator whose main block holds <paramref name="blockSize"/> bytes.</summary>
        public FrameAllocator(int blockSize = DefaultBlockSize)
        {
            if (blockSize <= 0) throw new ArgumentOutOfRangeException(nameof(blockSize), "blockSize " + blockSize + " is not positive.");
            _blockSize = (nuint)blockSize;
            // Page-aligned, so that an allocation's alignment never depends on where malloc put the block.
            _block = (byte*)NativeHeap.AllocAligned(_blockSize, MaxAlignment);
            _current = _block;
            _cursor = (nuint)_block;
            _limit = (nuint)_block + _blockSize;
        }

        internal override string Name => nameof(FrameAllocator);

        /// <summary>Bytes in the main block.</summary>
        public int BlockSize => (int)_blockSize;

        /// <summary>Number of <see cref="Reset"/> calls so far: the current frame's number.</summary>
        public long Frame => _frame;

        /// <summary>Bytes used so far in this frame, alignment padding included, main block and overflow together.</summary>
        public long BytesUsed => (long)(_retiredBytes + (_cursor - (nuint)_current) - (_current == _block ? 0 : HeaderSize));

        /// <summary>The most bytes any frame has used (this one included): a block this large would never overflow.</summary>
        public long HighWaterMark
        {
            get
            {
                long used = BytesUsed;
                return used > (long)_highWater ? used : (long)_highWater;
            }
        }

        /// <summary>True when this frame's allocations no longer fit in the main block.</summary>
        public bool IsOverflowing => _overflow != null;

        /// <summary>Overflow blocks allocated since the allocator was made.</summary>
        public long OverflowBlocksAllocated => _overflowBlocksTotal;

        /// <summary>Native bytes held right now: the main block and this frame's overflow blocks.</summary>
        public long NativeBytes
        {
            get
            {
                if (!_guard.TryEnter()) return 0;
                try
                {
                    long total = (long)_blockSize;
                    for (byte* b = _overflow; b != null; b = ((OverflowHeader*)b)->Previous) total += (long)(((OverflowHeader*)b)->Size + HeaderSize);
                    return total;
                }
                finally
                {
                    Exit();
                }
            }
        }

        /// <inheritdoc />
        /// <remarks>
        /// The fast path is a pointer bump that reads no native memory and takes no reference: after
        /// <see cref="NativeAllocator.Dispose()"/> its limit is 0, so the call falls through to the slow path,
        /// which throws <see cref="ObjectDisposedException"/>. An allocation racing with a Dispose on another
        /// thread may return memory that the Dispose then frees: that use is the caller's race.
        /// </remarks>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public override void* Allocate(nuint size, nuint alignment)
        {
            if (!MemoryErrors.IsValid(size, alignment)) MemoryErrors.ThrowBadRequest(size, alignment);
            nuint start = (_cursor + alignment - 1) & ~(alignment - 1);
            nuint end = start + size;
            if (end <= _limit && end > start)
            {
                _cursor = end;
                return (void*)start;
            }
            return AllocateOverflow(size, alignment);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void* AllocateOverflow(nuint size, nuint alignment)
        {
            Enter();
            try
            {
                // Each overflow block is at least as large as the main block and large enough for this request.
                nuint need = size + alignment - 1;
                nuint blockSize = need > _blockSize ? need : _blockSize;
                byte* block = (byte*)NativeHeap.Alloc(blockSize + HeaderSize);
                ((OverflowHeader*)block)->Previous = _overflow;
                ((OverflowHeader*)block)->Size = blockSize;
                _overflow = block;
                _overflowBlocksTotal++;
                _retiredBytes += _cursor - (nuint)_current - (_current == _block ? 0 : HeaderSize);
                _current = block;
                _cursor = (nuint)block + HeaderSize;
                _limit = _cursor + blockSize;
                nuint start = AlignUp(_cursor, alignment);
                _cursor = start + size;
                return (void*)start;
            }
            finally
            {
                Exit();
            }
        }

        /// <summary>Zeroes the memory while holding the blocks, so that a Dispose on another thread frees them only afterwards.</summary>
        internal override void* AllocateCleared(nuint size, nuint alignment)
        {
            Enter();
            try
            {
                void* pointer = Allocate(size, alignment);
                Clear(pointer, size);
                return pointer;
            }
            finally
            {
                Exit();
            }
        }

        /// <summary>
        /// Ends the frame: every allocation made since the last reset is given back at once, overflow blocks
        /// are freed, views of this frame's memory stop working, and the high-water mark is updated.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The allocator was disposed.</exception>
        public void Reset()
        {
            Enter();
            try
            {
                nuint used = (nuint)BytesUsed;
                if (used > _highWater) _highWater = used;
#if DEBUG
                // Poison what this frame used, so a raw pointer kept past Reset reads 0xDD rather than stale data.
                nuint mainUsed = _current == _block ? _cursor - (nuint)_block : _blockSize;
                new Span<byte>(_block, (int)mainUsed).Fill(0xDD);
#endif
                FreeOverflow();
                _current = _block;
                _cursor = (nuint)_block;
                _limit = (nuint)_block + _blockSize;
                _retiredBytes = 0;
                _frame++;
                ViewGeneration++;
            }
            finally
            {
                Exit();
            }
        }

        private void FreeOverflow()
        {
            byte* block = _overflow;
            while (block != null)
            {
                byte* previous = ((OverflowHeader*)block)->Previous;
                NativeHeap.Free(block);
                block = previous;
            }
            _overflow = null;
        }

        /// <summary>Checks that <paramref name="pointer"/> is memory of this frame; frame memory is only given back by <see cref="Reset"/>.</summary>
        /// <exception cref="ArgumentNullException">pointer is null.</exception>
        /// <exception cref="ArgumentException">pointer is not memory of this frame.</exception>
        /// <exception cref="ObjectDisposedException">The allocator was disposed.</exception>
        public override void Free(void* pointer)
        {
            if (pointer == null) MemoryErrors.ThrowNull(Name);
            Enter();
            bool owned;
            try
            {
                owned = OwnsHeld(pointer);
            }
            finally
            {
                Exit();
            }
            if (!owned) MemoryErrors.ThrowNotOwned(Name, pointer);
        }

        /// <inheritdoc />
        public override bool Owns(void* pointer)
        {
            if (!_guard.TryEnter()) return false;
            try
            {
                return OwnsHeld(pointer);
            }
            finally
            {
                Exit();
            }
        }

        private bool OwnsHeld(void* pointer)
        {
            nuint p = (nuint)pointer;
            nuint mainEnd = _current == _block ? _cursor : (nuint)_block + _blockSize;
            if (p >= (nuint)_block && p < mainEnd) return true;
            for (byte* b = _overflow; b != null; b = ((OverflowHeader*)b)->Previous)
            {
                nuint start = (nuint)b + HeaderSize;
                nuint end = b == _current ? _cursor : start + ((OverflowHeader*)b)->Size;
                if (p >= start && p < end) return true;
            }
            return false;
        }

        internal override string DescribeExpiredView(int generation)
        {
            return _guard.IsDisposed
                ? "frame memory used after its FrameAllocator was disposed."
                : "frame memory used after Reset(): the view was made in an earlier frame (" + (ViewGeneration - generation) + " reset(s) ago).";
        }

        /// <summary>Counts in a call that touches the blocks; throws once the allocator is disposed.</summary>
        private void Enter()
        {
            if (!_guard.TryEnter()) MemoryErrors.ThrowDisposed(Name);
        }

        /// <summary>Counts the call out, and frees the blocks when a Dispose came meanwhile and this was the last call.</summary>
        private void Exit()
        {
            if (_guard.Exit()) FreeBlocks();
        }

        /// <summary>
        /// Marks the allocator disposed, from any thread: the blocks are freed now, or by the last call still
        /// using them when it ends (<see cref="Reset"/>, a clearing or overflowing allocation, <see cref="Owns"/>).
        /// </summary>
        protected override void Dispose(bool disposing)
        {
            if (!_guard.TryMarkDisposed(out bool freeNow)) return;
            _limit = 0; // the bump fast path fails from now on, and its slow path throws ObjectDisposedException
            ViewGeneration++;
            if (freeNow) FreeBlocks();
        }

        /// <summary>Runs once, when the allocator is disposed and no call holds the blocks.</summary>
        private void FreeBlocks()
        {
            _limit = 0;
            _cursor = 0;
            _current = null;
            FreeOverflow();
            NativeHeap.FreeAligned(_block);
            _block = null;
            ViewGeneration++;
        }
    }
}
