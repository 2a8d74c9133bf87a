#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// The library's own wake-up for receives blocked in the kernel, where the runtime's Dispose wakes none that holds the
    /// socket's handle (Mono's and Unity's class library, on Linux): a receive about to wait registers its Socket in a
    /// preallocated slot (one compare-exchange, 0 B) and clears it when the kernel's call returns, before it releases the
    /// handle. A background thread looks at the registered sockets every <see cref="TickMilliseconds"/>; for one that was
    /// disposed it shuts the descriptor down for receiving (<see cref="OsSocketCalls.WakeWaitingReceives"/>), and the blocked
    /// receive ends with 0 bytes and no sender, which the receive reports as ObjectDisposedException. The thread starts with
    /// the first registration and parks itself (no tick, no system call) after <see cref="IdleTicks"/> ticks without one; the
    /// next registration wakes it again, allocating nothing (a new thread would allocate on the receiving thread). Nothing signals it per datagram: a registration only reads its state (one static read) and writes it only
    /// when the thread has marked a tick idle.
    /// </summary>
    /// <remarks>
    /// The descriptor the thread shuts down is always the disposed socket's own: the waiting receive holds a reference on
    /// the handle for the whole wait, and the thread takes its own (Mono's handle accepts one while any is held, and refuses
    /// it once the last is gone and the descriptor closed) before the call and releases it after. A socket that is not
    /// disposed is never touched: its disposed flag, once set, stays set.
    /// </remarks>
    internal static class KernelWaitWatchdog
    {
        /// <summary>Receives that can wait in the kernel at once in the process; a receive that finds every slot taken waits in slices.</summary>
        internal const int Slots = 64;

        /// <summary>
        /// How often the thread looks at the registered sockets: the longest a Dispose made during a kernel wait takes to end
        /// it (plus the scheduler's delay). Each tick costs the process one wake-up of the thread (one system call, a few
        /// microseconds of CPU) while receives wait, whether or not anything was disposed: 40 calls a second.
        /// </summary>
        internal const int TickMilliseconds = 25;

        /// <summary>Ticks in a row without a registration, after which the thread ends (1 s).</summary>
        internal const int IdleTicks = 40;

        // One slot per receive that waits: claimed by an int compare-exchange (an intrinsic without a write barrier on Mono and
        // IL2CPP), then the socket written beside it. The watchdog may read a claim whose socket is not written yet (null: skipped)
        // or one from an earlier registration of the slot: harmless, since it touches only a disposed socket's own descriptor.
        private static readonly int[] s_claims = new int[Slots];
        private static readonly Slot[] s_sockets = new Slot[Slots];

        // In a struct, so that writing the socket into the array needs no covariance check (a helper call on Mono). Waiter: the
        // thread that waits, for the one wake-up that cannot shut the descriptor down (see WakeDisposed).
        private struct Slot
        {
            internal Socket? Socket;
            internal Thread? Waiter;
        }

        // 0: no thread; Registered: a thread runs and a registration came since its last tick; Idle: a thread runs and none came.
        private static int s_state;
        private const int Stopped = 0;
        private const int Registered = 1;
        private const int Idle = 2;

        private static long s_ticks;
        private static long s_wakeUps;
        private static int s_wakesHolding;
        private static long s_interrupts;
        private static int s_starts;
        private static int s_startFailures;
        private static long s_faults;

        /// <summary>
        /// Registers a receive about to wait in the kernel on <paramref name="socket"/>, whose handle the caller holds; counts it
        /// among the library's waits too (<see cref="SocketHandles.EnterWait(ref bool)"/> with the caller's
        /// <paramref name="counted"/>: the caller counts it out after it released the handle, also when this returns -1).
        /// Returns the slot for <see cref="Exit"/>, or -1 when every slot is taken or the thread cannot be started: the caller
        /// must not wait in the kernel then (it waits in slices, which end at a Dispose too). Call it in a finally clause and
        /// <see cref="Exit"/> in another, so that a Thread.Abort can part neither from its call (see ReceiveLoop.InKernel).
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static int Enter(Socket socket, ref bool counted)
        {
            // A server that receives on one thread takes the first slot every time: one compare-exchange.
            int slot = Interlocked.CompareExchange(ref s_claims[0], 1, 0) == 0 ? 0 : ClaimAnother();
            if (slot < 0) return -1;
            s_sockets[slot].Socket = socket;
            s_sockets[slot].Waiter = Thread.CurrentThread;
            // A full fence between the slot's socket and the read of the state: a thread that marked itself stopped either sees
            // this slot in its last look, or this read sees it stopped (see Run).
            if (counted) Interlocked.MemoryBarrier();
            else SocketHandles.EnterWait(ref counted);
            if (s_state != Registered && !Wake())
            {
                Exit(slot);
                return -1;
            }
            return slot;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int ClaimAnother()
        {
            int[] claims = s_claims;
            for (int slot = 1; slot < Slots; slot++)
            {
                if (Interlocked.CompareExchange(ref claims[slot], 1, 0) == 0) return slot;
            }
            return -1;
        }

        /// <summary>Ends a registration made by <see cref="Enter"/>, before the caller releases the handle (its count of the wait ends after that).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static void Exit(int slot)
        {
            // Plain writes: a registration the watchdog still sees after it ended names a socket that once waited, and the watchdog
            // touches only a disposed one's own descriptor, so a late look at it is harmless.
            s_sockets[slot].Socket = null;
            s_sockets[slot].Waiter = null;
            s_claims[slot] = 0;
        }

        /// <summary>True while the thread runs (for the tests).</summary>
        internal static bool IsRunning => Volatile.Read(ref s_state) != Stopped;

        /// <summary>Ticks the thread has made since the process began (for the tests).</summary>
        internal static long Ticks => Interlocked.Read(ref s_ticks);

        /// <summary>Disposed sockets the thread shut down (counted just before the call) to wake their receives (for the tests).</summary>
        internal static long WakeUps => Interlocked.Read(ref s_wakeUps);

        /// <summary>
        /// The thread's holds of a disposed socket's handle in progress, each also among <see cref="SocketHandles.WaitsInProgress"/>
        /// from before that count's rise until after its fall (for the tests, which count the calls waiting).
        /// </summary>
        internal static int WakesHolding => Volatile.Read(ref s_wakesHolding);

        /// <summary>How many times the thread was started (for the tests).</summary>
        internal static int Starts => Volatile.Read(ref s_starts);

        /// <summary>Starts that failed because the runtime could not create the thread (for the tests; the receive waited in slices).</summary>
        internal static int StartFailures => Volatile.Read(ref s_startFailures);

        /// <summary>Waiting threads interrupted because their disposed socket had no handle left to shut down (for the tests).</summary>
        internal static long Interrupts => Interlocked.Read(ref s_interrupts);

        /// <summary>Exceptions the thread caught and survived while it looked at a slot or ticked (for the tests).</summary>
        internal static long Faults => Interlocked.Read(ref s_faults);

        /// <summary>The thread, while it exists (for the tests).</summary>
        internal static Thread? CurrentThread
        {
            get
            {
                lock (s_gate) return s_thread;
            }
        }

        /// <summary>For the tests: the next start of the thread fails as if the runtime could not create it.</summary>
        internal static volatile bool FailThreadStart = false; // initialised so that Unity, which grants the tests no internals, warns of nothing

        /// <summary>True while a receive on <paramref name="socket"/> is registered as waiting in the kernel (for the tests).</summary>
        internal static bool IsWaiting(Socket socket)
        {
            for (int i = 0; i < Slots; i++)
            {
                if (Volatile.Read(ref s_claims[i]) != 0 && ReferenceEquals(Volatile.Read(ref s_sockets[i].Socket), socket)) return true;
            }
            return false;
        }

        /// <summary>
        /// For the tests: what the thread does to a registered socket that is disposed (true: shut it down, the library's
        /// behaviour), or false: nothing, so that a test can see what a kernel wait without this wake-up would do.
        /// </summary>
        internal static bool WakesDisposed = true; // initialised so that Unity, which grants the tests no internals, warns of nothing

        /// <summary>Marks a registration for the thread, starting (or resuming) it when it was stopped; false when it could not be started.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static bool Wake()
        {
            while (true)
            {
                int state = Volatile.Read(ref s_state);
                if (state == Registered) return true;
                if (state == Idle)
                {
                    if (Interlocked.CompareExchange(ref s_state, Registered, Idle) == Idle) return true;
                    continue;
                }
                if (Interlocked.CompareExchange(ref s_state, Registered, Stopped) == Stopped)
                {
                    if (Start()) return true;
                    // Nothing runs: stopped again, so that the next registration tries again.
                    Volatile.Write(ref s_state, Stopped);
                    return false;
                }
            }
        }

        /// <summary>
        /// Resumes the parked thread, or makes it; false when the runtime could not create it (out of memory or threads): the
        /// receive that registered waits in slices instead (its contract holds, at four calls a datagram instead of one), and
        /// the next registration tries again. Nothing is thrown into the receive for a helper it can do without.
        /// </summary>
        private static bool Start()
        {
            Interlocked.Increment(ref s_starts);
            lock (s_gate)
            {
                // After the first start the thread only parks when idle: resuming it allocates nothing, where a new Thread
                // object on the receiving thread would put bytes into a server's steady state each time it went idle.
                if (s_made)
                {
                    s_resume = true;
                    Monitor.Pulse(s_gate);
                    return true;
                }
                try
                {
                    if (FailThreadStart) throw new OutOfMemoryException("Thread creation failed (test hook).");
                    var thread = new Thread(Run) { IsBackground = true, Name = "WhereAllocation kernel-wait watchdog" };
                    thread.Start(); // it names itself (s_thread) once inside its guard, under this lock
                    s_made = true;
                    return true;
                }
                catch (Exception)
                {
                    // What the runtime throws varies (OutOfMemoryException on CoreCLR, ExecutionEngineException on Mono).
                    Interlocked.Increment(ref s_startFailures);
                    return false;
                }
            }
        }

        // The parked thread's gate: s_made once the one thread is made (until it ends), s_thread once it runs inside its guard
        // (its name for the tests, who abort it through it), s_resume when a start came while it parks.
        private static readonly object s_gate = new object();
        private static bool s_made;
        private static Thread? s_thread;
        private static bool s_resume;

        // Waits, without ticking, until a registration starts the watchdog again.
        private static void Park()
        {
            lock (s_gate)
            {
                while (!s_resume) Monitor.Wait(s_gate);
                s_resume = false;
            }
        }

        private static void Run()
        {
            try
            {
                // Named only here, inside the guard: an abort aimed at the thread through its name always reaches the finally
                // below. One that came before its first instruction would end it before the try, and the next registrations
                // would resume a thread that is gone.
                lock (s_gate) s_thread = Thread.CurrentThread;
                Loop();
            }
            finally
            {
                // The thread ends only when it is aborted (Mono's Thread.Abort, a domain unload): forgotten, so that the next
                // registration makes a new one instead of resuming one that is gone.
                lock (s_gate)
                {
                    s_made = false;
                    s_thread = null;
                    s_resume = false;
                }
                Volatile.Write(ref s_state, Stopped);
            }
        }

        private static void Loop()
        {
            int idle = 0;
            while (true)
            {
                bool any;
                try
                {
                    Pause();
                    Interlocked.Increment(ref s_ticks);
                    any = Look();
                }
                catch (Exception e) when (!(e is ThreadAbortException))
                {
                    // Never let a user's socket state end the thread (which would end the process): counted, and the next tick
                    // looks again. Look catches per slot; this is for anything else.
                    Interlocked.Increment(ref s_faults);
                    any = true;
                }
                // A registration since the last tick set Registered: mark this tick, and count it idle only if none came and no
                // receive is waiting now.
                if (Interlocked.Exchange(ref s_state, Idle) == Registered || any)
                {
                    idle = 0;
                    continue;
                }
                if (++idle < IdleTicks) continue;
                if (Interlocked.CompareExchange(ref s_state, Stopped, Idle) != Idle)
                {
                    idle = 0;
                    continue;
                }
                // Stopped, after a full fence: a registration that read the state before it changed has filled its slot, and this
                // look sees it; one that reads it after starts a thread of its own.
                bool seen;
                try
                {
                    seen = Look();
                }
                catch (Exception e) when (!(e is ThreadAbortException))
                {
                    Interlocked.Increment(ref s_faults);
                    seen = true;
                }
                if (!seen || Interlocked.CompareExchange(ref s_state, Registered, Stopped) != Stopped) Park();
                idle = 0;
            }
        }

        /// <summary>
        /// One tick's pause: a <c>poll</c> of no descriptor, one system call (Linux, the only OS the watchdog runs on). Mono's
        /// Thread.Sleep takes two or three futex calls per sleep, which a server that waits would count against each datagram.
        /// </summary>
        private static unsafe void Pause()
        {
            try
            {
                Interop.Libc.Poll(null, 0, TickMilliseconds);
            }
            catch (Exception)
            {
                Thread.Sleep(TickMilliseconds);
            }
        }

        /// <summary>Wakes the receives of every registered socket that was disposed; true when any slot is taken.</summary>
        private static bool Look()
        {
            bool any = false;
            for (int i = 0; i < Slots; i++)
            {
                if (Volatile.Read(ref s_claims[i]) == 0) continue;
                any = true;
                Socket? socket = Volatile.Read(ref s_sockets[i].Socket);
                if (socket == null) continue;
                try
                {
                    if (WakesDisposed && SocketHandles.IsDisposedFlagSet(socket)) WakeDisposed(socket, Volatile.Read(ref s_sockets[i].Waiter));
                }
                catch (Exception e) when (!(e is ThreadAbortException))
                {
                    // One socket's state (whatever a runtime or a user left it in) must not keep the others from being looked at,
                    // nor end the thread: counted, and looked at again next tick.
                    Interlocked.Increment(ref s_faults);
                }
            }
            return any;
        }

        private static void WakeDisposed(Socket socket, Thread? waiter)
        {
            // This hold of a disposed socket's handle is counted among the library's waits, from before the reference until
            // after its release, as a waiter's is: the waiter it wakes counts itself out while this thread may still hold the
            // handle, and a call made after the Dispose must not take a reference through it (SocketHandles.ThrowIfDisposedWhileHeld).
            Interlocked.Increment(ref s_wakesHolding);
            SocketHandles.EnterWait();
            try
            {
                WakeDisposedCounted(socket, waiter);
            }
            finally
            {
                SocketHandles.ExitWait();
                Interlocked.Decrement(ref s_wakesHolding);
            }
        }

        private static void WakeDisposedCounted(Socket socket, Thread? waiter)
        {
            if (!SocketHandles.TryHold(socket, out HeldHandle held))
            {
                // Refused once the last reference went and the descriptor was closed: nothing is waiting on it then. Or the Socket
                // has no handle left: Mono's DuplicateAndClose gave its descriptor to the duplicate (Mono's Dispose then leaves it
                // open), so a shutdown would take the duplicate's receiving side. The waiting thread is interrupted instead, as
                // Mono wakes its own blocked calls (its Socket.cancel_blocking_socket_operation: a signal, which ends the kernel's
                // wait with EINTR); the receive goes on in slices, which find the socket disposed.
                if (waiter != null && s_interruptCall != null && SocketHandles.IsHandleGone(socket))
                {
                    Interlocked.Increment(ref s_interrupts);
                    s_interruptCall(waiter);
                }
                return;
            }
            using (held)
            {
                try
                {
                    // Counted first: the receive it wakes may be reported (and a test read the count) before the call returns here.
                    Interlocked.Increment(ref s_wakeUps);
                    OsSocketCalls.InUse.WakeWaitingReceives(held.Raw);
                }
                catch (Exception e) when (!(e is ThreadAbortException))
                {
                    // An OS stand-in of the tests without the call: the wait then ends only with a datagram or its timeout.
                }
            }
        }

        // Mono's internal Socket.cancel_blocking_socket_operation(Thread), with which Mono's own Dispose interrupts the blocked calls
        // of a socket; null where the class library has none (CoreCLR, where the watchdog never runs).
        private static readonly Action<Thread>? s_interruptCall = InterruptCall();

        [System.Diagnostics.CodeAnalysis.DynamicDependency("cancel_blocking_socket_operation", typeof(Socket))]
        private static Action<Thread>? InterruptCall()
        {
            try
            {
                System.Reflection.MethodInfo? method = typeof(Socket).GetMethod("cancel_blocking_socket_operation",
                    System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.NonPublic, null, new[] { typeof(Thread) }, null);
                return method == null || method.ReturnType != typeof(void) ? null : (Action<Thread>)Delegate.CreateDelegate(typeof(Action<Thread>), method);
            }
            catch (Exception)
            {
                return null; // stripped, or a runtime that refuses
            }
        }
    }
}
