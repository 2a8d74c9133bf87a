#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.ExceptionServices;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation
{
    /// <summary>
    /// Awaitable, allocation-free receive and send on one datagram <see cref="Socket"/>, on Mono and .NET alike: make one
    /// per socket, await <see cref="ReceiveFromAsync"/> and <see cref="SendToAsync"/> as often as you like, and dispose
    /// it before (or with) the socket. It does not own the socket.
    /// </summary>
    /// <remarks>
    /// <para><b>Cost.</b> After warm-up an await allocates nothing, whether it completes at once (a datagram was queued:
    /// one system call, on the caller's thread) or really waits, on the native path with either
    /// <see cref="DatagramContinuations"/> on .NET 8+ and with <see cref="DatagramContinuations.IoThread"/> on Mono. Each
    /// instance owns one reusable operation per direction: the ValueTasks it returns are backed by them, so each may be
    /// awaited once, and one receive and one send may be outstanding at a time.</para>
    /// <para><b>Waiting.</b> A call that finds nothing to do arms the socket in one readiness mechanism shared by every
    /// socket of the process (epoll on Linux, kqueue on macOS, WSAPoll on Windows; <c>Socket.Select</c> on the runtime's
    /// paths), served by one library thread that runs while at least one <see cref="AsyncDatagramSocket"/> is alive; no
    /// thread per socket. Mono's own asynchronous socket calls are never used.</para>
    /// <para><b>Contract.</b> As the synchronous calls (docs/CONTRACT.md): a datagram longer than the buffer comes back
    /// cut with <see cref="ReceivedDatagram.Truncated"/>; an error the OS reports is a <see cref="SocketException"/>; a
    /// socket disposed before or during the await gives <see cref="ObjectDisposedException"/>. Cancelling the token ends
    /// a waiting await with <see cref="OperationCanceledException"/> and consumes no datagram. <see cref="Socket.ReceiveTimeout"/>
    /// and <see cref="Socket.Blocking"/> do not apply: an await never blocks a thread, and waits until a datagram, the
    /// token or a Dispose ends it, as the runtime's own asynchronous calls do. Argument errors are thrown by the call;
    /// everything else is reported by the returned ValueTask.</para>
    /// <para><b>Path.</b> The calls take the <see cref="DatagramPathSettings.Active"/> path of the moment the instance is made
    /// (<see cref="Path"/>), and keep it.</para>
    /// </remarks>
    public sealed class AsyncDatagramSocket : IDisposable
    {
        private readonly AwaitedSocket _awaited;

        /// <summary>Wraps <paramref name="socket"/> with <see cref="DefaultContinuations"/>.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="InvalidOperationException">Another <see cref="AsyncDatagramSocket"/> on this socket is alive (not disposed): one per socket at a time.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the calls would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>); or the OS has no readiness mechanism the library knows for the native path.</exception>
        public AsyncDatagramSocket(Socket socket)
            : this(socket, DefaultContinuations)
        {
        }

        /// <summary>Wraps <paramref name="socket"/>; awaits that waited resume as <paramref name="continuations"/> says.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="continuations"/> is not a defined value.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        /// <exception cref="InvalidOperationException">Another <see cref="AsyncDatagramSocket"/> on this socket is alive (not disposed): one per socket at a time.</exception>
        /// <exception cref="PlatformNotSupportedException">Once per process, where no way reaches the socket's handle and the calls would fall back to the allocating Managed path unasked (see <see cref="DatagramPathSettings.HandleAccess"/>); or the OS has no readiness mechanism the library knows for the native path.</exception>
        public AsyncDatagramSocket(Socket socket, DatagramContinuations continuations)
        {
            SocketArguments.CheckSocket(socket);
            if (continuations != DatagramContinuations.ThreadPool && continuations != DatagramContinuations.IoThread)
                throw new ArgumentOutOfRangeException(nameof(continuations), continuations, "Not a DatagramContinuations value.");
            SocketWaits.ThrowIfDisposed(socket);
            DatagramPath path = DatagramPathSettings.Active;
            if (path == DatagramPath.Managed) DatagramPathSettings.ReportFallbackOnce(); // at once, not at the first call that waits
            _awaited = new AwaitedSocket(socket, path, continuations);
        }

        /// <summary>
        /// Where awaits resume unless the constructor is told otherwise: <see cref="DatagramContinuations.ThreadPool"/> in
        /// the .NET 8+ build, where the pool takes the library's operation as its work item at no cost;
        /// <see cref="DatagramContinuations.IoThread"/> in the netstandard2.1 build (Unity, Mono), whose thread pool
        /// allocates per item.
        /// </summary>
        public static DatagramContinuations DefaultContinuations =>
#if NET8_0_OR_GREATER
            DatagramContinuations.ThreadPool;
#else
            DatagramContinuations.IoThread;
#endif

        /// <summary>The socket the calls use.</summary>
        public Socket Socket => _awaited.Socket;

        /// <summary>The datagram path the calls take (<see cref="DatagramPathSettings.Active"/> when this instance was made).</summary>
        public DatagramPath Path => _awaited.Path;

        /// <summary>Where awaits that waited resume.</summary>
        public DatagramContinuations Continuations => _awaited.Continuations;

        /// <summary>For tests: the socket's record in its engine (its armings are counted there).</summary>
        internal AwaitedSocket Awaited => _awaited;

        /// <summary>
        /// Receives one datagram into <paramref name="buffer"/>: at once when one is queued, else when one arrives. A
        /// datagram longer than the buffer is stored cut and reported with <see cref="ReceivedDatagram.Truncated"/>. The
        /// buffer must stay untouched until the ValueTask completes.
        /// </summary>
        /// <returns>The datagram's length, whether it was cut, and its sender. Await it once.</returns>
        /// <exception cref="InvalidOperationException">Thrown by the call: the socket is neither bound nor connected. Reported by the ValueTask: another receive on this instance is still outstanding.</exception>
        /// <exception cref="SocketException">Reported by the ValueTask: the OS reported an error (for example ConnectionRefused on a connected socket whose peer's port is closed).</exception>
        /// <exception cref="ObjectDisposedException">Reported by the ValueTask: the socket or this instance was disposed, before or during the wait.</exception>
        /// <exception cref="OperationCanceledException">Reported by the ValueTask: <paramref name="cancellationToken"/> was cancelled before a datagram was received (none is consumed).</exception>
        public ValueTask<ReceivedDatagram> ReceiveFromAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Socket socket = _awaited.Socket;
            if (!socket.IsBound && !socket.Connected) throw new InvalidOperationException("The socket must be bound (or connected, or have sent) before it can receive.");
            return _awaited.Receive.Start(buffer, cancellationToken, this);
        }

        /// <summary>
        /// Sends <paramref name="buffer"/> to <paramref name="remoteEndPoint"/>: at once when the send buffer has room,
        /// else when it has. On a dual-mode socket an IPv4 key is sent IPv4-mapped. The buffer must stay untouched until
        /// the ValueTask completes.
        /// </summary>
        /// <returns>The number of bytes sent. Await it once.</returns>
        /// <exception cref="ArgumentException">Thrown by the call: the key is empty, or an IPv6 key on an IPv4 socket.</exception>
        /// <exception cref="InvalidOperationException">Reported by the ValueTask: another send on this instance is still outstanding.</exception>
        /// <exception cref="SocketException">Reported by the ValueTask: the OS reported an error (for example MessageSize for more than 65 507 bytes).</exception>
        /// <exception cref="ObjectDisposedException">Reported by the ValueTask: the socket or this instance was disposed, before or during the wait.</exception>
        /// <exception cref="OperationCanceledException">Reported by the ValueTask: <paramref name="cancellationToken"/> was cancelled before the datagram was sent.</exception>
        public ValueTask<int> SendToAsync(ReadOnlyMemory<byte> buffer, EndPointKey remoteEndPoint, CancellationToken cancellationToken = default)
        {
            EndPointKey to = SocketArguments.FitToSocket(_awaited.Socket, remoteEndPoint);
            return _awaited.Send.Start(buffer, to, cancellationToken, this);
        }

        /// <summary>
        /// Ends a waiting receive and send with <see cref="ObjectDisposedException"/> (they resume on the thread pool),
        /// and leaves the readiness mechanism; the library's I/O thread ends once no instance is left. The socket stays
        /// open. Calling it again does nothing.
        /// </summary>
        public void Dispose()
        {
            _awaited.Dispose();
            GC.SuppressFinalize(this);
        }

        /// <summary>
        /// An instance nobody references any more, with no call waiting (a waiting call keeps its instance alive until
        /// it ends), leaves the readiness mechanism as <see cref="Dispose"/> would, so that its socket can be collected
        /// and the I/O thread can end.
        /// </summary>
        ~AsyncDatagramSocket()
        {
            _awaited?.Dispose(); // null when the constructor threw
        }

        /// <summary>
        /// Raised on the library's I/O thread when the code after an await that resumed there
        /// (<see cref="DatagramContinuations.IoThread"/>) threw instead of handling its exception: the thread, which
        /// serves every socket of the process, catches it, raises this event and goes on. With no handler, the
        /// exception is thrown again on a thread-pool thread, where it is the unhandled exception it would have been in
        /// <see cref="DatagramContinuations.ThreadPool"/> mode (the runtime's policy for those applies: on .NET it ends
        /// the process). A handler that throws is treated the same way. (An async method never throws into its caller's
        /// continuation, so this takes only hand-written continuations and async void methods.)
        /// <para>It is also raised, in both modes and on whichever thread completed the call, when an await that captured a
        /// <see cref="SynchronizationContext"/> or a non-default <see cref="System.Threading.Tasks.TaskScheduler"/> cannot be
        /// resumed there because the context's <c>Post</c> threw (a context that was closed) or the scheduler refused the
        /// task (a <see cref="System.Threading.Tasks.TaskSchedulerException"/>): that await is not resumed elsewhere, and the
        /// I/O thread goes on serving every other socket.</para>
        /// </summary>
        public static event Action<Exception>? ContinuationFailed;

        /// <summary>What the I/O thread does with an exception a continuation threw (see <see cref="ContinuationFailed"/>).</summary>
        internal static void ReportContinuationFailure(Exception error)
        {
            Action<Exception>? handlers = ContinuationFailed;
            if (handlers != null)
            {
                try
                {
                    handlers(error);
                    return;
                }
                catch (Exception handlerError)
                {
                    error = handlerError;
                }
            }
            ThreadPool.QueueUserWorkItem(state => ((ExceptionDispatchInfo)state!).Throw(), ExceptionDispatchInfo.Capture(error));
        }
    }
}
