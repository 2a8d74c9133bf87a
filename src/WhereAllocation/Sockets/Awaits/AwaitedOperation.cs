using System;

namespace WhereAllocation
{
    /// <summary>
    /// What the poller needs of an operation, whatever its result type: whether it waits, and a way to make it try
    /// its call again (a report arrived) or to end it with an error. See <see cref="DatagramOperation{TResult}"/>.
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

        /// <summary>The next operation in the poller's list of those that gave way (the poller thread's own).</summary>
        internal AwaitedOperation? NextReady;

        /// <summary>True while it waits for a report.</summary>
        internal bool IsWaiting => System.Threading.Volatile.Read(ref _state) == Waiting;

        /// <summary>A report arrived (on the poller thread): try the call again, if the operation still waits.</summary>
        internal abstract void OnReady(bool hungUp);

        /// <summary>Ends the operation with <paramref name="error"/> if it still waits; <paramref name="onIoThread"/>: called on the poller thread.</summary>
        internal abstract void FailIfWaiting(Exception error, bool onIoThread);

        /// <summary>Arms the socket again for an operation whose reports kept finding nothing (<see cref="ReadinessPoller.Defer"/>), if it still waits. On the poller thread.</summary>
        internal abstract void RearmDeferred();

        /// <summary>Drops the cached cancellation registration (the socket's wrapper is being disposed).</summary>
        internal abstract void ReleaseCancellation();
    }
}
