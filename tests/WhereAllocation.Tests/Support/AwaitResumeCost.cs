using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// What the runtime itself allocates to suspend and resume an await of a <see cref="ValueTask{TResult}"/> backed by an
    /// <see cref="IValueTaskSource{TResult}"/>, with no library code: a source of a few lines, completed and resumed inline
    /// by one thread, in a loop shaped like the allocation tests' own. 0 on CoreCLR and Mono on Linux (asserted there);
    /// the win-x64 runtime under Wine 8 allocates on every resume (see docs/testing-under-wine.md), which is the host's
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
                var source = new Source();
                const int WarmUp = 2000;
                using AllocationWindow window = AllocationWindow.Open(awaits);
                awaits = window.Calls;
                // One await more than the resumes measured: the last resume, outside the rounds, ends the loop.
                Task loop = Loop(source, WarmUp + 3 * awaits + 1);
                for (int i = 0; i < WarmUp; i++) source.Resume();
                for (int round = 0; round < 3; round++)
                {
                    long before = window.Read();
                    for (int i = 0; i < awaits; i++) source.Resume();
                    least = Math.Min(least, window.Read() - before);
                }
                source.Resume();
                if (!loop.IsCompleted) throw new InvalidOperationException("the loop did not end with its last resume");
            }) { IsBackground = true, Name = "await resume cost" };
            thread.Start();
            if (!thread.Join(120_000)) throw new TimeoutException("the await resume measurement did not end within 120 s");
            return least;
        }

        private static async Task Loop(Source source, int awaits)
        {
            for (int i = 0; i < awaits; i++)
            {
                ValueTask<ReceivedDatagram> next = source.Next();
                ReceivedDatagram datagram = await next;
                if (datagram.Length != 64) throw new InvalidOperationException("wrong length " + datagram.Length);
            }
        }

        private sealed class Source : IValueTaskSource<ReceivedDatagram>
        {
            private Action<object?>? _continuation;
            private object? _state;
            private short _version;
            private bool _completed;

            public ValueTask<ReceivedDatagram> Next() => new ValueTask<ReceivedDatagram>(this, ++_version);

            /// <summary>Completes the pending await and runs its continuation on this thread, up to the loop's next await.</summary>
            public void Resume()
            {
                Action<object?> continuation = _continuation ?? throw new InvalidOperationException("nothing awaits");
                _continuation = null;
                _completed = true;
                continuation(_state);
            }

            public ValueTaskSourceStatus GetStatus(short token) => _completed ? ValueTaskSourceStatus.Succeeded : ValueTaskSourceStatus.Pending;

            public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            {
                _continuation = continuation;
                _state = state;
            }

            public ReceivedDatagram GetResult(short token)
            {
                _completed = false;
                return new ReceivedDatagram(64, false, default);
            }
        }
    }
}
