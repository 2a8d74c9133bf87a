#nullable enable
using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// A poller whose set is rebuilt for every wait from the engine's <see cref="WaitingSockets"/>: the way of WSAPoll
    /// (<see cref="WindowsPoller"/>) and of <c>Socket.Select</c> (<see cref="SelectPoller"/>), which take the whole set per
    /// call. Written once here: which sockets go in (every armed one, however many, so none waits behind another), the
    /// one-shot disarming of those reported, and a loopback socket of the poller's own that a one-byte datagram makes
    /// readable, so that an arming from another thread joins the wait at once. A subclass only fills its set, calls its
    /// OS, reads the results and sends or drains the wake-up.
    /// </summary>
    /// <remarks>
    /// The set holds no reference on a socket's handle while it waits (a Dispose would then wait for the wait): a socket
    /// found closed when the set is built is reported as hung up at once, and one closed during the wait is reported by
    /// the OS (POLLNVAL) or found by its operation's next try, or by the engine's sweep. The cost of a wait grows with the
    /// number of sockets waiting at once, as the OS call's own does.
    /// </remarks>
    internal abstract class RebuiltSetPoller : ReadinessPoller
    {
        // One wait's sockets, the arming each was polled for, and those found closed: the engine thread's own.
        private AwaitedSocket?[] _polled = new AwaitedSocket?[16];
        private int[] _polledArming = new int[16];
        private bool[] _closed = new bool[16];
        private bool _everyEntry; // this wait failed twice: every entry is reported

        private long[] _reportTokens = new long[16];
        private Readiness[] _reportEvents = new Readiness[16];

        /// <summary>The wake-up socket (bound to 127.0.0.1, non-blocking) while the poller is open.</summary>
        private protected Socket? WakeSocket;

        /// <summary>Where a wake-up is sent: the wake-up socket's own address.</summary>
        private protected IPEndPoint? WakeTarget;

        internal sealed override SocketError Open()
        {
            try
            {
                var wake = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                wake.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                wake.Blocking = false;
                WakeSocket = wake;
                WakeTarget = (IPEndPoint)wake.LocalEndPoint!;
            }
            catch (SocketException e)
            {
                WakeSocket?.Dispose();
                WakeSocket = null;
                return e.SocketErrorCode;
            }
            SocketError opened = OpenSet();
            if (opened != SocketError.Success) Close();
            return opened;
        }

        internal sealed override void Close()
        {
            CloseSet();
            WakeSocket?.Dispose();
            WakeSocket = null;
            WakeTarget = null;
        }

        /// <summary>Nothing to tell the OS: the next wait reads what the socket is armed for.</summary>
        internal sealed override SocketError Arm(AwaitedSocket socket) => SocketError.Success;

        /// <summary>Nothing to tell the OS: a socket off the engine's list is in no later set.</summary>
        internal sealed override void Remove(AwaitedSocket socket)
        {
        }

        internal sealed override bool ArmNeedsWake => true;

        internal sealed override int Wait(WaitingSockets waiting, int timeoutMilliseconds, out SocketError error)
        {
            // The set is built and read in methods of their own, so that no local of this frame refers to a socket while
            // it waits: a frame with a lock may report its locals to the collector for its whole length.
            int count = BuildSet(waiting, out bool anyClosed);
            // A closed socket is reported now: its operation's try ends it.
            int ready = Poll(anyClosed ? 0 : timeoutMilliseconds, out error);
            if (ready < 0)
            {
                // A socket closed after the set was built fails the whole call (Socket.Select throws; Wine 8's WSAPoll
                // returns WSAENOTSOCK when another thread closes one of its sockets during the call), which must not end
                // the waits of the others: build the set again, the closed ones now reported as such, and poll at once.
                Array.Clear(_polled, 0, count);
                EndSet();
                count = BuildSet(waiting, out _);
                ready = Poll(0, out error);
                // Still failing (a closed socket that cannot be told apart, as on the Managed path without a way to the
                // handle, or a fault of the set): every entry is reported, and each operation finds out by trying. One
                // that finds nothing waits for the next sweep: never a spin, and no live socket's wait ends for it.
                _everyEntry = ready < 0;
            }
            int reports = ReadSet(waiting, count);
            _everyEntry = false;
            error = SocketError.Success;
            // Nothing held between waits: an unreferenced wrapper must leave its socket collectable.
            Array.Clear(_polled, 0, count);
            EndSet();
            return reports;
        }

        private int Poll(int timeoutMilliseconds, out SocketError error)
        {
            if (AwaitTestSeam.TakePollFailure())
            {
                error = SocketError.NotSocket;
                return -1;
            }
            return PollSet(timeoutMilliseconds, out error);
        }

        /// <summary>Puts every armed socket of <paramref name="waiting"/> in the set; returns how many entries this wait has.</summary>
        private int BuildSet(WaitingSockets waiting, out bool anyClosed)
        {
            int count = 0;
            anyClosed = false;
            lock (waiting)
            {
                if (_polled.Length < waiting.Count) Grow(waiting.Count * 2);
                BeginSet(waiting.Count);
                for (int i = 0; i < waiting.Count; i++)
                {
                    AwaitedSocket socket = waiting[i];
                    if (!socket.ArmedRead && !socket.ArmedWrite) continue;
                    _polled[count] = socket;
                    _polledArming[count] = socket.Arming;
                    bool closed = SocketHandles.IsClosed(socket.Socket);
                    if (!closed) AddToSet(count, socket.Socket, socket.ArmedRead, socket.ArmedWrite);
                    _closed[count] = closed;
                    anyClosed |= closed;
                    count++;
                }
            }
            return count;
        }

        /// <summary>Records the reports of this wait's <paramref name="count"/> entries, and disarms the sockets reported.</summary>
        private int ReadSet(WaitingSockets waiting, int count)
        {
            int reports = 0;
            lock (waiting)
            {
                for (int k = 0; k < count; k++)
                {
                    Readiness events = _closed[k] ? Readiness.HangUp : _everyEntry ? Readiness.Read | Readiness.Write : ResultOf(k);
                    if (events == Readiness.None) continue;
                    AwaitedSocket socket = _polled[k]!;
                    _reportTokens[reports] = socket.Token;
                    _reportEvents[reports] = events;
                    reports++;
                    // One-shot: reported, so disarmed, unless it was armed again since this wait began.
                    if (socket.Arming == _polledArming[k]) socket.ArmedRead = socket.ArmedWrite = false;
                }
            }
            return reports;
        }

        internal sealed override void Report(int index, out long token, out Readiness events)
        {
            token = _reportTokens[index];
            events = _reportEvents[index];
        }

        private void Grow(int capacity)
        {
            // Only when more sockets wait at once than ever before in this process.
            Array.Resize(ref _polled, capacity);
            Array.Resize(ref _polledArming, capacity);
            Array.Resize(ref _closed, capacity);
            Array.Resize(ref _reportTokens, capacity);
            Array.Resize(ref _reportEvents, capacity);
        }

        // ----- what each OS call provides -----

        /// <summary>Whatever the set needs beyond the wake-up socket (called by <see cref="Open"/>).</summary>
        private protected virtual SocketError OpenSet() => SocketError.Success;

        /// <summary>Releases what <see cref="OpenSet"/> made (called by <see cref="Close"/>, also after a failed open).</summary>
        private protected virtual void CloseSet()
        {
        }

        /// <summary>Starts a set for at most <paramref name="capacity"/> sockets, the wake-up socket among them. Under the list's lock.</summary>
        private protected abstract void BeginSet(int capacity);

        /// <summary>Puts <paramref name="socket"/>, entry <paramref name="index"/> of this wait, in the set for reading and/or writing. Under the list's lock.</summary>
        private protected abstract void AddToSet(int index, Socket socket, bool read, bool write);

        /// <summary>
        /// Waits on the set; drains the wake-up socket if it was woken. Returns 0 or more, or -1 with <paramref name="error"/>
        /// when the call failed as a whole (the base builds the set again and retries at once).
        /// </summary>
        private protected abstract int PollSet(int timeoutMilliseconds, out SocketError error);

        /// <summary>What entry <paramref name="index"/> (one <see cref="AddToSet"/> was called for) reported. Under the list's lock.</summary>
        private protected abstract Readiness ResultOf(int index);

        /// <summary>Lets go of what the set held.</summary>
        private protected abstract void EndSet();
    }
}
