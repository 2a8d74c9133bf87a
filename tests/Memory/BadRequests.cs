using System;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>The bad requests every allocator refuses the same way, before touching memory.</summary>
    public static unsafe class BadRequests
    {
        public static void AssertAllThrow(NativeAllocator allocator)
        {
            AssertAllThrow(allocator.Name(), (s, a) => allocator.Allocate(s, a), (s, a) => allocator.Allocate(s, a), c => allocator.Allocate<long>(c));
        }

        public static string Name(this NativeAllocator allocator) => allocator.GetType().Name;

        public delegate void* SignedAllocate(int size, int alignment);
        public delegate void* UnsignedAllocate(nuint size, nuint alignment);
        public delegate void* TypedAllocate(int count);

        public static void AssertAllThrow(string name, SignedAllocate signed, UnsignedAllocate unsigned, TypedAllocate typed)
        {
            Assert.Contains("size is 0", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)signed(0, 8)).Message);
            Assert.Contains("not positive", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)signed(-1, 8)).Message);
            Assert.Contains("not positive", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)signed(int.MinValue, 8)).Message);
            Assert.Contains("size is 0", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)unsigned(0, 8)).Message);
            // A negative size cast to nuint is huge.
            Assert.Contains("negative size", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)unsigned(unchecked((nuint)(-16L)), 8)).Message);
            foreach (int alignment in new[] { 0, -4, 3, 6, 12, 100, 8192, 1 << 30 })
                Assert.Contains("not a power of two", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)signed(16, alignment)).Message);
            foreach (nuint alignment in new nuint[] { 0, 3, 24, 8192, unchecked((nuint)(-1L)) })
                Assert.Contains("not a power of two", Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)unsigned(16, alignment)).Message);
            Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)typed(0));
            Assert.Throws<ArgumentOutOfRangeException>(() => (IntPtr)typed(-3));
        }
    }
}
