using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation
{
    /// <summary>
    /// The one thread per process that waits for the sockets of every <see cref="AsyncDatagramSocket"/> at once,
    /// and what it waits with: <see cref="NativeReadiness"/> (the OS's own mechanism, for the native path) or
    /// <see cref="SelectReadiness"/> (Socket.Select, for the runtime's paths). A socket is armed only while an
    /// operation on it waits, for one report; the report makes the waiting operation try its call again on this
    /// thread, which then completes it or arms the socket again.
    /// </summary>
    /// <remarks>
    /// <para>The thread starts when an operation first has to wait, and ends once no <see cref="AsyncDatagramSocket"/>
    /// of its kind is registered (all disposed), within one <see cref="SliceMilliseconds"/>. It also looks, once per
    /// slice, whether the socket of a waiting operation was disposed: the OS says nothing when a descriptor it
    /// watches is closed.</para>
    /// <para>Registrations live in a table of slots; each socket's token is its slot and the slot's generation, so a
    /// report that arrives for a registration already gone (or for a slot used again since) is recognised and dropped.</para>
    /// </remarks>
    internal abstract class ReadinessPoller
    {
        /// <summary>The longest a wait lasts before the thread looks for disposed sockets and whether it should end.</summary>
        internal const int SliceMilliseconds = 100;

        /// <summary>
        /// How many reports in a row may find nothing for one waiting operation before it is re-armed only once per
        /// slice (and a receive asks the OS whether its socket was shut down for receiving): readiness that never
        /// yields a datagram must not make the thread spin.
        /// </summary>
        internal const int EmptyReportsBeforeProbe = 2;

        /// <summary>For tests: the next start of the I/O thread fails as if the runtime could not create it.</summary>
        internal static volatile bool FailThreadStartForTests = false; // set by tests only (initialised: see ReportEveryArmedAsReadyForTests)

        /// <summary>For tests: every socket armed for reading is reported readable at once, whether or not anything came.</summary>
        internal static volatile bool ReportEveryArmedAsReadyForTests = false; // set by tests only; initialised so a build without the tests' InternalsVisibleTo (Unity's) warns of nothing

        private static readonly object s_create = new object();
        private static ReadinessPoller? s_native;
        private static ReadinessPoller? s_managed;

        private readonly object _gate = new object();
        private ReadinessRegistration?[] _slots = new ReadinessRegistration?[16];
        private int[] _generations = new int[16];
        private int[] _free = new int[16];
        private int _freeCount;
        private int _used;
        private int _registered;

        private volatile bool _running;
        private volatile int _threadId = -1;
        private Thread? _thread;

        // Operations that gave way to the others on this thread (see DatagramOperation's fairness): this thread's own list.
        private AwaitedOperation? _readyFirst;
        private AwaitedOperation? _readyLast;

        // Operations whose reports kept finding nothing: re-armed at the next slice. This thread's own list.
        private AwaitedOperation? _deferredFirst;
        private long _emptyReports;

        /// <summary>The poller of the native path (the OS's mechanism), made when first needed.</summary>
        /// <exception cref="PlatformNotSupportedException">The library knows no readiness mechanism of this OS.</exception>
        internal static ReadinessPoller Native
        {
            get
            {
                lock (s_create)
                {
                    if (s_native == null)
                    {
                        OsPoller os = OsSocketCalls.Current.CreatePoller()
                            ?? throw new PlatformNotSupportedException(OsSocketCalls.Current.Name + ": no readiness mechanism is known for the awaitable calls on the native path.");
                        s_native = new NativeReadiness(os);
                    }
                    return s_native;
                }
            }
        }

        /// <summary>The poller of the runtime's paths (Socket.Select), made when first needed.</summary>
        internal static ReadinessPoller Managed
        {
            get
            {
                lock (s_create) return s_managed ??= new SelectReadiness();
            }
        }

        /// <summary>The poller for operations on <paramref name="path"/>.</summary>
        internal static ReadinessPoller For(DatagramPath path) => path == DatagramPath.Native ? Native : Managed;

        /// <summary>The mechanism's name, for diagnostics.</summary>
        internal abstract string Mechanism { get; }

        /// <summary>True on this poller's thread (the I/O thread).</summary>
        internal bool IsIoThread => _threadId == Environment.CurrentManagedThreadId;

        /// <summary>For tests: the thread, while it runs (null once it ended).</summary>
        internal Thread? CurrentThread
        {
            get
            {
                lock (_gate) return _thread;
            }
        }

        /// <summary>For tests: how many registrations are live.</summary>
        internal int Registered => Volatile.Read(ref _registered);

        /// <summary>For tests: how many reports found nothing for the operation they woke, since the process started.</summary>
        internal long EmptyReports => Interlocked.Read(ref _emptyReports);

        /// <summary>Counts a report that found nothing. This thread only.</summary>
        internal void CountEmptyReport() => Interlocked.Increment(ref _emptyReports);

        /// <summary>Re-arms <paramref name="operation"/> at the next slice rather than now. This thread only.</summary>
        internal void Defer(AwaitedOperation operation)
        {
            operation.NextReady = _deferredFirst;
            _deferredFirst = operation;
        }

        // ----- what each mechanism provides -----

        private protected abstract SocketError OpenCore();

        private protected abstract void CloseCore();

        /// <summary>Arms the registration's socket for one report (called under the registration's lock).</summary>
        private protected abstract SocketError ArmCore(ReadinessRegistration registration, bool read, bool write, ref bool added);

        /// <summary>Takes the registration's socket out of the set (called under the registration's lock).</summary>
        private protected abstract void RemoveCore(ReadinessRegistration registration);

        private protected abstract int WaitCore(int timeoutMilliseconds, out SocketError error);

        private protected abstract void ReportCore(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp);

        /// <summary>True when an arming from another thread needs <see cref="WakeCore"/> to join the wait in progress.</summary>
        private protected abstract bool ArmNeedsWake { get; }

        private protected abstract void WakeCore();

        // ----- registrations -----

        /// <summary>Gives <paramref name="registration"/> a slot and its token. Allocates only when the table grows.</summary>
        internal void Register(ReadinessRegistration registration)
        {
            lock (_gate)
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
                        var slots = new ReadinessRegistration?[_used * 2];
                        Array.Copy(_slots, slots, _used);
                        Array.Resize(ref _generations, _used * 2);
                        Array.Resize(ref _free, _used * 2);
                        Volatile.Write(ref _slots, slots);
                    }
                    slot = _used++;
                }
                int generation = ++_generations[slot];
                registration.Slot = slot;
                registration.Token = ((long)generation << 32) | (uint)slot;
                Volatile.Write(ref _slots[slot], registration);
                _registered++;
            }
        }

        /// <summary>Frees the registration's slot; the thread ends once none is left.</summary>
        internal void Unregister(ReadinessRegistration registration)
        {
            lock (_gate)
            {
                if (!ReferenceEquals(_slots[registration.Slot], registration)) return;
                Volatile.Write(ref _slots[registration.Slot], null);
                _free[_freeCount++] = registration.Slot;
                _registered--;
            }
        }

        /// <summary>
        /// Arms the registration's socket for one report, starting the thread if it is not running. Called under the
        /// registration's lock, by any thread.
        /// </summary>
        /// <exception cref="InvalidOperationException">The thread was not running and could not be started (nothing changed).</exception>
        internal SocketError Arm(ReadinessRegistration registration, bool read, bool write, ref bool added)
        {
            if (!_running)
            {
                SocketError started = Start();
                if (started != SocketError.Success) return started;
            }
            if (read) registration.ArmedForReadingForTests = true;
            SocketError error = ArmCore(registration, read, write, ref added);
            if (error == SocketError.Success && ArmNeedsWake && !IsIoThread) WakeCore();
            return error;
        }

        /// <summary>Takes the registration's socket out of the set. Called under the registration's lock.</summary>
        internal void Remove(ReadinessRegistration registration)
        {
            if (_running) RemoveCore(registration);
        }

        /// <summary>Queues an operation that gave way to the others, to be tried after this round's reports. This thread only.</summary>
        internal void QueueReady(AwaitedOperation operation)
        {
            operation.NextReady = null;
            if (_readyLast == null) _readyFirst = operation;
            else _readyLast.NextReady = operation;
            _readyLast = operation;
        }

        private SocketError Start()
        {
            lock (_gate)
            {
                if (_running) return SocketError.Success;
                SocketError opened = OpenCore();
                if (opened != SocketError.Success) return opened;
                Thread thread;
                try
                {
                    if (FailThreadStartForTests) throw new OutOfMemoryException("Thread creation failed (test hook).");
                    thread = new Thread(Run) { IsBackground = true, Name = "where-allocation I/O (" + Mechanism + ")" };
                    _thread = thread;
                    _running = true;
                    thread.Start();
                }
                catch (Exception e)
                {
                    // Nothing runs: everything as before the try, so that the next call tries again. What the runtime
                    // threw varies (OutOfMemoryException on CoreCLR, ExecutionEngineException on Mono): one exception
                    // says what happened, with the runtime's as its cause.
                    _thread = null;
                    _running = false;
                    CloseCore();
                    throw new InvalidOperationException("The library's I/O thread, which waits for every AsyncDatagramSocket, could not be started: " + e.Message, e);
                }
                return SocketError.Success;
            }
        }

        // ----- the thread -----

        private void Run()
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
                bool reportAll = ReportEveryArmedAsReadyForTests;
                int count = WaitCore(_readyFirst != null || reportAll ? 0 : SliceMilliseconds, out SocketError error);
                if (count < 0)
                {
                    // The wait itself failed (not a socket of the set): every waiting operation gets the error, and the
                    // thread pauses a slice rather than spin on a fault that may persist.
                    ForEachWaiting(error);
                    Thread.Sleep(SliceMilliseconds);
                    count = 0;
                }
                for (int i = 0; i < count; i++)
                {
                    ReportCore(i, out long token, out bool readable, out bool writable, out bool failed, out bool hungUp);
                    Dispatch(token, readable, writable, failed, hungUp);
                }
                if (reportAll) ReportArmedAsReady();
                RunReady();
                long now = Stopwatch.GetTimestamp();
                if (now - lastSweep >= slice)
                {
                    lastSweep = now;
                    RearmDeferred();
                    ForEachWaiting(SocketError.Success);
                }
                if (Volatile.Read(ref _registered) == 0 && TryEnd()) return;
            }
        }

        private void Dispatch(long token, bool readable, bool writable, bool error, bool hungUp)
        {
            ReadinessRegistration?[] slots = Volatile.Read(ref _slots);
            int slot = (int)(uint)token;
            if (slot >= slots.Length) return;
            ReadinessRegistration? registration = Volatile.Read(ref slots[slot]);
            if (registration == null || registration.Token != token) return; // gone, or the slot serves another socket now
            bool read = readable || error || hungUp;
            bool write = writable || error || hungUp;
            if (read) registration.Receive.OnReady(hungUp);
            if (write) registration.Send.OnReady(hungUp);
            // One-shot: the report disarmed the socket. An operation that just tried and found nothing armed it again
            // itself; one of the other direction that still waits is armed here.
            if ((!read && registration.Receive.IsWaiting) || (!write && registration.Send.IsWaiting))
                registration.RearmOrFail(true);
        }

        private void RearmDeferred()
        {
            AwaitedOperation? operation = _deferredFirst;
            _deferredFirst = null;
            while (operation != null)
            {
                AwaitedOperation? next = operation.NextReady;
                operation.NextReady = null;
                operation.RearmDeferred();
                operation = next;
            }
        }

        private void ReportArmedAsReady()
        {
            ReadinessRegistration?[] slots = Volatile.Read(ref _slots);
            for (int i = 0; i < slots.Length; i++)
            {
                ReadinessRegistration? registration = Volatile.Read(ref slots[i]);
                if (registration == null || !registration.ArmedForReadingForTests) continue;
                registration.ArmedForReadingForTests = false;
                Dispatch(registration.Token, true, false, false, false);
            }
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
        /// For each registration with a waiting operation: with an error, fails the operations with it; without one
        /// (the sweep), fails them with ObjectDisposedException if their socket was disposed.
        /// </summary>
        private void ForEachWaiting(SocketError error)
        {
            ReadinessRegistration?[] slots = Volatile.Read(ref _slots);
            for (int i = 0; i < slots.Length; i++)
            {
                ReadinessRegistration? registration = Volatile.Read(ref slots[i]);
                if (registration == null || (!registration.Receive.IsWaiting && !registration.Send.IsWaiting)) continue;
                if (error != SocketError.Success)
                {
                    registration.Receive.FailIfWaiting(new SocketException((int)error), true);
                    registration.Send.FailIfWaiting(new SocketException((int)error), true);
                }
                else if (registration.IsSocketDisposed())
                {
                    registration.Receive.FailIfWaiting(new ObjectDisposedException(typeof(Socket).FullName), true);
                    registration.Send.FailIfWaiting(new ObjectDisposedException(typeof(Socket).FullName), true);
                }
            }
        }

        private bool TryEnd()
        {
            lock (_gate)
            {
                if (_registered != 0 || _readyFirst != null || _deferredFirst != null) return false;
                _running = false;
                _threadId = -1;
                _thread = null;
                CloseCore();
                return true;
            }
        }
    }
}
