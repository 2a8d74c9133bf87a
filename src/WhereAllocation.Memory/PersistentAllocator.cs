#nullable enable
using System;
using System.Threading;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// Memory that lives until it is freed: explicit aligned allocate and free on the native heap
    /// (NativeMemory.AlignedAlloc on .NET 8+, Marshal.AllocHGlobal on netstandard2.1), with every live
    /// allocation recorded in a native hash table. That record gives exact accounting
    /// (<see cref="LiveBytes"/>, <see cref="LiveAllocations"/>, <see cref="PeakBytes"/>) and always-on
    /// checks: freeing a pointer not made here, or freeing twice, throws instead of corrupting the heap.
    /// </summary>
    /// <remarks>
    /// Thread-safe, <see cref="NativeAllocator.Dispose()"/> included: every call works on the table and the
    /// blocks under one short lock, and a block being cleared for <c>AllocateSpan</c>/<c>AllocateView</c> is
    /// cleared before it is recorded, so a Dispose on another thread never frees memory under the allocator's
    /// own hands. <see cref="Shared"/> is the process-wide instance, for code that needs no
    /// separate count; make an instance of your own to account for a subsystem's memory separately, and
    /// dispose it to free whatever it still holds.
    /// </remarks>
    public sealed unsafe class PersistentAllocator : NativeAllocator
    {
        private const int RecentFrees = 64;

        /// <summary>The process-wide persistent allocator. It cannot be disposed.</summary>
        public static PersistentAllocator Shared { get; } = new PersistentAllocator(isShared: true);

        private readonly bool _isShared;
        private PointerMap _live;          // user pointer -> (size, 1 if from the aligned allocator)
        private nuint* _recent;            // ring of recently freed pointers, to tell "freed twice" from "not ours"
        private int _recentNext;
        private SpinGate _gate;
        private long _liveBytes, _liveCount, _peakBytes, _totalAllocations, _totalFrees;
        private bool _disposed;

        /// <summary>A persistent allocator with its own accounting.</summary>
        public PersistentAllocator() : this(isShared: false)
        {
        }

        private PersistentAllocator(bool isShared)
        {
            _isShared = isShared;
            _live.Init(6);
            _recent = (nuint*)NativeHeap.Alloc((nuint)(RecentFrees * sizeof(nuint)));
            new Span<nuint>(_recent, RecentFrees).Clear();
        }

        internal override string Name => nameof(PersistentAllocator);

        /// <summary>Bytes asked for by allocations not yet freed.</summary>
        public long LiveBytes => Volatile.Read(ref _liveBytes);

        /// <summary>Allocations not yet freed.</summary>
        public long LiveAllocations => Volatile.Read(ref _liveCount);

        /// <summary>The most <see cref="LiveBytes"/> has been.</summary>
        public long PeakBytes => Volatile.Read(ref _peakBytes);

        /// <summary>Allocations made since the allocator was created.</summary>
        public long TotalAllocations => Volatile.Read(ref _totalAllocations);

        /// <summary>Frees since the allocator was created.</summary>
        public long TotalFrees => Volatile.Read(ref _totalFrees);

        /// <inheritdoc />
        public override void* Allocate(nuint size, nuint alignment) => Allocate(size, alignment, false);

        /// <summary>Zeroes the block before it is recorded, while a concurrent <see cref="NativeAllocator.Dispose()"/> cannot know of it yet.</summary>
        internal override void* AllocateCleared(nuint size, nuint alignment) => Allocate(size, alignment, true);

        private void* Allocate(nuint size, nuint alignment, bool clear)
        {
            if (!MemoryErrors.IsValid(size, alignment)) MemoryErrors.ThrowBadRequest(size, alignment);
            if (_disposed) MemoryErrors.ThrowDisposed(Name);
            // malloc already gives 16 bytes (8 on 32-bit): the aligned allocator only when more is asked.
            bool aligned = alignment > NativeHeap.MallocAlignment;
            void* pointer = aligned ? NativeHeap.AllocAligned(size, alignment) : NativeHeap.Alloc(size);
            if (clear) Clear(pointer, size);
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                Release(pointer, aligned);
                MemoryErrors.ThrowDisposed(Name);
            }
            _live.Add((nuint)pointer, size, aligned ? (nuint)1 : 0);
            _liveBytes += (long)size;
            _liveCount++;
            _totalAllocations++;
            if (_liveBytes > _peakBytes) _peakBytes = _liveBytes;
            _gate.Exit();
            return pointer;
        }

        /// <inheritdoc />
        public override void Free(void* pointer)
        {
            if (pointer == null) MemoryErrors.ThrowNull(Name);
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                MemoryErrors.ThrowDisposed(Name);
            }
            if (!_live.Remove((nuint)pointer, out nuint size, out nuint alignedFlag))
            {
                bool twice = false;
                for (int i = 0; i < RecentFrees; i++) twice |= _recent[i] == (nuint)pointer;
                _gate.Exit();
                if (twice) MemoryErrors.ThrowFreedTwice(Name, pointer);
                MemoryErrors.ThrowNotOwned(Name, pointer);
            }
            _recent[_recentNext] = (nuint)pointer;
            _recentNext = (_recentNext + 1) & (RecentFrees - 1);
            _liveBytes -= (long)size;
            _liveCount--;
            _totalFrees++;
            _gate.Exit();
            Release(pointer, alignedFlag != 0);
        }

        private static void Release(void* pointer, bool aligned)
        {
            if (aligned) NativeHeap.FreeAligned(pointer);
            else NativeHeap.Free(pointer);
        }

        /// <summary>The size asked for when <paramref name="pointer"/> was allocated, or -1 when it is not a live allocation of this allocator.</summary>
        public long SizeOf(void* pointer)
        {
            _gate.Enter();
            nuint size = 0;
            bool found = !_disposed && _live.TryGet((nuint)pointer, out size, out _);
            _gate.Exit();
            return found ? (long)size : -1;
        }

        /// <inheritdoc />
        public override bool Owns(void* pointer) => SizeOf(pointer) >= 0;

        /// <summary>Frees every allocation still live and the allocator's table; returns how many were live.</summary>
        /// <exception cref="InvalidOperationException">this is <see cref="Shared"/>.</exception>
        public long FreeAll()
        {
            if (_isShared) throw new InvalidOperationException("PersistentAllocator.Shared is used by all the library's code and cannot free everything at once.");
            _gate.Enter();
            long count = _liveCount;
            if (!_disposed)
            {
                for (int i = 0; i < _live.Capacity; i++)
                    if (_live.TryGetAt(i, out nuint pointer, out _, out nuint alignedFlag)) Release((void*)pointer, alignedFlag != 0);
                _live.Dispose();
                _live.Init(6);
            }
            _liveBytes = 0;
            _liveCount = 0;
            _gate.Exit();
            return count;
        }

        /// <inheritdoc />
        protected override void Dispose(bool disposing)
        {
            if (_isShared)
            {
                if (disposing) throw new InvalidOperationException("PersistentAllocator.Shared cannot be disposed.");
                return;
            }
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                return;
            }
            for (int i = 0; i < _live.Capacity; i++)
                if (_live.TryGetAt(i, out nuint pointer, out _, out nuint alignedFlag)) Release((void*)pointer, alignedFlag != 0);
            _live.Dispose();
            NativeHeap.Free(_recent);
            _recent = null;
            _disposed = true;
            _liveBytes = 0;
            _liveCount = 0;
            ViewGeneration++;
            _gate.Exit();
        }
    }
}
