#nullable enable
using System;
using System.Runtime.CompilerServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// Every exception the allocators throw, built here so that the fast paths hold one compare and one
    /// call that is never inlined. Exceptions allocate; they only happen on bad input.
    /// </summary>
    internal static unsafe class MemoryErrors
    {
        /// <summary>True when size is 1..MaxAllocationSize and alignment a power of two from 1 to 4096.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static bool IsValid(nuint size, nuint alignment)
        {
            // size - 1 wraps for 0; alignment - 1 wraps for 0.
            return size - 1 < NativeAllocator.MaxAllocationSize && (alignment & (alignment - 1)) == 0 && alignment - 1 < NativeAllocator.MaxAlignment;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowBadRequest(nuint size, nuint alignment)
        {
            if (size == 0) throw new ArgumentOutOfRangeException(nameof(size), "size is 0: an allocation must be at least 1 byte.");
            if (size - 1 >= NativeAllocator.MaxAllocationSize)
                throw new ArgumentOutOfRangeException(nameof(size), "size " + size + " is larger than " + NativeAllocator.MaxAllocationSize + " bytes (a negative size cast to nuint?).");
            throw new ArgumentOutOfRangeException(nameof(alignment), "alignment " + alignment + " is not a power of two from 1 to " + NativeAllocator.MaxAlignment + ".");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowBadRequest(long size, long alignment)
        {
            if (size == 0) ThrowBadRequest((nuint)0, (nuint)1);
            if (size < 0) throw new ArgumentOutOfRangeException(nameof(size), "size " + size + " is not positive: an allocation must be at least 1 byte.");
            if (alignment <= 0) throw new ArgumentOutOfRangeException(nameof(alignment), "alignment " + alignment + " is not a power of two from 1 to " + NativeAllocator.MaxAlignment + ".");
            ThrowBadRequest((nuint)size, (nuint)alignment);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowBadCount(int count)
        {
            throw new ArgumentOutOfRangeException(nameof(count), "count " + count + " is not positive: a typed allocation holds at least one element.");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowNotOwned(string allocator, void* pointer)
        {
            throw new ArgumentException("0x" + ((ulong)pointer).ToString("x") + " was not allocated by this " + allocator + ": free memory with the allocator that made it.", "pointer");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowFreedTwice(string allocator, void* pointer)
        {
            throw new InvalidOperationException("0x" + ((ulong)pointer).ToString("x") + " was freed twice: this " + allocator + " already freed it (and has not handed it out again since; if another allocator has, free it there).");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowNull(string allocator)
        {
            throw new ArgumentNullException("pointer", "a null pointer was passed to " + allocator + ".Free.");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void ThrowDisposed(string allocator)
        {
            throw new ObjectDisposedException(allocator);
        }
    }
}
