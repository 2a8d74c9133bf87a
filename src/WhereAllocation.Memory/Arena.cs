#nullable enable
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// One arena of an <see cref="ArenaPool"/>: a bump allocator over a 4096-byte first page that it keeps,
    /// plus extra pages taken from the native heap when a request does not fit and freed when the arena is
    /// returned (up to <see cref="ArenaPool.SparePagesPerArena"/> 4096-byte ones are kept for the next rent).
    /// Reached through an <see cref="ArenaLease"/>, which checks that the arena is still rented.
    /// </summary>
    internal sealed unsafe class Arena : NativeAllocator
    {
        private readonly ArenaPool _pool;
        private byte* _firstPage;
        private nuint _cursor;
        private nuint _limit;
        private nuint* _extraPages;     // (start, size) of each page allocated beyond the first, freed on return
        private int _extraCount;
        private int _extraCapacity;
        private long _extraBytes;
        private nuint* _spares;         // 4096-byte pages kept from earlier rents (ArenaPool.SparePagesPerArena)
        private int _spareCount;
        private readonly int _spareCapacity;
        internal bool Rented;

        internal Arena(ArenaPool pool)
        {
            _pool = pool;
            _firstPage = (byte*)NativeHeap.Alloc(ArenaPool.PageSize);
            _extraCapacity = 4;
            _extraPages = (nuint*)NativeHeap.Alloc((nuint)(2 * _extraCapacity * sizeof(nuint)));
            _cursor = (nuint)_firstPage;
            _limit = _cursor + ArenaPool.PageSize;
            pool.CountNative(ArenaPool.PageSize);
            _spareCapacity = pool.SparePagesPerArena;
            if (_spareCapacity > 0) _spares = (nuint*)NativeHeap.Alloc((nuint)(_spareCapacity * sizeof(nuint)));
        }

        internal override string Name => "arena";

        internal ArenaPool Pool => _pool;

        internal long ExtraPageBytes => _extraBytes;

        internal int ExtraPages => _extraCount;

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
            return AllocatePage(size, alignment);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void* AllocatePage(nuint size, nuint alignment)
        {
            if (_firstPage == null) MemoryErrors.ThrowDisposed(Name);
            // A page of 4096 bytes, or as many whole pages as this request needs with its alignment padding.
            nuint need = size + alignment - 1;
            nuint pageBytes = need <= ArenaPool.PageSize ? ArenaPool.PageSize : (need + ArenaPool.PageSize - 1) & ~(nuint)(ArenaPool.PageSize - 1);
            if (_extraCount == _extraCapacity)
            {
                nuint* larger = (nuint*)NativeHeap.Alloc((nuint)(4 * _extraCapacity * sizeof(nuint)));
                Buffer.MemoryCopy(_extraPages, larger, 4 * _extraCapacity * sizeof(nuint), 2 * _extraCount * sizeof(nuint));
                NativeHeap.Free(_extraPages);
                _extraPages = larger;
                _extraCapacity *= 2;
            }
            byte* page;
            if (pageBytes == ArenaPool.PageSize && _spareCount != 0)
            {
                page = (byte*)_spares[--_spareCount]; // already counted in the pool's native bytes
            }
            else
            {
                page = (byte*)NativeHeap.Alloc(pageBytes);
                _pool.CountNative((long)pageBytes);
            }
            _extraPages[2 * _extraCount] = (nuint)page;
            _extraPages[2 * _extraCount + 1] = pageBytes;
            _extraCount++;
            _extraBytes += (long)pageBytes;
            _cursor = (nuint)page;
            _limit = _cursor + pageBytes;
            nuint start = AlignUp(_cursor, alignment);
            _cursor = start + size;
            return (void*)start;
        }

        /// <summary>Bytes handed out since the arena was rented, padding and page tails included.</summary>
        internal long BytesUsed
        {
            get
            {
                if (_extraCount == 0) return (long)(_cursor - (nuint)_firstPage);
                return ArenaPool.PageSize + _extraBytes - (long)(_limit - _cursor);
            }
        }

        /// <summary>
        /// Frees the extra pages (keeping up to the pool's spare count of 4096-byte ones) and rewinds to the
        /// first page. The pool has already made old leases and views stale.
        /// </summary>
        internal void Rewind()
        {
#if DEBUG
            new Span<byte>(_firstPage, ArenaPool.PageSize).Fill(0xDD);
#endif
            long freed = 0;
            for (int i = 0; i < _extraCount; i++)
            {
                nuint page = _extraPages[2 * i], size = _extraPages[2 * i + 1];
                if (size == ArenaPool.PageSize && _spareCount < _spareCapacity)
                {
                    _spares[_spareCount++] = page;
                    continue;
                }
                NativeHeap.Free((void*)page);
                freed += (long)size;
            }
            if (freed != 0) _pool.CountNative(-freed);
            _extraCount = 0;
            _extraBytes = 0;
            _cursor = (nuint)_firstPage;
            _limit = _cursor + ArenaPool.PageSize;
        }

        public override void Free(void* pointer)
        {
            if (pointer == null) MemoryErrors.ThrowNull(Name);
            if (!Owns(pointer)) MemoryErrors.ThrowNotOwned(Name, pointer);
        }

        public override bool Owns(void* pointer)
        {
            nuint p = (nuint)pointer;
            if (_firstPage == null) return false;
            if (p >= (nuint)_firstPage && p < (nuint)_firstPage + ArenaPool.PageSize && (_extraCount != 0 || p < _cursor)) return true;
            for (int i = 0; i < _extraCount; i++)
            {
                nuint start = _extraPages[2 * i];
                nuint end = i == _extraCount - 1 ? _cursor : start + _extraPages[2 * i + 1];
                if (p >= start && p < end) return true;
            }
            return false;
        }

        internal override string DescribeExpiredView(int generation)
        {
            return "arena memory used after the arena was returned to its pool.";
        }

        protected override void Dispose(bool disposing)
        {
            if (_firstPage == null) return;
            for (int i = 0; i < _extraCount; i++) NativeHeap.Free((void*)_extraPages[2 * i]);
            for (int i = 0; i < _spareCount; i++) NativeHeap.Free((void*)_spares[i]);
            if (_spares != null) NativeHeap.Free(_spares);
            NativeHeap.Free(_extraPages);
            NativeHeap.Free(_firstPage);
            _pool.CountNative(-(ArenaPool.PageSize + _extraBytes + (long)_spareCount * ArenaPool.PageSize));
            _spareCount = 0;
            _spares = null;
            _extraCount = 0;
            _extraBytes = 0;
            _firstPage = null;
            _extraPages = null;
            _cursor = 0;
            _limit = 0;
            ViewGeneration++;
        }
    }
}
