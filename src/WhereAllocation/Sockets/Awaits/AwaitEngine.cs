#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation
{
    /// <summary>
    /// Everything between an <see cref="AsyncDatagramSocket"/>'s operation that has to wait and the report that ends its
    /// wait: the awaited sockets (<see cref="AwaitedSocket"/>, one record per socket), the one list of sockets on which something waits
    /// (<see cref="WaitingSockets"/>, with what each is armed for), the one I/O thread that waits for all of them, and the
    /// mechanism it waits with (a <see cref="ReadinessPoller"/>). Two engines per process at most: <see cref="Native"/>
    /// (the OS's own mechanism, on the sockets' descriptors) and <see cref="Runtime"/> (Socket.Select, for the runtime's
    /// paths); <see cref="PathDispatch.Engine"/> says which a wrapper uses.
    /// </summary>
    /// <remarks>
    /// <para>The way of one wait: an operation finds nothing to do and calls <see cref="Arm"/>, which marks the socket
    /// armed (one-shot) on the list and tells the poller; the thread's wait reports it; <see cref="Dispatch"/> makes each
    /// waiting operation of the socket try its call again, which completes it or arms the socket again. The state lives
    /// here, in one place, under the list's lock: operations and pollers never call each other.</para>
    /// <para>The thread starts when an operation first has to wait, and ends within one <see cref="SliceMilliseconds"/>
    /// once no wrapper is registered. Once a slice it sweeps the list: operations whose socket was disposed under them
    /// end with ObjectDisposedException (the OS says nothing when a descriptor it watches is closed), operations whose
    /// readiness kept bringing nothing are armed again (never at once: see <see cref="EmptyReportsBeforeDeferring"/>), and
    /// sockets on which nothing waits any more leave the list.</para>
    /// </remarks>
    internal sealed class AwaitEngine
    {
        /// <summary>The longest a wait lasts before the thread sweeps its list and looks whether it should end.</summary>
        internal const int SliceMilliseconds = SocketWaits.SliceMilliseconds;

        /// <summary>
        /// How many reports in a row may find nothing for one waiting operation before it is armed again only at the next
        /// sweep: readiness that never yields a datagram must not make the thread spin. (A receive then also asks whether its
        /// socket was shut down for receiving: <see cref="ReceiveShutdown.EmptyReportsBeforeAsking"/>.)
        /// </summary>
        internal const int EmptyReportsBeforeDeferring = 2;

        private static readonly object s_create = new object();
        private static AwaitEngine? s_native;
        private static AwaitEngine? s_runtime;

        private readonly ReadinessPoller _poller;

        // The list, and the lock of all the state below it (but the thread's own).
        private readonly WaitingSockets _waiting = new WaitingSockets();
        private AwaitedSocket?[] _slots = new AwaitedSocket?[16];
        private int[] _generations = new int[16];
        private int[] _free = new int[16];
        private int _freeCount;
        private int _used;
        private int _registered;
        private bool _running;
        private Thread? _thread;
        private volatile int _threadId = -1;

        // The thread's own: operations that gave way to the others (see DatagramOperation's fairness), and the sweep's copy of the list.
        private AwaitedOperation? _readyFirst;
        private AwaitedOperation? _readyLast;
        private AwaitedSocket?[] _swept = new AwaitedSocket?[16];

        private AwaitEngine(ReadinessPoller poller)
        {
            _poller = poller;
        }

        /// <summary>The engine of the native path (the OS's mechanism), made when first needed.</summary>
        /// <exception cref="PlatformNotSupportedException">The library knows no readiness mechanism of this OS.</exception>
        internal static AwaitEngine Native
        {
            get
            {
                lock (s_create)
                {
                    if (s_native == null)
                    {
                        ReadinessPoller poller = OsSocketCalls.Current.CreatePoller()
                            ?? throw new PlatformNotSupportedException(OsSocketCalls.Current.Name + ": no readiness mechanism is known for the awaitable calls on the native path.");
                        s_native = new AwaitEngine(poller);
                    }
                    return s_native;
                }
            }
        }

        /// <summary>The engine of the runtime's paths (Socket.Select), made when first needed.</summary>
        internal static AwaitEngine Runtime
        {
            get
            {
                lock (s_create) return s_runtime ??= new AwaitEngine(new SelectPoller());
            }
        }

        /// <summary>The mechanism's name, for diagnostics.</summary>
        internal string Mechanism => _poller.Mechanism;

        /// <summary>True when the poller reports a socket shut down for receiving with its readiness (see <see cref="ReadinessPoller.ReportsReceiveShutDown"/>).</summary>
        internal bool ReportsReceiveShutDown => _poller.ReportsReceiveShutDown;

        /// <summary>True on this engine's thread (the I/O thread).</summary>
        internal bool IsIoThread => _threadId == Environment.CurrentManagedThreadId;

        /// <summary>For tests: the thread, once it runs inside its loop's guard (null before, and once it ended).</summary>
        internal Thread? CurrentThread
        {
            get
            {
                lock (_waiting) return _thread;
            }
        }

        /// <summary>
        /// For tests: true from the start of a thread until it ended, including the moment after its start before it named
        /// itself (when <see cref="CurrentThread"/> is still null).
        /// </summary>
        internal bool Running
        {
            get
            {
                lock (_waiting) return _running;
            }
        }

        /// <summary>For tests: how many awaited sockets are live.</summary>
        internal int Registered => Volatile.Read(ref _registered);

        // ----- awaited sockets -----

        /// <summary>Gives <paramref name="socket"/> a slot and its token. Allocates only when the table grows.</summary>
        internal void Register(AwaitedSocket socket)
        {
            lock (_waiting)
            {
                int slot;
                if (_freeCount > 0)
                {
                    slot = _free[--_freeCount];
                }
                else
                {
                    if (_used == _slots.Length)
                    {
                        var slots = new AwaitedSocket?[_used * 2];
                        Array.Copy(_slots, slots, _used);
                        Array.Resize(ref _generations, _used * 2);
                        Array.Resize(ref _free, _used * 2);
                        Volatile.Write(ref _slots, slots);
                    }
                    slot = _used++;
                }
                int generation = ++_generations[slot];
                socket.Slot = slot;
                socket.Token = ((long)generation << 32) | (uint)slot;
                Volatile.Write(ref _slots[slot], socket);
                _registered++;
            }
        }

        /// <summary>Takes <paramref name="socket"/> out of the list, the poller's set and its slot, for good; the thread ends once none is left.</summary>
        internal void Unregister(AwaitedSocket socket)
        {
            lock (_waiting)
            {
                if (socket.Removed) return;
                socket.Removed = true;
                _waiting.Remove(socket);
                if (socket.InSet) _poller.Remove(socket);
                socket.InSet = false;
                if (!ReferenceEquals(_slots[socket.Slot], socket)) return;
                Volatile.Write(ref _slots[socket.Slot], null);
                _free[_freeCount++] = socket.Slot;
                _registered--;
            }
        }

        // ----- arming -----

        /// <summary>
        /// Arms <paramref name="socket"/> for one report of what its operations wait for now (nothing: no call), starting the
        /// thread if it is not running. Called by an operation that has just started to wait or found nothing, and by the
        /// thread for the direction a report did not cover. When the socket cannot be armed (the thread cannot start, the OS
        /// refuses), the waiting operations end with that error instead of waiting for a report that would never come.
        /// </summary>
        internal void Arm(AwaitedSocket socket)
        {
            Exception? failure = null;
            bool wake = false;
            lock (_waiting)
            {
                if (socket.Removed) return; // disposed: its Dispose ends the operations
                bool read = socket.Receive.NeedsReport;
                bool write = socket.Send.NeedsReport;
                if (!read && !write) return;
                if (!_running) failure = Start();
                if (failure == null)
                {
                    _waiting.Add(socket);
                    socket.ArmedRead = read;
                    socket.ArmedWrite = write;
                    socket.Arming++;
                    if (read && AwaitTestSeam.ReportEveryArmedAsReady) AwaitTestSeam.ArmedForReading(socket);
                    SocketError error = _poller.Arm(socket);
                    if (error != SocketError.Success) failure = new SocketException((int)error);
                    else wake = _poller.ArmNeedsWake && !IsIoThread;
                }
            }
            if (wake) _poller.Wake();
            if (failure == null) return;
            bool onIoThread = IsIoThread;
            socket.Receive.FailIfWaiting(failure, onIoThread);
            socket.Send.FailIfWaiting(failure, onIoThread);
        }

        /// <summary>Queues an operation that gave way to the others, to be tried after this round's reports. The thread only.</summary>
        internal void QueueReady(AwaitedOperation operation)
        {
            operation.NextReady = null;
            if (_readyLast == null) _readyFirst = operation;
            else _readyLast.NextReady = operation;
            _readyLast = operation;
        }

        /// <summary>Opens the poller and starts the thread; under the lock. On failure everything is as before, and the error is returned.</summary>
        private Exception? Start()
        {
            SocketError opened = _poller.Open();
            if (opened != SocketError.Success) return new SocketException((int)opened);
            try
            {
                if (AwaitTestSeam.FailThreadStart) throw new OutOfMemoryException("Thread creation failed (test hook).");
                var thread = new Thread(Run) { IsBackground = true, Name = "where-allocation I/O (" + _poller.Mechanism + ")" };
                thread.Start(); // the thread waits for this lock before it names itself or ends
                _running = true;
                return null;
            }
            catch (Exception e)
            {
                // Nothing runs: everything as before the try, so that the next call tries again. What the runtime threw
                // varies (OutOfMemoryException on CoreCLR, ExecutionEngineException on Mono): one exception says what
                // happened, with the runtime's as its cause.
                _poller.Close();
                return new InvalidOperationException("The library's I/O thread, which waits for every AsyncDatagramSocket, could not be started (" + e.GetType().Name + ": " + e.Message + "). The process may be out of memory, threads or descriptors (runtimes report each this way); the next call that has to wait tries again.", e);
            }
        }

        // ----- the thread -----

        private void Run()
        {
            bool ended = false;
            try
            {
                // The thread names itself (CurrentThread) only here, inside the guard: an abort aimed at it through that name
                // always reaches Abandon. One that came before the thread ran its first instruction, at its start, would end
                // it before the try, and the engine would wait for a thread that is gone (seen: a test's abort right after
                // the await that started the thread).
                lock (_waiting) _thread = Thread.CurrentThread;
                ended = Loop();
            }
            finally
            {
                // Ended otherwise than by TryEnd: aborted (Mono's Thread.Abort, a domain unload). Forgotten, so that the next wait
                // starts a thread again; the operations that waited on this one end with the reason, as when a wait fails.
                if (!ended) Abandon();
            }
        }

        private void Abandon()
        {
            // The engine as before its first wait, under the lock (a wait that comes next starts a thread again); then the
            // operations that waited on this thread end with the reason, resumed off this dying thread (never inline here).
            AwaitedSocket[] waiting;
            AwaitedOperation? ready;
            lock (_waiting)
            {
                waiting = new AwaitedSocket[_waiting.Count]; // allocates, on an abort only
                for (int i = 0; i < waiting.Length; i++) waiting[i] = _waiting[i];
                ready = _readyFirst;
                _readyFirst = null;
                _readyLast = null;
                _running = false;
                _threadId = -1;
                _thread = null;
                _waiting.Clear();
                _poller.Close();
            }
            var end = new InvalidOperationException("The library's I/O thread, which waits for every AsyncDatagramSocket, was aborted.");
            foreach (AwaitedSocket socket in waiting)
            {
                socket.Receive.FailIfWaiting(end, false);
                socket.Send.FailIfWaiting(end, false);
            }
            for (AwaitedOperation? operation = ready; operation != null; operation = operation.NextReady) operation.FailIfWaiting(end, false);
        }

        /// <summary>The thread's loop: true when it ended because no wrapper is left (<see cref="TryEnd"/>).</summary>
        private bool Loop()
        {
            _threadId = Environment.CurrentManagedThreadId;
            // CoreCLR allocates a thread's storage for a type's [ThreadStatic] fields when that thread first reads one
            // (32 B for Task's current task, read by TaskScheduler.Current in every OnCompleted): pay it here, at the
            // thread's start, not at the first await that suspends on this thread.
            _ = TaskScheduler.Current;
            _ = SynchronizationContext.Current;
            long slice = Stopwatch.Frequency * SliceMilliseconds / 1000;
            long lastSweep = Stopwatch.GetTimestamp();
            while (true)
            {
                try
                {
                    // The test seam's one read per turn (AwaitTestSeam): a volatile load, next to a wait that is a system call.
                    bool reportAll = AwaitTestSeam.ReportEveryArmedAsReady;
                    int count = _poller.Wait(_waiting, _readyFirst != null || reportAll ? 0 : SliceMilliseconds, out SocketError error);
                    if (count < 0)
                    {
                        // The wait itself failed (not a socket of the set): every waiting operation gets the error, and the
                        // thread pauses a slice rather than spin on a fault that may persist.
                        Sweep(new SocketException((int)error));
                        Thread.Sleep(SliceMilliseconds);
                        count = 0;
                    }
                    for (int i = 0; i < count; i++)
                    {
                        _poller.Report(i, out long token, out Readiness events);
                        Dispatch(token, events);
                    }
                    if (reportAll) ReportArmedAsReady();
                    RunReady();
                    long now = Stopwatch.GetTimestamp();
                    if (now - lastSweep >= slice)
                    {
                        lastSweep = now;
                        Sweep(null);
                    }
                    if (Volatile.Read(ref _registered) == 0 && TryEnd()) return true;
                }
                catch (Exception e) when (!(e is ThreadAbortException))
                {
                    // Nothing a socket's state or a user's code throws may end this thread (that would end the process): an
                    // operation's own failures end that operation (DatagramOperation.OnReady); anything else reaches here,
                    // ends every waiting operation with it, and the thread goes on after a slice's pause, not to spin on it.
                    Sweep(e);
                    Thread.Sleep(SliceMilliseconds);
                }
            }
        }

        /// <summary>A report: each waiting operation it concerns tries its call; a direction it did not cover is armed again (the report disarmed the socket).</summary>
        private void Dispatch(long token, Readiness events)
        {
            AwaitedSocket?[] slots = Volatile.Read(ref _slots);
            int slot = (int)(uint)token;
            if (slot >= slots.Length) return;
            AwaitedSocket? socket = Volatile.Read(ref slots[slot]);
            if (socket == null || socket.Token != token) return; // gone, or the slot serves another socket now
            bool hungUp = (events & Readiness.HangUp) != 0;
            bool read = (events & (Readiness.Read | Readiness.Error | Readiness.HangUp | Readiness.ReadHangUp)) != 0;
            bool write = (events & (Readiness.Write | Readiness.Error | Readiness.HangUp)) != 0;
            // A shutdown for receiving ends a receive that finds nothing, never a send (its socket may still send).
            if (read) socket.Receive.OnReady(hungUp || (events & Readiness.ReadHangUp) != 0);
            if (write) socket.Send.OnReady(hungUp);
            // An operation that tried and found nothing armed the socket again itself; one of the other direction is armed here.
            if ((!read && socket.Receive.NeedsReport) || (!write && socket.Send.NeedsReport)) Arm(socket);
        }

        private void RunReady()
        {
            AwaitedOperation? operation = _readyFirst;
            _readyFirst = null;
            _readyLast = null;
            while (operation != null)
            {
                AwaitedOperation? next = operation.NextReady;
                operation.NextReady = null;
                operation.OnReady(false);
                operation = next;
            }
        }

        /// <summary>
        /// Once a slice (<paramref name="failure"/> null): operations whose socket was disposed end with
        /// ObjectDisposedException, deferred ones are armed again, and sockets on which nothing waits leave the list. With
        /// <paramref name="failure"/> (the wait itself failed), every waiting operation ends with it.
        /// </summary>
        private void Sweep(Exception? failure)
        {
            int count = 0;
            lock (_waiting)
            {
                // Allocates only when more sockets wait at once than ever before in this process.
                if (_swept.Length < _waiting.Count) _swept = new AwaitedSocket?[_waiting.Count * 2];
                // Backwards: a socket that leaves is replaced by the last one, already seen.
                for (int i = _waiting.Count - 1; i >= 0; i--)
                {
                    AwaitedSocket socket = _waiting[i];
                    if (socket.Receive.IsWaiting || socket.Send.IsWaiting)
                    {
                        _swept[count++] = socket;
                        continue;
                    }
                    socket.ArmedRead = socket.ArmedWrite = false;
                    _waiting.Remove(socket);
                }
            }
            for (int k = 0; k < count; k++)
            {
                AwaitedSocket socket = _swept[k]!;
                _swept[k] = null; // nothing held between sweeps: an unreferenced wrapper must leave its socket collectable
                Exception? end = failure ?? (socket.IsSocketDisposed() ? new ObjectDisposedException(typeof(Socket).FullName) : null);
                if (end != null)
                {
                    socket.Receive.FailIfWaiting(end, true);
                    socket.Send.FailIfWaiting(end, true);
                    continue;
                }
                if (socket.Receive.TakeDeferred() | socket.Send.TakeDeferred()) Arm(socket);
            }
        }

        /// <summary>The test hook (<see cref="AwaitTestSeam.ReportEveryArmedAsReady"/>): every waiting socket armed for reading since its last report is reported readable.</summary>
        private void ReportArmedAsReady()
        {
            int count = 0;
            lock (_waiting)
            {
                int taken = AwaitTestSeam.TakeArmedForReading(this, ref _swept);
                for (int i = 0; i < taken; i++)
                {
                    AwaitedSocket socket = _swept[i]!;
                    _swept[i] = null;
                    if (socket.WaitingIndex >= 0) _swept[count++] = socket; // still on the list
                }
            }
            for (int k = 0; k < count; k++)
            {
                AwaitedSocket socket = _swept[k]!;
                _swept[k] = null;
                Dispatch(socket.Token, Readiness.Read);
            }
        }

        private bool TryEnd()
        {
            lock (_waiting)
            {
                if (_registered != 0 || _readyFirst != null) return false;
                _running = false;
                _threadId = -1;
                _thread = null;
                _waiting.Clear();
                _poller.Close();
                return true;
            }
        }
    }
}
