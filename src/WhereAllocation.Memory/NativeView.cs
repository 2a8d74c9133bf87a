#nullable enable
using System;
using System.Runtime.CompilerServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// <see cref="Length"/> elements of an unmanaged struct in native memory, from any allocator, seen as
    /// a <see cref="Span{T}"/> or a pointer. A view remembers the lifetime it was made in: a view of
    /// frame memory used after <see cref="FrameAllocator.Reset"/>, or of an arena after the arena was
    /// returned, throws <see cref="InvalidOperationException"/> instead of reading memory that belongs to
    /// someone else (a check always on: one integer compare per access). Views from the multi-frame and
    /// persistent allocators are not invalidated by <c>Free</c>. A view is a plain value: copying it copies
    /// the reference, not the memory.
    /// </summary>
    /// <remarks>
    /// The check catches a use after the lifetime ended on the same thread, or on a thread that learnt of the
    /// end (a lock, a join, a queue). It cannot make a use that races with a <c>Reset</c>, a return or a
    /// <c>Dispose</c> on another thread safe: the view holds no reference, and the memory it gave out
    /// (<see cref="AsSpan"/>, <see cref="Pointer"/>, an element's ref) outlives the check. That race is the
    /// caller's, as with any pooled buffer; the library itself writes nothing through a view.
    /// </remarks>
    public readonly unsafe struct NativeView<T> where T : unmanaged
    {
        private readonly T* _pointer;
        private readonly int _length;
        private readonly NativeAllocator? _owner;
        private readonly int _generation;

        /// <summary>A view of memory the caller owns; no lifetime check.</summary>
        public NativeView(T* pointer, int length)
        {
            if (pointer == null && length != 0) throw new ArgumentNullException(nameof(pointer));
            if (length < 0) throw new ArgumentOutOfRangeException(nameof(length));
            _pointer = pointer;
            _length = length;
            _owner = null;
            _generation = 0;
        }

        internal NativeView(T* pointer, int length, NativeAllocator owner)
        {
            _pointer = pointer;
            _length = length;
            _owner = owner;
            _generation = owner.ViewGeneration;
        }

        /// <summary>Number of elements.</summary>
        public int Length => _length;

        /// <summary>Size in bytes.</summary>
        public long ByteLength => (long)_length * sizeof(T);

        /// <summary>The allocator the memory came from, or null for a view made from a raw pointer.</summary>
        public NativeAllocator? Allocator => _owner;

        /// <summary>False once the memory's lifetime has ended (frame reset, arena returned, allocator disposed).</summary>
        public bool IsAlive => _owner == null || _owner.ViewGeneration == _generation;

        /// <summary>The first element. Throws when the lifetime has ended.</summary>
        public T* Pointer
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get
            {
                if (_owner != null && _owner.ViewGeneration != _generation) ThrowExpired();
                return _pointer;
            }
        }

        /// <summary>The pointer without the lifetime check (for freeing, or for code that checked once).</summary>
        public T* UncheckedPointer => _pointer;

        /// <summary>Element <paramref name="index"/>, bounds-checked and lifetime-checked.</summary>
        public ref T this[int index]
        {
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get
            {
                if ((uint)index >= (uint)_length) ThrowIndex(index);
                if (_owner != null && _owner.ViewGeneration != _generation) ThrowExpired();
                return ref _pointer[index];
            }
        }

        /// <summary>The elements as a span. Throws when the lifetime has ended; the span itself cannot be checked later.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public Span<T> AsSpan()
        {
            if (_owner != null && _owner.ViewGeneration != _generation) ThrowExpired();
            return new Span<T>(_pointer, _length);
        }

        /// <summary>A part of this view, with the same lifetime.</summary>
        public NativeView<T> Slice(int start, int length)
        {
            if ((uint)start > (uint)_length || (uint)length > (uint)(_length - start)) throw new ArgumentOutOfRangeException(nameof(start));
            return new NativeView<T>(_pointer + start, length, _owner, _generation);
        }

        private NativeView(T* pointer, int length, NativeAllocator? owner, int generation)
        {
            _pointer = pointer;
            _length = length;
            _owner = owner;
            _generation = generation;
        }

        /// <summary>Same as <see cref="AsSpan"/>.</summary>
        public static implicit operator Span<T>(NativeView<T> view) => view.AsSpan();

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowExpired()
        {
            throw new InvalidOperationException(_owner!.DescribeExpiredView(_generation));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowIndex(int index)
        {
            throw new IndexOutOfRangeException("index " + index + " is outside the view's " + _length + " elements.");
        }
    }
}
