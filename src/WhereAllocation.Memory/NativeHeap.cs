#nullable enable
using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// The one place the library asks the operating system's heap for memory: NativeMemory on .NET 8+,
    /// Marshal.AllocHGlobal/FreeHGlobal on netstandard2.1 (Unity, Mono), where NativeMemory does not exist.
    /// Both end in the C library's malloc/free on Linux and macOS.
    /// </summary>
    internal static unsafe class NativeHeap
    {
        /// <summary>Alignment that plain malloc guarantees on this process (16 on 64-bit glibc and Windows, 8 on 32-bit).</summary>
        internal static readonly nuint MallocAlignment = (nuint)(2 * IntPtr.Size);

        /// <summary>malloc: at least <see cref="MallocAlignment"/>-aligned. Throws OutOfMemoryException on failure.</summary>
        internal static void* Alloc(nuint size)
        {
#if NET8_0_OR_GREATER
            return NativeMemory.Alloc(size);
#else
            return (void*)Marshal.AllocHGlobal((IntPtr)(long)size);
#endif
        }

        internal static void Free(void* block)
        {
#if NET8_0_OR_GREATER
            NativeMemory.Free(block);
#else
            Marshal.FreeHGlobal((IntPtr)block);
#endif
        }

        /// <summary>
        /// A block whose start is aligned to <paramref name="alignment"/> (a power of two). Free it with
        /// <see cref="FreeAligned"/> and the returned pointer.
        /// </summary>
        internal static void* AllocAligned(nuint size, nuint alignment)
        {
#if NET8_0_OR_GREATER
            // posix_memalign wants a multiple of sizeof(void*); asking for at least malloc's own alignment costs nothing.
            return NativeMemory.AlignedAlloc(size, alignment < MallocAlignment ? MallocAlignment : alignment);
#else
            // No aligned allocator in netstandard2.1: plain malloc when it is aligned enough (the usual case),
            // else over-allocate and keep the block's real start in the word just before the aligned start.
            nuint header = (nuint)IntPtr.Size;
            byte* block = (byte*)Alloc(size + alignment - 1 + header);
            byte* aligned = (byte*)(((nuint)block + header + alignment - 1) & ~(alignment - 1));
            ((void**)aligned)[-1] = block;
            return aligned;
#endif
        }

        internal static void FreeAligned(void* aligned)
        {
#if NET8_0_OR_GREATER
            NativeMemory.AlignedFree(aligned);
#else
            Free(((void**)aligned)[-1]);
#endif
        }
    }
}
