using System;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using WhereAllocation.Memory;

namespace WhereAllocation.Memory.Benchmarks
{
    /// <summary>
    /// (b) The pool of arenas for native-call parameters against raw native alloc/free of the same sizes:
    /// a small batch (1, 10, 100, 1000 bytes, then everything freed) and a multi-page batch (10 x 1000 bytes:
    /// two extra pages, allocated and freed). Raw is NativeMemory.Alloc/Free (malloc/free); the persistent
    /// allocator (malloc plus its bookkeeping) is shown for context. The pool keeps up to two spare pages
    /// per arena (the default); PoolMultiPageFreeingPages uses ArenaPool(sparePagesPerArena: 0), which frees
    /// every extra page at return.
    /// </summary>
    [MemoryDiagnoser]
    [GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
    [CategoriesColumn]
    public unsafe class ArenaPoolBenchmarks
    {
        private static readonly int[] SmallSizes = { 1, 10, 100, 1000 };
        private readonly ArenaPool _pool = new ArenaPool();
        private readonly ArenaPool _poolFreeingPages = new ArenaPool(sparePagesPerArena: 0);
        private readonly PersistentAllocator _persistent = new PersistentAllocator();
        private readonly void*[] _pointers = new void*[10];

        [GlobalCleanup]
        public void Cleanup()
        {
            _pool.Dispose();
            _poolFreeingPages.Dispose();
            _persistent.Dispose();
        }

        [Benchmark, BenchmarkCategory("small batch: 1, 10, 100, 1000 B")]
        public void PoolSmallBatch()
        {
            using ArenaLease arena = _pool.Rent();
            arena.Allocate((nuint)1, 1);
            arena.Allocate((nuint)10, 1);
            arena.Allocate((nuint)100, 1);
            arena.Allocate((nuint)1000, 1);
        }

        [Benchmark(Baseline = true), BenchmarkCategory("small batch: 1, 10, 100, 1000 B")]
        public void RawSmallBatch()
        {
            void** p = stackalloc void*[4];
            p[0] = NativeMemory.Alloc(1);
            p[1] = NativeMemory.Alloc(10);
            p[2] = NativeMemory.Alloc(100);
            p[3] = NativeMemory.Alloc(1000);
            NativeMemory.Free(p[0]);
            NativeMemory.Free(p[1]);
            NativeMemory.Free(p[2]);
            NativeMemory.Free(p[3]);
        }

        [Benchmark, BenchmarkCategory("small batch: 1, 10, 100, 1000 B")]
        public void PersistentSmallBatch()
        {
            void** p = stackalloc void*[4];
            for (int i = 0; i < 4; i++) p[i] = _persistent.Allocate((nuint)SmallSizes[i], 1);
            for (int i = 0; i < 4; i++) _persistent.Free(p[i]);
        }

        [Benchmark, BenchmarkCategory("multi-page: 10 x 1000 B")]
        public void PoolMultiPage()
        {
            using ArenaLease arena = _pool.Rent();
            for (int i = 0; i < 10; i++) arena.Allocate((nuint)1000, 1);
        }

        [Benchmark, BenchmarkCategory("multi-page: 10 x 1000 B")]
        public void PoolMultiPageFreeingPages()
        {
            using ArenaLease arena = _poolFreeingPages.Rent();
            for (int i = 0; i < 10; i++) arena.Allocate((nuint)1000, 1);
        }

        [Benchmark(Baseline = true), BenchmarkCategory("multi-page: 10 x 1000 B")]
        public void RawMultiPage()
        {
            for (int i = 0; i < 10; i++) _pointers[i] = NativeMemory.Alloc(1000);
            for (int i = 0; i < 10; i++) NativeMemory.Free(_pointers[i]);
        }

        [Benchmark, BenchmarkCategory("multi-page: 10 x 1000 B")]
        public void PersistentMultiPage()
        {
            for (int i = 0; i < 10; i++) _pointers[i] = _persistent.Allocate((nuint)1000, 1);
            for (int i = 0; i < 10; i++) _persistent.Free(_pointers[i]);
        }
    }
}
