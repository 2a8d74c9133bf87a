using System;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace WhereAllocation.Bench.AwaitStress
{
    /// <summary>
    /// What the runtime itself allocates to suspend and resume an await of a <see cref="ValueTask{TResult}"/> of
    /// <see cref="ReceivedDatagram"/> backed by an <see cref="IValueTaskSource{TResult}"/>, with no library code: a source
    /// of a few lines, completed and resumed inline by one thread, counted by the same whole-process meter. 0 on CoreCLR
    /// and Mono on Linux; under Wine the win-x64 runtime allocates per resume (docs/testing-under-wine.md), and the
    /// library's awaits are then held to costing no more than this.
    /// </summary>
    internal static class BareAwait
    {
        /// <summary>The least bytes over 3 rounds of <paramref name="awaits"/> resumes, after 2 000 resumes of warm-up; -1 without a working meter.</summary>
        public static long Bytes(ProcessAllocations meter, int awaits)
        {
            if (!meter.Works) return -1;
            const int WarmUp = 2000;
            var source = new Source();
            // One await more than the resumes: the last resume ends the loop.
            Task loop = Loop(source, WarmUp + 3 * awaits + 1);
            for (int i = 0; i < WarmUp; i++) source.Resume();
            long least = long.MaxValue;
            for (int round = 0; round < 3; round++)
            {
                long before = meter.Read();
                for (int i = 0; i < awaits; i++) source.Resume();
                least = Math.Min(least, meter.Read() - before);
            }
            source.Resume();
            if (!loop.IsCompleted) throw new InvalidOperationException("the bare await loop did not end with its last resume");
            return least;
        }

        private static async Task Loop(Source source, int awaits)
        {
            for (int i = 0; i < awaits; i++)
            {
                ReceivedDatagram datagram = await source.Next();
                if (datagram.Length != Receiver.DatagramLength) throw new InvalidOperationException("wrong length " + datagram.Length);
            }
        }

        private sealed class Source : IValueTaskSource<ReceivedDatagram>
        {
            private Action<object?>? _continuation;
            private object? _state;
            private short _version;
            private bool _completed;

            public ValueTask<ReceivedDatagram> Next() => new ValueTask<ReceivedDatagram>(this, ++_version);

            /// <summary>Completes the waiting await and runs its continuation on this thread, up to the loop's next await.</summary>
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
                return new ReceivedDatagram(Receiver.DatagramLength, false, default);
            }
        }
    }
}
