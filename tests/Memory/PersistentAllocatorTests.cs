using System;
using System.Threading;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    public unsafe class PersistentAllocatorTests : IDisposable
    {
        private readonly PersistentAllocator _heap = new PersistentAllocator();

        public void Dispose() => _heap.Dispose();

        [Theory]
        [InlineData(1)]
        [InlineData(8)]
        [InlineData(16)]
        [InlineData(32)]
        [InlineData(512)]
        [InlineData(4096)]
        public void AlignmentIsHonoured(int alignment)
        {
            var pointers = new IntPtr[50];
            for (int i = 0; i < pointers.Length; i++)
            {
                int size = 1 + i * 37;
                byte* p = (byte*)_heap.Allocate(size, alignment);
                Assert.Equal(0UL, (ulong)p % (ulong)alignment);
                new Span<byte>(p, size).Fill(0xAB);
                pointers[i] = (IntPtr)p;
            }
            foreach (IntPtr p in pointers) _heap.Free(p);
            Assert.Equal(0, _heap.LiveBytes);
        }

        [Fact]
        public void LiveBytesAreCountedExactly()
        {
            void* a = _heap.Allocate(100, 8);
            void* b = _heap.Allocate(1000, 64);
            Assert.Equal(1100, _heap.LiveBytes);
            Assert.Equal(2, _heap.LiveAllocations);
            Assert.Equal(100, _heap.SizeOf(a));
            Assert.True(_heap.Owns(b));
            _heap.Free(a);
            Assert.Equal(1000, _heap.LiveBytes);
            Assert.Equal(-1, _heap.SizeOf(a));
            _heap.Free(b);
            Assert.Equal(0, _heap.LiveBytes);
            Assert.Equal(0, _heap.LiveAllocations);
            Assert.Equal(1100, _heap.PeakBytes);
            Assert.Equal(2, _heap.TotalAllocations);
            Assert.Equal(2, _heap.TotalFrees);
        }

        [Fact]
        public void ManyAllocationsGrowTheTableAndAllComeBack()
        {
            var pointers = new IntPtr[5000];
            for (int i = 0; i < pointers.Length; i++) pointers[i] = (IntPtr)_heap.Allocate(8 + i % 64, 8);
            Assert.Equal(5000, _heap.LiveAllocations);
            for (int i = 0; i < pointers.Length; i += 2) _heap.Free(pointers[i]);
            for (int i = 1; i < pointers.Length; i += 2) Assert.True(_heap.Owns((void*)pointers[i]));
            for (int i = 1; i < pointers.Length; i += 2) _heap.Free(pointers[i]);
            Assert.Equal(0, _heap.LiveBytes);
        }

        [Fact]
        public void FreeingTwiceOrAForeignPointerThrows()
        {
            void* theirs = PersistentAllocator.Shared.Allocate(24, 8); // before the free below, so malloc cannot hand out the same address
            void* p = _heap.Allocate(24, 8);
            _heap.Free(p);
            Assert.Contains("freed twice", Assert.Throws<InvalidOperationException>(() => _heap.Free(p)).Message);
            Assert.Contains("not allocated by this PersistentAllocator", Assert.Throws<ArgumentException>(() => _heap.Free(theirs)).Message);
            PersistentAllocator.Shared.Free(theirs);
            using var frame = new FrameAllocator(256);
            Assert.Throws<ArgumentException>(() => _heap.Free(frame.Allocate(8, 8)));
            long* onStack = stackalloc long[1];
            IntPtr stackAddress = (IntPtr)onStack;
            Assert.Throws<ArgumentException>(() => _heap.Free(stackAddress));
            Assert.Throws<ArgumentNullException>(() => _heap.Free(null));
        }

        [Fact]
        public void BadRequestsThrow()
        {
            BadRequests.AssertAllThrow(_heap);
        }

        [Fact]
        public void DisposeFreesWhatIsLeftAndSharedCannotBeDisposed()
        {
            var heap = new PersistentAllocator();
            heap.Allocate(100, 8);
            heap.Allocate(200, 8);
            Assert.Equal(2, heap.FreeAll());
            Assert.Equal(0, heap.LiveBytes);
            heap.Allocate(300, 8);
            heap.Dispose();
            Assert.Equal(0, heap.LiveBytes);
            Assert.Throws<ObjectDisposedException>(() => heap.Allocate(8, 8));
            Assert.Throws<InvalidOperationException>(() => PersistentAllocator.Shared.Dispose());
            Assert.Throws<InvalidOperationException>(() => PersistentAllocator.Shared.FreeAll());
        }

        [Fact]
        public void ThreadsAllocateAndFreeConcurrently()
        {
            const int Threads = 4, Rounds = 20_000;
            var threads = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                threads[t] = new Thread(() =>
                {
                    var held = new IntPtr[32];
                    for (int i = 0; i < Rounds; i++)
                    {
                        int k = i & 31;
                        if (held[k] != IntPtr.Zero) _heap.Free(held[k]);
                        held[k] = (IntPtr)_heap.Allocate(1 + (i % 500), 16);
                    }
                    foreach (IntPtr p in held) _heap.Free(p);
                });
            }
            foreach (Thread thread in threads) thread.Start();
            foreach (Thread thread in threads) thread.Join();
            Assert.Equal(0, _heap.LiveBytes);
            Assert.Equal(Threads * Rounds, _heap.TotalAllocations);
        }

        [Fact]
        public void AllocateAndFreeAllocateNoManagedBytes()
        {
            long bytes = Allocations.Measure(() =>
            {
                void* p = _heap.Allocate(64, 16);
                IntPtr q = _heap.AllocatePtr(4000, 4096);
                _heap.Free(p);
                _heap.Free(q);
                NativeView<Sample24> view = _heap.AllocateView<Sample24>(5);
                view[4].Value = 1.5;
                _heap.Free(view);
                PersistentAllocator.Shared.Free(PersistentAllocator.Shared.Allocate(100, 8));
            }, 20_000, 5000);
            Assert.Equal(0, bytes);
            Assert.Equal(0, _heap.LiveBytes);
        }
    }
}
