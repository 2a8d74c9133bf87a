using System;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>Running awaitable code in tests: off the test framework's SynchronizationContext, and bounded in time.</summary>
    public static class Awaits
    {
        /// <summary>
        /// The engine's I/O thread once it runs (it names itself inside its loop's guard, a moment after the await that started
        /// it); null when none runs within 5 s.
        /// </summary>
        internal static System.Threading.Thread? IoThread(AwaitEngine engine)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            System.Threading.Thread? thread;
            while ((thread = engine.CurrentThread) == null && watch.ElapsedMilliseconds < 5000) System.Threading.Thread.Sleep(1);
            return thread;
        }

        /// <summary>
        /// Collects, and runs the finalizers: wrappers that earlier tests left to the collector unregister from their engine
        /// now, not in the middle of a test that counts the engine's sockets or needs its thread ended.
        /// </summary>
        internal static void CollectLeftWrappers()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }

        /// <summary>
        /// Waits at most <paramref name="timeoutMs"/> until <paramref name="engine"/> runs no thread: false when one still runs.
        /// A test that needs the engine stopped waits here, not on <see cref="AwaitEngine.CurrentThread"/> alone: a thread
        /// that an earlier test's last await started is running, but unnamed (null there) until it first takes the engine's
        /// lock, and on a loaded machine that can come after the next test's check (a probe saw such a thread in 187 of 300
        /// rounds).
        /// </summary>
        internal static bool EngineStopped(AwaitEngine engine, int timeoutMs)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            while (engine.Running)
            {
                if (watch.ElapsedMilliseconds >= timeoutMs) return false;
                System.Threading.Thread? thread = engine.CurrentThread;
                if (thread != null) thread.Join(10);
                else System.Threading.Thread.Sleep(1);
            }
            return true;
        }

        /// <summary>
        /// Runs <paramref name="body"/> on the thread pool (no SynchronizationContext: the test framework's would take
        /// every continuation) and waits for it at most <paramref name="timeoutMs"/>; rethrows what it threw.
        /// </summary>
        public static void Run(Func<Task> body, int timeoutMs = 60_000)
        {
            Task task = Task.Run(body);
            Assert.True(task.Wait(timeoutMs) || task.IsCompleted, "the awaiting code did not finish within " + timeoutMs + " ms");
            task.GetAwaiter().GetResult();
        }

        /// <summary>
        /// What a ValueTask came to within <paramref name="timeoutMs"/>: null while still pending, else the exception's
        /// name without "Exception" (a SocketException: its error code), or "" for a result (given in <paramref name="result"/>).
        /// </summary>
        public static string? Outcome<T>(ValueTask<T> pending, int timeoutMs, out T result)
        {
            Task<T> task = pending.AsTask();
            result = default!;
            try
            {
                if (!task.Wait(timeoutMs)) return null;
            }
            catch (AggregateException)
            {
                // Looked at below.
            }
            if (task.IsCanceled) return "OperationCanceled";
            if (task.IsFaulted) return Name(task.Exception!.InnerException!);
            result = task.Result;
            return "";
        }

        /// <summary>An exception as the contract names it: a SocketException's error code, else its type without "Exception".</summary>
        public static string Name(Exception e)
        {
            if (e is System.Net.Sockets.SocketException socket) return socket.SocketErrorCode.ToString();
            if (e is OperationCanceledException) return "OperationCanceled";
            string name = e.GetType().Name;
            return name.EndsWith("Exception", StringComparison.Ordinal) ? name.Substring(0, name.Length - "Exception".Length) : name;
        }
    }
}
