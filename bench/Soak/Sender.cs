using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The sending thread of a segment: it drives every sending socket of the segment in turn (one datagram
    /// per socket per turn for the single-datagram members, one batch per socket per turn for the batch), so
    /// the receiver sees its senders interleaved. Before each send it asks the <see cref="FlowWindow"/> for room.
    /// </summary>
    internal sealed unsafe class Sender
    {
        internal const int BatchCapacity = 32;
        private const int StallMs = 5000;

        private readonly Segment _segment;
        private readonly Socket[] _sockets;
        private readonly IPEndPointNonAlloc _target;
        private readonly EndPointKey _targetKey;
        private readonly FlowWindow _window;
        private readonly ManualResetEventSlim _go;
        private readonly long[] _quota;
        private readonly uint[] _next;
        private readonly int _maxLength;
        private readonly byte[] _buffer = new byte[Receiver.BufferSize];
        private readonly DatagramBatch? _batch;

        internal Sender(Segment segment, SegmentSockets sockets, FlowWindow window, long[] quota, int maxLength, ManualResetEventSlim go)
        {
            _segment = segment;
            _sockets = sockets.Senders;
            _target = sockets.Target;
            _targetKey = sockets.TargetKey;
            _window = window;
            _quota = quota;
            _next = new uint[quota.Length];
            _maxLength = maxLength;
            _go = go;
            if (segment.IsBatch) _batch = new DatagramBatch(BatchCapacity, DatagramBatch.DefaultSlotSize, segment.Mode);
        }

        /// <summary>Datagrams the send calls reported sent.</summary>
        internal long Sent { get; private set; }

        /// <summary>Send calls (or batch slots) that failed.</summary>
        internal long SendErrors { get; private set; }

        /// <summary>True when the receiver stopped taking datagrams and the sender gave up.</summary>
        internal bool GaveUp { get; private set; }

        internal long AllocatedBytes { get; private set; }

        internal Exception? Failure { get; private set; }

        internal void Run()
        {
            _go.Wait();
            long before = GC.GetAllocatedBytesForCurrentThread();
            long sent = 0;
            try
            {
                fixed (byte* p = _buffer)
                {
                    int senders = _sockets.Length, s = 0;
                    while (true)
                    {
                        int tries = 0;
                        while (_next[s] >= _quota[s] && tries < senders)
                        {
                            s = (s + 1) % senders;
                            tries++;
                        }
                        if (tries == senders) break; // every sender has sent its share
                        int chunk = _batch == null ? 1 : (int)Math.Min(BatchCapacity, _quota[s] - _next[s]);
                        if (!_window.WaitForRoom(sent, chunk, StallMs))
                        {
                            GaveUp = true;
                            break;
                        }
                        sent += _batch == null ? SendOne(s, p) : SendBatch(s, chunk);
                        s = (s + 1) % senders;
                    }
                }
            }
            catch (Exception e)
            {
                Failure = e;
            }
            Sent = sent;
            AllocatedBytes = GC.GetAllocatedBytesForCurrentThread() - before;
            _window.SetSenderDone(sent);
            _batch?.Dispose();
        }

        /// <summary>S1-S3: the next datagram of sender <paramref name="s"/>; returns 1 when it was sent.</summary>
        private int SendOne(int s, byte* p)
        {
            uint sequence = _next[s]++;
            int length = SoakDatagram.LengthOf(s, sequence, _maxLength);
            SoakDatagram.Write(p, length, _segment.Id, s, sequence);
            Socket socket = _sockets[s];
            int went;
            try
            {
                switch (_segment.Send)
                {
                    case SendForm.S1: went = socket.SendTo_NonAlloc(_buffer, 0, length, SocketFlags.None, _target); break;
                    case SendForm.S2: went = socket.SendTo_NonAlloc(new ReadOnlySpan<byte>(_buffer, 0, length), SocketFlags.None, _targetKey); break;
                    default: went = socket.SendTo_NonAlloc(_buffer, 0, length, SocketFlags.None, _targetKey); break;
                }
            }
            catch (SocketException)
            {
                SendErrors++;
                return 0;
            }
            if (went == length) return 1;
            SendErrors++;
            return 0;
        }

        /// <summary>B3: the next <paramref name="count"/> datagrams of sender <paramref name="s"/> in one batch; returns how many were sent.</summary>
        private int SendBatch(int s, int count)
        {
            DatagramBatch batch = _batch!;
            batch.Clear();
            for (int k = 0; k < count; k++)
            {
                uint sequence = _next[s]++;
                int length = SoakDatagram.LengthOf(s, sequence, _maxLength);
                batch.TryAdd(length, _targetKey, out Span<byte> slot);
                fixed (byte* q = slot)
                {
                    SoakDatagram.Write(q, length, _segment.Id, s, sequence);
                }
            }
            int went = 0;
            // A blocking socket sends the whole batch in one call; the loop is there in case it does not.
            for (int attempt = 0; attempt < 100 && batch.PendingCount > 0; attempt++)
            {
                try
                {
                    went += batch.Send(_sockets[s]);
                }
                catch (SocketException)
                {
                    SendErrors++;
                    break;
                }
            }
            SendErrors += batch.FailedCount + batch.PendingCount;
            return went;
        }
    }
}
