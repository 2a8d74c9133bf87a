using System;
using WhereAllocation.Memory;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>
    /// A seeded mix of operations over every allocator: frame allocations with a reset every 64 operations,
    /// multi-frame allocations freed up to three frames later, persistent allocations freed in random order,
    /// arena rents with one to six allocations each. Shared by the leak test and bench/MemoryLeakCheck
    /// (which runs it under valgrind or heaptrack).
    /// </summary>
    public static unsafe class MixedWorkload
    {
        public struct Result
        {
            public long Operations;
            public long FrameLiveNativeBytes;   // after the last Reset: the main block only
            public long FrameHighWaterMark;
            public long MultiFrameLiveBytes;
            public long MultiFrameLiveAllocations;
            public long MultiFrameLeaksReported;
            public long PersistentLiveBytes;
            public long PersistentLiveAllocations;
            public long PersistentPeakBytes;
            public long SharedPersistentLiveBytes;
            public long ArenaRented;
            public long ArenaNativeBytesAfterTrim;

            public override string ToString()
            {
                return "operations " + Operations
                    + "; frame: high-water " + FrameHighWaterMark + " B"
                    + "; multi-frame: live " + MultiFrameLiveBytes + " B in " + MultiFrameLiveAllocations + " allocations, leaks reported " + MultiFrameLeaksReported
                    + "; persistent: live " + PersistentLiveBytes + " B in " + PersistentLiveAllocations + " allocations (peak " + PersistentPeakBytes + " B), shared live " + SharedPersistentLiveBytes + " B"
                    + "; arenas: rented " + ArenaRented + ", native bytes after trim " + ArenaNativeBytesAfterTrim;
            }
        }

        /// <summary>Runs <paramref name="operations"/> operations and returns the allocators' own accounting at the end.</summary>
        public static Result Run(int operations, int seed = 12345)
        {
            var random = new Random(seed);
            var result = new Result();
            long sharedBefore = PersistentAllocator.Shared.LiveBytes;
            using var frame = new FrameAllocator(8 * 1024);
            using var multi = new MultiFrameAllocator { CaptureAllocationSites = false };
            using var heap = new PersistentAllocator();
            using var pool = new ArenaPool();
            const int MultiSlots = 256, HeapSlots = 512;
            var multiHeld = new IntPtr[MultiSlots];
            var multiFrame = new long[MultiSlots];
            var heapHeld = new IntPtr[HeapSlots];
            var sharedHeld = new IntPtr[16];
            int done = 0;
            while (done < operations)
            {
                int kind = random.Next(100);
                if (kind < 30)
                {
                    byte* p = (byte*)frame.Allocate(1 + random.Next(600), 1 << random.Next(7));
                    *p = 1;
                    if (done % 64 == 0) frame.Reset();
                }
                else if (kind < 55)
                {
                    int k = random.Next(MultiSlots);
                    if (multiHeld[k] != IntPtr.Zero) multi.Free(multiHeld[k]);
                    int size = random.Next(50) == 0 ? 20_000 + random.Next(50_000) : 1 + random.Next(3000);
                    multiHeld[k] = (IntPtr)multi.Allocate(size, 1 << random.Next(8));
                    multiFrame[k] = multi.Frame;
                    if (done % 100 == 0)
                    {
                        // Free what would otherwise outlive its budget, then advance.
                        for (int i = 0; i < MultiSlots; i++)
                            if (multiHeld[i] != IntPtr.Zero && multi.Frame - multiFrame[i] >= 3)
                            {
                                multi.Free(multiHeld[i]);
                                multiHeld[i] = IntPtr.Zero;
                            }
                        multi.NextFrame();
                    }
                }
                else if (kind < 80)
                {
                    int k = random.Next(HeapSlots);
                    if (heapHeld[k] != IntPtr.Zero) heap.Free(heapHeld[k]);
                    heapHeld[k] = (IntPtr)heap.Allocate(1 + random.Next(random.Next(20) == 0 ? 100_000 : 2000), 1 << random.Next(13));
                    int s = random.Next(sharedHeld.Length);
                    if (sharedHeld[s] != IntPtr.Zero) PersistentAllocator.Shared.Free(sharedHeld[s]);
                    sharedHeld[s] = random.Next(4) == 0 ? IntPtr.Zero : (IntPtr)PersistentAllocator.Shared.Allocate(1 + random.Next(256), 8);
                }
                else
                {
                    using ArenaLease arena = pool.Rent();
                    int count = 1 + random.Next(6);
                    for (int i = 0; i < count; i++)
                    {
                        byte* p = (byte*)arena.Allocate(1 + random.Next(random.Next(10) == 0 ? 9000 : 1200), 1 << random.Next(6));
                        *p = 2;
                    }
                    done += count - 1;
                }
                done++;
            }
            for (int i = 0; i < MultiSlots; i++) if (multiHeld[i] != IntPtr.Zero) multi.Free(multiHeld[i]);
            for (int i = 0; i < HeapSlots; i++) if (heapHeld[i] != IntPtr.Zero) heap.Free(heapHeld[i]);
            for (int i = 0; i < sharedHeld.Length; i++) if (sharedHeld[i] != IntPtr.Zero) PersistentAllocator.Shared.Free(sharedHeld[i]);
            frame.Reset();
            pool.Trim();
            result.Operations = done;
            result.FrameLiveNativeBytes = frame.NativeBytes;
            result.FrameHighWaterMark = frame.HighWaterMark;
            result.MultiFrameLiveBytes = multi.LiveBytes;
            result.MultiFrameLiveAllocations = multi.LiveAllocations;
            result.MultiFrameLeaksReported = multi.LeaksReported;
            result.PersistentLiveBytes = heap.LiveBytes;
            result.PersistentLiveAllocations = heap.LiveAllocations;
            result.PersistentPeakBytes = heap.PeakBytes;
            result.SharedPersistentLiveBytes = PersistentAllocator.Shared.LiveBytes - sharedBefore;
            result.ArenaRented = pool.Rented;
            result.ArenaNativeBytesAfterTrim = pool.NativeBytes;
            return result;
        }
    }
}
