using System.Diagnostics;
using System.Threading;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// Flow control between the sending and the receiving thread of a segment, so that the sender never
    /// outruns the receiver and the kernel has no reason to drop: the sender may be at most <see cref="Limit"/>
    /// datagrams ahead of what the receiver has taken. When it gets there it sleeps until the receiver has
    /// brought the gap down to half that, so there is one wake-up per Limit/2 datagrams, not one per datagram.
    /// The receive queue must hold <see cref="Limit"/> datagrams with room to spare (see Program: SO_RCVBUF).
    /// One instance serves every segment in turn, so its event's lazily made lock is allocated only once.
    /// </summary>
    internal sealed class FlowWindow
    {
        private readonly ManualResetEventSlim _room = new ManualResetEventSlim(false);
        private long _taken;          // datagrams the receiver has taken (intact or not)
        private long _sentAtWait;     // what the sender had sent when it went to sleep
        private int _senderWaiting;   // 1 while the sender sleeps or is about to
        private int _senderDone;      // 1 when the sender has sent everything or given up
        private long _sent;           // what the sender sent in all, once it is done

        internal FlowWindow(int limit)
        {
            Limit = limit;
            // ManualResetEventSlim makes its lock object (24 B) the first time a Wait blocks rather than spins; a
            // blocking wait here makes it now, so it cannot land on the sending thread's count in a measured segment.
            _room.Wait(50);
        }

        internal int Limit { get; }

        internal long Taken => Volatile.Read(ref _taken);

        internal bool SenderDone => Volatile.Read(ref _senderDone) != 0;

        /// <summary>What the sender sent in all; read it only once <see cref="SenderDone"/> is true.</summary>
        internal long Sent => Volatile.Read(ref _sent);

        /// <summary>Makes the window ready for a new segment.</summary>
        internal void Reset()
        {
            _taken = 0;
            _sentAtWait = 0;
            _senderWaiting = 0;
            _senderDone = 0;
            _sent = 0;
            _room.Reset();
        }

        /// <summary>Sender: the receiver has taken <paramref name="n"/> more datagrams.</summary>
        internal void Took(int n)
        {
            // Interlocked: a full fence between publishing the count and reading the flag, so a sender that
            // went to sleep just now is always seen (the sender does the same the other way round).
            long taken = Interlocked.Add(ref _taken, n);
            if (Volatile.Read(ref _senderWaiting) != 0 && Volatile.Read(ref _sentAtWait) - taken <= Limit / 2) _room.Set();
        }

        internal void SetSenderDone(long sent)
        {
            Volatile.Write(ref _sent, sent);
            Volatile.Write(ref _senderDone, 1);
        }

        /// <summary>
        /// Sender, before sending <paramref name="next"/> more datagrams with <paramref name="sent"/> sent so far:
        /// waits while that would put it more than <see cref="Limit"/> ahead. False when the receiver took nothing
        /// for <paramref name="stallMs"/> (then the segment is given up, and its missing datagrams counted).
        /// </summary>
        internal bool WaitForRoom(long sent, int next, int stallMs)
        {
            if (sent + next - Volatile.Read(ref _taken) <= Limit) return true;
            long lastTaken = -1, lastChange = Stopwatch.GetTimestamp();
            while (true)
            {
                long taken = Volatile.Read(ref _taken);
                if (sent + next - taken <= Limit) return true;
                if (taken != lastTaken)
                {
                    lastTaken = taken;
                    lastChange = Stopwatch.GetTimestamp();
                }
                else if ((Stopwatch.GetTimestamp() - lastChange) * 1000 / Stopwatch.Frequency > stallMs)
                {
                    return false;
                }
                _room.Reset();
                Volatile.Write(ref _sentAtWait, sent);
                Interlocked.Exchange(ref _senderWaiting, 1);
                if (sent - Volatile.Read(ref _taken) > Limit / 2) _room.Wait(20); // bounded: a lost wake-up costs 20 ms, not a hang
                Volatile.Write(ref _senderWaiting, 0);
            }
        }
    }
}
