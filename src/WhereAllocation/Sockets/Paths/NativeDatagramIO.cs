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
    /// descriptor, through the OS's own calls (<see cref="OsSocketCalls.InUse"/>). This class is the same on every OS and
    /// holds the per-datagram calls: it holds a reference on the socket's handle for the length of a call (so a concurrent
    /// Dispose cannot close the descriptor, or let the OS reuse its number, under it), written out rather than through
    /// <see cref="SocketHandles.Hold"/> because each Mono instruction of a datagram's call counts (bench/ReceiveCost,
    /// bench/SendCost), and turns the OS's answer into a datagram, a sender and errors. A receive that has to wait goes on in
    /// the loop every receive shares (<see cref="ReceiveLoop"/>, which <see cref="WaitPolicy"/> tells how to wait). Calls
    /// made once per socket are <see cref="NativeSocketAdmin"/>'s. The sender's sockaddr lands in a stack buffer; the payload
    /// is pinned with <c>fixed</c>. Nothing is allocated unless an exception is thrown.
    /// </summary>
    internal static unsafe class NativeDatagramIO
    {
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

        /// <summary>What <see cref="Receive(Socket, Span{byte}, SocketFlags, ReceiveWaitKind, IPEndPointNonAlloc, out EndPointKey)"/> returns instead of a length when nothing was queued and the caller would not wait.</summary>
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
            // A receive that may wait in the kernel (see WaitPolicy) makes that one call here; when it ends without a datagram,
            // the general path goes on from the moment it began.
            long kernelWaitStart = 0;
            fixed (byte* start = array)
            {
                try
                {
                    SocketHandles.ThrowIfDisposedWhileHeld(socket); // before the reference: see there
                    handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                    IntPtr raw = handle.DangerousGetHandle();
                    // Mono on Linux waits in the kernel only while receives keep finding nothing queued (WaitPolicy.KernelRun); else
                    // it tries first, at the cost it always had, and goes on to the kernel's wait in the general path.
                    if (WaitPolicy.KernelRun != 0 && socket.Blocking && WaitPolicy.WaitsInKernelOn(handle))
                    {
                        kernelWaitStart = Stopwatch.GetTimestamp();
                        // It releases the handle itself (added is then false), before the count of its wait ends.
                        received = ReceiveInKernel(socket, handle, raw, start + offset, size, (flags & SocketFlags.Peek) != 0, address, &addressLength, ref added, out error);
                    }
                    else
                    {
                        received = OsSocketCalls.InUse.Receive(raw, start + offset, size, (flags & SocketFlags.Peek) != 0, address, &addressLength, out error);
                    }
                    // After a kernel wait the handle is no longer held, and that wait has already skipped the reset reports.
                    if (received < 0) retry = error == SocketError.WouldBlock || error == SocketError.Interrupted || (kernelWaitStart == 0 && OsSocketCalls.InUse.IsResetReportToSkip(raw, error));
                    else if (received == 0 && addressLength == 0) received = ReceiveShutdown.Reported(out error); // ReceiveShutdown.IsReport written out: called, it costs Mono's receive 10 instructions a datagram (bench/ReceiveCost compat +153, not +143)
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
                    return Receive(socket, start + offset, size, flags, ReceiveWaitKind.Waits, into, out _,
                        kernelWaitStart == 0 ? (nothing ? ReceiveLoop.TriedNothing : 0) : nothing || error == SocketError.Interrupted ? kernelWaitStart : 0);
                }
            }
            if (received < 0) throw SocketWaits.Failure(socket, error, receive: true);
            into.SetCurrentFromSockaddr(address, addressLength < SockaddrLayout.StorageSize ? addressLength : SockaddrLayout.StorageSize, Format);
            return received;
        }

        /// <summary>
        /// Into <paramref name="buffer"/>; the sender goes to <paramref name="into"/> when given (<paramref name="sender"/> then stays
        /// empty), else to <paramref name="sender"/>. <paramref name="kind"/>: whether it may wait, and what its caller knows already
        /// (see <see cref="ReceiveWaitKind"/>).
        /// </summary>
        internal static long Receive(Socket socket, Span<byte> buffer, SocketFlags flags, ReceiveWaitKind kind, IPEndPointNonAlloc? into, out EndPointKey sender)
        {
            fixed (byte* start = buffer) return Receive(socket, start, buffer.Length, flags, kind, into, out sender, 0);
        }

        /// <summary>
        /// Receives one datagram and returns its length, which is more than <paramref name="size"/> when it was cut (only
        /// <paramref name="size"/> bytes are stored). The common case, a datagram already queued, is one system call. Without
        /// <see cref="ReceiveWaitKind.Waits"/>, returns <see cref="NothingQueued"/> at once when none is queued; with it, waits
        /// (honouring the socket's receive timeout) when the socket is blocking, and throws WouldBlock when it is not, as the
        /// runtime does. <paramref name="handover"/>: what the caller's own receive just found (see <see cref="ReceiveLoop.Run"/>).
        /// </summary>
        private static long Receive(Socket socket, byte* payload, int size, SocketFlags flags, ReceiveWaitKind kind, IPEndPointNonAlloc? into, out EndPointKey sender, long handover)
        {
            byte* address = stackalloc byte[SockaddrLayout.StorageSize];
            int addressLength = SockaddrLayout.StorageSize;
            bool wait = (kind & ReceiveWaitKind.Waits) != 0;
            var form = new OneDatagram(payload, size, (flags & SocketFlags.Peek) != 0, address, &addressLength);
            long received = ReceiveLoop.Run(ref form, socket, wait && socket.Blocking ? ReceiveLoop.SocketTimeout : 0, kind, handover, out SocketError error);
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
            if (received == ReceiveLoop.LimitPassed) throw new SocketException((int)SocketError.TimedOut);
            if (error == SocketError.WouldBlock && !wait) return NothingQueued;
            throw SocketWaits.Failure(socket, error, receive: true);
        }

        /// <summary>
        /// One datagram's receive, as <see cref="ReceiveLoop"/> drives it: into <c>payload</c>, the sender's sockaddr at
        /// <c>address</c> and its length at <c>addressLength</c> (made room for before each call). 0 bytes without a sender is
        /// no datagram but the shutdown (<see cref="ReceiveShutdown.IsReport"/>).
        /// </summary>
        private readonly struct OneDatagram : IWaitingReceive
        {
            private readonly byte* _payload;
            private readonly int _size;
            private readonly bool _peek;
            private readonly byte* _address;
            private readonly int* _addressLength;

            internal OneDatagram(byte* payload, int size, bool peek, byte* address, int* addressLength)
            {
                _payload = payload;
                _size = size;
                _peek = peek;
                _address = address;
                _addressLength = addressLength;
            }

            public long Receive(IntPtr raw, ReceiveStep step, out SocketError error)
            {
                *_addressLength = SockaddrLayout.StorageSize;
                OsSocketCalls os = OsSocketCalls.InUse;
                long received = step == ReceiveStep.Try ? os.Receive(raw, _payload, _size, _peek, _address, _addressLength, out error)
                    : step == ReceiveStep.InKernel ? os.ReceiveWaiting(raw, _payload, _size, _peek, _address, _addressLength, out error)
                    : os.ReceiveAfterReadiness(raw, _payload, _size, _peek, _address, _addressLength, out error);
                return ReceiveShutdown.IsReport(received, *_addressLength) ? ReceiveShutdown.Reported(out error) : received;
            }
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
                SocketHandles.ThrowIfDisposedWhileHeld(socket); // before the reference: see there
                handle.DangerousAddRef(ref added);
                IntPtr raw = handle.DangerousGetHandle();
                // Not 'fixed (byte* p = buffer)': Mono 6.8 lacks ReadOnlySpan.GetPinnableReference's
                // 'ref readonly' signature and throws MissingMethodException; GetReference is safe everywhere.
                fixed (byte* payload = &MemoryMarshal.GetReference(buffer))
                {
                    // The common case first: room in the send buffer, one call. Where the OS's send follows the socket's
                    // blocking mode (Windows), a send that must not wait asks for room first, in the loop.
                    OsSocketCalls os = OsSocketCalls.InUse;
                    if (wait || os.SendNeverWaits) sent = os.Send(raw, payload, buffer.Length, dontRoute, address, addressLength, out error);
                    else
                    {
                        sent = -1;
                        error = SocketError.Interrupted; // not tried yet: the loop below does
                    }
                    // It releases the handle itself (added is then false), before the count of a wait for room ends.
                    if (sent < 0) sent = SendAgain(socket, raw, handle, payload, buffer.Length, dontRoute, address, addressLength, wait, ref error, ref added);
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
        /// room on a blocking socket when the caller may wait, and gives the bytes sent or -1 with the error. Releases the
        /// caller's reference on <paramref name="handle"/> itself (<paramref name="added"/> is false after it), and only then
        /// counts a wait for room out, as <see cref="ReceiveInKernel"/> does and for its reason.
        /// </summary>
        private static long SendAgain(Socket socket, IntPtr raw, SafeHandle handle, byte* payload, int size, bool dontRoute, byte* address, int addressLength, bool wait, ref SocketError error, ref bool added)
        {
            bool counted = false;
            try
            {
                return SendAgainHeld(socket, raw, handle, payload, size, dontRoute, address, addressLength, wait, ref error, ref counted);
            }
            finally
            {
                SocketHandles.ReleaseThenExitWait(handle, ref added, counted);
            }
        }

        private static long SendAgainHeld(Socket socket, IntPtr raw, SafeHandle handle, byte* payload, int size, bool dontRoute, byte* address, int addressLength, bool wait, ref SocketError error, ref bool counted)
        {
            while (true)
            {
                if (error == SocketError.WouldBlock)
                {
                    if (!wait || !socket.Blocking) return -1;
                    SocketWaits.WaitUntil(socket, raw, handle, true, 0, ref counted);
                }
                else if (error != SocketError.Interrupted)
                {
                    return -1;
                }
                // Where the OS's send follows the socket's blocking mode (Windows), a send that must not wait asks for room first.
                OsSocketCalls os = OsSocketCalls.InUse;
                if (!wait && !os.SendNeverWaits && os.Poll(raw, true, 0, out _, out _) == 0)
                {
                    error = SocketError.WouldBlock;
                    return -1;
                }
                long sent = os.Send(raw, payload, size, dontRoute, address, addressLength, out error);
                if (sent >= 0) return sent;
            }
        }

        /// <summary>
        /// The one-call receive's wait in the kernel (<see cref="ReceiveLoop.InKernel"/>), out of its method so that a queued
        /// datagram's path stays short (each Mono call level and local costs the receive instructions). On Mono it uses one of
        /// the run of kernel waits (<see cref="WaitPolicy.KernelRun"/>). A reset report to skip (<see cref="OsSocketCalls.IsResetReportToSkip"/>,
        /// which asks the socket) is skipped here, and the wait made again, while the handle is held. Releases the caller's
        /// reference on <paramref name="handle"/> itself (<paramref name="added"/> is false after it), and only then counts its
        /// wait out: the count must cover the whole hold (see <see cref="SocketHandles.ThrowIfDisposedWhileHeld"/>), and a
        /// flag for it in the caller would cost every queued datagram's receive.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long ReceiveInKernel(Socket socket, SafeHandle handle, IntPtr raw, byte* payload, int size, bool peek, byte* address, int* addressLength, ref bool added, out SocketError error)
        {
            WaitPolicy.TakeFromKernelRun();
            var form = new OneDatagram(payload, size, peek, address, addressLength);
            bool counted = false;
            try
            {
                while (true)
                {
                    long received = ReceiveLoop.InKernel(ref form, socket, raw, ref counted, out error);
                    if (received >= 0 || !OsSocketCalls.InUse.IsResetReportToSkip(raw, error)) return received;
                }
            }
            finally
            {
                SocketHandles.ReleaseThenExitWait(handle, ref added, counted);
            }
        }
    }
}
