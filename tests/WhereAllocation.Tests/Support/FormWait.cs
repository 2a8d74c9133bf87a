using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// One receive of a <see cref="WaitingForm"/> that waits on a socket, on a thread of its own (named "hostile wait"): the
    /// one-call and batch forms call there; an await is made on the caller's thread and that thread blocks on its result, so
    /// every form has a thread that waits (for an abort) and one outcome, read the same way for every form.
    /// </summary>
    public sealed class FormWait : IDisposable
    {
        public const string ThreadName = "hostile wait";

        private readonly Stopwatch _watch = new Stopwatch();
        private readonly DatagramBatch? _batch;
        private readonly AsyncDatagramSocket? _wrapper;
        private readonly CancellationTokenSource? _cancel;
        private readonly int _before;
        private Task<ReceivedDatagram>? _awaited;
        private volatile bool _entered;
        private string? _outcome;
        private long _elapsed;

        private FormWait(WaitingForm form, Socket socket, int timeoutMs)
        {
            Form = form;
            _before = DisposeDuringWait.CountBefore();
            switch (form)
            {
                case WaitingForm.OneCall:
                case WaitingForm.OneCallSpan:
                    socket.ReceiveTimeout = timeoutMs > 0 ? timeoutMs : 0;
                    break;
                case WaitingForm.Batch:
                    _batch = new DatagramBatch(8, 1500, DatagramBatch.DefaultMode);
                    break;
                case WaitingForm.CoalescedBatch:
                    socket.EnableCoalescedReceive();
                    _batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500, DatagramBatchMode.MultiMessage) { CoalescedReceive = true };
                    break;
                default:
                    _wrapper = new AsyncDatagramSocket(socket);
                    if (timeoutMs > 0) _cancel = new CancellationTokenSource();
                    break;
            }
            Socket = socket;
            _watch.Start();
            if (_wrapper != null)
            {
                ValueTask<ReceivedDatagram> pending = _wrapper.ReceiveFromAsync(new byte[1500], _cancel?.Token ?? default);
                _cancel?.CancelAfter(timeoutMs);
                _awaited = pending.AsTask();
            }
            Thread = new Thread(() => Run(timeoutMs)) { IsBackground = true, Name = ThreadName };
            Thread.Start();
        }

        /// <summary>Starts a receive of <paramref name="form"/> on <paramref name="socket"/> (nothing queued): with a limit of <paramref name="timeoutMs"/> (the socket's ReceiveTimeout, the batch's argument, the await's token cancelled then), none when 0.</summary>
        public static FormWait Start(WaitingForm form, Socket socket, int timeoutMs) => new FormWait(form, socket, timeoutMs);

        public WaitingForm Form { get; }

        public Socket Socket { get; }

        /// <summary>The thread that waits: the receive's own, or the one blocked on the await's result.</summary>
        public Thread Thread { get; }

        /// <summary>The await's result (null for the other forms).</summary>
        public Task<ReceivedDatagram>? Awaited => _awaited;

        /// <summary>The wrapper of an await (null for the other forms).</summary>
        public AsyncDatagramSocket? Wrapper => _wrapper;

        /// <summary>
        /// True once the receive is inside its wait: an await whose call came back pending, the other forms counted among the
        /// library's waits (<see cref="DisposeDuringWait.UntilInside"/>); false when it ended first or 10 s passed.
        /// </summary>
        public bool UntilInside()
        {
            if (_awaited == null) return DisposeDuringWait.UntilInside(_before, Thread);
            // The await is pending from its call on; its thread is "inside" once it blocks on the result.
            var watch = Stopwatch.StartNew();
            while (!_entered && Thread.IsAlive && watch.ElapsedMilliseconds < 10_000) Thread.Sleep(1);
            Thread.Sleep(20); // from the flag to the block on the result: a few instructions
            return _entered && !_awaited.IsCompleted && Thread.IsAlive;
        }

        /// <summary>The library's count of waits when the receive started (<see cref="SocketHandles.WaitsInProgress"/>).</summary>
        public int WaitsBefore => _before;

        public bool Join(int milliseconds) => Thread.Join(milliseconds);

        /// <summary>
        /// How the receive ended: "datagram", "0" (a batch's nothing), a SocketError's name, "ObjectDisposed",
        /// "OperationCanceled", "ThreadAbort", or the exception's type and message; "still waiting" before it ended.
        /// </summary>
        public string Outcome => Volatile.Read(ref _outcome) ?? "still waiting";

        /// <summary>The length of the (first) datagram received, when the outcome is "datagram"; -1 before, or otherwise.</summary>
        public int Length => Volatile.Read(ref _length);

        private int _length = -1;

        /// <summary>How many datagrams a batch received (1 for the other forms' datagram; 0 before, or otherwise).</summary>
        public int Count => Volatile.Read(ref _count);

        private int _count;

        /// <summary>Milliseconds from the call to its end.</summary>
        public long ElapsedMs => Interlocked.Read(ref _elapsed);

        private void Run(int timeoutMs)
        {
            try
            {
                End(Receive(timeoutMs));
            }
            catch (Exception e)
            {
                // Recorded here: a ThreadAbortException is thrown again at the end of this block.
                End(Describe(e));
            }
        }

        private void End(string outcome)
        {
            Interlocked.Exchange(ref _elapsed, _watch.ElapsedMilliseconds);
            Volatile.Write(ref _outcome, outcome);
        }

        private string Receive(int timeoutMs)
        {
            switch (Form)
            {
                case WaitingForm.OneCall:
                    _length = Socket.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, NewEndPoint(Socket));
                    _count = 1;
                    return "datagram";
                case WaitingForm.OneCallSpan:
                    _length = Socket.ReceiveFrom_NonAlloc(new Span<byte>(new byte[1500]), SocketFlags.None).Length;
                    _count = 1;
                    return "datagram";
                case WaitingForm.Batch:
                case WaitingForm.CoalescedBatch:
                    int count = _batch!.Receive(Socket, timeoutMs > 0 ? timeoutMs : Timeout.Infinite);
                    if (count > 0) _length = _batch.GetDatagram(0, out _).Length;
                    _count = count;
                    return count > 0 ? "datagram" : count.ToString();
                default:
                    _entered = true;
                    _length = _awaited!.GetAwaiter().GetResult().Length;
                    _count = 1;
                    return "datagram";
            }
        }

        private static IPEndPointNonAlloc NewEndPoint(Socket socket) =>
            new IPEndPointNonAlloc(socket.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);

        /// <summary>An exception as an outcome (see <see cref="Outcome"/>).</summary>
        public static string Describe(Exception e)
        {
            if (e is AggregateException aggregate && aggregate.InnerExceptions.Count == 1) e = aggregate.InnerExceptions[0];
            if (e is ObjectDisposedException) return "ObjectDisposed";
            if (e is OperationCanceledException) return "OperationCanceled";
            if (e is ThreadAbortException) return "ThreadAbort";
            if (e is SocketException s) return s.SocketErrorCode.ToString();
            return e.GetType().Name + ": " + e.Message;
        }

        public void Dispose()
        {
            _wrapper?.Dispose();
            _cancel?.Dispose();
            if (!Thread.IsAlive) _batch?.Dispose(); // a batch still in a wait is left to its finalizer
        }
    }
}
