using System;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// An await of a <see cref="ValueTask{TResult}"/> of <see cref="ReceivedDatagram"/> backed by an
    /// <see cref="IValueTaskSource{TResult}"/> of a few lines, with no library code: completed and resumed inline by the
    /// measuring thread, in a loop shaped like the allocation tests' own, so that what it allocates is the runtime's own
    /// cost of suspending and resuming an await. Shared by the suite (<see cref="AwaitResumeCost"/>) and bench/AwaitStress,
    /// each with its own meter.
    /// </summary>
    public static class BareAwait
    {
        /// <summary>The datagram length every bare await returns.</summary>
        public const int Length = 64;

        /// <summary>
        /// The least bytes <paramref name="read"/> sees over 3 rounds of <paramref name="awaits"/> resumes, after 2 000 resumes
        /// of warm-up, all on the calling thread.
        /// </summary>
        public static long LeastBytes(Func<long> read, int awaits)
        {
            const int WarmUp = 2000;
            var source = new Source();
            // One await more than the resumes measured: the last resume, outside the rounds, ends the loop.
            Task loop = Loop(source, WarmUp + 3 * awaits + 1);
            for (int i = 0; i < WarmUp; i++) source.Resume();
            long least = long.MaxValue;
            for (int round = 0; round < 3; round++)
            {
                long before = read();
                for (int i = 0; i < awaits; i++) source.Resume();
                least = Math.Min(least, read() - before);
            }
            source.Resume();
            if (!loop.IsCompleted) throw new InvalidOperationException("the bare await loop did not end with its last resume");
            return least;
        }

        private static async Task Loop(Source source, int awaits)
        {
            for (int i = 0; i < awaits; i++)
            {
                ValueTask<ReceivedDatagram> next = source.Next();
                ReceivedDatagram datagram = await next;
                if (datagram.Length != Length) throw new InvalidOperationException("wrong length " + datagram.Length);
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
                return new ReceivedDatagram(Length, false, default);
            }
        }
    }
}
