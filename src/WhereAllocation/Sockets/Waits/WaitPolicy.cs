#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// How a receive that may wait waits, decided in this one place for every receive of the native path (the one-call
    /// receives, the batch in each of its modes, the coalesced batch) and asked by <see cref="ReceiveLoop"/>: in the kernel,
    /// woken by the runtime's Dispose (CoreCLR on Linux); in the kernel, woken by the library's watchdog
    /// (<see cref="KernelWaitWatchdog"/>: Mono and Unity on Linux); or in slices (everywhere else, and on any descriptor a
    /// Dispose would not wake). What the runtime can do is read once per process; what the OS can do is asked of
    /// <see cref="OsSocketCalls.InUse"/> whenever it is needed, never cached, so that a test's stand-in OS there is obeyed.
    /// </summary>
    /// <remarks>
    /// <para>A kernel wait is one system call per datagram (a <c>recvfrom</c>, <c>recvmmsg</c> or <c>recvmsg</c> without
    /// MSG_DONTWAIT), against a try, a timeout read, a <c>poll</c> per slice and the receive after it. It needs an OS that has
    /// such a receive (<see cref="OsSocketCalls.HasWaitingReceive"/>) and a Dispose that ends it: CoreCLR's Dispose shuts the
    /// socket down again and again while a call holds its handle, but only a descriptor the handle owns and that has
    /// FD_CLOEXEC (<see cref="DisposeWakesKernelWait"/>); Mono's closes the descriptor only when the last reference goes and
    /// wakes only its own calls, so there the library's watchdog wakes the wait.</para>
    /// <para>The rule for a kernel wait that ends without a datagram (the socket's SO_RCVTIMEO passed, a descriptor the
    /// runtime left in non-blocking mode answered at once, or a signal interrupted it: Mono stops the world with one at
    /// every collection, and Linux never restarts a receive that has SO_RCVTIMEO) is <see cref="ReceiveLoop"/>'s: the rest
    /// of the wait goes on in slices, timed from the kernel wait's start, never in the kernel again.</para>
    /// </remarks>
    internal static class WaitPolicy
    {
        // CoreCLR (SafeSocketHandle.TryUnblockSocket): its Dispose wakes a call that holds the socket's handle.
        private static readonly bool s_runtimeWakes = RuntimeWakesHeldReceives();

        // Mono and Unity on Linux: the runtime's Dispose wakes no receive holding the handle, so the library does, through
        // KernelWaitWatchdog, with which every kernel wait registers. Needs the OS's wake-up (shutdown, which Linux carries out
        // on an unconnected datagram socket too), the Socket's disposed flag, and handles that all own their descriptors.
        private static readonly bool s_watchdogWakes = !s_runtimeWakes && OsSocketCalls.Current.HasWaitingReceive
            && SocketHandles.CanReadDisposedFlag && EveryHandleOwnsItsDescriptor();

        // The OS this process runs on has the waiting receive and the runtime or the watchdog wakes it.
        private static readonly bool s_kernelCapable = OsSocketCalls.Current.HasWaitingReceive && (s_runtimeWakes || s_watchdogWakes);

        /// <summary>True when kernel waits register with <see cref="KernelWaitWatchdog"/>, which wakes them once their socket is disposed (Mono on Linux).</summary>
        internal static bool WatchdogWakes => s_watchdogWakes;

        /// <summary>
        /// True when a receive that may wait, on a socket in blocking mode, waits in the kernel: this runtime's Dispose (or the
        /// watchdog) wakes such a wait, and the OS in use has the receive (<see cref="OsSocketCalls.HasWaitingReceive"/>;
        /// a test's stand-in OS without it makes every wait sliced). Whether it does on one socket: <see cref="WaitsInKernelOn"/>.
        /// </summary>
        internal static bool WaitsInKernel => s_kernelCapable && OsSocketCalls.InUse.HasWaitingReceive;

        /// <summary>
        /// True when a receive on the socket of <paramref name="handle"/> that may wait waits in the kernel (see
        /// <see cref="WaitsInKernel"/> and <see cref="DisposeWakesKernelWait"/>); false: in slices.
        /// </summary>
        internal static bool WaitsInKernelOn(SafeHandle handle) => WaitsInKernel && (s_watchdogWakes || DisposeWakesKernelWait(handle));

        // ----- the one-call receive's run of kernel waits (Mono) -----

        /// <summary>
        /// How many one-call receives (<c>ReceiveFrom_NonAlloc</c>'s compatible forms) go on straight to the kernel's wait
        /// before one tries first again; 0: the next one tries first (MSG_DONTWAIT). The one-call receive reads this field per
        /// datagram, so it holds all it needs for a queued datagram: where the runtime wakes kernel waits (CoreCLR) it is
        /// int.MaxValue for good, never counted, and the receive then asks <see cref="WaitsInKernelOn"/>; where the watchdog
        /// does (Mono) a registration costs the receive about 75 instructions (bench/ReceiveCost), which a queued datagram would
        /// pay for nothing, while a try that finds nothing costs a system call: so a try comes first until one finds nothing
        /// queued (<see cref="StartKernelRun"/>), and the next <see cref="KernelRunLength"/> receives go straight to the kernel.
        /// A server that waits pays one extra <c>recvfrom</c> per 256 datagrams; a saturated one, after at most one run, tries
        /// first at the cost it always had. One field for the process, shared by every socket: a socket that waits sends the
        /// one-call receives of the others (busy ones too) through the registration for at most 256 receives (never a wrong
        /// result), which a per-socket count would avoid at the price of a field per socket the library does not have
        /// (Socket is the runtime's). Written only while receives wait (a saturated server only reads it). 0 where kernel
        /// waits are off.
        /// </summary>
        internal static int KernelRun = s_kernelCapable && !s_watchdogWakes ? int.MaxValue : 0;

        /// <summary>See <see cref="KernelRun"/>.</summary>
        internal const int KernelRunLength = 256;

        /// <summary>
        /// A one-call receive goes to the kernel's wait without a try: one of the run is used (<see cref="KernelRun"/>). Not an
        /// interlocked decrement (a locked instruction on a line every receiving thread shares, per datagram): threads that race
        /// here lose a count at most, which moves the next try first by a receive. Never below 0, though: a plain decrement
        /// from two threads that both read 1 left -1, and every one-call receive of the process would then have registered,
        /// never trying first, for 2^31 receives (a cost, never a wrong result).
        /// </summary>
        internal static void TakeFromKernelRun()
        {
            if (!s_watchdogWakes) return;
            int left = KernelRun;
            if (left > 0) KernelRun = left - 1;
        }

        /// <summary>
        /// True when a one-call receive whose try (MSG_DONTWAIT) just found nothing goes on in the kernel's wait with no second
        /// try, and starts a run of kernel waits (<see cref="KernelRun"/>): where the watchdog wakes the wait. False where the
        /// try is the kernel wait itself (CoreCLR: it tries first only where it never waits in the kernel).
        /// </summary>
        internal static bool StartKernelRun()
        {
            if (!s_watchdogWakes) return false;
            KernelRun = KernelRunLength;
            return true;
        }

        // ----- does a Dispose wake a kernel wait on this handle -----

        // Mono on Linux: every handle owns its descriptor (EveryHandleOwnsItsDescriptor). Declared before its reader: static fields start in order.
        private static readonly Func<SafeHandle, bool> s_everyHandle = AlwaysOwns;

        private static bool AlwaysOwns(SafeHandle handle) => true;

        // CoreCLR's Dispose shuts the descriptor down only when the handle owns it (SafeSocketHandle.OwnsHandle, internal): a
        // Socket made over SafeSocketHandle(fd, ownsHandle: false) would leave a kernel wait waiting. Null where not found: no
        // handle counts as owning, and every wait polls in slices. Mono: every handle (see s_watchdogWakes).
        private static readonly Func<SafeHandle, bool>? s_ownsDescriptor = s_watchdogWakes ? s_everyHandle : s_runtimeWakes ? OwnershipGetter() : null;

        // The handles asked about (see DisposeWakesKernelWait), by answer: on CoreCLR the answer costs a system call (fcntl), and on
        // the netstandard2.1 build a boxed bool too, so each socket is asked once, never per datagram. Two tables of 64 for the
        // process, made once: a thread-static would allocate its storage on each receiving thread's first receive (216 B on .NET
        // 10, seen in DatagramServer's zero-byte rows), and one field for all would make the shards of a server (a socket and a
        // thread each) ask again after every datagram of another. Read without a lock (a reference is written whole); a process
        // with more sockets than that receiving at once asks again now and then, never wrongly. A hit costs one comparison per
        // socket before it in its table.
        private static readonly SafeHandle?[] s_wakingHandles = new SafeHandle?[64];
        private static readonly SafeHandle?[] s_unwakedHandles = new SafeHandle?[64];
        private static int s_nextWakingHandle, s_nextUnwakedHandle;

        /// <summary>
        /// True when a Dispose of <paramref name="handle"/>'s Socket wakes a receive blocked in the kernel on its descriptor, so
        /// that such a receive may wait there: on CoreCLR, when the handle owns its descriptor and the descriptor has FD_CLOEXEC,
        /// the runtime's own condition (SafeSocketHandle.TryUnblockSocket shuts down only such a descriptor: one without the flag
        /// "may be shared with other processes"); on Mono, always (the library's watchdog wakes it, see
        /// <see cref="WatchdogWakes"/>). The flag is read when the socket is first asked about, not at every receive: a flag
        /// cleared after the socket's first receive is not seen (docs/CONTRACT.md, "Hostile conditions").
        /// </summary>
        internal static bool DisposeWakesKernelWait(SafeHandle handle)
        {
            if (Known(s_wakingHandles, handle)) return true;
            return !Known(s_unwakedHandles, handle) && AskDisposeWakesKernelWait(handle);
        }

        private static bool Known(SafeHandle?[] table, SafeHandle handle)
        {
            for (int i = 0; i < table.Length; i++)
            {
                SafeHandle? seen = table[i];
                if (seen == null) return false; // filled in order: none after the first empty one (until the table wraps)
                if (ReferenceEquals(seen, handle)) return true;
            }
            return false;
        }

        /// <summary>
        /// For the runtime's own paths, whose blocking receive waits in the kernel: true when the runtime's Dispose wakes it on
        /// <paramref name="socket"/> (<see cref="DisposeWakesKernelWait"/>), or when that cannot be told here (no way to the
        /// handle, no OS calls), as before the question was asked; false sends the caller to a wait of its own in slices.
        /// </summary>
        internal static bool DisposeWakesRuntimeReceive(Socket socket) =>
            !NativeDatagramIO.OsCallsWork || !SocketHandles.Available || DisposeWakesKernelWait(SocketHandles.Get(socket));

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static bool AskDisposeWakesKernelWait(SafeHandle handle)
        {
            Func<SafeHandle, bool>? owns = s_ownsDescriptor;
            bool wakes = owns != null && owns(handle) && (!s_runtimeWakes || OsSocketCalls.InUse.IsCloseOnExec(handle.DangerousGetHandle()));
            if (wakes) s_wakingHandles[s_nextWakingHandle++ & (s_wakingHandles.Length - 1)] = handle;
            else if (owns != null) s_unwakedHandles[s_nextUnwakedHandle++ & (s_unwakedHandles.Length - 1)] = handle;
            return wakes;
        }

#if NET8_0_OR_GREATER
        [System.Diagnostics.CodeAnalysis.DynamicDependency("get_OwnsHandle", typeof(SafeSocketHandle))]
#else
        [System.Diagnostics.CodeAnalysis.DynamicDependency("get_OwnsHandle", "System.Net.Sockets.SafeSocketHandle", "System.Net.Sockets")]
#endif
        private static Func<SafeHandle, bool>? OwnershipGetter()
        {
            try
            {
#if NET8_0_OR_GREATER
                const System.Reflection.BindingFlags Instance = System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public;
                System.Reflection.MethodInfo? getter = typeof(SafeSocketHandle).GetProperty("OwnsHandle", Instance)?.GetGetMethod(true);
                return getter != null && getter.ReturnType == typeof(bool) ? TypedGetter<SafeSocketHandle>(getter) : null;
#else
                // The netstandard2.1 build asks only where the runtime's Dispose wakes held receives, that is on CoreCLR (Unity's
                // CoreCLR back end compiles the package so). The runtime's handle type cannot be named here, and a delegate of
                // SafeHandle does not bind to its getter; Invoke does, boxing its answer, which DisposeWakesKernelWait asks once
                // per socket. (Mono and IL2CPP never come here: their Dispose wakes no call that holds the handle.)
                const System.Reflection.BindingFlags Instance = System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public;
                Type? handleType = typeof(Socket).Assembly.GetType("System.Net.Sockets.SafeSocketHandle");
                System.Reflection.MethodInfo? getter = handleType?.GetProperty("OwnsHandle", Instance)?.GetGetMethod(true);
                if (handleType == null || getter == null || getter.ReturnType != typeof(bool)) return null;
                return handle => handleType.IsInstanceOfType(handle) && getter.Invoke(handle, null) is bool owns && owns;
#endif
            }
            catch (Exception)
            {
                return null;
            }
        }

#if NET8_0_OR_GREATER
        private static Func<SafeHandle, bool> TypedGetter<T>(System.Reflection.MethodInfo getter) where T : SafeHandle
        {
            var typed = (Func<T, bool>)Delegate.CreateDelegate(typeof(Func<T, bool>), getter);
            return handle => handle is T socketHandle && typed(socketHandle);
        }
#endif

        /// <summary>
        /// True when no code outside the runtime's class library can make a socket handle that does not own its descriptor, so
        /// that shutting a disposed socket's descriptor down never reaches a descriptor someone else still uses. Mono's (and so
        /// Unity's) SafeSocketHandle is an internal type, as is the Socket constructor that takes one, and every place the class
        /// library makes one passes ownsHandle: true (the Socket constructors, Accept, the netlink watcher); .NET's is public, and
        /// <c>new SafeSocketHandle(fd, ownsHandle: false)</c> makes one that does not own. False when the type is not found.
        /// </summary>
        private static bool EveryHandleOwnsItsDescriptor()
        {
#if NET8_0_OR_GREATER
            return false; // .NET's handle type is public, and its Dispose wakes held receives itself
#else
            try
            {
                Type? handleType = typeof(Socket).Assembly.GetType("System.Net.Sockets.SafeSocketHandle");
                return handleType != null && !handleType.IsPublic && !handleType.IsNestedPublic;
            }
            catch (Exception)
            {
                return false;
            }
#endif
        }

        /// <summary>True when this runtime's Socket.Dispose unblocks calls that hold the socket's handle (CoreCLR: SafeSocketHandle.TryUnblockSocket).</summary>
        private static bool RuntimeWakesHeldReceives()
        {
#if NET8_0_OR_GREATER
            return true;
#else
            try
            {
                // .NET Core 3.0 and later; absent from Mono's and Unity's class libraries.
                Type? handleType = typeof(Socket).Assembly.GetType("System.Net.Sockets.SafeSocketHandle");
                return handleType?.GetMethod("TryUnblockSocket", System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.NonPublic) != null;
            }
            catch (Exception)
            {
                return false;
            }
#endif
        }
    }
}
