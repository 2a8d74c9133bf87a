#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// <see cref="DatagramPath.Native"/>: one datagram per system call, straight to the OS on the socket's
    /// descriptor, through the OS's own calls (<see cref="OsSocketCalls.InUse"/>). This class is the same on every OS:
    /// it holds a reference on the socket's handle for the length of a call (so a concurrent Dispose cannot close the
    /// descriptor, or let the OS reuse its number, under it), written out rather than through
    /// <see cref="SocketHandles.Hold"/> because each Mono instruction of a datagram's call counts (bench/ReceiveCost,
    /// bench/SendCost); waits when the caller may block (in the kernel where that is safe, see
    /// <see cref="ReceiveWaitsInKernel"/>; else in slices, <see cref="SocketWaits.TryWaitUntil"/>), and turns the OS's
    /// answer into a datagram, a sender and errors. Calls made once per socket are <see cref="NativeSocketAdmin"/>'s.
    /// The sender's sockaddr lands in a stack buffer; the payload is pinned with <c>fixed</c>. Nothing is
    /// allocated unless an exception is thrown.
    /// </summary>
    internal static unsafe class NativeDatagramIO
    {
        // OsSocketCalls.InUse, kept here so that the per-datagram calls read a field of their own class. Not readonly: a test can
        // put an OS in between that injects what Linux never reports (Windows' reset reports); see OsInUseChanged.
        private static OsSocketCalls s_os = OsSocketCalls.InUse;

        // What is fixed for the process is read from the OS the process runs on (OsSocketCalls.Current), never from InUse: this
        // class may start while a test has another OS in between (its first touch in a suite whose order varies), and a
        // foreign sockaddr layout or a failed probe kept for good made every later native call fail (seen: EAFNOSUPPORT on every
        // send after ShardApiTests' stand-in Darwin ran first).

        /// <summary>The sockaddr layout of this OS.</summary>
        internal static readonly SockaddrFormat Format = OsSocketCalls.Current.Format;

        // Null when the OS's calls answer; else why not (an unknown OS, a closed platform, or the exception P/Invoke threw).
        private static readonly string? s_callsFailure = OsSocketCalls.Current.Probe();

        private static readonly bool s_callsWork = s_callsFailure == null;

        /// <summary>Null when the native path can run here; otherwise why it cannot, for diagnostics and the fallback report.</summary>
        internal static string? UnavailableReason => !s_callsWork ? s_callsFailure : !SocketHandles.Available ? SocketHandles.NoWayMessage : null;

        /// <summary>True when the OS's own calls answer through P/Invoke in this process (a known OS, its C library reached).</summary>
        internal static bool OsCallsWork => s_callsWork;

        /// <summary>True when the native path can run here: a known OS whose socket library P/Invoke reaches, and a way to the socket's handle.</summary>
        internal static bool IsSupported => s_callsWork && SocketHandles.Available;

        /// <summary>What <see cref="IsSupported"/> said at start, before any test forced a way to the handle: the default path follows it.</summary>
        internal static bool SupportedAtStart => s_callsWork && SocketHandles.FoundAtStart;

        /// <summary>True when the OS's calls work but no way to the socket's handle was found at start: the native path is lost only for that.</summary>
        internal static bool HandleMissing => s_callsWork && !SocketHandles.FoundAtStart;

        /// <summary>
        /// Takes <see cref="OsSocketCalls.InUse"/> again after a test set it, and derives again what this class derives from
        /// it (whether receives wait in the kernel). Only that setter calls it.
        /// </summary>
        internal static void OsInUseChanged()
        {
            s_os = OsSocketCalls.InUse;
            s_receiveWaitsInKernel = s_os.HasWaitingReceive && (s_runtimeWakesHeldReceives || s_libraryWakesHeldReceives);
            s_waitFirst = WaitFirstAtStart();
        }

        // Whether a receive that may wait blocks in the kernel (see ReceiveWaitsInKernel). Not readonly: tests turn it off to run the sliced wait on CoreCLR.
        private static readonly bool s_runtimeWakesHeldReceives = RuntimeWakesHeldReceives();

        // Mono and Unity on Linux: the runtime's Dispose wakes no receive holding the handle, so the library does, through
        // KernelWaitWatchdog, with which every kernel wait registers. Needs the OS's wake-up (shutdown, which Linux carries out
        // on an unconnected datagram socket too), the Socket's disposed flag, and handles that all own their descriptors.
        private static readonly bool s_libraryWakesHeldReceives = !s_runtimeWakesHeldReceives && OsSocketCalls.Current.HasWaitingReceive
            && SocketHandles.CanReadDisposedFlag && EveryHandleOwnsItsDescriptor();

        private static bool s_receiveWaitsInKernel = s_os.HasWaitingReceive && (s_runtimeWakesHeldReceives || s_libraryWakesHeldReceives);

        // Mono on Linux: how many receives of the one-call form go on straight to the kernel's wait (registered), since the last
        // one that tried first and found nothing queued; 0: the next one tries first (MSG_DONTWAIT). Shared by every socket of
        // the process: a socket that waits sends the one-call receives of the others (busy ones too) through the registration
        // for at most 256 receives (about 75 instructions each, never a wrong result), which a per-socket count would avoid at
        // the price of a field per socket the library does not have (Socket is the runtime's). A registration costs Mono's
        // receive about 75 instructions (bench/ReceiveCost), which a queued datagram would pay for nothing, while a try that finds
        // nothing costs a system call: a server that waits pays that call once per run (1/256 of a call per datagram), and a
        // saturated one, after at most one run, tries first at the cost it always had. One field for the process, written only
        // while receives wait (a saturated server only reads it).
        // Where the runtime wakes held receives (CoreCLR) it is int.MaxValue while kernel waits are on, never counted down, and 0
        // when they are off: the one-call receive asks this one field first.
        private static int s_waitFirst = WaitFirstAtStart();
        private const int WaitFirstRun = 256;

        private static int WaitFirstAtStart() => s_receiveWaitsInKernel && !s_libraryWakesHeldReceives ? int.MaxValue : 0;

        /// <summary>True when kernel waits register with <see cref="KernelWaitWatchdog"/>, which wakes them once their socket is disposed.</summary>
        internal static bool KernelWaitsWatched => s_libraryWakesHeldReceives;

        /// <summary>
        /// True when a receive that may wait, on a socket in blocking mode, waits in the kernel: one <c>recvfrom</c> that the
        /// kernel ends when the datagram comes, the socket's own receive timeout passes, or the socket is shut down. That
        /// needs an OS with such a receive (<see cref="OsSocketCalls.HasWaitingReceive"/>) and a runtime whose Dispose wakes a
        /// receive blocked on a socket whose handle someone holds: CoreCLR's shuts the socket down again and again until the
        /// last reference is released. Mono's and Unity's close the descriptor only when the last reference goes and wake
        /// only their own calls, so there the library wakes its own waits (<see cref="KernelWaitWatchdog"/>, Linux only:
        /// <see cref="KernelWaitsWatched"/>); elsewhere a wait polls in slices and asks between them whether the socket was disposed.
        /// Tests may set it (true only where the OS has such a receive).
        /// </summary>
        internal static bool ReceiveWaitsInKernel
        {
            get => s_receiveWaitsInKernel;
            set
            {
                s_receiveWaitsInKernel = value && s_os.HasWaitingReceive;
                s_waitFirst = WaitFirstAtStart();
            }
        }

        // Mono on Linux: every handle owns its descriptor (EveryHandleOwnsItsDescriptor). Declared before its reader: static fields start in order.
        private static readonly Func<SafeHandle, bool> s_everyHandle = AlwaysOwns;

        private static bool AlwaysOwns(SafeHandle handle) => true;

        // CoreCLR's Dispose shuts the descriptor down only when the handle owns it (SafeSocketHandle.OwnsHandle, internal): a
        // Socket made over SafeSocketHandle(fd, ownsHandle: false) would leave a kernel wait waiting. Null where not found: no
        // handle counts as owning, and every wait polls in slices. Mono: every handle (see s_libraryWakesHeldReceives).
        private static readonly Func<SafeHandle, bool>? s_ownsDescriptor = s_libraryWakesHeldReceives ? s_everyHandle : s_runtimeWakesHeldReceives ? OwnershipGetter() : null;

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
        /// <see cref="KernelWaitsWatched"/>). The flag is read when the socket is first asked about, not at every receive: a flag
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
        internal static bool DisposeWakesRuntimeReceive(Socket socket) => !s_callsWork || !SocketHandles.Available || DisposeWakesKernelWait(SocketHandles.Get(socket));

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static bool AskDisposeWakesKernelWait(SafeHandle handle)
        {
            Func<SafeHandle, bool>? owns = s_ownsDescriptor;
            bool wakes = owns != null && owns(handle) && (!s_runtimeWakesHeldReceives || s_os.IsCloseOnExec(handle.DangerousGetHandle()));
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

        /// <summary>What <see cref="Receive(Socket, Span{byte}, SocketFlags, bool, IPEndPointNonAlloc, out EndPointKey, bool)"/> returns instead of a length when nothing was queued and the caller would not wait.</summary>
        internal const long NothingQueued = -1;

        /// <summary>
        /// Into <paramref name="array"/> from <paramref name="offset"/>, waiting when the socket is blocking; the sender goes to
        /// <paramref name="into"/>. What a server's receive loop runs per datagram, so a queued datagram takes this one method:
        /// the handle reference, the OS's call and the sender, without the general path's loop and its calls. Anything but a
        /// datagram (nothing queued, an interruption, a report to skip) goes on in the general path, which waits and retries;
        /// any other error is reported here, as the general path would, since the OS has already handed it over.
        /// </summary>
        internal static long Receive(Socket socket, byte[] array, int offset, int size, SocketFlags flags, IPEndPointNonAlloc into)
        {
            // A struct local rather than a stackalloc: Mono 6.8 clears a stackalloc with a rep stos (even without the localsinit
            // flag), which costs more than the four stores that clear this.
            SockaddrStorage storage;
            byte* address = (byte*)&storage;
            int addressLength = SockaddrLayout.StorageSize;
            long received;
            SocketError error;
            bool retry = false;
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            // A receive that may wait in the kernel (see ReceiveWaitsInKernel) makes that one call here; when it ends without a
            // datagram, the general path goes on from the moment it began.
            long kernelWaitStart = 0;
            fixed (byte* start = array)
            {
                try
                {
                    handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                    SocketHandles.ThrowIfDisposedWhileHeld(socket);
                    IntPtr raw = handle.DangerousGetHandle();
                    // Mono on Linux waits in the kernel only while receives keep finding nothing queued (see s_waitFirst); else
                    // it tries first, at the cost it always had, and goes on to the kernel's wait in the general path.
                    if (s_waitFirst != 0 && socket.Blocking && (s_libraryWakesHeldReceives || DisposeWakesKernelWait(handle)))
                    {
                        kernelWaitStart = Stopwatch.GetTimestamp();
                        received = ReceiveInKernel(socket, raw, start + offset, size, (flags & SocketFlags.Peek) != 0, address, &addressLength, out error);
                    }
                    else
                    {
                        received = s_os.Receive(raw, start + offset, size, (flags & SocketFlags.Peek) != 0, address, &addressLength, out error);
                    }
                    if (received < 0) retry = error == SocketError.WouldBlock || error == SocketError.Interrupted || s_os.IsResetReportToSkip(raw, error);
                    else if (received == 0 && addressLength == 0) received = ShutDown(out error);
                }
                finally
                {
                    if (added) handle.DangerousRelease();
                }
                // Nothing queued: the general path waits at once, without asking again what was just answered (after a kernel
                // wait, from when it began: one that a signal interrupted too). An interruption of a try, or a report to skip: it
                // receives again.
                if (retry)
                {
                    bool nothing = error == SocketError.WouldBlock;
                    return Receive(socket, start + offset, size, flags, true, into, out _, nothing && kernelWaitStart == 0,
                        nothing || error == SocketError.Interrupted ? kernelWaitStart : 0);
                }
            }
            if (received < 0) throw SocketWaits.Failure(socket, error, receive: true);
            into.SetCurrentFromSockaddr(address, addressLength < SockaddrLayout.StorageSize ? addressLength : SockaddrLayout.StorageSize, Format);
            return received;
        }

        /// <summary>
        /// Into <paramref name="buffer"/>; the sender goes to <paramref name="into"/> when given (<paramref name="sender"/> then stays
        /// empty), else to <paramref name="sender"/>. <paramref name="askShutdown"/> false: a receive that finds nothing queued does
        /// not ask whether the socket was shut down for receiving (an await's try, whose poller reports that itself).
        /// </summary>
        internal static long Receive(Socket socket, Span<byte> buffer, SocketFlags flags, bool wait, IPEndPointNonAlloc? into, out EndPointKey sender, bool askShutdown = true)
        {
            fixed (byte* start = buffer) return Receive(socket, start, buffer.Length, flags, wait, into, out sender, askShutdown: askShutdown);
        }

        /// <summary>
        /// Receives one datagram and returns its length, which is more than <paramref name="size"/> when it was
        /// cut (only <paramref name="size"/> bytes are stored). The common case, a datagram already queued, is one
        /// system call. With <paramref name="wait"/> false, returns <see cref="NothingQueued"/> at once when none is
        /// queued. With <paramref name="wait"/> true it waits (honouring the socket's receive timeout) when the
        /// socket is blocking, and throws WouldBlock when it is not, as the runtime does. <paramref name="nothingQueued"/>:
        /// the caller's own receive just found nothing queued, so this one starts where that answer leads. <paramref name="kernelWaitStart"/>
        /// (a Stopwatch timestamp, 0 for none): the caller's own kernel wait, begun then, just ended without a datagram.
        /// <paramref name="askShutdown"/> false: nothing queued is answered as such, without asking whether the socket was shut
        /// down for receiving (the caller learns that otherwise: an await's poller reports it).
        /// </summary>
        private static long Receive(Socket socket, byte* payload, int size, SocketFlags flags, bool wait, IPEndPointNonAlloc? into, out EndPointKey sender, bool nothingQueued = false, long kernelWaitStart = 0, bool askShutdown = true)
        {
            byte* address = stackalloc byte[SockaddrLayout.StorageSize];
            int addressLength;
            long received;
            SocketError error;
            bool peek = (flags & SocketFlags.Peek) != 0;
            SafeHandle handle = SocketHandles.Get(socket);
            // No handle: Mono's DuplicateAndClose gave it away, and the Socket is closed for this process (a wait in the one-call
            // receive that the watchdog interrupted for it comes here). The one-call receive's own path does not ask: a test on
            // every datagram costs Mono's receive 4 to 11 instructions (bench/ReceiveCost), and there Mono's own calls throw
            // NullReferenceException as that path then does.
            if (handle == null) throw new ObjectDisposedException(typeof(Socket).FullName);
            bool added = false;
            long waitStart = 0;
            int timeout = 0;
            bool started = false;   // waitStart is set
            bool timed = false;     // timeout is read
            bool polled = false;    // a wait said readable before this receive
            bool counted = false;
            // A socket in blocking mode whose receive may wait: the kernel waits (see ReceiveWaitsInKernel), one call per datagram.
            bool inKernel = wait && s_receiveWaitsInKernel && socket.Blocking && DisposeWakesKernelWait(handle);
            if (kernelWaitStart != 0)
            {
                // The caller's kernel wait ended without a datagram: this call goes on from its end (the branch for that below).
                inKernel = true;
                nothingQueued = true;
            }
            else if (inKernel && nothingQueued && s_libraryWakesHeldReceives)
            {
                // Mono: the caller tried first and found nothing queued. The kernel waits now, and the next receives go straight
                // to its wait until a run of them has passed (s_waitFirst).
                nothingQueued = false;
                s_waitFirst = WaitFirstRun;
            }
            try
            {
                handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                SocketHandles.ThrowIfDisposedWhileHeld(socket);
                IntPtr raw = handle.DangerousGetHandle();
                if (inKernel)
                {
                    waitStart = kernelWaitStart != 0 ? kernelWaitStart : Stopwatch.GetTimestamp();
                    started = true;
                    // On CoreCLR the handle refuses references after Dispose, so a kernel wait is counted only for the tests
                    // (SocketHandles.CountKernelWaits); on Mono each kernel call is counted by its registration below. Should
                    // the wait fall back to slices, those count themselves below.
                    if (SocketHandles.CountKernelWaits && !s_libraryWakesHeldReceives)
                    {
                        SocketHandles.EnterWait();
                        counted = true;
                    }
                }
                while (true)
                {
                    addressLength = SockaddrLayout.StorageSize;
                    if (nothingQueued)
                    {
                        nothingQueued = false;
                        received = -1;
                        error = SocketError.WouldBlock;
                    }
                    else
                    {
                        received = !inKernel ? s_os.Receive(raw, payload, size, peek, address, &addressLength, out error)
                            : s_libraryWakesHeldReceives ? ReceiveWatched(socket, raw, payload, size, peek, address, &addressLength, out error)
                            : s_os.ReceiveWaiting(raw, payload, size, peek, address, &addressLength, out error);
                    }
                    if (received > 0 || (received == 0 && addressLength != 0)) break;
                    if (received == 0)
                    {
                        // 0 bytes without a sender: no datagram, the receiving side was shut down (by Shutdown, or by CoreCLR's
                        // Dispose waking this receive: Failure below tells the two apart).
                        received = ShutDown(out error);
                        break;
                    }
                    if ((error == SocketError.Interrupted && !inKernel) || s_os.IsResetReportToSkip(raw, error)) continue;
                    if (inKernel)
                    {
                        if (error != SocketError.WouldBlock && error != SocketError.Interrupted) break;
                        // The kernel's wait ended without a datagram: the socket's receive timeout passed, or its descriptor is in
                        // non-blocking mode (CoreCLR leaves it so for good once an asynchronous call ran on the socket) and the
                        // receive answered at once, or a signal interrupted it (Mono stops the world with one at every collection,
                        // and Linux never restarts a receive that has SO_RCVTIMEO). The rest of the wait, if any, goes on in
                        // slices, timed from the kernel's start: a timeout that passed ends the call below, before any poll. Never
                        // the kernel's wait again, which would start the whole timeout over: collections more frequent than the
                        // timeout would keep it from ever passing.
                        inKernel = false;
                        timeout = s_os.ReceiveTimeoutMilliseconds(raw);
                        timed = true;
                        error = SocketError.WouldBlock;
                    }
                    // Nothing queued, on a socket that may be shut down for receiving: it polls readable then, and recvfrom says only
                    // "nothing queued". Asked when a wait said readable, or when the caller would not wait: a wait's first poll
                    // on such a socket answers at once, so the question costs a call only where the answer can be yes. Not at all
                    // for an await's try, whose poller reports the shutdown with the readiness (see DatagramOperation.OnReady).
                    if (error == SocketError.WouldBlock && askShutdown && (polled || !wait || !socket.Blocking) && s_os.IsReceiveShutDown(raw))
                    {
                        received = ShutDown(out error);
                        break;
                    }
                    if (error != SocketError.WouldBlock || !wait || !socket.Blocking) break;
                    if (!timed)
                    {
                        // One timeout for the whole call, however many waits it takes.
                        timeout = s_os.ReceiveTimeoutMilliseconds(raw);
                        timed = true;
                    }
                    if (!started)
                    {
                        waitStart = Stopwatch.GetTimestamp();
                        started = true;
                    }
                    if (!counted)
                    {
                        SocketHandles.EnterWait();
                        counted = true;
                    }
                    if (polled) SocketWaits.PauseAfterEmptyReadiness(socket, handle);
                    int remaining = SocketWaits.Remaining(waitStart, timeout > 0 ? timeout : -1);
                    if (remaining == 0 || !SocketWaits.TryWaitUntil(socket, raw, handle, false, remaining)) throw new SocketException((int)SocketError.TimedOut);
                    polled = true;
                }
            }
            finally
            {
                if (added) handle.DangerousRelease();
                if (counted) SocketHandles.ExitWait();
            }

            if (received >= 0)
            {
                int sockaddrLength = addressLength < SockaddrLayout.StorageSize ? addressLength : SockaddrLayout.StorageSize;
                if (into != null)
                {
                    into.SetCurrentFromSockaddr(address, sockaddrLength, Format);
                    sender = default;
                }
                else
                {
                    EndPointKey.TryReadSockaddr(address, sockaddrLength, Format, out sender);
                }
                return received;
            }
            sender = default;
            if (error == SocketError.WouldBlock && !wait) return NothingQueued;
            throw SocketWaits.Failure(socket, error, receive: true);
        }

        /// <summary>What <see cref="TrySendArray"/> returns for a call that is not the simple case: the caller takes the general path.</summary>
        internal const int NotSimple = -2;

        /// <summary>
        /// <c>SendTo_NonAlloc</c>'s array forms in one call, for the arguments a server's send loop passes every time: a bound (or
        /// connected) IPv4/IPv6 datagram socket, a range inside the buffer, no flag but DontRoute, and a recipient of the socket's
        /// own family. Anything else returns <see cref="NotSimple"/> before any system call, and the caller's general path checks
        /// one by one and throws for the first bad argument, as it always did. Each call level costs Mono 15-20 instructions per
        /// datagram, and the general path has five.
        /// </summary>
        internal static int TrySendArray(Socket? socket, byte[]? buffer, int offset, int size, SocketFlags flags, in EndPointKey to)
        {
            if (socket == null || buffer == null || (uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset)
                || (flags & ~SocketFlags.DontRoute) != 0 || to.IsEmpty || to.AddressFamily != socket.AddressFamily
                || socket.SocketType != SocketType.Dgram || !(socket.IsBound || socket.Connected))
                return NotSimple;
            return Send(socket, new ReadOnlySpan<byte>(buffer, offset, size), flags, to);
        }

        /// <summary>
        /// Sends one datagram to <paramref name="to"/> (a key of the socket's family, not empty) and returns the
        /// bytes sent. The common case, room in the send buffer, is one system call; when the buffer is full a
        /// blocking socket waits for room and a non-blocking one throws WouldBlock. With <paramref name="wait"/>
        /// false it never waits and returns <see cref="NothingQueued"/> instead when there is no room.
        /// </summary>
        internal static int Send(Socket socket, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey to, bool wait = true)
        {
            // A struct local, not a stackalloc that Mono clears with a rep stos; the pointer write fills every byte it sends.
            SockaddrStorage storage;
            byte* address = (byte*)&storage;
            int addressLength = to.WriteSockaddrAt(address, Format);
            bool dontRoute = (flags & SocketFlags.DontRoute) != 0;
            long sent;
            SocketError error;
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                SocketHandles.ThrowIfDisposedWhileHeld(socket);
                IntPtr raw = handle.DangerousGetHandle();
                // Not 'fixed (byte* p = buffer)': Mono 6.8 lacks ReadOnlySpan.GetPinnableReference's
                // 'ref readonly' signature and throws MissingMethodException; GetReference is safe everywhere.
                fixed (byte* payload = &MemoryMarshal.GetReference(buffer))
                {
                    // The common case first: room in the send buffer, one call. Where the OS's send follows the socket's
                    // blocking mode (Windows), a send that must not wait asks for room first, in the loop.
                    if (wait || s_os.SendNeverWaits) sent = s_os.Send(raw, payload, buffer.Length, dontRoute, address, addressLength, out error);
                    else
                    {
                        sent = -1;
                        error = SocketError.Interrupted; // not tried yet: the loop below does
                    }
                    if (sent < 0) sent = SendAgain(socket, raw, handle, payload, buffer.Length, dontRoute, address, addressLength, wait, ref error);
                }
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
            if (sent >= 0) return (int)sent;
            if (error == SocketError.WouldBlock && !wait) return (int)NothingQueued;
            throw SocketWaits.Failure(socket, error, receive: false);
        }

        /// <summary>
        /// <see cref="Send"/> after a first try that did not go (or was not made): tries again after an interruption, waits for
        /// room on a blocking socket when the caller may wait, and gives the bytes sent or -1 with the error.
        /// </summary>
        private static long SendAgain(Socket socket, IntPtr raw, SafeHandle handle, byte* payload, int size, bool dontRoute, byte* address, int addressLength, bool wait, ref SocketError error)
        {
            while (true)
            {
                if (error == SocketError.WouldBlock)
                {
                    if (!wait || !socket.Blocking) return -1;
                    SocketWaits.WaitUntil(socket, raw, handle, true, 0);
                }
                else if (error != SocketError.Interrupted)
                {
                    return -1;
                }
                // Where the OS's send follows the socket's blocking mode (Windows), a send that must not wait asks for room first.
                if (!wait && !s_os.SendNeverWaits && s_os.Poll(raw, true, 0, out _, out _) == 0)
                {
                    error = SocketError.WouldBlock;
                    return -1;
                }
                long sent = s_os.Send(raw, payload, size, dontRoute, address, addressLength, out error);
                if (sent >= 0) return sent;
            }
        }

        /// <summary>
        /// The one-call receive's wait in the kernel, out of its method so that a queued datagram's path stays short (each Mono
        /// call level and local costs the receive instructions). On Mono it registers with the watchdog (<see cref="ReceiveWatched"/>);
        /// on CoreCLR it is counted as a library wait (<see cref="SocketHandles.EnterWait"/>) only for the tests
        /// (<see cref="SocketHandles.CountKernelWaits"/>), since its handle refuses new references once its Socket is disposed.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long ReceiveInKernel(Socket socket, IntPtr raw, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            if (s_libraryWakesHeldReceives)
            {
                // Not an interlocked decrement (a locked instruction on a line every receiving thread shares, per datagram):
                // threads that race here lose a count at most, which moves the next try first by a receive. Never below 0, though:
                // "s_waitFirst--" from two threads that both read 1 left -1, and every one-call receive of the process would then
                // have registered, never trying first, for 2^31 receives (a cost, never a wrong result).
                int left = s_waitFirst;
                if (left > 0) s_waitFirst = left - 1;
                return ReceiveWatched(socket, raw, payload, size, peek, address, addressLength, out error);
            }
            bool counted = SocketHandles.CountKernelWaits;
            if (counted) SocketHandles.EnterWait();
            long received = s_os.ReceiveWaiting(raw, payload, size, peek, address, addressLength, out error);
            if (counted) SocketHandles.ExitWait(); // a P/Invoke of errno-returning shape: it does not throw
            return received;
        }

        /// <summary>
        /// The kernel's receive, registered with <see cref="KernelWaitWatchdog"/> for its length (Mono on Linux); with every slot
        /// taken, the receive that does not wait, whose "nothing queued" the caller takes for a kernel wait that ended without a
        /// datagram and goes on in slices. The caller holds the handle's reference.
        /// </summary>
        private static long ReceiveWatched(Socket socket, IntPtr raw, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            int slot = -1;
            try
            {
                // In a finally clause, which Mono's Thread.Abort does not interrupt: the claim and its slot number are never parted.
                try { } finally { slot = KernelWaitWatchdog.Enter(socket); }
                if (slot < 0) return s_os.Receive(raw, payload, size, peek, address, addressLength, out error);
                return s_os.ReceiveWaiting(raw, payload, size, peek, address, addressLength, out error);
            }
            finally
            {
                // Also when the thread is aborted in the wait (Mono's Thread.Abort, Unity's domain reload interrupt the call):
                // a slot left claimed would keep the watchdog ticking for ever, and 64 of them would leave none.
                if (slot >= 0) KernelWaitWatchdog.Exit(slot);
            }
        }

        /// <summary>What a receive reports on a socket shut down for receiving: -1 with Shutdown.</summary>
        internal static long ShutDown(out SocketError error)
        {
            error = SocketError.Shutdown;
            return -1;
        }
    }
}
