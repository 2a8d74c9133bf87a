#nullable enable
using System;

namespace WhereAllocation.Memory
{
    /// <summary>A multi-frame allocation that outlived its budget of frames, as <see cref="MultiFrameAllocator"/> reports it.</summary>
    public readonly struct LeakReport
    {
        internal LeakReport(IntPtr pointer, long size, long allocatedFrame, long reportedFrame, string? allocationSite)
        {
            Pointer = pointer;
            Size = size;
            AllocatedFrame = allocatedFrame;
            ReportedFrame = reportedFrame;
            AllocationSite = allocationSite;
        }

        /// <summary>The allocation's address. It stays allocated: free it late, or let Dispose free it.</summary>
        public IntPtr Pointer { get; }

        /// <summary>The size that was asked for, in bytes.</summary>
        public long Size { get; }

        /// <summary>The frame the allocation was made in.</summary>
        public long AllocatedFrame { get; }

        /// <summary>The frame in which it was found still live.</summary>
        public long ReportedFrame { get; }

        /// <summary>
        /// The stack that made the allocation, when <see cref="MultiFrameAllocator.CaptureAllocationSites"/>
        /// was on (the default in Debug builds of the library); otherwise null.
        /// </summary>
        public string? AllocationSite { get; }

        /// <summary>One line (plus the allocation site when known), as written to standard error by default.</summary>
        public override string ToString()
        {
            return "MultiFrameAllocator leak: " + Size + " bytes at 0x" + ((long)Pointer).ToString("x") + " allocated in frame " + AllocatedFrame
                + ", still live in frame " + ReportedFrame
                + (AllocationSite == null ? " (allocation site: set CaptureAllocationSites, on by default in Debug builds)" : ", allocated at:" + Environment.NewLine + AllocationSite);
        }
    }
}
