using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Which CPU the measured work runs on, and which one the unmeasured work that feeds it (a scale fill) runs on, for the
    /// library's rows and the C programs alike: the first two CPUs this thread may use, or the one CPU twice; with no affinity
    /// to read (not Linux), nothing is pinned. A C program runs in a process of its own, where the scheduler may put it on a CPU
    /// whose caches and load differ from the library's thread's; pinning both to the same CPU makes their rows comparable.
    /// </summary>
    internal sealed class CpuPlacement
    {
        /// <summary>The CPU of the measured work (a drain, a send), or -1 when nothing is pinned.</summary>
        public readonly int MeasuredCpu;

        /// <summary>The CPU of the work that feeds it (a fill), or -1; equal to <see cref="MeasuredCpu"/> with one CPU.</summary>
        public readonly int OtherCpu;

        private readonly ulong _original;

        private CpuPlacement(int otherCpu, int measuredCpu, ulong original)
        {
            OtherCpu = otherCpu;
            MeasuredCpu = measuredCpu;
            _original = original;
        }

        public static CpuPlacement Choose()
        {
            ulong mask = Linux.IsLinux ? Linux.CurrentAffinity() : 0;
            int first = -1, second = -1;
            for (int cpu = 0; cpu < 64 && second < 0; cpu++)
            {
                if ((mask & (1UL << cpu)) == 0) continue;
                if (first < 0) first = cpu;
                else second = cpu;
            }
            return new CpuPlacement(first, second >= 0 ? second : first, mask);
        }

        public bool Pinned => MeasuredCpu >= 0;

        /// <summary>The C programs' option that pins them where the measured work runs (nothing when nothing is pinned).</summary>
        public string CpuArgument => Pinned ? " --cpu " + MeasuredCpu : "";

        /// <summary>Moves the calling thread to the CPU of the measured work.</summary>
        public void ToMeasured() => Move(MeasuredCpu);

        /// <summary>Moves the calling thread to the CPU of the work that feeds it.</summary>
        public void ToOther() => Move(OtherCpu);

        private static void Move(int cpu)
        {
            if (cpu >= 0 && !Linux.PinCurrentThread(cpu)) throw new InvalidOperationException("sched_setaffinity(" + cpu + ") failed: errno " + Marshal.GetLastWin32Error());
        }

        /// <summary>Gives the calling thread back the CPUs it had.</summary>
        public void Restore()
        {
            if (Pinned) Linux.SetCurrentAffinity(_original);
        }
    }
}
