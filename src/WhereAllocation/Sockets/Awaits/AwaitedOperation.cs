#nullable enable
using System;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// What the engine needs of an operation, whatever its result type: whether it waits for a report, and a way to make
    /// it try its call again (a report arrived) or to end it with an error. See <see cref="DatagramOperation{TResult}"/>.
    /// </summary>
    internal abstract class AwaitedOperation
    {
        /// <summary>No operation is outstanding.</summary>
        private protected const int Idle = 0;
        /// <summary>A caller started one and is making its first try (on the caller's thread).</summary>
        private protected const int Started = 1;
        /// <summary>It waits for a report; whoever moves it on first claims it.</summary>
        private protected const int Waiting = 2;
        /// <summary>One thread tries the call again, or ends it: nobody else may touch it.</summary>
        private protected const int Claimed = 3;
        /// <summary>It has its result or error; the awaiter takes it with GetResult, which makes it Idle.</summary>
        private protected const int Completed = 4;

        private protected int _state;

        /// <summary>
        /// Set while it waits without being armed: its reports kept finding nothing, so the engine's next sweep arms it
        /// again (never at once). Written before the state says Waiting.
        /// </summary>
        private protected bool _deferred;

        /// <summary>The next operation in the engine's list of those that gave way (the engine thread's own).</summary>
        internal AwaitedOperation? NextReady;

        /// <summary>True while it waits (for a report, or for the sweep that arms it again).</summary>
        internal bool IsWaiting => Volatile.Read(ref _state) == Waiting;

        /// <summary>True while it waits for a report: the engine arms its socket for it.</summary>
        internal bool NeedsReport => Volatile.Read(ref _state) == Waiting && !Volatile.Read(ref _deferred);

        /// <summary>For the engine's sweep: true (and no longer deferred) when it waits without being armed.</summary>
        internal bool TakeDeferred()
        {
            if (!Volatile.Read(ref _deferred) || Volatile.Read(ref _state) != Waiting) return false;
            Volatile.Write(ref _deferred, false);
            return true;
        }

        /// <summary>A report arrived (on the engine's thread): try the call again, if the operation still waits.</summary>
        internal abstract void OnReady(bool hungUp);

        /// <summary>Ends the operation with <paramref name="error"/> if it still waits; <paramref name="onIoThread"/>: called on the engine's thread.</summary>
        internal abstract void FailIfWaiting(Exception error, bool onIoThread);

        /// <summary>Drops the cached cancellation registration (the socket's wrapper is being disposed).</summary>
        internal abstract void ReleaseCancellation();
    }
}
