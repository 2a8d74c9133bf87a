using System;
using System.Diagnostics;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// One round of a race between a thread using an object and another disposing it at a random moment.
    /// The worker calls its work over and over until a call throws <see cref="ObjectDisposedException"/>;
    /// any other exception fails the round (and a write into freed memory faults the process when the
    /// test runs with <c>MALLOC_MMAP_THRESHOLD_=131072</c>, as test.sh runs it: blocks of 128 KiB and more
    /// are then unmapped at free).
    /// </summary>
    public static class DisposeRace
    {
        /// <summary>Rounds end by themselves long before this; a round that does not is a failure, not a hang.</summary>
        private const int JoinMilliseconds = 60_000;

        /// <summary>
        /// Runs <paramref name="work"/> on one thread until it throws <see cref="ObjectDisposedException"/>, and
        /// <paramref name="dispose"/> on another after 0 to <paramref name="maxDelayMicroseconds"/> µs of busy
        /// waiting (a random draw from <paramref name="random"/>) once the worker has started. Asserts that the
        /// worker ended with ObjectDisposedException and nothing else, within <paramref name="maxCalls"/> calls of
        /// <paramref name="work"/>.
        /// </summary>
        public static void Round(Action work, Action dispose, Random random, int maxDelayMicroseconds, int maxCalls)
        {
            int delay = random.Next(0, maxDelayMicroseconds + 1);
            int started = 0;
            Exception? workerFailure = null, disposerFailure = null;
            bool endedDisposed = false;
            int calls = 0;
            var worker = new Thread(() =>
            {
                try
                {
                    Volatile.Write(ref started, 1);
                    while (calls < maxCalls)
                    {
                        calls++;
                        work();
                    }
                }
                catch (ObjectDisposedException)
                {
                    endedDisposed = true;
                }
                catch (Exception e)
                {
                    workerFailure = e;
                }
            });
            var disposer = new Thread(() =>
            {
                try
                {
                    while (Volatile.Read(ref started) == 0) Thread.Yield();
                    long until = Stopwatch.GetTimestamp() + delay * Stopwatch.Frequency / 1_000_000;
                    while (Stopwatch.GetTimestamp() < until) Thread.SpinWait(20);
                    dispose();
                }
                catch (Exception e)
                {
                    disposerFailure = e;
                }
            });
            worker.IsBackground = true;
            disposer.IsBackground = true;
            worker.Start();
            disposer.Start();
            Assert.True(worker.Join(JoinMilliseconds), "the worker did not end");
            Assert.True(disposer.Join(JoinMilliseconds), "the disposer did not end");
            Assert.Null(disposerFailure);
            if (workerFailure != null) Assert.Fail("call " + calls + " after a dispose " + delay + " µs in failed with " + workerFailure);
            Assert.True(endedDisposed, "the worker made " + calls + " calls without meeting the dispose");
        }
    }
}
