using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// What the poller knows of one <see cref="AsyncDatagramSocket"/>: its socket, its two reusable operations (one
    /// receive, one send), its slot and token, and whether its socket is in the poller's set. Arming merges what both
    /// operations wait for, under this object's lock, because one-shot arming covers the socket, not a direction.
    /// </summary>
    internal sealed class ReadinessRegistration
    {
        private bool _added;    // in the OS's set (under the lock)
        private bool _removed;  // taken out for good (under the lock)
        private int _disposed;

        internal ReadinessRegistration(Socket socket, DatagramPath path, DatagramContinuations continuations)
        {
            Socket = socket;
            Path = path;
            Continuations = continuations;
            Poller = ReadinessPoller.For(path);
            Receive = new ReceiveOperation(this);
            Send = new SendOperation(this);
            Poller.Register(this);
        }

        internal Socket Socket { get; }

        internal DatagramPath Path { get; }

        internal DatagramContinuations Continuations { get; }

        internal ReadinessPoller Poller { get; }

        internal ReceiveOperation Receive { get; }

        internal SendOperation Send { get; }

        /// <summary>The poller's slot for this registration.</summary>
        internal int Slot { get; set; }

        /// <summary>The slot and its generation: what the OS reports back with each event.</summary>
        internal long Token { get; set; }

        internal bool IsDisposed => Volatile.Read(ref _disposed) != 0;

        /// <summary>
        /// Arms the socket for what its operations wait for now (nothing: no call). Called by an operation right after
        /// it started waiting, and by the poller for the direction a report did not cover.
        /// </summary>
        internal SocketError Rearm()
        {
            lock (this)
            {
                if (_removed) return SocketError.Success;
                bool read = Receive.IsWaiting;
                bool write = Send.IsWaiting;
                if (!read && !write) return SocketError.Success;
                return Poller.Arm(this, read, write, ref _added);
            }
        }

        /// <summary>True when the socket has been disposed.</summary>
        internal bool IsSocketDisposed() => SocketWaits.DisposedError(Socket) != null;

        /// <summary>Ends waiting operations with ObjectDisposedException and leaves the poller. Idempotent.</summary>
        internal void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
            Receive.FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), false);
            Send.FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), false);
            lock (this)
            {
                _removed = true;
                if (_added) Poller.Remove(this);
            }
            Poller.Unregister(this);
            Receive.ReleaseCancellation();
            Send.ReleaseCancellation();
        }
    }
}
