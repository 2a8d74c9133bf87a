using System;
using System.Collections.Generic;
using System.Threading;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    public unsafe class MultiFrameAllocatorTests : IDisposable
    {
        private readonly MultiFrameAllocator _multi = new MultiFrameAllocator();
        private readonly List<LeakReport> _leaks = new List<LeakReport>();

        public MultiFrameAllocatorTests()
        {
            _multi.LeakHandler = _leaks.Add;
        }

        public void Dispose() => _multi.Dispose();

        [Theory]
        [InlineData(1)]
        [InlineData(4)]
        [InlineData(16)]
        [InlineData(32)]
        [InlineData(128)]
        [InlineData(1024)]
        [InlineData(4096)]
        public void AlignmentIsHonouredInEverySizeClassAndForLargeBlocks(int alignment)
        {
            var pointers = new List<IntPtr>();
            foreach (int size in new[] { 1, 3, 16, 17, 100, 1000, 5000, 12_000, 16_384, 70_000 })
            {
                for (int i = 0; i < 3; i++)
                {
                    byte* p = (byte*)_multi.Allocate(size, alignment);
                    Assert.Equal(0UL, (ulong)p % (ulong)alignment);
                    new Span<byte>(p, size).Fill((byte)size);
                    pointers.Add((IntPtr)p);
                }
            }
            foreach (IntPtr p in pointers) _multi.Free(p);
            Assert.Equal(0, _multi.LiveBytes);
            Assert.Equal(0, _multi.LiveAllocations);
        }

        [Fact]
        public void FreedSlotsAreReusedAndAccountingIsExact()
        {
            byte* a = (byte*)_multi.Allocate(40, 8);
            byte* b = (byte*)_multi.Allocate(40, 8);
            Assert.Equal(80, _multi.LiveBytes);
            Assert.Equal(2, _multi.LiveAllocations);
            _multi.Free(a);
            Assert.Equal(40, _multi.LiveBytes);
            byte* c = (byte*)_multi.Allocate(33, 8);
            Assert.True(a == c); // the slot freed last is handed out first
            _multi.Free(b);
            _multi.Free(c);
            Assert.Equal(0, _multi.LiveBytes);
            Assert.Equal(80, _multi.PeakBytes);
            Assert.Equal(3, _multi.TotalAllocations);
        }

        [Fact]
        public void AllocationFreedWithinTheBudgetIsNotALeak()
        {
            void* p = _multi.Allocate(100, 16);
            for (int i = 0; i < 3; i++) Assert.Equal(0, _multi.NextFrame());
            _multi.Free(p); // made in frame 0, freed in frame 3: within 4 frames
            for (int i = 0; i < 10; i++) Assert.Equal(0, _multi.NextFrame());
            Assert.Empty(_leaks);
            Assert.Equal(0, _multi.LeaksReported);
        }

        [Fact]
        public void AllocationOlderThanTheBudgetIsReportedOnceWithItsSize()
        {
            _multi.CaptureAllocationSites = false;
            _multi.NextFrame(); // frame 1
            void* kept = _multi.Allocate(123, 8);
            void* large = _multi.Allocate(100_000, 64);
            void* freed = _multi.Allocate(50, 8);
            for (int i = 0; i < 3; i++) Assert.Equal(0, _multi.NextFrame()); // frames 2, 3, 4
            _multi.Free(freed);
            Assert.Equal(2, _multi.NextFrame()); // frame 5 = 1 + 4: both are now late
            Assert.Equal(2, _leaks.Count);
            LeakReport small = _leaks.Find(l => l.Pointer == (IntPtr)kept);
            Assert.Equal(123, small.Size);
            Assert.Equal(1, small.AllocatedFrame);
            Assert.Equal(5, small.ReportedFrame);
            Assert.Null(small.AllocationSite);
            Assert.Contains("123 bytes", small.ToString());
            Assert.Equal(100_000, _leaks.Find(l => l.Pointer == (IntPtr)large).Size);
            Assert.Equal(2, _multi.LeakedLiveAllocations);
            Assert.Equal(100_123, _multi.LeakedLiveBytes);
            for (int i = 0; i < 10; i++) Assert.Equal(0, _multi.NextFrame()); // reported once only
            Assert.Equal(2, _multi.LeaksReported);
            _multi.Free(kept); // a late free is still a free
            _multi.Free(large);
            Assert.Equal(0, _multi.LeakedLiveAllocations);
            Assert.Equal(0, _multi.LiveBytes);
        }

        [Fact]
        public void BudgetOfOneFrameReportsAtTheNextFrame()
        {
            using var strict = new MultiFrameAllocator(1);
            var leaks = new List<LeakReport>();
            strict.LeakHandler = leaks.Add;
            strict.CaptureAllocationSites = false;
            void* p = strict.Allocate(8, 8);
            Assert.Equal(1, strict.NextFrame());
            Assert.Equal(8, leaks[0].Size);
            strict.Free(p);
        }

        [Fact]
        public void LeakReportSaysWhereTheAllocationWasMadeWhenSitesAreCaptured()
        {
            Assert.Equal(NativeAllocator.IsDebugBuild, new MultiFrameAllocator().CaptureAllocationSites);
            _multi.CaptureAllocationSites = true;
            void* p = MakeAllocationThatLeaks();
            for (int i = 0; i < 4; i++) _multi.NextFrame();
            Assert.Single(_leaks);
            Assert.NotNull(_leaks[0].AllocationSite);
            Assert.Contains(nameof(MakeAllocationThatLeaks), _leaks[0].AllocationSite);
            Assert.Contains(nameof(MakeAllocationThatLeaks), _leaks[0].ToString());
            _multi.Free(p);
        }

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        private void* MakeAllocationThatLeaks() => _multi.Allocate(77, 8);

        [Fact]
        public void DefaultLeakHandlerWritesToStandardError()
        {
            using var multi = new MultiFrameAllocator(1);
            multi.CaptureAllocationSites = false;
            var error = new System.IO.StringWriter();
            System.IO.TextWriter original = Console.Error;
            Console.SetError(error);
            try
            {
                multi.Allocate(9, 1);
                multi.NextFrame();
            }
            finally
            {
                Console.SetError(original);
            }
            Assert.Contains("MultiFrameAllocator leak: 9 bytes", error.ToString());
        }

        [Fact]
        public void FreeingTwiceOrAForeignPointerThrows()
        {
            void* p = _multi.Allocate(24, 8);
            _multi.Free(p);
            Assert.Contains("freed twice", Assert.Throws<InvalidOperationException>(() => _multi.Free(p)).Message);
            void* q = _multi.Allocate(24, 8);
            Assert.Throws<ArgumentException>(() => _multi.Free((byte*)q + 1)); // inside an allocation, not its start
            _multi.Free(q);
            using var other = new MultiFrameAllocator();
            void* theirs = other.Allocate(24, 8);
            Assert.Contains("not allocated by this MultiFrameAllocator", Assert.Throws<ArgumentException>(() => _multi.Free(theirs)).Message);
            other.Free(theirs);
            void* persistent = PersistentAllocator.Shared.Allocate(24, 8);
            Assert.Throws<ArgumentException>(() => _multi.Free(persistent));
            PersistentAllocator.Shared.Free(persistent);
            void* large = _multi.Allocate(50_000, 8);
            _multi.Free(large);
            Assert.Throws<ArgumentException>(() => _multi.Free(large));
            Assert.Throws<ArgumentNullException>(() => _multi.Free(null));
            Assert.Equal(0, _multi.LiveBytes);
        }

        [Fact]
        public void BadRequestsThrow()
        {
            BadRequests.AssertAllThrow(_multi);
        }

        [Fact]
        public void DisposedAllocatorThrowsAndFreesItsMemory()
        {
            var multi = new MultiFrameAllocator();
            multi.Allocate(10, 8);
            multi.Allocate(100_000, 8);
            Assert.True(multi.NativeBytes > 100_000);
            multi.Dispose();
            Assert.Equal(0, multi.NativeBytes);
            Assert.Throws<ObjectDisposedException>(() => multi.Allocate(8, 8));
            Assert.Throws<ObjectDisposedException>(() => multi.NextFrame());
        }

        [Fact]
        public void ThreadsAllocateAndFreeConcurrently()
        {
            const int Threads = 4, Rounds = 20_000;
            var failures = 0;
            var threads = new Thread[Threads];
            for (int t = 0; t < Threads; t++)
            {
                int id = t;
                threads[t] = new Thread(() =>
                {
                    var held = new IntPtr[16];
                    var random = new Random(id);
                    for (int i = 0; i < Rounds; i++)
                    {
                        int k = i % held.Length;
                        if (held[k] != IntPtr.Zero)
                        {
                            byte* old = (byte*)held[k];
                            if (old[0] != (byte)id) Interlocked.Increment(ref failures);
                            _multi.Free(old);
                        }
                        int size = 1 + random.Next(3000);
                        byte* p = (byte*)_multi.Allocate(size, 8);
                        new Span<byte>(p, size).Fill((byte)id);
                        held[k] = (IntPtr)p;
                    }
                    foreach (IntPtr p in held) _multi.Free(p);
                });
            }
            foreach (Thread thread in threads) thread.Start();
            foreach (Thread thread in threads) thread.Join();
            Assert.Equal(0, failures);
            Assert.Equal(0, _multi.LiveBytes);
            Assert.Equal(0, _multi.LiveAllocations);
        }

        /// <summary>The meter can fail here too: capturing allocation sites allocates a StackTrace per allocation.</summary>
        [Fact]
        public void CapturingAllocationSitesAllocatesSoTheMeterCanFail()
        {
            _multi.CaptureAllocationSites = true;
            long bytes = Allocations.Measure(() => _multi.Free(_multi.Allocate(16, 8)), 1000, 50);
            Assert.True(bytes > 1000, "capturing sites allocated only " + bytes + " B over 1000 calls");
        }

        [Fact]
        public void AllocateFreeAndNextFrameAllocateNoManagedBytes()
        {
            _multi.CaptureAllocationSites = false;
            var held = new IntPtr[8];
            int i = 0;
            long bytes = Allocations.Measure(() =>
            {
                int k = i++ & 7;
                if (held[k] != IntPtr.Zero) _multi.Free(held[k]);
                held[k] = (IntPtr)_multi.Allocate(4 + (k * 100), 4);
                if ((i & 1023) == 0) _multi.NextFrame(); // everything lives for less than a frame
                NativeView<int> view = _multi.AllocateView<int>(3);
                view[2] = 1;
                _multi.Free(view);
            }, 20_000, 5000);
            Assert.Equal(0, bytes);
            foreach (IntPtr p in held) _multi.Free(p);
            Assert.Equal(0, _multi.LiveBytes);
            Assert.Empty(_leaks);
        }
    }
}
