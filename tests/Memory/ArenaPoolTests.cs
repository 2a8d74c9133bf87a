using System;
using System.Threading;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    public unsafe class ArenaPoolTests : IDisposable
    {
        private readonly ArenaPool _pool = new ArenaPool();

        public void Dispose() => _pool.Dispose();

        [Fact]
        public void SmallBatchComesFromOnePage()
        {
            using (ArenaLease arena = _pool.Rent())
            {
                byte* a = (byte*)arena.Allocate(1, 1);
                byte* b = (byte*)arena.Allocate(10, 1);
                byte* c = (byte*)arena.Allocate(100, 1);
                byte* d = (byte*)arena.Allocate(1000, 1);
                Assert.Equal(1L, b - a);
                Assert.Equal(10L, c - b);
                Assert.Equal(100L, d - c);
                Assert.Equal(0, arena.ExtraPages);
                Assert.Equal(1111, arena.BytesUsed);
                Assert.True(arena.Owns(d + 999));
                Assert.False(arena.Owns(d + 1000));
            }
            Assert.Equal(0, _pool.Rented);
            Assert.Equal(1, _pool.Idle);
            Assert.Equal(ArenaPool.PageSize, _pool.NativeBytes);
        }

        [Fact]
        public void ExtraPagesAreAllocatedAsNeededAndFreedOnReturn()
        {
            using var pool = new ArenaPool(sparePagesPerArena: 0);
            ArenaLease arena = pool.Rent();
            var pointers = new IntPtr[10];
            for (int i = 0; i < 10; i++)
            {
                byte* p = (byte*)arena.Allocate(1000, 8);
                new Span<byte>(p, 1000).Fill((byte)i);
                pointers[i] = (IntPtr)p;
            }
            Assert.Equal(2, arena.ExtraPages); // 4 + 4 + 2 allocations per 4096-byte page
            for (int i = 0; i < 10; i++) Assert.Equal((byte)i, ((byte*)pointers[i])[999]);
            byte* big = (byte*)arena.Allocate(10_000, 4096);
            Assert.Equal(0UL, (ulong)big % 4096);
            new Span<byte>(big, 10_000).Fill(1);
            Assert.Equal(3, arena.ExtraPages);
            Assert.True(pool.NativeBytes >= ArenaPool.PageSize * 3 + 10_000);
            arena.Dispose();
            Assert.Equal(ArenaPool.PageSize, pool.NativeBytes);
            pool.Trim();
            Assert.Equal(0, pool.NativeBytes);
            Assert.Equal(0, pool.Idle);
        }

        [Fact]
        public void SparePagesAreKeptForTheNextRentWhenAsked()
        {
            using var pool = new ArenaPool(sparePagesPerArena: 2);
            for (int round = 0; round < 3; round++)
            {
                using ArenaLease arena = pool.Rent();
                for (int i = 0; i < 10; i++) new Span<byte>(arena.Allocate(1000, 8), 1000).Fill((byte)i);
                arena.Allocate(9000, 8); // larger than a page: never kept
                Assert.Equal(3, arena.ExtraPages);
                Assert.Equal(3 * ArenaPool.PageSize + 12_288, pool.NativeBytes); // first page, 2 extra pages, one 3-page block
            }
            Assert.Equal(3 * ArenaPool.PageSize, pool.NativeBytes); // first page + 2 spares
            pool.Trim();
            Assert.Equal(0, pool.NativeBytes);
        }

        [Theory]
        [InlineData(1)]
        [InlineData(8)]
        [InlineData(64)]
        [InlineData(1024)]
        [InlineData(4096)]
        public void AlignmentIsHonoured(int alignment)
        {
            using ArenaLease arena = _pool.Rent();
            for (int i = 0; i < 40; i++)
            {
                arena.Allocate(3, 1);
                byte* p = (byte*)arena.Allocate(1 + i * 13, alignment);
                Assert.Equal(0UL, (ulong)p % (ulong)alignment);
                p[i * 13] = 1;
            }
        }

        [Fact]
        public void ReturningTwiceOrUsingAfterReturnThrows()
        {
            ArenaLease lease = _pool.Rent();
            ArenaLease copy = lease;
            NativeView<int> view = lease.AllocateView<int>(4);
            view[0] = 5;
            lease.Dispose();
            Assert.False(lease.IsActive);
            Assert.Contains("returning an arena twice", Assert.Throws<InvalidOperationException>(() => lease.Dispose()).Message);
            Assert.Throws<InvalidOperationException>(() => copy.Dispose());
            Assert.Throws<InvalidOperationException>(() => _pool.Return(copy));
            Assert.Throws<InvalidOperationException>(() => (IntPtr)copy.Allocate(8, 8));
            Assert.Contains("returned to its pool", Assert.Throws<InvalidOperationException>(() => view.AsSpan()).Message);
            // The arena is rented again by someone else: the stale lease still cannot touch it.
            ArenaLease next = _pool.Rent();
            Assert.Throws<InvalidOperationException>(() => lease.Dispose());
            Assert.Throws<InvalidOperationException>(() => (IntPtr)lease.Allocate(8, 8));
            Assert.True(next.IsActive);
            next.Dispose();
            Assert.Throws<InvalidOperationException>(() => default(ArenaLease).Dispose());
            Assert.Throws<InvalidOperationException>(() => (IntPtr)default(ArenaLease).Allocate(8, 8));
            using var otherPool = new ArenaPool();
            ArenaLease foreign = otherPool.Rent();
            Assert.Throws<ArgumentException>(() => _pool.Return(foreign));
            foreign.Dispose();
        }

        [Fact]
        public void BadRequestsThrow()
        {
            using ArenaLease arena = _pool.Rent();
            ArenaLease a = arena;
            BadRequests.AssertAllThrow("arena", (s, al) => a.Allocate(s, al), (s, al) => a.Allocate(s, al), c => a.Allocate<long>(c));
        }

        [Fact]
        public void ManyThreadsRentAndReturnConcurrently()
        {
            const int Threads = 4, Rounds = 20_000;
            int corrupted = 0;
            var threads = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                byte id = (byte)(t + 1);
                threads[t] = new Thread(() =>
                {
                    for (int i = 0; i < Rounds; i++)
                    {
                        using ArenaLease arena = _pool.Rent();
                        int size = 16 + (i % 3) * 2000; // every third round needs an extra page
                        byte* a = (byte*)arena.Allocate(size, 8);
                        byte* b = (byte*)arena.Allocate(size, 8);
                        new Span<byte>(a, size).Fill(id);
                        new Span<byte>(b, size).Fill(id);
                        Thread.Yield();
                        if (a[size - 1] != id || b[0] != id || b[size - 1] != id) Interlocked.Increment(ref corrupted);
                    }
                });
            }
            foreach (Thread thread in threads) thread.Start();
            foreach (Thread thread in threads) thread.Join();
            Assert.Equal(0, corrupted);
            Assert.Equal(0, _pool.Rented);
            Assert.InRange(_pool.Idle, 1, Threads);
            // Each idle arena holds its first page and at most the default number of spare pages.
            Assert.InRange(_pool.NativeBytes, _pool.Idle * (long)ArenaPool.PageSize, _pool.Idle * (long)ArenaPool.PageSize * (1 + ArenaPool.DefaultSparePagesPerArena));
            Assert.Equal(ArenaPool.DefaultSparePagesPerArena, _pool.SparePagesPerArena);
            Assert.Equal(Threads * Rounds, _pool.RentCount);
        }

        [Fact]
        public void RentAllocateAndReturnAllocateNoManagedBytes()
        {
            long bytes = Allocations.Measure(() =>
            {
                using (ArenaLease arena = _pool.Rent())
                {
                    arena.Allocate(1, 1);
                    arena.Allocate(10, 1);
                    arena.Allocate(100, 1);
                    arena.Allocate(1000, 1);
                    Span<long> span = arena.AllocateSpan<long>(600); // 4800 bytes: an extra page
                    span[599] = 1;
                }
                ArenaLease shared = ArenaPool.Shared.Rent();
                shared.AllocateView<Sample24>(3)[2].Id = 7;
                ArenaPool.Shared.Return(shared);
            }, 20_000, 5000);
            Assert.Equal(0, bytes);
        }

        [Fact]
        public void DisposedPoolRefusesRentsAndFreesArenasReturnedLate()
        {
            var pool = new ArenaPool();
            ArenaLease late = pool.Rent();
            late.Allocate(5000, 8);
            pool.Dispose();
            Assert.Throws<ObjectDisposedException>(() => pool.Rent());
            late.Dispose();
            Assert.Equal(0, pool.NativeBytes);
            Assert.Throws<InvalidOperationException>(() => ArenaPool.Shared.Dispose());
        }
    }
}
