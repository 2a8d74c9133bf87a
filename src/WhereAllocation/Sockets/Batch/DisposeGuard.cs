#nullable enable
using System.Runtime.CompilerServices;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// Lets <c>Dispose</c> come from any thread while calls that touch native memory may be in progress: it
    /// counts those calls and marks the object disposed, and the memory is freed by whoever leaves last, the
    /// <c>Dispose</c> itself when no call is in progress, else the last call to end. No call may enter once
    /// the mark is set, so the memory is freed exactly once and never under a call.
    /// </summary>
    /// <remarks>
    /// The count and the mark share one int that changes only through interlocked operations, which are full
    /// fences on every runtime: a call's reads and writes of the memory come before its <see cref="Exit"/> in
    /// the order every thread sees, and the free comes after the operation that found the count at zero with
    /// the mark set. Two interlocked operations per call, uncontended a few nanoseconds each; the callers
    /// keep them off their per-byte and per-allocation fast paths.
    /// <para>The sockets package and the native-memory package each carry this file, so that neither depends on the other;
    /// the two copies differ only in their namespace, which scripts/pack-check.sh checks.</para>
    /// </remarks>
    internal struct DisposeGuard
    {
        private const int DisposedBit = 1 << 30; // the count below it cannot reach 2^30 calls at once
        private int _state;

        /// <summary>True once <see cref="TryMarkDisposed"/> has run.</summary>
        internal bool IsDisposed => (Volatile.Read(ref _state) & DisposedBit) != 0;

        /// <summary>Counts a call in; false, counting nothing, once the object is disposed.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)] // per call of a batch: the common case is one compare-and-swap
        internal bool TryEnter()
        {
            int state = Volatile.Read(ref _state);
            return (state & DisposedBit) == 0 && Interlocked.CompareExchange(ref _state, state + 1, state) == state || TryEnterContended();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private bool TryEnterContended()
        {
            int state = Volatile.Read(ref _state);
            while ((state & DisposedBit) == 0)
            {
                int seen = Interlocked.CompareExchange(ref _state, state + 1, state);
                if (seen == state) return true;
                state = seen;
            }
            return false;
        }

        /// <summary>Counts a call out; true when the object was disposed meanwhile and this was the last call: the caller frees the memory now.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool Exit() => Interlocked.Decrement(ref _state) == DisposedBit;

        /// <summary>
        /// Marks the object disposed. False when it already was. <paramref name="freeNow"/> is true when no
        /// call is in progress, so that the caller frees the memory now; else the last call frees it at its exit.
        /// </summary>
        internal bool TryMarkDisposed(out bool freeNow)
        {
            int state = Volatile.Read(ref _state);
            while ((state & DisposedBit) == 0)
            {
                int seen = Interlocked.CompareExchange(ref _state, state | DisposedBit, state);
                if (seen == state)
                {
                    freeNow = state == 0;
                    return true;
                }
                state = seen;
            }
            freeNow = false;
            return false;
        }
    }
}
