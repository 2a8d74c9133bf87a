using System;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>Typed views of N unmanaged elements, from every allocator.</summary>
    public unsafe class NativeViewTests : IDisposable
    {
        private readonly FrameAllocator _frame = new FrameAllocator(4096);
        private readonly MultiFrameAllocator _multi = new MultiFrameAllocator { CaptureAllocationSites = false };
        private readonly PersistentAllocator _heap = new PersistentAllocator();
        private readonly ArenaPool _pool = new ArenaPool();

        public void Dispose()
        {
            _frame.Dispose();
            _multi.Dispose();
            _heap.Dispose();
            _pool.Dispose();
        }

        private NativeAllocator[] Allocators => new NativeAllocator[] { _frame, _multi, _heap };

        [Fact]
        public void ViewsFromEveryAllocatorAreAlignedSizedAndWritable()
        {
            foreach (NativeAllocator allocator in Allocators)
            {
                void* pad = allocator.Allocate(1, 1); // misalign the bump allocators
                NativeView<Sample24> view = allocator.AllocateView<Sample24>(100, clear: true);
                Assert.Equal(100, view.Length);
                Assert.Equal(2400, view.ByteLength);
                Assert.Same(allocator, view.Allocator);
                Assert.Equal(0UL, (ulong)view.Pointer % 8);
                Span<Sample24> span = view;
                Assert.Equal(100, span.Length);
                for (int i = 0; i < span.Length; i++) Assert.Equal(0, span[i].Id);
                for (int i = 0; i < view.Length; i++) view[i].Id = i;
                Assert.Equal(99, view.Pointer[99].Id);
                NativeView<Sample24> tail = view.Slice(90, 10);
                Assert.Equal(90, tail[0].Id);
                Assert.Throws<IndexOutOfRangeException>(() => view[100].Id);
                Assert.Throws<IndexOutOfRangeException>(() => view[-1].Id);
                Assert.Throws<ArgumentOutOfRangeException>(() => view.Slice(95, 10));
                allocator.Free(view);

                Rgb* pixels = allocator.Allocate<Rgb>(5);
                pixels[4].B = 9;
                allocator.Free(pixels);
                Span<double> doubles = allocator.AllocateSpan<double>(7);
                Assert.Equal(7, doubles.Length);
                fixed (double* d = doubles) Assert.Equal(0UL, (ulong)d % 8);
                allocator.Free(new IntPtr(Unsafe(doubles)));
                allocator.Free(pad);
            }
            Assert.Equal(0, _multi.LiveBytes);
            Assert.Equal(0, _heap.LiveBytes);
        }

        private static void* Unsafe(Span<double> span)
        {
            fixed (double* d = span) return d;
        }

        [Fact]
        public void ViewsFromAnArenaStopAtReturn()
        {
            ArenaLease arena = _pool.Rent();
            NativeView<Sample24> view = arena.AllocateView<Sample24>(3);
            view[2].Flags = 4;
            Assert.Equal(0UL, (ulong)view.Pointer % 8);
            arena.Dispose();
            Assert.False(view.IsAlive);
            Assert.Throws<InvalidOperationException>(() => view[2].Flags);
        }

        [Fact]
        public void FreeingAViewWithTheWrongAllocatorThrows()
        {
            NativeView<int> view = _heap.AllocateView<int>(4);
            Assert.Throws<ArgumentException>(() => _multi.Free(view));
            _heap.Free(view);
        }

        [Fact]
        public void ViewOverCallerMemoryHasNoLifetimeCheck()
        {
            int* numbers = stackalloc int[4];
            var view = new NativeView<int>(numbers, 4);
            view[3] = 12;
            Assert.Equal(12, numbers[3]);
            Assert.True(view.IsAlive);
            Assert.Null(view.Allocator);
            Assert.Throws<ArgumentOutOfRangeException>(() => new NativeView<int>((int*)8, -1));
        }

        [Fact]
        public void BadCountsThrow()
        {
            foreach (NativeAllocator allocator in Allocators)
            {
                Assert.Throws<ArgumentOutOfRangeException>(() => allocator.AllocateView<Sample24>(0));
                Assert.Throws<ArgumentOutOfRangeException>(() => allocator.AllocateSpan<Sample24>(-1).Length);
            }
        }
    }
}
