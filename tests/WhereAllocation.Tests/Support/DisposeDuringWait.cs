using System;
using System.Diagnostics;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A call that waits on a socket, on a thread of its own, and a Dispose of that socket from the test's thread
    /// while it waits: the call must come back, with <see cref="ObjectDisposedException"/>. "While it waits" is the
    /// library's own count of calls inside a wait (<see cref="SocketHandles.WaitsInProgress"/>), never a sleep that a
    /// loaded machine can make too short (which would test "disposed before" instead).
    /// </summary>
    public static class DisposeDuringWait
    {
        /// <summary>
        /// Starts <paramref name="wait"/> on a new thread, waits until it is inside its wait (<see cref="UntilInside"/>), calls
        /// <paramref name="dispose"/>, and asserts that the call returned within 5 s with ObjectDisposedException
        /// (naming what it ended with otherwise).
        /// </summary>
        public static void AssertEndsWithObjectDisposed(Action wait, Action dispose)
        {
            Exception? caught = null;
            int before = CountBefore();
            var thread = new Thread(() =>
            {
                try { wait(); }
                catch (Exception e) { caught = e; }
            }) { IsBackground = true };
            thread.Start();
            Assert.True(UntilInside(before, thread), "the call never reached its wait (it ended with " + (caught?.ToString() ?? "no exception") + ")");
            dispose();
            Assert.True(thread.Join(5000), "the waiting call did not return after Dispose");
            Assert.True(caught?.GetType() == typeof(ObjectDisposedException),
                "expected ObjectDisposedException; the call ended with " + (caught?.ToString() ?? "no exception"));
        }

        /// <summary>
        /// The library's calls inside a wait now, read before a test starts the call it will dispose "during", with the
        /// kernel's waits counted too from here on (<see cref="SocketHandles.CountKernelWaits"/>: off by default, since a
        /// receive cannot know before its call whether it will wait, and counting would cost every receive).
        /// </summary>
        public static int CountBefore()
        {
            SocketHandles.CountKernelWaits = true;
            // The watchdog's hold of a disposed socket's handle is among the library's waits too (KernelWaitWatchdog.WakesHolding),
            // and one that woke an earlier test's receive can still be ending now: a count read during it would be one too high,
            // and the receive started next would never be seen above it.
            var watch = Stopwatch.StartNew();
            while (KernelWaitWatchdog.WakesHolding != 0 && watch.ElapsedMilliseconds < 5000) Thread.Sleep(1);
            Assert.True(KernelWaitWatchdog.WakesHolding == 0, "the watchdog still held a disposed socket's handle 5 s on");
            return SocketHandles.WaitsInProgress;
        }

        /// <summary>
        /// The library's calls inside a wait: its count of waits less the watchdog's holds of a disposed socket's handle. A hold
        /// is counted among those holds from before it is among the waits until after it leaves them, so a reading during one
        /// can be one too low (then the next is asked), never too high.
        /// </summary>
        public static int CallsWaiting()
        {
            while (true)
            {
                int holds = KernelWaitWatchdog.WakesHolding;
                int waits = SocketHandles.WaitsInProgress;
                if (KernelWaitWatchdog.WakesHolding == holds) return waits - holds;
            }
        }

        /// <summary>
        /// Waits (at most 10 s) until more of the library's calls are inside a wait than <paramref name="before"/> (read
        /// before <paramref name="caller"/> started its call; the tests run one at a time): true then, false when the
        /// caller ended first or the time ran out. The count is read every millisecond until it is seen up.
        /// </summary>
        public static bool UntilInside(int before, Thread caller)
        {
            Assert.True(SocketHandles.CountKernelWaits, "read the count with CountBefore, which has the kernel's waits counted too");
            var watch = Stopwatch.StartNew();
            while (CallsWaiting() <= before)
            {
                if (!caller.IsAlive || watch.ElapsedMilliseconds > 10_000) return false;
                Thread.Sleep(1);
            }
            return true;
        }
    }
}
