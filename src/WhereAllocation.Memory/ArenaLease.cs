#nullable enable
using System;
using System.Runtime.CompilerServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// A rented arena of an <see cref="ArenaPool"/>: allocate from it as often as needed, then
    /// <see cref="Dispose"/> (or a <c>using</c> block) returns it and frees everything it handed out.
    /// Every call checks that the lease is still current (one compare, always on): a lease used or
    /// returned after it was returned throws <see cref="InvalidOperationException"/>, whichever copy of the
    /// struct is used.
    /// </summary>
    /// <remarks>
    /// One thread at a time, the return included: a lease may be handed from thread to thread, but it is
    /// returned by the thread that used it last, after its last use. Returning it while another thread is
    /// still in a call on it is the caller's race, and it cannot be made safe by counting calls: a returned
    /// arena is rewound and rented again at once, so its memory is reused rather than freed. (No owner thread
    /// is enforced: that would forbid the hand-off.) The
    /// pool's own <see cref="ArenaPool.Dispose"/> never touches a rented arena, so it is safe at any time.
    /// </remarks>
    public readonly unsafe struct ArenaLease : IDisposable
    {
        private readonly Arena? _arena;
        private readonly int _generation;

        internal ArenaLease(Arena arena, int generation)
        {
            _arena = arena;
            _generation = generation;
        }

        internal Arena? Arena => _arena;

        /// <summary>True while the arena is rented through this lease.</summary>
        public bool IsActive => _arena != null && _arena.ViewGeneration == _generation;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private Arena Current()
        {
            Arena? arena = _arena;
            if (arena == null || arena.ViewGeneration != _generation) ThrowStale();
            return arena!;
        }

        /// <summary><paramref name="size"/> bytes aligned to <paramref name="alignment"/> (a power of two up to 4096), valid until the lease is returned.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void* Allocate(nuint size, nuint alignment) => Current().Allocate(size, alignment);

        /// <summary>Same as <see cref="Allocate(nuint, nuint)"/> with signed arguments.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void* Allocate(int size, int alignment = NativeAllocator.DefaultAlignment) => Current().Allocate(size, alignment);

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/>, aligned for it.</summary>
        public T* Allocate<T>(int count) where T : unmanaged => Current().Allocate<T>(count);

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/> as a span.</summary>
        public Span<T> AllocateSpan<T>(int count, bool clear = false) where T : unmanaged => Current().AllocateSpan<T>(count, clear);

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/> as a view that throws once the lease is returned.</summary>
        public NativeView<T> AllocateView<T>(int count, bool clear = false) where T : unmanaged => Current().AllocateView<T>(count, clear);

        /// <summary>True when <paramref name="pointer"/> was handed out by this lease's arena and is still valid.</summary>
        public bool Owns(void* pointer) => IsActive && _arena!.Owns(pointer);

        /// <summary>Bytes handed out so far, alignment padding and unused page tails included.</summary>
        public long BytesUsed => Current().BytesUsed;

        /// <summary>Pages allocated beyond the arena's first page (freed at return).</summary>
        public int ExtraPages => Current().ExtraPages;

        /// <summary>Returns the arena to its pool; everything allocated from it is freed.</summary>
        /// <exception cref="InvalidOperationException">the lease was already returned (through this or another copy), or is default.</exception>
        public void Dispose()
        {
            if (_arena == null) throw new InvalidOperationException("this ArenaLease is default: it was never rented.");
            _arena.Pool.Return(_arena, _generation);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowStale()
        {
            throw new InvalidOperationException("this arena lease was already returned to its pool (or is default): rent a new one.");
        }
    }
}
