#nullable enable
using System;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace WhereAllocation
{
    /// <summary>
    /// One reusable awaitable operation (a receive or a send of one <see cref="AsyncDatagramSocket"/>): the
    /// <see cref="IValueTaskSource{TResult}"/> behind the ValueTasks it returns, written for netstandard2.1, which has
    /// no ManualResetValueTaskSourceCore. The first try runs on the caller's thread and, when it succeeds (a datagram
    /// was queued, there was room to send), the ValueTask holds the result and this object is not involved at all.
    /// Otherwise the operation waits: its socket is armed in its engine, and the engine's report makes it try again.
    /// </summary>
    /// <remarks>
    /// <para>States (<see cref="AwaitedOperation"/>): Idle → Started (the caller's try) → Idle again with a result, or
    /// Waiting → Claimed (the poller's try, a cancellation, a Dispose: whoever claims it first) → Completed, or Waiting
    /// again when the try found nothing → Idle when the awaiter takes the result. A second call while one is
    /// outstanding is refused (InvalidOperationException). Each wait gets a new version, the ValueTask's token: a
    /// ValueTask of an earlier wait, awaited again, is refused too.</para>
    /// <para>Where the awaiter resumes (<see cref="DatagramContinuations"/>): with the SynchronizationContext (or
    /// TaskScheduler) it captured, when it asked for that (a plain await does); else, when the engine's thread completed
    /// the operation, inline on that thread (<see cref="DatagramContinuations.IoThread"/>) or on the thread pool
    /// (<see cref="DatagramContinuations.ThreadPool"/>); a cancellation or a Dispose always resumes it on the thread
    /// pool. The ExecutionContext is captured only when the awaiter asks (OnCompleted, not UnsafeOnCompleted): on Mono
    /// the capture alone allocates 72 bytes.</para>
    /// <para>Cancellation: the registration on the caller's token is kept across operations and renewed only when the
    /// token changes, because registering allocates on Mono (120 bytes with its removal); a loop that passes the same
    /// token every time registers once.</para>
    /// </remarks>
    internal abstract class DatagramOperation<TResult> : AwaitedOperation, IValueTaskSource<TResult>
#if NET8_0_OR_GREATER
        , IThreadPoolWorkItem
#endif
    {
        // In IoThread mode, a loop that always finds a datagram queued would keep the poller thread to itself: after
        // this many immediate results in a row on that thread, the next call gives way to the other sockets once
        // (at about a microsecond per datagram, a quarter of a millisecond at most).
        private const int YieldEvery = 256;

        private static readonly Action<object?> s_completedMarker = CompletedMarker;
        private static readonly Action<object?> s_cancel = state => ((DatagramOperation<TResult>)state!).OnCancellation();
        private static readonly SendOrPostCallback s_post = state => ((DatagramOperation<TResult>)state!).InvokeContinuation();
        private static readonly Action<object?> s_onScheduler = state => ((DatagramOperation<TResult>)state!).InvokeContinuation();
        private static readonly ContextCallback s_inContext = state => ((DatagramOperation<TResult>)state!).InvokeDirect();
#if !NET8_0_OR_GREATER
        private static readonly WaitCallback s_queued = state => ((DatagramOperation<TResult>)state!).InvokeContinuation();
#endif

        private protected readonly AwaitedSocket Owner;

        private short _version;
        private int _streak;
        private int _empty;
        private object? _anchor;
        private Action<object?>? _continuation;
        private object? _continuationState;
        private SynchronizationContext? _context;
        private TaskScheduler? _scheduler;
        private ExecutionContext? _executionContext;
        private TResult _result = default!;
        private Exception? _error;
        private CancellationToken _token;
        private CancellationTokenRegistration _registration;
        private CancellationToken _registeredToken;
        private readonly object _cancellationGate = new object();

        private protected DatagramOperation(AwaitedSocket owner)
        {
            Owner = owner;
        }

        /// <summary>What a second call while one is outstanding is told.</summary>
        private protected abstract string BusyMessage { get; }

        /// <summary>
        /// The call, tried once without waiting: true with its result, false when it would have to wait. Throws what the call
        /// throws. <paramref name="afterReport"/>: tried because the engine reported the socket ready (see <see cref="OnReady"/>),
        /// not at the call.
        /// </summary>
        private protected abstract bool TryNow(bool afterReport, out TResult result);

        /// <summary>
        /// True when a waiting call whose tries found nothing after <paramref name="emptyReports"/> reports in a row is over,
        /// because nothing will ever come (a receive on a socket shut down for receiving); false: it waits again.
        /// </summary>
        private protected virtual bool NothingWillCome(int emptyReports) => false;

        /// <summary>Forgets the caller's buffer once the operation is over.</summary>
        private protected abstract void Clear();

        // ----- the caller's side -----

        /// <summary>Claims the operation for a new call; false with the ValueTask to return when it cannot start.</summary>
        private protected bool TryBegin(CancellationToken token, out ValueTask<TResult> refused)
        {
            if (Interlocked.CompareExchange(ref _state, Started, Idle) != Idle)
            {
                refused = Faulted(new InvalidOperationException(BusyMessage));
                return false;
            }
            if (Owner.IsDisposed)
            {
                Volatile.Write(ref _state, Idle);
                refused = Faulted(new ObjectDisposedException(nameof(AsyncDatagramSocket)));
                return false;
            }
            if (token.IsCancellationRequested)
            {
                Volatile.Write(ref _state, Idle);
                refused = new ValueTask<TResult>(Task.FromCanceled<TResult>(token));
                return false;
            }
            refused = default;
            return true;
        }

        /// <summary>
        /// The first try, on the caller's thread; the wait when it finds nothing. <paramref name="anchor"/> (the wrapper)
        /// is kept reachable from the engine while the operation waits, so that a wrapper nobody else references stays
        /// alive until its waiting call ends, and no longer.
        /// </summary>
        private protected ValueTask<TResult> Run(CancellationToken token, object anchor)
        {
            bool giveWay = Owner.Continuations == DatagramContinuations.IoThread && ShouldGiveWay();
            if (!giveWay)
            {
                TResult result;
                bool done;
                try
                {
                    done = TryNow(false, out result);
                }
                catch (Exception e)
                {
                    Clear();
                    Volatile.Write(ref _state, Idle);
                    return Faulted(e);
                }
                if (done)
                {
                    Clear();
                    Volatile.Write(ref _state, Idle);
                    return new ValueTask<TResult>(result);
                }
            }
            return Suspend(token, giveWay, anchor);
        }

        private bool ShouldGiveWay()
        {
            // Counted on any thread (a wait resets it), the thread asked only once per YieldEvery calls.
            if (++_streak < YieldEvery) return false;
            _streak = 0;
            return Owner.Engine.IsIoThread;
        }

        private ValueTask<TResult> Suspend(CancellationToken token, bool giveWay, object anchor)
        {
            short version = unchecked(++_version);
            _continuation = null;
            _continuationState = null;
            _context = null;
            _scheduler = null;
            _executionContext = null;
            _error = null;
            _streak = 0;
            _empty = 0;
            _deferred = false;
            _anchor = anchor;
            _token = token;
            if (token.CanBeCanceled && !token.Equals(_registeredToken)) Register(token);
            Interlocked.Exchange(ref _state, Waiting);
            if (giveWay) Owner.Engine.QueueReady(this);
            else Owner.Engine.Arm(Owner);
            // After Waiting is published: a cancellation or Dispose that came before it found nothing to end.
            if (token.IsCancellationRequested) FailIfWaiting(new OperationCanceledException(token), false);
            else if (Owner.IsDisposed) FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), false);
            return new ValueTask<TResult>(this, version);
        }

        private void Register(CancellationToken token)
        {
            // Under a lock shared with ReleaseCancellation: a Dispose on another thread either comes first (and then
            // no registration is made, to be left behind on the caller's token for as long as the token lives), or
            // after, and removes it.
            lock (_cancellationGate)
            {
                _registration.Dispose();
                _registration = default;
                _registeredToken = default;
                if (Owner.IsDisposed) return; // Suspend's check after Waiting ends this wait
#if NET8_0_OR_GREATER
                _registration = token.UnsafeRegister(s_cancel, this);
#else
                _registration = token.Register(s_cancel, this);
#endif
                _registeredToken = token;
            }
        }

        internal override void ReleaseCancellation()
        {
            lock (_cancellationGate)
            {
                _registration.Dispose();
                _registration = default;
                _registeredToken = default;
            }
        }

        private void OnCancellation()
        {
            if (IsWaiting && _token.IsCancellationRequested) FailIfWaiting(new OperationCanceledException(_token), false);
        }

        // ----- the engine's side -----

        internal override void OnReady(bool hungUp)
        {
            if (Interlocked.CompareExchange(ref _state, Claimed, Waiting) != Waiting) return;
            try
            {
                OnReadyClaimed(hungUp);
            }
            catch (Exception e) when (!(e is ThreadAbortException))
            {
                // What the library's own questions throw here (a socket a runtime left without its handle, an OS call that fails
                // in a way no OS documents) ends this call with it, never the engine's thread, which serves every socket: its
                // death would end the process.
                if (Volatile.Read(ref _state) == Claimed) Finish(default!, e, true);
                else FailIfWaiting(e, true);
            }
        }

        private void OnReadyClaimed(bool hungUp)
        {
            TResult result;
            bool done;
            try
            {
                done = TryNow(true, out result);
            }
            catch (Exception e)
            {
                Finish(default!, e, true);
                return;
            }
            if (done)
            {
                Finish(result, null, true);
                return;
            }
            AwaitTestSeam.CountEmptyReport();
            _empty++;
            if (hungUp || NothingWillCome(_empty))
            {
                // Nothing to read and the socket hung up: disposed (CoreCLR shuts a socket down as it disposes it) or
                // shut down, so nothing will ever come. As the synchronous wait says.
                Exception end = Owner.IsSocketDisposed()
                    ? new ObjectDisposedException(typeof(System.Net.Sockets.Socket).FullName)
                    : new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.Shutdown);
                Finish(default!, end, true);
                return;
            }
            WaitAgain(_empty >= AwaitEngine.EmptyReportsBeforeDeferring);
        }

        /// <summary>Back to Waiting after a claimed try found nothing, and armed again: now, or by the engine's next sweep (<paramref name="later"/>).</summary>
        private void WaitAgain(bool later)
        {
            // Nothing yet (another reader took it, or the report was for the other direction): wait again. Deferred is
            // written first, so that a sweep never arms (or skips) this wait by a flag of the one before.
            Volatile.Write(ref _deferred, later);
            Interlocked.Exchange(ref _state, Waiting);
            if (_token.IsCancellationRequested)
            {
                FailIfWaiting(new OperationCanceledException(_token), true);
                return;
            }
            if (Owner.IsDisposed)
            {
                FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), true);
                return;
            }
            if (!later) Owner.Engine.Arm(Owner); // else readiness that keeps bringing nothing: once per slice, never a spin
        }

        internal override void FailIfWaiting(Exception error, bool onIoThread)
        {
            if (Interlocked.CompareExchange(ref _state, Claimed, Waiting) != Waiting) return;
            Finish(default!, error, onIoThread);
        }

        /// <summary>Completes a claimed operation and resumes its awaiter (if it is already awaiting).</summary>
        private void Finish(TResult result, Exception? error, bool onIoThread)
        {
            _result = result;
            _error = error;
            _anchor = null;
            Clear();
            // The continuation slot first, the state after: once the state says Completed, this thread is done with
            // the slot, so a caller that sees Completed, takes the result and starts (and awaits) the next call can
            // never have its new continuation taken for this completion's. Until then GetStatus says Pending, and
            // an awaiter that found the marker waits in GetResult the few instructions to the state's write.
            Action<object?>? waiting = Interlocked.CompareExchange(ref _continuation, s_completedMarker, null);
            Volatile.Write(ref _state, Completed);
            if (waiting == null) return; // OnCompleted will schedule it
            Schedule(onIoThread);
        }

        private void Schedule(bool onIoThread)
        {
            if (_context != null || _scheduler != null)
            {
                try
                {
                    if (_context != null) _context.Post(s_post, this);
                    else Task.Factory.StartNew(s_onScheduler, this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, _scheduler!);
                }
                catch (Exception e)
                {
                    // A context whose Post throws (one that was closed) or a scheduler that refuses the task (StartNew throws
                    // TaskSchedulerException) is the user's code too: it must not end the thread that serves every socket,
                    // nor the caller's cancellation or Dispose. The awaiter is not resumed elsewhere (it asked for that
                    // context); the failure is reported as a throwing continuation is, as the runtime's own awaits do.
                    AsyncDatagramSocket.ReportContinuationFailure(e);
                }
                return;
            }
            if (onIoThread && Owner.Continuations == DatagramContinuations.IoThread)
            {
                try
                {
                    InvokeContinuation();
                }
                catch (Exception e)
                {
                    // The user's code must not end the thread that serves every socket.
                    AsyncDatagramSocket.ReportContinuationFailure(e);
                }
                return;
            }
#if NET8_0_OR_GREATER
            ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
#else
            // Mono's thread pool allocates per item queued (a 40-byte work item and more, 50-64 B an await measured on Mono 6.8 by bench/AwaitStress): IoThread avoids it there.
            ThreadPool.UnsafeQueueUserWorkItem(s_queued, this);
#endif
        }

#if NET8_0_OR_GREATER
        void IThreadPoolWorkItem.Execute() => InvokeContinuation();
#endif

        private void InvokeContinuation()
        {
            ExecutionContext? context = _executionContext;
            if (context == null) InvokeDirect();
            else ExecutionContext.Run(context, s_inContext, this);
        }

        private void InvokeDirect()
        {
            Action<object?> continuation = _continuation!;
            object? state = _continuationState;
            continuation(state);
        }

        private static void CompletedMarker(object? state)
        {
            // Never called: it only marks, in place of a continuation, that the operation completed first.
        }

        // ----- IValueTaskSource -----

        /// <inheritdoc/>
        public ValueTaskSourceStatus GetStatus(short token)
        {
            CheckVersion(token);
            if (Volatile.Read(ref _state) != Completed) return ValueTaskSourceStatus.Pending;
            Exception? error = _error;
            if (error == null) return ValueTaskSourceStatus.Succeeded;
            return error is OperationCanceledException ? ValueTaskSourceStatus.Canceled : ValueTaskSourceStatus.Faulted;
        }

        /// <inheritdoc/>
        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        {
            if (continuation == null) throw new ArgumentNullException(nameof(continuation));
            CheckVersion(token);
            if ((flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) != 0) _executionContext = ExecutionContext.Capture();
            if ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) != 0)
            {
                SynchronizationContext? context = SynchronizationContext.Current;
                if (context != null && context.GetType() != typeof(SynchronizationContext))
                {
                    _context = context;
                }
                else
                {
                    TaskScheduler scheduler = TaskScheduler.Current;
                    if (scheduler != TaskScheduler.Default) _scheduler = scheduler;
                }
            }
            _continuationState = state;
            Action<object?>? previous = Interlocked.CompareExchange(ref _continuation, continuation, null);
            if (previous == null) return;
            if (!ReferenceEquals(previous, s_completedMarker)) throw new InvalidOperationException("This ValueTask is already being awaited; a ValueTask may be awaited once.");
            // It completed before the awaiter got here: resume the awaiter, but never on this stack, where a loop of
            // such races would pile up frames. In IoThread mode that is the one hand-over to the pool the mode has (some 50 B on
            // Mono); it can only happen to a call made off the I/O thread, since the I/O thread, while it runs the
            // caller's code, completes nothing: a loop that resumes on it never meets it after its first await.
            if (Owner.Continuations == DatagramContinuations.IoThread) AwaitTestSeam.CountLateAwaiter();
            _continuation = continuation;
            Schedule(false);
        }

        /// <inheritdoc/>
        public TResult GetResult(short token)
        {
            CheckVersion(token);
            int state = Volatile.Read(ref _state);
            if (state == Claimed && ReferenceEquals(Volatile.Read(ref _continuation), s_completedMarker))
            {
                // Finish is between its two writes (see there): a matter of instructions.
                var spin = new SpinWait();
                while ((state = Volatile.Read(ref _state)) == Claimed) spin.SpinOnce();
            }
            if (state != Completed)
                throw new InvalidOperationException("The operation has not completed, or its result was taken already: a ValueTask may be awaited once.");
            TResult result = _result;
            Exception? error = _error;
            _result = default!;
            _error = null;
            _continuation = null;
            _continuationState = null;
            _context = null;
            _scheduler = null;
            _executionContext = null;
            // A new version at once: this ValueTask, awaited (or asked) again, is refused instead of waiting for ever.
            _version = unchecked((short)(_version + 1));
            Volatile.Write(ref _state, Idle);
            if (error != null) ExceptionDispatchInfo.Capture(error).Throw();
            return result;
        }

        private void CheckVersion(short token)
        {
            if (token != _version) throw new InvalidOperationException("This ValueTask belongs to an earlier operation: a ValueTask may be awaited once.");
        }

        private static ValueTask<TResult> Faulted(Exception error) => new ValueTask<TResult>(Task.FromException<TResult>(error));
    }
}
