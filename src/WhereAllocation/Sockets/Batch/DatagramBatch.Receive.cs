#nullable enable
using System;
using System.Net.Sockets;
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

        /// <summary>
        /// The native path's receive, in the loop every native receive shares (<see cref="ReceiveLoop"/>): a wait without a limit
        /// waits in the kernel where <see cref="WaitPolicy"/> says so (in every mode: <c>recvmmsg</c> with MSG_WAITFORONE, the
        /// first <c>recvfrom</c> of the slot-by-slot calls, the first <c>recvmsg</c> of a coalesced receive, each without
        /// MSG_DONTWAIT, then taking what is queued with the first datagram without waiting); a limit is this call's own, not
        /// the socket's SO_RCVTIMEO, so a wait with one polls in slices.
        /// </summary>
        private int ReceiveNative(Socket socket, int timeoutMilliseconds)
        {
            var form = new NativeReceive(this);
            long received = ReceiveLoop.Run(ref form, socket, timeoutMilliseconds, ReceiveWaitKind.Waits, 0, out SocketError error);
            if (received > 0) return (int)received;
            if (received == ReceiveLoop.LimitPassed || error == SocketError.WouldBlock) return 0;
            throw SocketWaits.Failure(socket, error);
        }

        /// <summary>The batch's native receive in its mode, as <see cref="ReceiveLoop"/> drives it (see <see cref="ReceiveStep"/>): datagrams taken, or -1 with the error.</summary>
        private readonly struct NativeReceive : IWaitingReceive
        {
            private readonly DatagramBatch _batch;

            internal NativeReceive(DatagramBatch batch)
            {
                _batch = batch;
            }

            public long Receive(IntPtr raw, ReceiveStep step, out SocketError error)
            {
                DatagramBatch batch = _batch;
                int received = batch._coalescedReceive || batch.HasSpilled ? batch.ReceiveCoalesced(raw, step == ReceiveStep.InKernel, out error)
                    : batch._mode != DatagramBatchMode.MultiMessage ? batch.ReceiveSingleCallsNative(raw, step, out error)
                    : batch.ReceiveMany(raw, step == ReceiveStep.InKernel, out error);
                return received > 0 ? received : -1;
            }
        }

        /// <summary><c>recvmmsg</c> into every slot: without waiting, or (<paramref name="inKernel"/>) waiting in the kernel for the first datagram (MSG_WAITFORONE).</summary>
        private int ReceiveMany(IntPtr raw, bool inKernel, out SocketError error)
        {
            OsSocketCalls os = OsSocketCalls.InUse;
            if (!inKernel) return os.ReceiveMany(raw, _messages, _capacity, out error);
            int received = os.ReceiveManyWaiting(raw, _messages, _capacity, out error);
            if (received > 0 && ReceiveShutdown.IsReport(_messages[0].Length, (int)_messages[0].Header.NameLength))
            {
                // Not a datagram: the receiving side was shut down (by Shutdown, or by a Dispose waking this wait: CoreCLR's, or
                // the watchdog's). The kernel wrote the slot's room for a sender as 0: give it back for the next receive.
                _messages[0].Header.NameLength = SockaddrLayout.StorageSize;
                return (int)ReceiveShutdown.Reported(out error);
            }
            return received;
        }
    }
}
