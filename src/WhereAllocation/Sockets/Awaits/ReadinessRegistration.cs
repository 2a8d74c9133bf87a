using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
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
        // The live registration of each socket, whatever its path: one wrapper per socket at a time. Weak on the socket.
        private static readonly ConditionalWeakTable<Socket, ReadinessRegistration> s_owners = new ConditionalWeakTable<Socket, ReadinessRegistration>();

        private bool _added;    // in the OS's set (under the lock)
        private bool _removed;  // taken out for good (under the lock)
        private int _disposed;

        /// <exception cref="InvalidOperationException">Another live AsyncDatagramSocket wraps <paramref name="socket"/>.</exception>
        internal ReadinessRegistration(Socket socket, DatagramPath path, DatagramContinuations continuations)
        {
            Socket = socket;
            Path = path;
            Continuations = continuations;
            Poller = ReadinessPoller.For(path);
            Receive = new ReceiveOperation(this);
            Send = new SendOperation(this);
            lock (s_owners)
            {
                if (s_owners.TryGetValue(socket, out ReadinessRegistration? owner))
                {
                    if (!owner.IsDisposed)
                        throw new InvalidOperationException("This socket already has an AsyncDatagramSocket: one wrapper per socket at a time (dispose the first before making another).");
                    s_owners.Remove(socket);
                }
                s_owners.Add(socket, this);
            }
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

        /// <summary>For tests (<see cref="ReadinessPoller.ReportEveryArmedAsReadyForTests"/>): armed for reading since the last report.</summary>
        internal bool ArmedForReadingForTests;

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

        /// <summary>
        /// <see cref="Rearm"/>, and the operations that wait fail with what it reports (an error of the OS, or an I/O
        /// thread that could not start) rather than wait for a report that will never come.
        /// </summary>
        internal void RearmOrFail(bool onIoThread)
        {
            Exception? failure = null;
            try
            {
                SocketError armed = Rearm();
                if (armed != SocketError.Success) failure = new SocketException((int)armed);
            }
            catch (InvalidOperationException e)
            {
                failure = e;
            }
            if (failure == null) return;
            Receive.FailIfWaiting(failure, onIoThread);
            Send.FailIfWaiting(failure, onIoThread);
        }

        /// <summary>
        /// True when the OS says the socket was shut down for receiving (Linux: POLLRDHUP). Asked only after readiness
        /// kept bringing nothing; false where the OS or the path cannot tell (the wait then goes on, one try per slice).
        /// macOS: kqueue reports EV_EOF itself (a hang-up). Windows reports no readiness for such a socket at all, and
        /// fails the next datagram's receive with WSAESHUTDOWN.
        /// </summary>
        internal bool ReceiveShutDown()
        {
            if (!SocketHandles.Available || !(OsSocketCalls.Current is LinuxSocketCalls)) return false;
            SafeHandle handle;
            bool held = false;
            try
            {
                handle = SocketHandles.Get(Socket);
                handle.DangerousAddRef(ref held);
            }
            catch (ObjectDisposedException)
            {
                return false; // disposed: the try itself tells
            }
            try
            {
                return LinuxPoller.ReceiveShutDown(handle.DangerousGetHandle());
            }
            finally
            {
                if (held) handle.DangerousRelease();
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
            lock (s_owners)
            {
                if (s_owners.TryGetValue(Socket, out ReadinessRegistration? owner) && ReferenceEquals(owner, this)) s_owners.Remove(Socket);
            }
            Receive.ReleaseCancellation();
            Send.ReleaseCancellation();
        }
    }
}
