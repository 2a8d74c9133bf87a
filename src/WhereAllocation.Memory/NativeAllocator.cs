#nullable enable
using System;
using System.Runtime.CompilerServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// What every allocator of native memory in this library offers: raw aligned blocks
    /// (<see cref="Allocate(nuint, nuint)"/>, <see cref="Free(void*)"/>) and typed views of N unmanaged
    /// elements (<see cref="Allocate{T}"/>, <see cref="AllocateSpan{T}"/>, <see cref="AllocateView{T}"/>).
    /// None of these calls allocates managed memory once the allocator is warm.
    /// </summary>
    /// <remarks>
    /// Checks that are always on (one or two integer compares, or part of the bookkeeping anyway): size 0
    /// or negative or absurd, alignment not a power of two from 1 to 4096, freeing a pointer the allocator
    /// does not own, freeing twice (multi-frame and persistent), using a view after its frame was reset or
    /// its arena returned, returning an arena twice, using a disposed allocator. Debug builds of the
    /// library add what costs more: frame memory is filled with 0xDD at <see cref="FrameAllocator.Reset"/>
    /// and arena memory at return, so a raw pointer kept too long reads poison, and multi-frame allocations
    /// record the stack that made them (see <see cref="IsDebugBuild"/>).
    /// </remarks>
    public abstract unsafe class NativeAllocator : IDisposable
    {
        /// <summary>The largest alignment honoured: one 4096-byte page.</summary>
        public const int MaxAlignment = 4096;

        /// <summary>The alignment used when none is given: 16, enough for any primitive and SIMD vector up to 128 bits.</summary>
        public const int DefaultAlignment = 16;

        /// <summary>The largest single allocation: 1 TiB on 64-bit processes, 2 GiB - 1 on 32-bit.</summary>
        public static readonly nuint MaxAllocationSize = IntPtr.Size == 8 ? (nuint)1 << 40 : (nuint)int.MaxValue;

        /// <summary>True when this is a Debug build of the library, which poisons freed memory and records allocation sites.</summary>
        public static bool IsDebugBuild
        {
            get
            {
#if DEBUG
                return true;
#else
                return false;
#endif
            }
        }

        /// <summary>Bumped when memory handed out so far stops being valid (frame reset, arena return, dispose); views compare it.</summary>
        internal int ViewGeneration;

        /// <summary>A short name for messages ("FrameAllocator").</summary>
        internal abstract string Name { get; }

        /// <summary>
        /// <paramref name="size"/> bytes (at least 1) whose address is a multiple of <paramref name="alignment"/>
        /// (a power of two from 1 to 4096). The memory is not cleared.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException">size is 0 or larger than <see cref="MaxAllocationSize"/>, or alignment is not a power of two up to 4096.</exception>
        /// <exception cref="ObjectDisposedException">the allocator was disposed.</exception>
        public abstract void* Allocate(nuint size, nuint alignment);

        /// <summary>Same as <see cref="Allocate(nuint, nuint)"/> with signed arguments, so that a negative size is reported as such.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void* Allocate(int size, int alignment = DefaultAlignment)
        {
            if (size <= 0 || alignment <= 0) MemoryErrors.ThrowBadRequest(size, alignment);
            return Allocate((nuint)size, (nuint)alignment);
        }

        /// <summary>Same as <see cref="Allocate(int, int)"/>, as an IntPtr for callers without unsafe code.</summary>
        public IntPtr AllocatePtr(int size, int alignment = DefaultAlignment) => (IntPtr)Allocate(size, alignment);

        /// <summary>
        /// Gives the memory at <paramref name="pointer"/> back. Frame memory and arena memory are only given
        /// back all at once (reset, return), so for them this checks ownership and does nothing else.
        /// </summary>
        /// <exception cref="ArgumentNullException">pointer is null.</exception>
        /// <exception cref="ArgumentException">this allocator did not allocate pointer.</exception>
        /// <exception cref="InvalidOperationException">pointer was already freed.</exception>
        /// <exception cref="ObjectDisposedException">the allocator was disposed (everything it handed out is freed).</exception>
        public abstract void Free(void* pointer);

        /// <summary>Same as <see cref="Free(void*)"/>.</summary>
        public void Free(IntPtr pointer) => Free((void*)pointer);

        /// <summary>True when <paramref name="pointer"/> lies in memory this allocator currently hands out; false once it is disposed.</summary>
        public abstract bool Owns(void* pointer);

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/>, aligned for <typeparamref name="T"/>, not cleared.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public T* Allocate<T>(int count) where T : unmanaged
        {
            if (count <= 0) MemoryErrors.ThrowBadCount(count);
            return (T*)Allocate((nuint)count * (nuint)sizeof(T), AlignOf<T>.Value);
        }

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/> as a span; cleared when <paramref name="clear"/> is true.</summary>
        public Span<T> AllocateSpan<T>(int count, bool clear = false) where T : unmanaged
        {
            return new Span<T>(clear ? AllocateCleared<T>(count) : Allocate<T>(count), count);
        }

        /// <summary><paramref name="count"/> elements of <typeparamref name="T"/> as a lifetime-checked view; cleared when <paramref name="clear"/> is true.</summary>
        public NativeView<T> AllocateView<T>(int count, bool clear = false) where T : unmanaged
        {
            return new NativeView<T>(clear ? AllocateCleared<T>(count) : Allocate<T>(count), count, this);
        }

        private T* AllocateCleared<T>(int count) where T : unmanaged
        {
            if (count <= 0) MemoryErrors.ThrowBadCount(count);
            return (T*)AllocateCleared((nuint)count * (nuint)sizeof(T), AlignOf<T>.Value);
        }

        /// <summary>
        /// <see cref="Allocate(nuint, nuint)"/>, then zeroes the memory. The allocators that another thread may
        /// dispose meanwhile override this, so that the zeroing never writes into memory the dispose has freed.
        /// </summary>
        internal virtual void* AllocateCleared(nuint size, nuint alignment)
        {
            void* pointer = Allocate(size, alignment);
            Clear(pointer, size);
            return pointer;
        }

        /// <summary>Zeroes <paramref name="size"/> bytes, in pieces a span can hold.</summary>
        internal static void Clear(void* pointer, nuint size)
        {
            byte* p = (byte*)pointer;
            while (size != 0)
            {
                int piece = size > int.MaxValue ? int.MaxValue : (int)size;
                new Span<byte>(p, piece).Clear();
                p += piece;
                size -= (nuint)piece;
            }
        }

        /// <summary>Frees the memory of a view that this allocator made.</summary>
        public void Free<T>(NativeView<T> view) where T : unmanaged
        {
            if (view.Allocator != this) MemoryErrors.ThrowNotOwned(Name, view.UncheckedPointer);
            Free(view.UncheckedPointer);
        }

        internal virtual string DescribeExpiredView(int generation)
        {
            return "this view's memory is no longer valid: its " + Name + " was reset, returned or disposed since the view was made.";
        }

        /// <summary>
        /// Frees all native memory the allocator holds; later calls throw <see cref="ObjectDisposedException"/>
        /// (<see cref="Owns"/> answers false). It may come from any thread, also while another thread is in a call:
        /// the allocator's own work on its memory (bookkeeping, clearing, a frame's reset) finishes before the
        /// memory is freed. Pointers, spans and views it handed out must not be used afterwards: one still in use
        /// on another thread when Dispose frees it is the caller's race, as with any pooled buffer.
        /// </summary>
        public void Dispose()
        {
            Dispose(true);
            GC.SuppressFinalize(this);
        }

        /// <summary>Frees the native memory; <paramref name="disposing"/> is false when called by the finalizer.</summary>
        protected abstract void Dispose(bool disposing);

        /// <summary>Frees the native memory of an allocator that was never disposed.</summary>
        ~NativeAllocator()
        {
            Dispose(false);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static nuint AlignUp(nuint address, nuint alignment) => (address + alignment - 1) & ~(alignment - 1);
    }
}
