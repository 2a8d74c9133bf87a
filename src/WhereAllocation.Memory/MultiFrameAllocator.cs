#nullable enable
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// Memory for a few frames: allocations freed one by one, each expected back within
    /// <see cref="FrameBudget"/> frames (default 4). Small allocations come from size-class free lists in
    /// 64 KiB chunks (slots of 32 B to 16 KiB), so allocating and freeing are a free-list pop and push under
    /// a short spin lock; larger ones go to the native heap. <see cref="NextFrame"/> advances the frame
    /// count; an allocation made in frame F that is still live when frame F + FrameBudget begins is
    /// reported once as a leak (<see cref="LeakReport"/>: size, frames and, when
    /// <see cref="CaptureAllocationSites"/> is on, the stack that made it).
    /// </summary>
    /// <remarks>
    /// Thread-safe: any thread may allocate and free (a job started on one thread frees on another), and
    /// <see cref="NativeAllocator.Dispose()"/> may come from any thread at any time: every call reads and writes
    /// the slots' headers and the free lists under the lock that Dispose takes to free the chunks, and a clearing
    /// allocation zeroes a slot under that lock (a large block before it is recorded); after Dispose, every call
    /// throws <see cref="ObjectDisposedException"/> (<see cref="Owns"/> answers false).
    /// Every allocation has a 16-byte header at the start of its slot that records its state; freeing checks
    /// it (always on), so a pointer freed twice or not made here throws instead of corrupting the lists. A
    /// slot freed and then handed out again cannot be told from the new allocation, as with any allocator.
    /// </remarks>
    public sealed unsafe class MultiFrameAllocator : NativeAllocator
    {
        /// <summary>The default number of frames an allocation may live: 4, as Unity's TempJob.</summary>
        public const int DefaultFrameBudget = 4;

        private const int ChunkShift = 16;
        private const nuint ChunkSize = (nuint)1 << ChunkShift;
        private const int MinSlotShift = 5;   // 32-byte slots
        private const int ClassCount = 10;    // 32 B .. 16 KiB
        private const nuint MaxSlot = (nuint)1 << (MinSlotShift + ClassCount - 1);
        private const uint LiveTag = 0x4556494C;  // "LIVE"
        private const uint FreeTag = 0x45455246;  // "FREE"
        private const byte LargeClass = 0xFF;
        private const byte FlagReported = 1;

        private struct Header // 16 bytes at the start of each slot, or just before a large allocation
        {
            internal uint Tag;
            internal int Frame;
            internal uint Size;
            internal ushort Offset;   // user pointer - slot start
            internal byte Class;
            internal byte Flags;
        }

        private readonly int _budget;
        private readonly int[] _liveByFrame;       // live allocations per frame: a ring of at least budget + 1, a power of two
        private readonly int _ringMask;
        private byte** _freeLists;                 // per class, linked through slot + 16
        private PointerMap _chunks;                // chunk start -> class
        private PointerMap _large;                 // user pointer -> (block, size)
        private SpinGate _gate;
        private int _frame;
        private long _liveBytes, _liveCount, _peakBytes, _leakedLiveCount, _leakedLiveBytes, _leaksReported, _totalAllocations;
        private bool _disposed;
        private Dictionary<IntPtr, StackTrace>? _sites;
        private bool _captureSites;

        /// <summary>A multi-frame allocator whose allocations may live <paramref name="frameBudget"/> frames.</summary>
        public MultiFrameAllocator(int frameBudget = DefaultFrameBudget)
        {
            if (frameBudget < 1 || frameBudget > 1000) throw new ArgumentOutOfRangeException(nameof(frameBudget), "frameBudget " + frameBudget + " is not from 1 to 1000.");
            _budget = frameBudget;
            int ring = 2;
            while (ring < frameBudget + 1) ring <<= 1;
            _liveByFrame = new int[ring];
            _ringMask = ring - 1;
            _freeLists = (byte**)NativeHeap.Alloc((nuint)(ClassCount * sizeof(byte*)));
            for (int i = 0; i < ClassCount; i++) _freeLists[i] = null;
            _chunks.Init(4);
            _large.Init(4);
            CaptureAllocationSites = IsDebugBuild;
        }

        internal override string Name => nameof(MultiFrameAllocator);

        /// <summary>Frames an allocation may live: one made in frame F must be freed before frame F + FrameBudget begins.</summary>
        public int FrameBudget => _budget;

        /// <summary>The current frame: the number of <see cref="NextFrame"/> calls so far.</summary>
        public long Frame => _frame;

        /// <summary>Bytes asked for by allocations not yet freed (leaked ones included).</summary>
        public long LiveBytes => Volatile.Read(ref _liveBytes);

        /// <summary>Allocations not yet freed (leaked ones included).</summary>
        public long LiveAllocations => Volatile.Read(ref _liveCount);

        /// <summary>The most <see cref="LiveBytes"/> has been.</summary>
        public long PeakBytes => Volatile.Read(ref _peakBytes);

        /// <summary>Allocations made since the allocator was created.</summary>
        public long TotalAllocations => Volatile.Read(ref _totalAllocations);

        /// <summary>Leaks reported so far (each allocation at most once).</summary>
        public long LeaksReported => Volatile.Read(ref _leaksReported);

        /// <summary>Reported leaks not freed since.</summary>
        public long LeakedLiveAllocations => Volatile.Read(ref _leakedLiveCount);

        /// <summary>Bytes of reported leaks not freed since.</summary>
        public long LeakedLiveBytes => Volatile.Read(ref _leakedLiveBytes);

        /// <summary>Native bytes held: chunks, large blocks and bookkeeping.</summary>
        public long NativeBytes
        {
            get
            {
                _gate.Enter();
                try
                {
                    if (_disposed) return 0;
                    long total = (long)_chunks.Count * (long)ChunkSize + _chunks.TableBytes + _large.TableBytes + ClassCount * sizeof(byte*);
                    for (int i = 0; i < _large.Capacity; i++)
                        if (_large.TryGetAt(i, out _, out _, out nuint size)) total += (long)size + MaxAlignment;
                    return total;
                }
                finally
                {
                    _gate.Exit();
                }
            }
        }

        /// <summary>
        /// Record the stack of each allocation so a leak report can say where it was made. On by default in
        /// Debug builds of the library, off in Release. Capturing allocates managed memory (a StackTrace per
        /// allocation): it is a debugging aid, not for measured steady state.
        /// </summary>
        public bool CaptureAllocationSites
        {
            get => _captureSites;
            set
            {
                _gate.Enter();
                if (value && _sites == null) _sites = new Dictionary<IntPtr, StackTrace>();
                _captureSites = value;
                _gate.Exit();
            }
        }

        /// <summary>
        /// Called with each leak found by <see cref="NextFrame"/>, on the thread that called it. When null,
        /// each report is written to standard error.
        /// </summary>
        public Action<LeakReport>? LeakHandler { get; set; }

        // Not inlined, here and in AllocateCleared: the captured site skips exactly this frame, so it starts at the caller.
        /// <inheritdoc />
        [MethodImpl(MethodImplOptions.NoInlining)]
        public override void* Allocate(nuint size, nuint alignment) => Allocate(size, alignment, false, _captureSites ? new StackTrace(1, true) : null);

        /// <summary>
        /// Zeroes the memory where a concurrent <see cref="NativeAllocator.Dispose()"/> cannot free it meanwhile:
        /// a slot under the lock (at most 16 KiB), a large block before it is recorded.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal override void* AllocateCleared(nuint size, nuint alignment) => Allocate(size, alignment, true, _captureSites ? new StackTrace(1, true) : null);

        private void* Allocate(nuint size, nuint alignment, bool clear, StackTrace? site)
        {
            if (!MemoryErrors.IsValid(size, alignment)) MemoryErrors.ThrowBadRequest(size, alignment);
            nuint front = alignment > 16 ? alignment : 16;
            nuint need = front + size;
            if (need > MaxSlot || size > uint.MaxValue) return AllocateLarge(size, alignment, site, clear);
            int cls = ClassOf(need);
            byte* user;
            byte* slot;
            _gate.Enter();
            while (true)
            {
                if (_disposed)
                {
                    _gate.Exit();
                    MemoryErrors.ThrowDisposed(Name);
                }
                slot = _freeLists[cls];
                if (slot != null) break;
                _gate.Exit();
                AddChunk(cls);
                _gate.Enter();
            }
            _freeLists[cls] = *(byte**)(slot + 16);
            user = (byte*)AlignUp((nuint)slot + 16, alignment);
            Header* h = (Header*)slot;
            h->Tag = LiveTag;
            h->Frame = _frame;
            h->Size = (uint)size;
            h->Offset = (ushort)(user - slot);
            h->Flags = 0;
            _liveByFrame[_frame & _ringMask]++;
            Count(size);
            if (site != null) _sites![(IntPtr)user] = site;
            if (clear) Clear(user, size);
            _gate.Exit();
            return user;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static int ClassOf(nuint need)
        {
            int cls = 0;
            nuint slot = (nuint)1 << MinSlotShift;
            while (slot < need)
            {
                slot <<= 1;
                cls++;
            }
            return cls;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void Count(nuint size)
        {
            _liveBytes += (long)size;
            _liveCount++;
            _totalAllocations++;
            if (_liveBytes > _peakBytes) _peakBytes = _liveBytes;
        }

        /// <summary>Carves a new chunk into slots of one class and pushes them on that class's free list.</summary>
        private void AddChunk(int cls)
        {
            byte* chunk = (byte*)NativeHeap.AllocAligned(ChunkSize, ChunkSize);
            nuint slotSize = (nuint)1 << (MinSlotShift + cls);
            byte* head = null;
            for (nuint offset = ChunkSize - slotSize; ; offset -= slotSize)
            {
                byte* slot = chunk + offset;
                Header* h = (Header*)slot;
                h->Tag = FreeTag;
                h->Class = (byte)cls;
                h->Offset = 0;
                h->Flags = 0;
                *(byte**)(slot + 16) = head;
                head = slot;
                if (offset == 0) break;
            }
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                NativeHeap.FreeAligned(chunk);
                MemoryErrors.ThrowDisposed(Name);
            }
            _chunks.Add((nuint)chunk, (nuint)cls, 0);
            // Chain the new slots in front of whatever another thread may have freed meanwhile.
            byte* tail = chunk + ChunkSize - slotSize;
            *(byte**)(tail + 16) = _freeLists[cls];
            _freeLists[cls] = head;
            _gate.Exit();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void* AllocateLarge(nuint size, nuint alignment, StackTrace? site, bool clear)
        {
            nuint front = alignment > 16 ? alignment : 16;
            byte* block = (byte*)NativeHeap.AllocAligned(size + front, front);
            byte* user = block + front;
            if (clear) Clear(user, size);
            Header* h = (Header*)(user - 16);
            h->Tag = LiveTag;
            h->Size = size > uint.MaxValue ? uint.MaxValue : (uint)size;
            h->Offset = 16;
            h->Class = LargeClass;
            h->Flags = 0;
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                NativeHeap.FreeAligned(block);
                MemoryErrors.ThrowDisposed(Name);
            }
            h->Frame = _frame;
            _large.Add((nuint)user, (nuint)block, size);
            _liveByFrame[_frame & _ringMask]++;
            Count(size);
            if (site != null) _sites![(IntPtr)user] = site;
            _gate.Exit();
            return user;
        }

        /// <inheritdoc />
        public override void Free(void* pointer)
        {
            if (pointer == null) MemoryErrors.ThrowNull(Name);
            nuint p = (nuint)pointer;
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                MemoryErrors.ThrowDisposed(Name);
            }
            if (_chunks.TryGet(p & ~(ChunkSize - 1), out nuint cls, out _))
            {
                nuint slotSize = (nuint)1 << (MinSlotShift + (int)cls);
                byte* slot = (byte*)(p & ~(slotSize - 1));
                Header* h = (Header*)slot;
                if (h->Tag != LiveTag || slot + h->Offset != pointer)
                {
                    bool twice = h->Tag == FreeTag && slot + h->Offset == pointer && h->Offset != 0;
                    _gate.Exit();
                    if (twice) MemoryErrors.ThrowFreedTwice(Name, pointer);
                    MemoryErrors.ThrowNotOwned(Name, pointer);
                }
                Uncount(h, h->Size);
                h->Tag = FreeTag;
                *(byte**)(slot + 16) = _freeLists[cls];
                _freeLists[cls] = slot;
                if (_sites != null && _sites.Count != 0) _sites.Remove((IntPtr)pointer);
                _gate.Exit();
                return;
            }
            if (_large.Remove(p, out nuint block, out nuint largeSize))
            {
                Header* h = (Header*)(p - 16);
                Uncount(h, (long)largeSize);
                h->Tag = FreeTag;
                if (_sites != null && _sites.Count != 0) _sites.Remove((IntPtr)pointer);
                _gate.Exit();
                NativeHeap.FreeAligned((void*)block);
                return;
            }
            _gate.Exit();
            MemoryErrors.ThrowNotOwned(Name, pointer);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private void Uncount(Header* h, long size)
        {
            _liveBytes -= size;
            _liveCount--;
            if ((h->Flags & FlagReported) != 0)
            {
                _leakedLiveCount--;
                _leakedLiveBytes -= size;
            }
            else
            {
                _liveByFrame[h->Frame & _ringMask]--;
            }
        }

        /// <summary>
        /// Begins the next frame. Allocations made <see cref="FrameBudget"/> frames ago that are still live
        /// are reported as leaks (to <see cref="LeakHandler"/>, else standard error), once each; they stay
        /// allocated until freed or until the allocator is disposed. Returns how many were reported.
        /// </summary>
        public int NextFrame()
        {
            List<LeakReport>? leaks = null;
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                MemoryErrors.ThrowDisposed(Name);
            }
            _frame++;
            int expired = _frame - _budget;
            if (expired >= 0)
            {
                ref int live = ref _liveByFrame[expired & _ringMask];
                if (live != 0)
                {
                    leaks = CollectLeaks(expired);
                    live = 0;
                }
            }
            _gate.Exit();
            if (leaks == null) return 0;
            Action<LeakReport>? handler = LeakHandler;
            foreach (LeakReport leak in leaks)
            {
                if (handler != null) handler(leak);
                else Console.Error.WriteLine(leak.ToString());
            }
            return leaks.Count;
        }

        /// <summary>Under the lock: marks every live allocation made in frame <paramref name="expired"/> as reported.</summary>
        private List<LeakReport> CollectLeaks(int expired)
        {
            var leaks = new List<LeakReport>();
            for (int i = 0; i < _chunks.Capacity; i++)
            {
                if (!_chunks.TryGetAt(i, out nuint chunk, out nuint cls, out _)) continue;
                nuint slotSize = (nuint)1 << (MinSlotShift + (int)cls);
                for (nuint offset = 0; offset < ChunkSize; offset += slotSize)
                {
                    Header* h = (Header*)(chunk + offset);
                    if (h->Tag == LiveTag) Report(h, (byte*)h + h->Offset, h->Size, expired, leaks);
                }
            }
            for (int i = 0; i < _large.Capacity; i++)
            {
                if (!_large.TryGetAt(i, out nuint user, out _, out nuint size)) continue;
                Report((Header*)(user - 16), (byte*)user, (long)size, expired, leaks);
            }
            return leaks;
        }

        private void Report(Header* h, byte* user, long size, int expired, List<LeakReport> leaks)
        {
            if ((h->Flags & FlagReported) != 0 || h->Frame != expired) return;
            h->Flags |= FlagReported;
            _leakedLiveCount++;
            _leakedLiveBytes += size;
            _leaksReported++;
            string? site = null;
            if (_sites != null && _sites.TryGetValue((IntPtr)user, out StackTrace? trace)) site = trace.ToString();
            leaks.Add(new LeakReport((IntPtr)user, size, h->Frame, _frame, site));
        }

        /// <inheritdoc />
        public override bool Owns(void* pointer)
        {
            nuint p = (nuint)pointer;
            _gate.Enter();
            try
            {
                if (_disposed) return false;
                if (_chunks.TryGet(p & ~(ChunkSize - 1), out nuint cls, out _))
                {
                    byte* slot = (byte*)(p & ~(((nuint)1 << (MinSlotShift + (int)cls)) - 1));
                    return ((Header*)slot)->Tag == LiveTag;
                }
                return _large.TryGet(p, out _, out _);
            }
            finally
            {
                _gate.Exit();
            }
        }

        /// <inheritdoc />
        protected override void Dispose(bool disposing)
        {
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                return;
            }
            _disposed = true;
            for (int i = 0; i < _chunks.Capacity; i++)
                if (_chunks.TryGetAt(i, out nuint chunk, out _, out _)) NativeHeap.FreeAligned((void*)chunk);
            for (int i = 0; i < _large.Capacity; i++)
                if (_large.TryGetAt(i, out _, out nuint block, out _)) NativeHeap.FreeAligned((void*)block);
            _chunks.Dispose();
            _large.Dispose();
            NativeHeap.Free(_freeLists);
            _freeLists = null;
            _liveBytes = 0;
            _liveCount = 0;
            ViewGeneration++;
            _gate.Exit();
        }
    }
}
