using System;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using WhereAllocation.Memory;

namespace WhereAllocation.Memory.Benchmarks
{
    /// <summary>
    /// (a) The article's experiment: 1000 allocations of 4 bytes aligned to 4, then 1000 frees, timed
    /// separately, for the frame, multi-frame and persistent allocators and raw Marshal.AllocHGlobal.
    /// Allocation and free are separate benchmarks: the other half runs in IterationSetup/IterationCleanup,
    /// so each iteration is one invocation (1000 operations); many iterations make up for that.
    /// The frame allocator frees with one Reset(), which is how frame memory is given back.
    /// The distances between consecutive allocations are written by the console mode
    /// (<c>dotnet run -c Release -- --memory-distances</c>, see <see cref="DistanceReport"/>).
    /// </summary>
    [MemoryDiagnoser]
    [Config(typeof(Config))]
    [GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
    [CategoriesColumn]
    public unsafe class LifetimeBenchmarks
    {
        public const int Count = 1000;
        public const int Size = 4;
        public const int Alignment = 4;

        private sealed class Config : ManualConfig
        {
            public Config()
            {
                // One invocation per iteration runs too little code for tiered compilation to promote it before
                // the run ends (its 100 ms delay outlasts the whole benchmark), which would measure tier-0 code:
                // compile optimised from the start instead.
                AddJob(Job.Default.WithInvocationCount(1).WithUnrollFactor(1).WithWarmupCount(30).WithIterationCount(200)
                    .WithEnvironmentVariables(new EnvironmentVariable("DOTNET_TieredCompilation", "0"))
                    .WithId("1000 ops per iteration"));
            }
        }

        private readonly IntPtr[] _pointers = new IntPtr[Count];
        private FrameAllocator _frame = null!;
        private MultiFrameAllocator _multi = null!;
        private PersistentAllocator _persistent = null!;

        [GlobalSetup]
        public void Setup()
        {
            _frame = new FrameAllocator(16 * 1024);
            _multi = new MultiFrameAllocator { CaptureAllocationSites = false };
            _persistent = new PersistentAllocator();
            // Warm every allocator once, so chunks and tables exist before measuring (steady state).
            FrameAllocate(); FrameFree();
            MultiAllocate(); MultiFree();
            PersistentAllocate(); PersistentFree();
            RawAllocate(); RawFree();
        }

        [GlobalCleanup]
        public void Cleanup()
        {
            _frame.Dispose();
            _multi.Dispose();
            _persistent.Dispose();
        }

        // ---- allocate: the frees happen in IterationCleanup ----

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("allocate")]
        public void FrameAllocate()
        {
            for (int i = 0; i < Count; i++) _pointers[i] = (IntPtr)_frame.Allocate((nuint)Size, (nuint)Alignment);
        }

        [IterationCleanup(Target = nameof(FrameAllocate))]
        public void AfterFrameAllocate() => FrameFree();

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("allocate")]
        public void MultiAllocate()
        {
            for (int i = 0; i < Count; i++) _pointers[i] = (IntPtr)_multi.Allocate((nuint)Size, (nuint)Alignment);
        }

        [IterationCleanup(Target = nameof(MultiAllocate))]
        public void AfterMultiAllocate() => MultiFree();

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("allocate")]
        public void PersistentAllocate()
        {
            for (int i = 0; i < Count; i++) _pointers[i] = (IntPtr)_persistent.Allocate((nuint)Size, (nuint)Alignment);
        }

        [IterationCleanup(Target = nameof(PersistentAllocate))]
        public void AfterPersistentAllocate() => PersistentFree();

        [Benchmark(Baseline = true, OperationsPerInvoke = Count), BenchmarkCategory("allocate")]
        public void RawAllocate()
        {
            for (int i = 0; i < Count; i++) _pointers[i] = Marshal.AllocHGlobal(Size);
        }

        [IterationCleanup(Target = nameof(RawAllocate))]
        public void AfterRawAllocate() => RawFree();

        // ---- free: the allocations happen in IterationSetup ----

        [IterationSetup(Target = nameof(FrameFree))]
        public void BeforeFrameFree() => FrameAllocate();

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("free")]
        public void FrameFree() => _frame.Reset();

        [IterationSetup(Target = nameof(MultiFree))]
        public void BeforeMultiFree() => MultiAllocate();

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("free")]
        public void MultiFree()
        {
            for (int i = 0; i < Count; i++) _multi.Free((void*)_pointers[i]);
        }

        [IterationSetup(Target = nameof(PersistentFree))]
        public void BeforePersistentFree() => PersistentAllocate();

        [Benchmark(OperationsPerInvoke = Count), BenchmarkCategory("free")]
        public void PersistentFree()
        {
            for (int i = 0; i < Count; i++) _persistent.Free((void*)_pointers[i]);
        }

        [IterationSetup(Target = nameof(RawFree))]
        public void BeforeRawFree() => RawAllocate();

        [Benchmark(Baseline = true, OperationsPerInvoke = Count), BenchmarkCategory("free")]
        public void RawFree()
        {
            for (int i = 0; i < Count; i++) Marshal.FreeHGlobal(_pointers[i]);
        }
    }
}
