using System;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// What the runtime itself allocates to suspend and resume an await with no library code (<see cref="BareAwait"/>),
    /// counted by the thread's meter. 0 on CoreCLR and Mono on Linux (asserted there); the win-x64 runtime under Wine 8 allocates on every resume (see docs/testing-under-wine.md), which is the host's
    /// cost, not the library's, so the tests hold the library to adding nothing to it.
    /// </summary>
    public static class AwaitResumeCost
    {
        /// <summary>The bytes the resuming thread allocates over <paramref name="awaits"/> resumes, after warm-up (the least of 3 rounds).</summary>
        public static long Measure(int awaits)
        {
            long least = long.MaxValue;
            var thread = new Thread(() =>
            {
                using AllocationWindow window = AllocationWindow.Open(awaits);
                least = BareAwait.LeastBytes(window.Read, window.Calls);
            }) { IsBackground = true, Name = "await resume cost" };
            thread.Start();
            if (!thread.Join(120_000)) throw new TimeoutException("the await resume measurement did not end within 120 s");
            return least;
        }
    }
}
