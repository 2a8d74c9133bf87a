using System;
using System.Buffers.Binary;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.AwaitStress
{
    /// <summary>
    /// One socket of a run, its <see cref="AsyncDatagramSocket"/>, the loop that awaits its datagrams one after another,
    /// and the accounting of the stream sent to it: each datagram carries the receiver's id, its place in the stream, its
    /// send time and a checksum of the three.
    /// </summary>
    /// <remarks>
    /// The sender (one thread) writes <see cref="Sent"/>; the loop writes the rest, one continuation at a time (in
    /// ThreadPool mode on varying threads, one after another), and publishes <see cref="ReadyFor"/> last. Nothing here
    /// allocates per datagram.
    /// </remarks>
    internal sealed class Receiver
    {
        public const int DatagramLength = 32;

        public const int Running = 0;
        public const int EndedDisposed = 1; // the await (or the call) ended with ObjectDisposedException: as it must
        public const int EndedOtherwise = 2; // anything else: a failure, see Failure

        private readonly StressRun _run;

        public Receiver(StressRun run, int id, int slot, DatagramContinuations mode)
        {
            _run = run;
            Id = id;
            Slot = slot;
            Socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            try
            {
                Wrapper = new AsyncDatagramSocket(Socket, mode);
            }
            catch
            {
                Socket.Dispose();
                throw;
            }
            var local = (IPEndPoint)Socket.LocalEndPoint!;
            Port = local.Port;
            Key = EndPointKey.FromIPEndPoint(local);
        }

        public int Id { get; }

        public int Slot { get; }

        public Socket Socket { get; }

        public AsyncDatagramSocket Wrapper { get; }

        public EndPointKey Key { get; }

        public int Port { get; }

        /// <summary>The loop; null until <see cref="Start"/>.</summary>
        public Task? Loop { get; private set; }

        // ----- the sender's -----

        /// <summary>Datagrams sent to this receiver (the next one's place in the stream).</summary>
        public int Sent;

        // ----- the loop's -----

        /// <summary>The place of the next datagram the loop expects.</summary>
        public int Expected;

        /// <summary>
        /// <see cref="Expected"/> as it was when the loop last started a receive (-1 before the first): once it equals
        /// <see cref="Sent"/>, every datagram sent has been received (or counted lost) and the next receive waits.
        /// </summary>
        public int ReadyFor = -1;

        /// <summary>Datagrams of its own stream received in order.</summary>
        public int Received;

        /// <summary>Receives that had to wait (the ValueTask was not complete when the call returned).</summary>
        public int Waited;

        /// <summary>Receives that completed at once with a datagram (one was queued when the call came).</summary>
        public int Immediate;

        /// <summary>Receives started.</summary>
        public int Started;

        /// <summary>Places skipped: datagrams of the stream that never came although a later one did.</summary>
        public int Lost;

        /// <summary>Datagrams that are not what was sent: wrong length, checksum, sender, a repeat or one out of order, another receiver's.</summary>
        public int Wrong;

        /// <summary>Datagrams for a disposed receiver that had the same port (the OS gave the port again): counted, not wrong.</summary>
        public int Stale;

        /// <summary><see cref="Running"/>, <see cref="EndedDisposed"/> or <see cref="EndedOtherwise"/>.</summary>
        public int End;

        /// <summary>Why the loop ended, when it was not ObjectDisposedException.</summary>
        public Exception? Failure;

        // ----- the churner's -----

        /// <summary>Set before the churner disposes this receiver's wrapper or socket: its datagrams in flight may be lost.</summary>
        public volatile bool Disposing;

        /// <summary>How the churner disposed it (see <see cref="StressRun"/>'s churn).</summary>
        public int DisposeOrder;

        /// <summary>Starts the loop: its first receive is started (and waits) before this returns.</summary>
        public void Start() => Loop = ReceiveAll();

        private async Task ReceiveAll()
        {
            var buffer = new byte[64];
            while (true)
            {
                ValueTask<ReceivedDatagram> next;
                try
                {
                    next = Wrapper.ReceiveFromAsync(buffer);
                }
                catch (Exception e)
                {
                    Ended(e);
                    return;
                }
                Started++;
                if (!next.IsCompleted) Waited++;
                else if (next.IsCompletedSuccessfully) Immediate++;
                Volatile.Write(ref ReadyFor, Expected);
                ReceivedDatagram datagram;
                try
                {
                    datagram = await next;
                }
                catch (Exception e)
                {
                    Ended(e);
                    return;
                }
                long now = Stopwatch.GetTimestamp();
                Check(datagram, buffer, now);
            }
        }

        private void Ended(Exception e)
        {
            if (e is ObjectDisposedException)
            {
                Volatile.Write(ref End, EndedDisposed);
                return;
            }
            Failure = e;
            Volatile.Write(ref End, EndedOtherwise);
        }

        private void Check(in ReceivedDatagram datagram, byte[] buffer, long now)
        {
            if (datagram.Length != DatagramLength || datagram.Truncated || !datagram.RemoteEndPoint.Equals(_run.SenderKey))
            {
                Wrong++;
                _run.Report(this, "a datagram of " + datagram.Length + " bytes" + (datagram.Truncated ? ", truncated," : "") + " from " + datagram.RemoteEndPoint);
                return;
            }
            int id = BinaryPrimitives.ReadInt32LittleEndian(buffer.AsSpan(0));
            int place = BinaryPrimitives.ReadInt32LittleEndian(buffer.AsSpan(4));
            long sentAt = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(8));
            long checksum = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(16));
            long tail = BinaryPrimitives.ReadInt64LittleEndian(buffer.AsSpan(24));
            if (checksum != Checksum(id, place, sentAt) || tail != ~checksum)
            {
                Wrong++;
                _run.Report(this, "a datagram whose checksum is wrong (id " + id + ", place " + place + ")");
                return;
            }
            if (id != Id)
            {
                if (_run.IsStale(id, Port))
                {
                    Stale++;
                    return;
                }
                Wrong++;
                _run.Report(this, "receiver " + id + "'s datagram " + place);
                return;
            }
            if (place < Expected)
            {
                Wrong++;
                _run.Report(this, "datagram " + place + " again or late (expected " + Expected + ")");
                return;
            }
            if (place > Expected)
            {
                Lost += place - Expected;
                _run.Report(this, "datagram " + place + " where " + Expected + " was expected: " + (place - Expected) + " lost");
            }
            Expected = place + 1;
            Received++;
            _run.RecordLatency(now - sentAt);
        }

        /// <summary>Writes datagram <paramref name="place"/> of receiver <paramref name="id"/>, stamped now, into <paramref name="payload"/>.</summary>
        public static void Write(Span<byte> payload, int id, int place)
        {
            long sentAt = Stopwatch.GetTimestamp();
            long checksum = Checksum(id, place, sentAt);
            BinaryPrimitives.WriteInt32LittleEndian(payload, id);
            BinaryPrimitives.WriteInt32LittleEndian(payload.Slice(4), place);
            BinaryPrimitives.WriteInt64LittleEndian(payload.Slice(8), sentAt);
            BinaryPrimitives.WriteInt64LittleEndian(payload.Slice(16), checksum);
            BinaryPrimitives.WriteInt64LittleEndian(payload.Slice(24), ~checksum);
        }

        private static long Checksum(int id, int place, long sentAt)
        {
            unchecked
            {
                ulong h = (ulong)id * 0x9E3779B97F4A7C15UL;
                h ^= (ulong)place * 0xC2B2AE3D27D4EB4FUL;
                h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9UL;
                h ^= (ulong)sentAt;
                h = (h ^ (h >> 32)) * 0x94D049BB133111EBUL;
                return (long)(h ^ (h >> 31));
            }
        }

        /// <summary>One line about this receiver's state, for what is missing at a deadline.</summary>
        public string Describe() =>
            "socket " + Slot + " (receiver " + Id + ", port " + Port + "): sent " + Sent + ", ready for " + Volatile.Read(ref ReadyFor)
            + ", received " + Received + ", receives started " + Started + ", waited " + Waited + ", lost " + Lost + ", wrong " + Wrong
            + ", loop " + (Volatile.Read(ref End) == Running ? "running" : End == EndedDisposed ? "ended (ObjectDisposedException)" : "ended: " + Failure?.GetType().Name + ": " + Failure?.Message)
            + (Disposing ? ", disposed by the churn (order " + DisposeOrder + ")" : "");
    }
}
