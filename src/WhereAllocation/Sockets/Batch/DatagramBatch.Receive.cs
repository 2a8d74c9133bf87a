#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Receiving: <see cref="Receive(Socket, int)"/> empties the batch and fills its slots from the socket, by <c>recvmmsg</c>,
    /// by coalesced receive (DatagramBatch.CoalescedReceive.cs) or slot by slot (DatagramBatch.SingleCalls.cs).
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>
        /// Receives the datagrams already queued on <paramref name="socket"/>, up to <see cref="Capacity"/>, without
        /// waiting, and returns how many (0 when none is queued; no exception). They replace the batch's contents.
        /// Does not depend on <see cref="Socket.Blocking"/>.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error (for example ConnectionReset on a connected socket). An error met after some datagrams were taken is reported by the next receive, so no datagram is lost.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed.</exception>
        public int Receive(Socket socket) => Receive(socket, 0);

        /// <summary>
        /// Waits up to <paramref name="timeoutMilliseconds"/> for at least one datagram, then receives every
        /// datagram queued, up to <see cref="Capacity"/>, and returns how many; 0 when the time passed with
        /// nothing to read (no exception). They replace the batch's contents. 0 ms does not wait,
        /// <see cref="Timeout.Infinite"/> (-1) waits until a datagram comes or the socket is disposed.
        /// <see cref="Socket.Blocking"/> and <see cref="Socket.ReceiveTimeout"/> are not consulted.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="timeoutMilliseconds"/> is less than -1.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="InvalidOperationException">The socket is neither bound nor connected.</exception>
        /// <exception cref="SocketException">The OS reported an error. An error met after some datagrams were taken is reported by the next receive.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed (also while waiting).</exception>
        public int Receive(Socket socket, int timeoutMilliseconds)
        {
            ThrowIfDisposed();
            SocketArguments.CheckReceive(socket, SocketFlags.None, null);
            if (timeoutMilliseconds < Timeout.Infinite) throw SocketArguments.Refused(socket, new ArgumentOutOfRangeException(nameof(timeoutMilliseconds), timeoutMilliseconds, "The timeout is -1 (infinite) or more."));
            if (_deferredError != SocketError.Success)
            {
                SocketError error = _deferredError;
                _deferredError = SocketError.Success;
                throw new SocketException((int)error);
            }
            EndReader(); // the received datagrams replace what a reader would still read
            EnterBlock();
            try
            {
                return ReceiveHoldingBlock(socket, timeoutMilliseconds);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>Receive's work on the block, under the reference that <see cref="Receive(Socket, int)"/> holds.</summary>
        private int ReceiveHoldingBlock(Socket socket, int timeoutMilliseconds)
        {
            PrepareForReceive();
            DatagramPath path = DatagramPathSettings.Active; // once per call: every slot of one call takes the same path
            int received = _mode == DatagramBatchMode.SingleCalls && path != DatagramPath.Native
                ? ReceiveOnRuntimePath(socket, path, timeoutMilliseconds)
                : ReceiveNative(socket, timeoutMilliseconds);
            _count = received;
            _nextToSend = received; // received datagrams are not for sending
            if (_receivedSince < received) _receivedSince = received;
            return received;
        }

        /// <summary>
        /// Restores what the last calls changed in the headers that a receive reads, and empties the batch. A receive reads a
        /// slot's msg_namelen (its room for the sender) and its iovec's length; it only writes msg_len and msg_flags. So a slot a
        /// receive filled needs its msg_namelen back, and only a slot filled for sending needs its iovec back too.
        /// </summary>
        private void PrepareForReceive()
        {
            int i = 0;
            for (; i < _addedSince; i++)
            {
                _messages[i].Header.NameLength = SockaddrLayout.StorageSize;
                _iovecs[i].Length = (nuint)_slotSize;
            }
            for (; i < _receivedSince; i++) _messages[i].Header.NameLength = SockaddrLayout.StorageSize;
            _addedSince = 0;
            _receivedSince = 0;
            _pendingFamilies = 0;
            _count = 0;
            _nextToSend = 0;
            _failed = 0;
        }

        private int ReceiveNative(Socket socket, int timeoutMilliseconds)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            if (handle == null) throw new ObjectDisposedException(typeof(Socket).FullName); // Mono's DuplicateAndClose took it
            bool socketAdded = false;
            bool counted = false;
            try
            {
                handle.DangerousAddRef(ref socketAdded); // throws ObjectDisposedException for a disposed socket
                SocketHandles.ThrowIfDisposedWhileHeld(socket);
                IntPtr raw = handle.DangerousGetHandle();
                long start = timeoutMilliseconds > 0 ? Stopwatch.GetTimestamp() : 0;
                bool waited = false;
                // A wait without a limit, in recvmmsg mode, where the kernel can wait (NativeDatagramIO.ReceiveWaitsInKernel): the
                // first call waits for the first datagram and takes every one queued with it, one call per batch. A limit is this
                // call's own, not the socket's SO_RCVTIMEO, so a wait with one polls.
                bool inKernel = timeoutMilliseconds == Timeout.Infinite && _mode == DatagramBatchMode.MultiMessage && !_coalescedReceive && !HasSpilled
                    && NativeDatagramIO.ReceiveWaitsInKernel && NativeDatagramIO.DisposeWakesKernelWait(handle);
                if (inKernel && SocketHandles.CountKernelWaits && !NativeDatagramIO.KernelWaitsWatched)
                {
                    // Counted only for the tests (see SocketHandles.CountKernelWaits; on Mono each kernel call counts itself with its
                    // registration, see ReceiveManyWatched); a fall back to slices counts itself below.
                    SocketHandles.EnterWait();
                    counted = true;
                }
                while (true)
                {
                    SocketError error;
                    int received = _coalescedReceive || HasSpilled ? ReceiveCoalesced(raw, out error)
                        : _mode != DatagramBatchMode.MultiMessage ? ReceiveSingleCallsNative(raw, out error)
                        : inKernel ? (NativeDatagramIO.KernelWaitsWatched ? ReceiveManyWatched(socket, raw, out error) : OsSocketCalls.InUse.ReceiveManyWaiting(raw, _messages, _capacity, out error))
                        : OsSocketCalls.InUse.ReceiveMany(raw, _messages, _capacity, out error);
                    if (inKernel && received > 0 && _messages[0].Length == 0 && _messages[0].Header.NameLength == 0)
                    {
                        // Not a datagram: the receiving side was shut down (by Shutdown, or by CoreCLR's Dispose waking this wait).
                        // The kernel wrote the slot's room for a sender as 0: give it back for the next receive.
                        _messages[0].Header.NameLength = SockaddrLayout.StorageSize;
                        received = -1;
                        error = SocketError.Shutdown;
                    }
                    if (received > 0) return received;
                    if (error == SocketError.Interrupted && !inKernel) continue;
                    if (inKernel)
                    {
                        // The kernel's wait ended without a datagram: the socket's own SO_RCVTIMEO passed, or its descriptor is in
                        // non-blocking mode, or a signal interrupted it. The rest of this wait, which has no limit, goes on in
                        // slices, which ask between them whether the socket was disposed.
                        inKernel = false;
                        if (error == SocketError.Interrupted) error = SocketError.WouldBlock;
                    }
                    // Nothing queued, on a socket that may be shut down for receiving: it polls readable then, and a wait would spin.
                    // Asked when a wait said readable, or when the call does not wait: a first wait on such a socket answers at once.
                    if (error == SocketError.WouldBlock && (waited || timeoutMilliseconds == 0) && OsSocketCalls.InUse.IsReceiveShutDown(raw)) error = SocketError.Shutdown;
                    if (error != SocketError.WouldBlock) throw SocketWaits.Failure(socket, error);
                    int remaining = SocketWaits.Remaining(start, timeoutMilliseconds);
                    if (remaining == 0) return 0;
                    if (waited) SocketWaits.PauseAfterEmptyReadiness(socket, handle); // readable, yet nothing came: no busy loop
                    if (!counted)
                    {
                        // Counted as waiting until the handle is released (see NativeDatagramIO.Receive): a call on another thread
                        // after a Dispose finds the socket disposed even while this one, woken, still holds the handle.
                        SocketHandles.EnterWait();
                        counted = true;
                    }
                    if (!SocketWaits.TryWaitUntil(socket, raw, handle, false, remaining)) return 0;
                    waited = true;
                }
            }
            finally
            {
                if (socketAdded) handle.DangerousRelease();
                if (counted) SocketHandles.ExitWait();
            }
        }

        /// <summary>
        /// The kernel's wait for the batch, registered with <see cref="KernelWaitWatchdog"/> for its length (Mono on Linux, where the
        /// runtime's Dispose wakes no call that holds the handle); with every slot taken, the call that does not wait, whose
        /// "nothing queued" the caller takes for a kernel wait that ended without a datagram and goes on in slices.
        /// </summary>
        private int ReceiveManyWatched(Socket socket, IntPtr raw, out SocketError error)
        {
            int slot = -1;
            try
            {
                try { } finally { slot = KernelWaitWatchdog.Enter(socket); } // see NativeDatagramIO.ReceiveWatched
                if (slot < 0) return OsSocketCalls.InUse.ReceiveMany(raw, _messages, _capacity, out error);
                return OsSocketCalls.InUse.ReceiveManyWaiting(raw, _messages, _capacity, out error);
            }
            finally
            {
                if (slot >= 0) KernelWaitWatchdog.Exit(slot); // also when the thread is aborted in the wait
            }
        }
    }
}
