using System.Threading;
using WhereAllocation.Memory;
using Xunit;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>
    /// The counter behind the allocators' and the batch's Dispose from any thread: who frees, and when. Each package carries
    /// its own copy of the file, so that neither depends on the other; the tests below run on the memory package's, and
    /// scripts/pack-check.sh checks that the two copies differ in nothing but their namespace (a check of the source tree,
    /// not of a test assembly, which runs outside the checkout under full AOT and Wine).
    /// </summary>
    public class DisposeGuardTests
    {
        [Fact]
        public void DisposeWithNoCallInProgressFreesAtOnceAndOnlyOnce()
        {
            var guard = new DisposeGuard();
            Assert.True(guard.TryEnter());
            Assert.False(guard.Exit()); // not disposed: nobody frees
            Assert.True(guard.TryMarkDisposed(out bool freeNow));
            Assert.True(freeNow);
            Assert.True(guard.IsDisposed);
            Assert.False(guard.TryMarkDisposed(out freeNow)); // a second Dispose
            Assert.False(freeNow);
            Assert.False(guard.TryEnter());
        }

        [Fact]
        public void DisposeDuringCallsLeavesTheFreeToTheLastCallOut()
        {
            var guard = new DisposeGuard();
            Assert.True(guard.TryEnter());
            Assert.True(guard.TryEnter()); // a nested call (a clearing allocation that overflows)
            Assert.True(guard.TryMarkDisposed(out bool freeNow));
            Assert.False(freeNow);
            Assert.False(guard.TryEnter()); // no call enters after Dispose
            Assert.False(guard.Exit());
            Assert.True(guard.Exit()); // the last one out frees
            Assert.False(guard.TryMarkDisposed(out freeNow));
            Assert.False(freeNow);
        }

        [Fact]
        public void ThreadsEnteringAndADisposeFreeExactlyOnce()
        {
            const int Rounds = 500, Threads = 3;
            for (int round = 0; round < Rounds; round++)
            {
                var guard = new DisposeGuard();
                int frees = 0, inside = 0, violations = 0;
                var workers = new Thread[Threads];
                for (int t = 0; t < Threads; t++)
                {
                    workers[t] = new Thread(() =>
                    {
                        for (int i = 0; i < 200; i++)
                        {
                            if (!guard.TryEnter()) return;
                            Interlocked.Increment(ref inside);
                            if (Volatile.Read(ref frees) != 0) Interlocked.Increment(ref violations); // freed under a call
                            Interlocked.Decrement(ref inside);
                            if (guard.Exit()) Interlocked.Increment(ref frees);
                        }
                    });
                    workers[t].Start();
                }
                if (guard.TryMarkDisposed(out bool freeNow) && freeNow)
                {
                    if (Volatile.Read(ref inside) != 0) Interlocked.Increment(ref violations);
                    Interlocked.Increment(ref frees);
                }
                foreach (Thread worker in workers) Assert.True(worker.Join(30_000));
                Assert.Equal(0, violations);
                Assert.Equal(1, frees);
            }
        }
    }
}
