using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The receiving thread of a segment: one loop per receive member, each handing every datagram to the
    /// <see cref="Checker"/> and telling the <see cref="FlowWindow"/>. It stops when it has taken the planned
    /// count, when the sender is done and everything it sent has been taken, after <see cref="IdleStopMs"/>
    /// without a datagram once the sender is done, after <see cref="StallMs"/> without one at all, or when the
    /// main thread says so. Every wait is bounded: SO_RCVTIMEO for the blocking members, Socket.Poll with a
    /// timeout for the members that never wait, 200 ms for the batch's own wait.
    /// </summary>
    internal sealed unsafe class Receiver
    {
        internal const int BufferSize = 2048;
        internal const int BatchCapacity = 64;
        private const int IdleStopMs = 1000;
        private const int StallMs = 10000;
        private const int PollMicroseconds = 100000;
        private const int BatchWaitMs = 200;

        private readonly Segment _segment;
        private readonly Socket _socket;
        private readonly IPEndPointNonAlloc _endPoint;
        private readonly FlowWindow _window;
        private readonly Checker _check;
        private readonly ManualResetEventSlim _go;
        private readonly byte[] _buffer = new byte[BufferSize];
        private readonly DatagramBatch? _batch;
        private long _idleTaken = -1, _idleStart;
        private volatile bool _abort;

        internal Receiver(Segment segment, SegmentSockets sockets, FlowWindow window, Checker check, ManualResetEventSlim go)
        {
            _segment = segment;
            _socket = sockets.Receiver;
            _endPoint = sockets.ReceiveEndPoint;
            _window = window;
            _check = check;
            _go = go;
            if (segment.IsBatch) _batch = new DatagramBatch(BatchCapacity, DatagramBatch.DefaultSlotSize, segment.Mode);
        }

        /// <summary>Managed bytes this thread allocated from the start signal to the end of its loop.</summary>
        internal long AllocatedBytes { get; private set; }

        /// <summary>An exception that ended the loop (a harness or library failure), else null.</summary>
        internal Exception? Failure { get; private set; }

        internal void Abort() => _abort = true;

        internal void Run()
        {
            _go.Wait();
            long before = GC.GetAllocatedBytesForCurrentThread();
            try
            {
                switch (_segment.Receive)
                {
                    case ReceiveForm.R5:
                    case ReceiveForm.R6: TryLoop(); break;
                    case ReceiveForm.B1:
                    case ReceiveForm.B2: BatchLoop(); break;
                    default: BlockingLoop(); break;
                }
            }
            catch (Exception e)
            {
                Failure = e;
            }
            AllocatedBytes = GC.GetAllocatedBytesForCurrentThread() - before;
            _batch?.Dispose();
        }

        /// <summary>R1-R4: blocking calls; an empty queue ends a call with TimedOut after SO_RCVTIMEO.</summary>
        private void BlockingLoop()
        {
            long planned = _segment.Planned;
            ReceiveForm form = _segment.Receive;
            fixed (byte* p = _buffer)
            {
                while (_check.Taken < planned)
                {
                    int length;
                    bool truncated = false;
                    EndPointKey from, also;
                    try
                    {
                        switch (form)
                        {
                            case ReceiveForm.R1:
                                length = _socket.ReceiveFrom_NonAlloc(_buffer, 0, _buffer.Length, SocketFlags.None, _endPoint);
                                from = _endPoint.CurrentKey;
                                also = PortChecked(_endPoint);
                                break;
                            case ReceiveForm.R2:
                                length = _socket.ReceiveFrom_NonAlloc(_buffer, _endPoint);
                                from = _endPoint.CurrentKey;
                                also = PortChecked(_endPoint);
                                break;
                            case ReceiveForm.R3:
                                length = _socket.ReceiveFrom_NonAlloc(_buffer, 0, _buffer.Length, SocketFlags.None, out from);
                                also = from;
                                break;
                            default:
                                ReceivedDatagram d = _socket.ReceiveFrom_NonAlloc(new Span<byte>(_buffer), SocketFlags.None);
                                length = d.Length;
                                truncated = d.Truncated;
                                from = d.RemoteEndPoint;
                                also = from;
                                break;
                        }
                    }
                    catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
                    {
                        if (ShouldStop()) break;
                        continue;
                    }
                    catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                    {
                        _check.AccountTruncatedByError();
                        _window.Took(1);
                        continue;
                    }
                    catch (SocketException)
                    {
                        _check.ReceiveErrors++;
                        if (ShouldStop()) break;
                        continue;
                    }
                    _check.Account(p, length, from, also, truncated);
                    _window.Took(1);
                }
            }
        }

        /// <summary>R5, R6: calls that never wait; Socket.Poll (bounded) when the queue is empty.</summary>
        private void TryLoop()
        {
            long planned = _segment.Planned;
            bool withEndPoint = _segment.Receive == ReceiveForm.R5;
            fixed (byte* p = _buffer)
            {
                while (_check.Taken < planned)
                {
                    bool got;
                    ReceivedDatagram d;
                    try
                    {
                        got = withEndPoint
                            ? _socket.TryReceiveFrom_NonAlloc(_buffer, 0, _buffer.Length, SocketFlags.None, _endPoint, out d)
                            : _socket.TryReceiveFrom_NonAlloc(new Span<byte>(_buffer), SocketFlags.None, out d);
                    }
                    catch (SocketException)
                    {
                        _check.ReceiveErrors++;
                        if (ShouldStop()) break;
                        continue;
                    }
                    if (!got)
                    {
                        if (ShouldStop()) break;
                        _socket.Poll(PollMicroseconds, SelectMode.SelectRead);
                        continue;
                    }
                    EndPointKey also = withEndPoint ? PortChecked(_endPoint) : d.RemoteEndPoint;
                    _check.Account(p, d.Length, d.RemoteEndPoint, also, d.Truncated);
                    _window.Took(1);
                }
            }
        }

        /// <summary>B1 (never waits; Socket.Poll when empty) and B2 (waits up to 200 ms itself).</summary>
        private void BatchLoop()
        {
            long planned = _segment.Planned;
            bool waits = _segment.Receive == ReceiveForm.B2;
            DatagramBatch batch = _batch!;
            while (_check.Taken < planned)
            {
                int n;
                try
                {
                    n = waits ? batch.Receive(_socket, BatchWaitMs) : batch.Receive(_socket);
                }
                catch (SocketException)
                {
                    _check.ReceiveErrors++;
                    if (ShouldStop()) break;
                    continue;
                }
                if (n == 0)
                {
                    if (ShouldStop()) break;
                    if (!waits) _socket.Poll(PollMicroseconds, SelectMode.SelectRead);
                    continue;
                }
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> data = batch.GetDatagram(i, out EndPointKey from);
                    // Not data[i]: Mono 6.8 lacks ReadOnlySpan's ref readonly indexer (see CONTRIBUTING).
                    fixed (byte* p = &MemoryMarshal.GetReference(data))
                    {
                        _check.Account(p, data.Length, from, from, batch.IsTruncated(i));
                    }
                }
                _window.Took(n);
            }
        }

        /// <summary>The endpoint's key, or an empty key (a wrong sender) when its always-current IPEndPoint.Port disagrees.</summary>
        private static EndPointKey PortChecked(IPEndPointNonAlloc endPoint)
            => endPoint.Port == endPoint.CurrentKey.Port ? endPoint.CurrentKey : default;

        /// <summary>Called when a wait brought nothing: true when the loop should end.</summary>
        private bool ShouldStop()
        {
            if (_abort) return true;
            long now = Stopwatch.GetTimestamp();
            long taken = _check.Taken;
            if (taken != _idleTaken)
            {
                _idleTaken = taken;
                _idleStart = now;
            }
            if (_window.SenderDone && taken >= _window.Sent) return true;
            long idleMs = (now - _idleStart) * 1000 / Stopwatch.Frequency;
            return idleMs >= (_window.SenderDone ? IdleStopMs : StallMs);
        }
    }
}
