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

        // In a struct, so that writing the socket into the array needs no covariance check (a helper call on Mono).
        private struct Slot
        {
            internal Socket? Socket;
        }

        // 0: no thread; Registered: a thread runs and a registration came since its last tick; Idle: a thread runs and none came.
        private static int s_state;
        private const int Stopped = 0;
        private const int Registered = 1;
        private const int Idle = 2;

        private static long s_ticks;
        private static long s_wakeUps;
        private static int s_starts;

        /// <summary>
        /// Registers a receive about to wait in the kernel on <paramref name="socket"/>, whose handle the caller holds; counts it
        /// among the library's waits (<see cref="SocketHandles.EnterWait"/>) too. Returns the slot for <see cref="Exit"/>, or -1
        /// when every slot is taken: the caller must not wait in the kernel then.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static int Enter(Socket socket)
        {
            // A server that receives on one thread takes the first slot every time: one compare-exchange.
            int slot = Interlocked.CompareExchange(ref s_claims[0], 1, 0) == 0 ? 0 : ClaimAnother();
            if (slot < 0) return -1;
            s_sockets[slot].Socket = socket;
            // A full fence between the slot's socket and the read of the state: a thread that marked itself stopped either sees
            // this slot in its last look, or this read sees it stopped (see Run).
            SocketHandles.EnterWait();
            if (s_state != Registered) Wake();
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

        /// <summary>Ends a registration made by <see cref="Enter"/>, before the caller releases the handle.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static void Exit(int slot)
        {
            SocketHandles.ExitWait();
            // Plain writes: a registration the watchdog still sees after it ended names a socket that once waited, and the watchdog
            // touches only a disposed one's own descriptor, so a late look at it is harmless.
            s_sockets[slot].Socket = null;
            s_claims[slot] = 0;
        }

        /// <summary>True while the thread runs (for the tests).</summary>
        internal static bool IsRunning => Volatile.Read(ref s_state) != Stopped;

        /// <summary>Ticks the thread has made since the process began (for the tests).</summary>
        internal static long Ticks => Interlocked.Read(ref s_ticks);

        /// <summary>Disposed sockets the thread shut down (counted just before the call) to wake their receives (for the tests).</summary>
        internal static long WakeUps => Interlocked.Read(ref s_wakeUps);

        /// <summary>How many times the thread was started (for the tests).</summary>
        internal static int Starts => Volatile.Read(ref s_starts);

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

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Wake()
        {
            while (true)
            {
                int state = Volatile.Read(ref s_state);
                if (state == Registered) return;
                if (state == Idle)
                {
                    if (Interlocked.CompareExchange(ref s_state, Registered, Idle) == Idle) return;
                    continue;
                }
                if (Interlocked.CompareExchange(ref s_state, Registered, Stopped) == Stopped)
                {
                    Start();
                    return;
                }
            }
        }

        private static void Start()
        {
            Interlocked.Increment(ref s_starts);
            lock (s_gate)
            {
                // After the first start the thread only parks when idle: resuming it allocates nothing, where a new Thread
                // object on the receiving thread would put bytes into a server's steady state each time it went idle.
                if (s_threadMade)
                {
                    s_resume = true;
                    Monitor.Pulse(s_gate);
                    return;
                }
                s_threadMade = true;
            }
            var thread = new Thread(Run) { IsBackground = true, Name = "WhereAllocation kernel-wait watchdog" };
            thread.Start();
        }

        // The parked thread's gate: s_threadMade once the one thread exists, s_resume when a start came while it parks.
        private static readonly object s_gate = new object();
        private static bool s_threadMade;
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
            int idle = 0;
            while (true)
            {
                Pause();
                Interlocked.Increment(ref s_ticks);
                bool any = Look();
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
                if (!Look() || Interlocked.CompareExchange(ref s_state, Registered, Stopped) != Stopped) Park();
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
                if (WakesDisposed && SocketHandles.IsDisposedFlagSet(socket)) WakeDisposed(socket);
            }
            return any;
        }

        private static void WakeDisposed(Socket socket)
        {
            // Refused once the last reference went and the descriptor was closed: nothing is waiting on it then.
            if (!SocketHandles.TryHold(socket, out HeldHandle held)) return;
            using (held)
            {
                try
                {
                    // Counted first: the receive it wakes may be reported (and a test read the count) before the call returns here.
                    Interlocked.Increment(ref s_wakeUps);
                    OsSocketCalls.InUse.WakeWaitingReceives(held.Raw);
                }
                catch (Exception)
                {
                    // An OS stand-in of the tests without the call: the wait then ends only with a datagram or its timeout.
                }
            }
        }
    }
}
