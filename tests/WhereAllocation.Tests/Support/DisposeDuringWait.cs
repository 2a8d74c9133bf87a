using System;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A call that waits on a socket, on a thread of its own, and a Dispose of that socket from the test's thread
    /// while it waits: the call must come back, with <see cref="ObjectDisposedException"/>.
    /// </summary>
    public static class DisposeDuringWait
    {
        /// <summary>
        /// Starts <paramref name="wait"/> on a new thread, gives it 200 ms to reach its wait, calls
        /// <paramref name="dispose"/>, and asserts that the call returned within 5 s with ObjectDisposedException
        /// (naming what it ended with otherwise).
        /// </summary>
        public static void AssertEndsWithObjectDisposed(Action wait, Action dispose)
        {
            Exception? caught = null;
            var thread = new Thread(() =>
            {
                try { wait(); }
                catch (Exception e) { caught = e; }
            }) { IsBackground = true };
            thread.Start();
            Thread.Sleep(200);
            dispose();
            Assert.True(thread.Join(5000), "the waiting call did not return after Dispose");
            Assert.True(caught?.GetType() == typeof(ObjectDisposedException),
                "expected ObjectDisposedException; the call ended with " + (caught?.ToString() ?? "no exception"));
        }
    }
}
