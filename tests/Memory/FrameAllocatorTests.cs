using System;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    public unsafe class FrameAllocatorTests : IDisposable
    {
        private readonly FrameAllocator _frame = new FrameAllocator(16 * 1024);

        public void Dispose() => _frame.Dispose();

        [Theory]
        [InlineData(1)]
        [InlineData(2)]
        [InlineData(4)]
        [InlineData(8)]
        [InlineData(16)]
        [InlineData(64)]
        [InlineData(256)]
        [InlineData(4096)]
        public void AlignmentIsHonoured(int alignment)
        {
            for (int round = 0; round < 3; round++)
            {
                // Odd sizes in between, so the cursor is misaligned before every request; enough to overflow.
                for (int i = 0; i < 200; i++)
                {
                    _frame.Allocate(1 + i % 7, 1);
                    byte* p = (byte*)_frame.Allocate(3 + i % 5, alignment);
                    Assert.Equal(0UL, (ulong)p % (ulong)alignment);
                    p[0] = 1;
                }
                _frame.Reset();
            }
        }

        [Fact]
        public void ConsecutiveAllocationsAreApartByPaddingOnlyUntilTheBlockEnds()
        {
            // The article's experiment: 4-byte allocations aligned to 4 sit exactly 4 bytes apart.
            byte* previous = (byte*)_frame.Allocate(4, 4);
            for (int i = 1; i < 1000; i++)
            {
                byte* p = (byte*)_frame.Allocate(4, 4);
                Assert.Equal(4L, p - previous);
                previous = p;
            }
            Assert.False(_frame.IsOverflowing);
            Assert.Equal(4000, _frame.BytesUsed);
            // Mixed alignments: the distance is the previous size plus the padding to the next multiple.
            _frame.Reset();
            byte* a = (byte*)_frame.Allocate(1, 1);
            byte* b = (byte*)_frame.Allocate(8, 8);
            byte* c = (byte*)_frame.Allocate(3, 1);
            byte* d = (byte*)_frame.Allocate(16, 16);
            Assert.Equal(8L, b - a);  // 1 byte + 7 padding
            Assert.Equal(8L, c - b);  // 8 bytes, no padding
            Assert.Equal(16L, d - c); // 3 bytes + 13 padding: offset 19 rounds up to 32
        }

        [Fact]
        public void OverflowContinuesInNativeBlocksAndReportsTheHighWaterMark()
        {
            var pointers = new IntPtr[2000];
            for (int i = 0; i < pointers.Length; i++)
            {
                byte* p = (byte*)_frame.Allocate(16, 16);
                new Span<byte>(p, 16).Fill((byte)i);
                pointers[i] = (IntPtr)p;
            }
            Assert.True(_frame.IsOverflowing);
            Assert.Equal(2000 * 16, _frame.BytesUsed);
            Assert.True(_frame.NativeBytes > _frame.BlockSize);
            Assert.True(_frame.OverflowBlocksAllocated >= 1);
            for (int i = 0; i < pointers.Length; i++)
            {
                Assert.True(_frame.Owns((void*)pointers[i]));
                Assert.Equal((byte)i, ((byte*)pointers[i])[15]); // nothing overlapped
            }
            // A request larger than the block gets an overflow block of its own.
            byte* big = (byte*)_frame.Allocate(100_000, 4096);
            Assert.Equal(0UL, (ulong)big % 4096);
            new Span<byte>(big, 100_000).Fill(7);
            long used = _frame.BytesUsed;
            _frame.Reset();
            Assert.False(_frame.IsOverflowing);
            Assert.Equal(_frame.BlockSize, _frame.NativeBytes);
            Assert.Equal(0, _frame.BytesUsed);
            Assert.Equal(used, _frame.HighWaterMark);
            // A smaller frame leaves the mark where it was.
            _frame.Allocate(100, 8);
            _frame.Reset();
            Assert.Equal(used, _frame.HighWaterMark);
        }

        [Fact]
        public void ResetRewindsToTheStartOfTheBlock()
        {
            byte* first = (byte*)_frame.Allocate(32, 16);
            _frame.Allocate(1000, 8);
            Assert.Equal(0L, _frame.Frame);
            _frame.Reset();
            Assert.Equal(1L, _frame.Frame);
            Assert.True(first == (byte*)_frame.Allocate(32, 16));
        }

        [Fact]
        public void ViewUsedAfterResetThrows()
        {
            NativeView<Sample24> view = _frame.AllocateView<Sample24>(10);
            view[3].Id = 42;
            Assert.Equal(42, view.AsSpan()[3].Id);
            Assert.True(view.IsAlive);
            _frame.Reset();
            Assert.False(view.IsAlive);
            var e = Assert.Throws<InvalidOperationException>(() => view.AsSpan());
            Assert.Contains("after Reset()", e.Message);
            Assert.Throws<InvalidOperationException>(() => view[0].Id);
            Assert.Throws<InvalidOperationException>(() => (IntPtr)view.Pointer);
        }

        /// <summary>A raw pointer cannot be checked; Debug builds of the library poison the frame at Reset instead.</summary>
        [Fact]
        public void RawPointerAfterResetReadsPoisonInDebugBuilds()
        {
            byte* p = (byte*)_frame.Allocate(64, 8);
            new Span<byte>(p, 64).Fill(0x11);
            _frame.Reset();
            byte expected = NativeAllocator.IsDebugBuild ? (byte)0xDD : (byte)0x11;
            for (int i = 0; i < 64; i++) Assert.Equal(expected, p[i]);
        }

        [Fact]
        public void FreeChecksOwnershipOnly()
        {
            void* mine = _frame.Allocate(64, 8);
            _frame.Free(mine); // allowed: a no-op, memory returns at Reset
            using var other = new FrameAllocator(1024);
            void* theirs = other.Allocate(64, 8);
            var e = Assert.Throws<ArgumentException>(() => _frame.Free(theirs));
            Assert.Contains("not allocated by this FrameAllocator", e.Message);
            void* persistent = PersistentAllocator.Shared.Allocate(16, 16);
            try
            {
                Assert.Throws<ArgumentException>(() => _frame.Free(persistent));
            }
            finally
            {
                PersistentAllocator.Shared.Free(persistent);
            }
            Assert.Throws<ArgumentNullException>(() => _frame.Free(null));
        }

        [Fact]
        public void BadRequestsThrow()
        {
            BadRequests.AssertAllThrow(_frame);
        }

        [Fact]
        public void DisposedAllocatorThrows()
        {
            var frame = new FrameAllocator(256);
            NativeView<int> view = frame.AllocateView<int>(4);
            frame.Dispose();
            Assert.Throws<ObjectDisposedException>(() => frame.Allocate(8, 8));
            Assert.Throws<ObjectDisposedException>(() => frame.Reset());
            Assert.Throws<InvalidOperationException>(() => view.AsSpan());
            frame.Dispose(); // twice is fine
        }

        [Fact]
        public void AllocateAndResetAllocateNoManagedBytes()
        {
            long bytes = Allocations.Measure(() =>
            {
                byte* p = (byte*)_frame.Allocate(4, 4);
                *p = 1;
                Span<long> span = _frame.AllocateSpan<long>(4);
                span[0] = 2;
                NativeView<Sample24> view = _frame.AllocateView<Sample24>(2);
                view[1].Id = 3;
                _frame.Free(p);
                if (_frame.BytesUsed > 30_000) _frame.Reset(); // overflow and reset are part of the steady state
            }, 20_000, 5000);
            Assert.Equal(0, bytes);
            Assert.True(_frame.OverflowBlocksAllocated > 0);
        }
    }
}
