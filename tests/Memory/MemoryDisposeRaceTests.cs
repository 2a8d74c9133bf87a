using System;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>
    /// Dispose from another thread while one thread allocates, clears, frees and resets: every call ends in
    /// success or ObjectDisposedException, and the allocator never touches memory it has freed. test.sh runs
    /// this class again with <c>MALLOC_MMAP_THRESHOLD_=131072</c>: every block here is 128 KiB or more, so malloc
    /// maps it on its own and unmaps it at free, and a late write faults. The worker never writes through a
    /// raw pointer or span it was given: memory in use while its allocator is disposed is the caller's race.
    /// </summary>
    // The trait selects the class for test.sh's rerun under MALLOC_MMAP_THRESHOLD_ (dotnet test --filter and xunit's console -trait).
    [Trait("Category", "DisposeRace")]
    public unsafe class MemoryDisposeRaceTests
    {
        private const int Rounds = 100;
        private const int MaxCallsPerRound = 100_000;
        private const int MaxDelayMicroseconds = 2000;
        private const int Large = 160 * 1024; // bytes: above the 128 KiB mmap threshold

        [Fact]
        public void PersistentAllocatorDisposedFromAnotherThread()
        {
            var random = new Random(11);
            for (int round = 0; round < Rounds; round++)
            {
                var heap = new PersistentAllocator();
                void* kept = heap.Allocate(Large, 64);
                DisposeRace.Round(() =>
                {
                    NativeView<long> view = heap.AllocateView<long>(Large / 8, clear: true);
                    Span<byte> span = heap.AllocateSpan<byte>(Large, clear: true);
                    void* raw = heap.Allocate(Large, 16);
                    // Queries answer -1 / false once the allocator is disposed: called, not checked, here.
                    _ = heap.SizeOf(raw) + (heap.Owns(view.UncheckedPointer) ? 1 : 0) + span.Length;
                    heap.Free(raw);
                    heap.Free(view);
                }, heap.Dispose, random, MaxDelayMicroseconds, MaxCallsPerRound);
                Assert.Throws<ObjectDisposedException>(() => heap.Allocate(8, 8));
                Assert.Throws<ObjectDisposedException>(() => heap.AllocateSpan<byte>(Large, clear: true).Length);
                Assert.Throws<ObjectDisposedException>(() => heap.Free(kept));
                Assert.False(heap.Owns(kept));
                Assert.Equal(0, heap.LiveBytes);
            }
        }

        [Fact]
        public void MultiFrameAllocatorDisposedFromAnotherThread()
        {
            var random = new Random(12);
            for (int round = 0; round < Rounds; round++)
            {
                var multi = new MultiFrameAllocator { LeakHandler = _ => { } }; // kept is late on purpose
                void* kept = multi.Allocate(100, 8);
                DisposeRace.Round(() =>
                {
                    NativeView<long> large = multi.AllocateView<long>(Large / 8, clear: true);
                    NativeView<long> small = multi.AllocateView<long>(1000, clear: true);  // a slot of a 64 KiB chunk (128 KiB mapped for its alignment)
                    NativeView<byte> tiny = multi.AllocateView<byte>(24, clear: true);
                    _ = multi.Owns(small.UncheckedPointer);
                    multi.Free(large);
                    multi.Free(small);
                    multi.Free(tiny);
                    multi.NextFrame();
                    _ = multi.NativeBytes;
                }, multi.Dispose, random, MaxDelayMicroseconds, MaxCallsPerRound);
                Assert.Throws<ObjectDisposedException>(() => multi.Allocate(8, 8));
                Assert.Throws<ObjectDisposedException>(() => multi.AllocateSpan<byte>(Large, clear: true).Length);
                Assert.Throws<ObjectDisposedException>(() => multi.Free(kept));
                Assert.Throws<ObjectDisposedException>(() => multi.NextFrame());
                Assert.False(multi.Owns(kept));
                Assert.Equal(0, multi.NativeBytes);
            }
        }

        [Fact]
        public void FrameAllocatorDisposedFromAnotherThread()
        {
            var random = new Random(13);
            for (int round = 0; round < Rounds; round++)
            {
                var frame = new FrameAllocator(Large);
                void* kept = frame.Allocate(64, 8);
                NativeView<long> keptView = frame.AllocateView<long>(4);
                DisposeRace.Round(() =>
                {
                    // Past the main block on the third: the overflow block (as large as the main block) is mapped too.
                    for (int i = 0; i < 3; i++) frame.AllocateView<long>(Large / 16, clear: true);
                    void* raw = frame.Allocate(100, 16);
                    _ = frame.Owns(raw) ? frame.NativeBytes : 0;
                    frame.Free(raw);
                    frame.Reset();
                }, frame.Dispose, random, MaxDelayMicroseconds, MaxCallsPerRound);
                Assert.Throws<ObjectDisposedException>(() => frame.Allocate(8, 8));
                Assert.Throws<ObjectDisposedException>(() => frame.AllocateSpan<byte>(Large, clear: true).Length);
                Assert.Throws<ObjectDisposedException>(() => frame.Reset());
                Assert.Throws<ObjectDisposedException>(() => frame.Free(kept));
                Assert.False(frame.Owns(kept));
                Assert.False(keptView.IsAlive);
                Assert.Equal(0, frame.NativeBytes);
            }
        }

        [Fact]
        public void ArenaPoolDisposedFromAnotherThread()
        {
            var random = new Random(14);
            for (int round = 0; round < Rounds; round++)
            {
                var pool = new ArenaPool();
                DisposeRace.Round(() =>
                {
                    ArenaLease lease = pool.Rent();
                    // A lease rented before the pool's Dispose stays good until it is returned.
                    lease.AllocateView<long>(Large / 8, clear: true);
                    lease.AllocateSpan<byte>(100, clear: true);
                    lease.Dispose();
                }, pool.Dispose, random, MaxDelayMicroseconds, MaxCallsPerRound);
                Assert.Throws<ObjectDisposedException>(() => pool.Rent());
                Assert.Equal(0, pool.Rented);
                Assert.Equal(0, pool.NativeBytes);
            }
        }

        [Fact]
        public void FreeAfterDisposeThrowsObjectDisposed()
        {
            var multi = new MultiFrameAllocator();
            void* slot = multi.Allocate(10, 8);
            void* large = multi.Allocate(100_000, 8);
            multi.Dispose();
            Assert.Throws<ObjectDisposedException>(() => multi.Free(slot));
            Assert.Throws<ObjectDisposedException>(() => multi.Free(large));

            var frame = new FrameAllocator(256);
            void* bumped = frame.Allocate(10, 8);
            frame.Dispose();
            Assert.Throws<ObjectDisposedException>(() => frame.Free(bumped));

            var heap = new PersistentAllocator();
            void* block = heap.Allocate(10, 8);
            heap.Dispose();
            Assert.Throws<ObjectDisposedException>(() => heap.Free(block));
        }
    }
}
