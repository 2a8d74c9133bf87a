#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>What a caller of a receive that may find nothing queued wants done then (the native path's receives).</summary>
    [Flags]
    internal enum ReceiveWaitKind : byte
    {
        /// <summary>Never waits: nothing queued is answered at once, after asking whether the socket was shut down for receiving (the Try forms).</summary>
        Tries = 0,

        /// <summary>May wait: a blocking socket waits for a datagram, up to its receive timeout.</summary>
        Waits = 1,

        /// <summary>The caller learns a shutdown for receiving otherwise (an await's poller reports it): nothing queued is only that.</summary>
        ShutdownReported = 2,

        /// <summary>A readiness report of the caller's just said readable (an await's poller): the OS's receive need not ask again (<see cref="OsSocketCalls.ReceiveAfterReadiness"/>).</summary>
        Readied = 4,
    }

    /// <summary>How one receive of a <see cref="IWaitingReceive"/> is made.</summary>
    internal enum ReceiveStep : byte
    {
        /// <summary>Without waiting: whatever is queued, or WouldBlock.</summary>
        Try,

        /// <summary>Waiting in the kernel for the first datagram (on a descriptor in blocking mode), then taking what came without waiting.</summary>
        InKernel,

        /// <summary>Without waiting, right after a wait said the socket was readable (see <see cref="OsSocketCalls.ReceiveAfterReadiness"/>).</summary>
        AfterReadiness,
    }

    /// <summary>
    /// One form of the native path's receive (one datagram, a batch's <c>recvmmsg</c>, its slot-by-slot calls, its coalesced
    /// receive), as <see cref="ReceiveLoop"/> drives it: a struct, so that the loop is instantiated for each form at compile
    /// time (no boxing, no code made at run time).
    /// </summary>
    internal interface IWaitingReceive
    {
        /// <summary>
        /// One receive of the form, made as <paramref name="step"/> says, on the descriptor <paramref name="raw"/> (its handle
        /// held): the bytes (one datagram) or datagrams (a batch) received, 0 or more; or -1 with <paramref name="error"/>
        /// (WouldBlock: nothing queued; Shutdown: the socket was shut down for receiving, see <see cref="ReceiveShutdown.IsReport"/>).
        /// </summary>
        long Receive(IntPtr raw, ReceiveStep step, out SocketError error);
    }

    /// <summary>
    /// The one loop of the native path's receives that may wait, shared by the one-call receive, the batch in each mode and the
    /// coalesced batch: the kernel's wait where <see cref="WaitPolicy"/> says so, then slices (<see cref="SocketWaits.TryWaitUntil"/>)
    /// that a Dispose ends; the question whether the socket was shut down for receiving where <see cref="ReceiveShutdown"/> says;
    /// the pause after a readiness that brought nothing; the library's count of waits; and one deadline for the whole call.
    /// Allocates nothing unless it throws.
    /// </summary>
    internal static class ReceiveLoop
    {
        /// <summary>A limit: the socket's own receive timeout (SO_RCVTIMEO, 0 for none), read when first needed.</summary>
        internal const int SocketTimeout = int.MinValue;

        /// <summary>What <see cref="Run"/> returns when its limit passed with nothing received.</summary>
        internal const long LimitPassed = -2;

        /// <summary>A hand-over for <see cref="Run"/>: the caller's own try (MSG_DONTWAIT) just found nothing queued.</summary>
        internal const long TriedNothing = -1;

        /// <summary>
        /// Receives with <paramref name="form"/> on <paramref name="socket"/>: what the form received (0 or more), -1 with
        /// <paramref name="error"/>, or <see cref="LimitPassed"/>. <paramref name="limit"/>: 0, never wait; -1, no limit; a
        /// number of milliseconds, from this call on; <see cref="SocketTimeout"/>, the socket's own receive timeout, from the
        /// first wait on. <paramref name="handover"/>: 0, nothing; <see cref="TriedNothing"/>; or a Stopwatch timestamp: the
        /// caller's own wait in the kernel began then and ended without a datagram, and this call goes on from there (in slices,
        /// with one deadline from that start).
        /// </summary>
        /// <exception cref="ObjectDisposedException">The socket was disposed (before, or during a wait).</exception>
        /// <exception cref="SocketException">A wait's poll failed, or the socket hung up during a wait.</exception>
        internal static long Run<TForm>(ref TForm form, Socket socket, int limit, ReceiveWaitKind kind, long handover, out SocketError error)
            where TForm : struct, IWaitingReceive
        {
            SafeHandle handle = SocketHandles.Get(socket);
            // No handle: Mono's DuplicateAndClose gave it away, and the Socket is closed for this process (a wait of the one-call
            // receive that the watchdog interrupted for it comes here). The one-call receive's own path does not ask: a test on
            // every datagram costs Mono's receive 4 to 11 instructions (bench/ReceiveCost), and there Mono's own calls throw
            // NullReferenceException as that path then does.
            if (handle == null) throw new ObjectDisposedException(typeof(Socket).FullName);
            bool waits = limit != 0;
            bool inKernel = waits && (limit == -1 || limit == SocketTimeout) && WaitPolicy.WaitsInKernelOn(handle);
            bool nothingQueued = handover == TriedNothing;
            long start = limit > 0 ? Stopwatch.GetTimestamp() : 0;
            if (handover > 0)
            {
                // The caller's kernel wait ended without a datagram: the branch for that below, timed from its start.
                start = handover;
                inKernel = true;
                nothingQueued = true;
            }
            else if (inKernel && nothingQueued && WaitPolicy.StartKernelRun())
            {
                // Mono: the caller tried first and found nothing queued. The kernel waits now, and the next one-call receives go
                // straight to its wait until a run of them has passed.
                nothingQueued = false;
            }
            int timeout = limit == SocketTimeout ? SocketTimeout : limit; // SocketTimeout: not read yet
            bool readied = (kind & ReceiveWaitKind.Readied) != 0; // a wait said readable before this receive
            bool counted = false;
            bool added = false;
            long received;
            try
            {
                SocketHandles.ThrowIfDisposedWhileHeld(socket); // before the reference: see there
                handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                IntPtr raw = handle.DangerousGetHandle();
                if (inKernel && start == 0) start = Stopwatch.GetTimestamp();
                while (true)
                {
                    if (nothingQueued)
                    {
                        nothingQueued = false;
                        received = -1;
                        error = SocketError.WouldBlock;
                    }
                    else
                    {
                        received = inKernel ? InKernel(ref form, socket, raw, ref counted, out error)
                            : form.Receive(raw, readied ? ReceiveStep.AfterReadiness : ReceiveStep.Try, out error);
                    }
                    if (received >= 0) break;
                    if ((error == SocketError.Interrupted && !inKernel) || OsSocketCalls.InUse.IsResetReportToSkip(raw, error)) continue;
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
                        if (timeout == SocketTimeout) timeout = OsSocketCalls.InUse.ReceiveTimeoutMilliseconds(raw);
                        error = SocketError.WouldBlock;
                    }
                    if (error == SocketError.WouldBlock && ReceiveShutdown.AsksAfterNothing(kind, readied, waits) && ReceiveShutdown.IsShutDown(raw))
                    {
                        received = ReceiveShutdown.Reported(out error);
                        break;
                    }
                    if (error != SocketError.WouldBlock || !waits) break;
                    // One timeout for the whole call, however many waits it takes.
                    if (timeout == SocketTimeout) timeout = OsSocketCalls.InUse.ReceiveTimeoutMilliseconds(raw);
                    if (start == 0) start = Stopwatch.GetTimestamp();
                    // Counted as waiting until the handle is released: a call on another thread after a Dispose finds the socket
                    // disposed even while this one, woken, still holds the handle (Mono: SocketHandles.ThrowIfDisposedWhileHeld).
                    SocketHandles.EnterWait(ref counted);
                    if (readied) SocketWaits.PauseAfterEmptyReadiness(socket, handle); // readable, yet nothing came: no busy loop
                    int remaining = SocketWaits.Remaining(start, timeout > 0 ? timeout : -1);
                    if (remaining == 0 || !SocketWaits.TryWaitUntil(socket, raw, handle, false, remaining, ref counted))
                    {
                        received = LimitPassed;
                        error = SocketError.TimedOut;
                        break;
                    }
                    readied = true;
                }
            }
            finally
            {
                SocketHandles.ReleaseThenExitWait(handle, ref added, counted);
            }
            return received;
        }

        /// <summary>
        /// The form's receive that waits in the kernel, on a socket whose handle the caller holds: registered with the watchdog
        /// for its length where the watchdog wakes kernel waits (Mono on Linux; with every slot taken, the receive that does not
        /// wait, whose "nothing queued" the caller takes for a kernel wait that ended without a datagram and goes on in slices);
        /// elsewhere counted among the library's waits only for the tests (<see cref="SocketHandles.CountKernelWaits"/>), since
        /// CoreCLR's handle refuses new references once its Socket is disposed. A wait counted in sets <paramref name="counted"/>,
        /// and the caller counts it out (<see cref="SocketHandles.ExitWait"/>) after it released the handle, not before:
        /// see <see cref="SocketHandles.ThrowIfDisposedWhileHeld"/>.
        /// </summary>
        internal static long InKernel<TForm>(ref TForm form, Socket socket, IntPtr raw, ref bool counted, out SocketError error)
            where TForm : struct, IWaitingReceive
        {
            if (WaitPolicy.WatchdogWakes)
            {
                int slot = -1;
                try
                {
                    // In a finally clause, which Mono's Thread.Abort does not interrupt: the claim, its slot number and the count
                    // are never parted.
                    try { } finally { slot = KernelWaitWatchdog.Enter(socket, ref counted); }
                    return form.Receive(raw, slot < 0 ? ReceiveStep.Try : ReceiveStep.InKernel, out error);
                }
                finally
                {
                    // Also when the thread is aborted in the wait (Mono's Thread.Abort, Unity's domain reload interrupt the call):
                    // a slot left claimed would keep the watchdog ticking for ever, and 64 of them would leave none.
                    if (slot >= 0) KernelWaitWatchdog.Exit(slot);
                }
            }
            if (SocketHandles.CountKernelWaits) SocketHandles.EnterWait(ref counted);
            return form.Receive(raw, ReceiveStep.InKernel, out error);
        }
    }
}
