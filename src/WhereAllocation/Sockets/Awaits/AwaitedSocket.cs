#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// One <see cref="AsyncDatagramSocket"/> as its engine knows it: the socket, the path and continuation mode it was made
    /// with, its two reusable operations (one receive, one send), and the engine's state for it (its slot and token, and
    /// what it is armed for), which the engine, its list (<see cref="WaitingSockets"/>) and its poller change, each under
    /// the list's lock.
    /// </summary>
    /// <remarks>
    /// The engine holds this object while it is registered, and this object holds the socket; nothing here holds the
    /// wrapper, except an operation that waits (it keeps its wrapper alive until it ends). So an undisposed wrapper that
    /// nobody references is finalized, and its finalizer disposes this record, which frees the socket.
    /// </remarks>
    internal sealed class AwaitedSocket
    {
        // The live record of each socket, whatever its path: one wrapper per socket at a time. Weak on the socket.
        private static readonly ConditionalWeakTable<Socket, AwaitedSocket> s_owners = new ConditionalWeakTable<Socket, AwaitedSocket>();

        private int _disposed;

        /// <exception cref="InvalidOperationException">Another live AsyncDatagramSocket wraps <paramref name="socket"/>.</exception>
        /// <exception cref="PlatformNotSupportedException">The native path on an OS with no readiness mechanism the library knows.</exception>
        internal AwaitedSocket(Socket socket, DatagramPath path, DatagramContinuations continuations)
        {
            Socket = socket;
            Path = path;
            Continuations = continuations;
            Engine = PathDispatch.Engine(path);
            Receive = new ReceiveOperation(this);
            Send = new SendOperation(this);
            lock (s_owners)
            {
                if (s_owners.TryGetValue(socket, out AwaitedSocket? owner))
                {
                    if (!owner.IsDisposed)
                        throw new InvalidOperationException("This socket already has an AsyncDatagramSocket: one wrapper per socket at a time (dispose the first before making another).");
                    s_owners.Remove(socket);
                }
                s_owners.Add(socket, this);
            }
            Engine.Register(this);
        }

        internal Socket Socket { get; }

        internal DatagramPath Path { get; }

        internal DatagramContinuations Continuations { get; }

        internal AwaitEngine Engine { get; }

        internal ReceiveOperation Receive { get; }

        internal SendOperation Send { get; }

        internal bool IsDisposed => Volatile.Read(ref _disposed) != 0;

        // ----- the engine's state for this socket: changed under the engine's WaitingSockets' lock, by the engine (Register,
        // Arm, the sweep, Unregister), the list itself (WaitingIndex) and the poller (InSet; RebuiltSetPoller's reports clear
        // ArmedRead and ArmedWrite); Token is read without the lock by the engine's thread, which checks it against its slot -----

        /// <summary>The engine's slot for this socket.</summary>
        internal int Slot;

        /// <summary>The slot and its generation: what the poller reports back, so that a report for a socket gone is dropped.</summary>
        internal long Token;

        /// <summary>The place on the engine's <see cref="WaitingSockets"/>, -1 when not on it.</summary>
        internal int WaitingIndex = -1;

        /// <summary>
        /// What the socket was last armed for: readability, writability. Arming is one-shot, but only a set rebuilt per wait
        /// (<see cref="RebuiltSetPoller"/>) clears these when it reports the socket; epoll and kqueue keep the one-shot in the
        /// kernel and leave them as armed. The sweep clears both when the socket leaves the list; the next arming overwrites them.
        /// </summary>
        internal bool ArmedRead, ArmedWrite;

        /// <summary>Counts the armings, so that a set rebuilt per wait disarms only the arming its report answers.</summary>
        internal int Arming;

        /// <summary>In a set the OS keeps (epoll: added once, then modified).</summary>
        internal bool InSet;

        /// <summary>Unregistered: never armed again.</summary>
        internal bool Removed;

        // ----- questions the engine asks of the socket -----

        /// <summary>True when the socket has been disposed.</summary>
        internal bool IsSocketDisposed() => SocketWaits.DisposedError(Socket) != null;

        /// <summary>Ends waiting operations with ObjectDisposedException and leaves the engine. Idempotent.</summary>
        internal void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
            Receive.FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), false);
            Send.FailIfWaiting(new ObjectDisposedException(nameof(AsyncDatagramSocket)), false);
            Engine.Unregister(this);
            lock (s_owners)
            {
                if (s_owners.TryGetValue(Socket, out AwaitedSocket? owner) && ReferenceEquals(owner, this)) s_owners.Remove(Socket);
            }
            Receive.ReleaseCancellation();
            Send.ReleaseCancellation();
        }
    }
}
