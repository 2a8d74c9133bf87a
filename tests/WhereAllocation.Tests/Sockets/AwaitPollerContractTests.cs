using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The awaits' and pollers' part of the contract (docs/CONTRACT.md, "Awaits and pollers in detail"): any number of
    /// waiting sockets served; an I/O thread that cannot start; a ValueTask awaited twice; one wrapper per socket; a
    /// throwing continuation on the I/O thread; an unreferenced wrapper; a socket shut down for receiving. Each on every
    /// path this runtime has, in both continuation modes where the mode matters; everything bounded in time.
    /// </summary>
    public class AwaitPollerContractTests : IDisposable
    {
        private const int Bound = 10_000;

        public void Dispose()
        {
            AwaitTestSeam.FailThreadStart = false;
            DatagramPathSettings.Reset();
        }

        [Observes(AwaitsContract.Section, "A1", "70 waiting")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithContinuations), MemberType = typeof(Matrix))]
        public void SeventyWaitingSocketsAreEachServed(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            const int Count = 70;
            var servers = new Socket[Count];
            var wrappers = new AsyncDatagramSocket[Count];
            var waiting = new Task<ReceivedDatagram>[Count];
            using Socket client = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            try
            {
                for (int i = 0; i < Count; i++)
                {
                    servers[i] = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                    wrappers[i] = new AsyncDatagramSocket(servers[i], mode);
                    waiting[i] = wrappers[i].ReceiveFromAsync(new byte[16]).AsTask();
                    Assert.False(waiting[i].IsCompleted);
                }
                // The last ones armed first: the ones a poller that looks at the first 64 only never reaches.
                int served = 0;
                for (int i = Count - 1; i >= 0; i--)
                {
                    client.SendTo(new[] { (byte)i }, servers[i].LocalEndPoint!);
                    Assert.True(waiting[i].Wait(Bound), "socket " + i + " of " + Count + " waiting was never served");
                    Assert.Equal(1, waiting[i].Result.Length);
                    served++;
                }
                Assert.Equal(AwaitsContract.Cell("70 waiting"), served == Count ? "each served" : served + " of " + Count + " served");
            }
            finally
            {
                for (int i = 0; i < Count; i++)
                {
                    wrappers[i]?.Dispose();
                    servers[i]?.Dispose();
                }
            }
        }

        [Observes(AwaitsContract.Section, "A1", "thread cannot start")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInTurn), MemberType = typeof(Matrix))]
        public void AnIoThreadThatCannotStartFailsThatCallAndTheNextTriesAgain(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            AwaitEngine poller = PathDispatch.Engine(path);
            Assert.True(Awaits.EngineStopped(poller, Bound), "the I/O thread of an earlier test did not end");
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            var buffer = new byte[16];
            AwaitTestSeam.FailThreadStart = true;
            ValueTask<ReceivedDatagram> failed;
            try
            {
                failed = server.ReceiveFromAsync(buffer);
            }
            finally
            {
                AwaitTestSeam.FailThreadStart = false;
            }
            Assert.True(failed.IsCompleted, "the call should end at once when the I/O thread cannot start");
            InvalidOperationException error = Assert.Throws<InvalidOperationException>(() => failed.GetAwaiter().GetResult());
            Assert.IsType<OutOfMemoryException>(error.InnerException);
            // The message names what the runtime threw and what to expect: a user sees no more than this.
            Assert.Contains("could not be started (OutOfMemoryException: Thread creation failed (test hook).)", error.Message);
            Assert.Contains("the next call that has to wait tries again", error.Message);
            Assert.Null(poller.CurrentThread);
            // Nothing stuck: the next receive waits, the thread starts, and the datagram comes.
            ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
            Assert.False(next.IsCompleted);
            pair.Client.SendTo(new byte[] { 7 }, pair.ServerTarget);
            Assert.Equal("", Awaits.Outcome(next, Bound, out ReceivedDatagram got));
            Assert.Equal(1, got.Length);
            Assert.NotNull(poller.CurrentThread);
            Assert.Equal(AwaitsContract.Cell("thread cannot start"), Awaits.Name(error) + ", next served");
        }

        [Observes(AwaitsContract.Section, "A1", "awaited twice")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithContinuations), MemberType = typeof(Matrix))]
        public void AwaitingAWaitedValueTaskTwiceIsRefused(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            var buffer = new byte[16];
            ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
            Assert.False(waiting.IsCompleted);
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            Task first = Task.Run(async () => await waiting);
            Assert.True(first.Wait(Bound), "the first await did not complete");
            Task second = Task.Run(async () => await waiting);
            Assert.True(WaitQuietly(second, Bound), "a second await of the same ValueTask hangs");
            Assert.IsType<InvalidOperationException>(second.Exception!.InnerException);
            Assert.Equal(AwaitsContract.Cell("awaited twice"), Awaits.Name(second.Exception!.InnerException!));
            // And the operation is free for the next call.
            ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
            pair.Client.SendTo(new byte[] { 2 }, pair.ServerTarget);
            Assert.Equal("", Awaits.Outcome(next, Bound, out ReceivedDatagram _));
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInTurn), MemberType = typeof(Matrix))]
        public void TakingTheResultAsSoonAsItIsCompletedNeverResumesTheNextAwaitEarly(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            var buffer = new byte[16];
            Awaits.Run(async () =>
            {
                for (int i = 0; i < 200; i++)
                {
                    ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
                    pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
                    // Polled, not awaited: the result is taken the moment the poller publishes it.
                    var spin = new SpinWait();
                    long start = Environment.TickCount;
                    while (!waiting.IsCompleted)
                    {
                        Assert.True(Environment.TickCount - start < Bound, "a receive did not complete");
                        spin.SpinOnce();
                    }
                    Assert.Equal(1, waiting.Result.Length);
                    // The next await must resume with its own datagram, never with the previous completion.
                    ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
                    pair.Client.SendTo(new byte[] { 2, 2 }, pair.ServerTarget);
                    Assert.Equal(2, (await next).Length);
                    await Task.Yield(); // off the I/O thread (IoThread mode) before the next spin
                }
            });
        }

        [Observes(AwaitsContract.Section, "A1", "second wrapper")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ASecondWrapperOnOneSocketIsRefusedWhileTheFirstLives(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            var buffer = new byte[16];
            using (var first = new AsyncDatagramSocket(pair.Server))
            {
                Assert.Equal(AwaitsContract.Cell("second wrapper"), Awaits.Name(Assert.ThrowsAny<Exception>(() => new AsyncDatagramSocket(pair.Server))));
                Assert.Throws<InvalidOperationException>(() => new AsyncDatagramSocket(pair.Server, DatagramContinuations.ThreadPool));
                // The first still works, waiting included.
                ValueTask<ReceivedDatagram> waiting = first.ReceiveFromAsync(buffer);
                Assert.False(waiting.IsCompleted);
                pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
                Assert.Equal("", Awaits.Outcome(waiting, Bound, out ReceivedDatagram _));
            }
            // Once it is disposed, the socket may be wrapped again.
            using var second = new AsyncDatagramSocket(pair.Server);
            ValueTask<ReceivedDatagram> again = second.ReceiveFromAsync(buffer);
            pair.Client.SendTo(new byte[] { 2 }, pair.ServerTarget);
            Assert.Equal("", Awaits.Outcome(again, Bound, out ReceivedDatagram _));
        }

        [Observes(AwaitsContract.Section, "A1", "continuation throws")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AThrowingContinuationOnTheIoThreadIsReportedAndTheOthersAreStillServed(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var bad = new Loopback(Family.IPv4);
            using var good = new Loopback(Family.IPv4);
            using var a = new AsyncDatagramSocket(bad.Server, DatagramContinuations.IoThread);
            using var b = new AsyncDatagramSocket(good.Server, DatagramContinuations.IoThread);
            var reported = new List<Exception>();
            Action<Exception> handler = e =>
            {
                lock (reported) reported.Add(e);
            };
            AsyncDatagramSocket.ContinuationFailed += handler;
            try
            {
                ValueTask<ReceivedDatagram> thrower = a.ReceiveFromAsync(new byte[16]);
                Assert.False(thrower.IsCompleted);
                // Off the test framework's SynchronizationContext, which would take the continuation off the I/O thread.
                Assert.True(Task.Run(() => thrower.GetAwaiter().UnsafeOnCompleted(() => throw new ApplicationException("a continuation that throws"))).Wait(Bound));
                bad.Client.SendTo(new byte[] { 1 }, bad.ServerTarget);
                long start = Environment.TickCount;
                while (true)
                {
                    lock (reported)
                    {
                        if (reported.Count > 0) break;
                    }
                    Assert.True(Environment.TickCount - start < Bound, "the continuation's exception was not reported");
                    Thread.Sleep(10);
                }
                lock (reported) Assert.IsType<ApplicationException>(reported[0]);
                // The I/O thread goes on serving the others.
                ValueTask<ReceivedDatagram> other = b.ReceiveFromAsync(new byte[16]);
                Assert.False(other.IsCompleted);
                good.Client.SendTo(new byte[] { 2 }, good.ServerTarget);
                string? served = Awaits.Outcome(other, Bound, out ReceivedDatagram _);
                int reports;
                lock (reported) reports = reported.Count;
                Assert.Equal(AwaitsContract.Cell("continuation throws"),
                    (reports == 1 ? "reported" : reports + " reports") + ", " + (served == "" ? "others served" : "others: " + (served ?? "still waiting")));
            }
            finally
            {
                AsyncDatagramSocket.ContinuationFailed -= handler;
            }
        }

        /// <summary>Every path × every mode, with a SynchronizationContext and with a TaskScheduler.</summary>
        public static IEnumerable<object?[]> ThrowingResumerCases => Matrix.Product(Matrix.PathsWithContinuations, Matrix.Booleans);

        /// <summary>
        /// An await that captured a SynchronizationContext (or a TaskScheduler) is resumed through it by whichever thread
        /// completes the operation: the I/O thread, in both modes. A context whose Post throws (one that was closed), or a
        /// scheduler whose QueueTask throws, must not end that thread: the failure is reported through ContinuationFailed,
        /// and the thread goes on serving the other sockets.
        /// </summary>
        [Observes(AwaitsContract.Section, "A1", "context or scheduler throws")]
        [Theory]
        [MemberData(nameof(ThrowingResumerCases))]
        public void AContextOrSchedulerThatThrowsIsReportedAndTheOthersAreStillServed(DatagramPath path, DatagramContinuations mode, bool context)
        {
            if (!Paths.TryForce(path)) return;
            using var bad = new Loopback(Family.IPv4);
            using var good = new Loopback(Family.IPv4);
            using var a = new AsyncDatagramSocket(bad.Server, mode);
            using var b = new AsyncDatagramSocket(good.Server, mode);
            AwaitEngine engine = PathDispatch.Engine(path);
            var reported = new List<Exception>();
            Action<Exception> handler = e =>
            {
                lock (reported) reported.Add(e);
            };
            AsyncDatagramSocket.ContinuationFailed += handler;
            try
            {
                ValueTask<ReceivedDatagram> waiting = a.ReceiveFromAsync(new byte[16]);
                Assert.False(waiting.IsCompleted);
                bool resumed = false;
                Action continuation = () => Volatile.Write(ref resumed, true);
                if (context)
                {
                    // A plain await's registration (OnCompleted asks for the scheduling context) made where the context is current.
                    var closed = new ClosedContext();
                    var registering = new Thread(() =>
                    {
                        SynchronizationContext.SetSynchronizationContext(closed);
                        waiting.GetAwaiter().OnCompleted(continuation);
                    });
                    registering.Start();
                    Assert.True(registering.Join(Bound));
                }
                else
                {
                    // The same made in a task that runs on the scheduler, which then stops taking tasks.
                    var scheduler = new ClosingScheduler();
                    Task registered = Task.Factory.StartNew(() => waiting.GetAwaiter().OnCompleted(continuation), CancellationToken.None, TaskCreationOptions.None, scheduler);
                    Assert.True(registered.Wait(Bound));
                    scheduler.Close();
                }
                Thread? ioThread = Awaits.IoThread(engine);
                bad.Client.SendTo(new byte[] { 1 }, bad.ServerTarget);
                long start = Environment.TickCount;
                while (true)
                {
                    lock (reported)
                    {
                        if (reported.Count > 0) break;
                    }
                    if (Environment.TickCount - start > Bound) break;
                    Thread.Sleep(10);
                }
                Exception? first;
                lock (reported) first = reported.Count > 0 ? reported[0] : null;
                if (first != null)
                {
                    // The context's own exception, or the scheduler's as the runtime wraps it (TaskSchedulerException).
                    Exception own = first is TaskSchedulerException wrapped && wrapped.InnerException != null ? wrapped.InnerException : first;
                    Assert.IsType<ObjectDisposedException>(own);
                }
                Assert.False(Volatile.Read(ref resumed), "the continuation ran although its context refused it");
                // The I/O thread goes on serving the others (a thread that died would leave this await waiting for ever).
                ValueTask<ReceivedDatagram> other = b.ReceiveFromAsync(new byte[16]);
                Assert.False(other.IsCompleted);
                good.Client.SendTo(new byte[] { 2 }, good.ServerTarget);
                string? served = Awaits.Outcome(other, Bound, out ReceivedDatagram _);
                bool sameThread = ioThread != null && ReferenceEquals(ioThread, engine.CurrentThread) && ioThread.IsAlive;
                int reports;
                lock (reported) reports = reported.Count;
                Assert.Equal(AwaitsContract.Cell("context or scheduler throws"),
                    (reports == 1 ? "reported" : reports + " reports") + ", "
                    + (served == "" ? "others served" : "others: " + (served ?? "still waiting")) + (sameThread ? "" : ", the I/O thread was ended"));
            }
            finally
            {
                AsyncDatagramSocket.ContinuationFailed -= handler;
            }
        }

        /// <summary>A SynchronizationContext that was closed: Post throws, as a context whose loop has ended may.</summary>
        private sealed class ClosedContext : SynchronizationContext
        {
            public override void Post(SendOrPostCallback d, object? state) => throw new ObjectDisposedException(nameof(ClosedContext), "this context's loop has ended");

            public override SynchronizationContext CreateCopy() => this;
        }

        /// <summary>A TaskScheduler that runs tasks on the thread pool until it is closed; then QueueTask throws.</summary>
        private sealed class ClosingScheduler : TaskScheduler
        {
            private volatile bool _closed;

            public void Close() => _closed = true;

            protected override void QueueTask(Task task)
            {
                if (_closed) throw new ObjectDisposedException(nameof(ClosingScheduler), "this scheduler was closed");
                ThreadPool.QueueUserWorkItem(_ => TryExecuteTask(task));
            }

            protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued) => !_closed && TryExecuteTask(task);

            protected override IEnumerable<Task>? GetScheduledTasks() => null;
        }

        [Observes(AwaitsContract.Section, "A1", "unreferenced wrapper")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AnUnreferencedWrapperIsCollectedAndLetsItsSocketGo(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            const int Count = 50;
            AwaitEngine poller = PathDispatch.Engine(path);
            // First, else the collections below would take those wrappers out too, and the count would end below its start.
            Awaits.CollectLeftWrappers();
            int before = poller.Registered;
            WeakReference[] sockets = null!, unwrapped = null!;
            // On a thread of its own, whose stack is gone by the collection (Mono scans stacks conservatively).
            var thread = new Thread(() => sockets = LeaveWrappersBehind(Count, out unwrapped));
            thread.Start();
            Assert.True(thread.Join(Bound), "making the wrappers took too long");
            int alive = Reachability.CountAlive(sockets);
            int control = Reachability.CountAlive(unwrapped);
            // The Managed path's per-thread endpoint remembers the last socket it checked (IPEndPointNonAlloc.CheckedSocket):
            // at most one per thread that received (here the I/O thread and its caller), whatever the number of wrappers.
            int allowed = path == DatagramPath.Managed ? 2 : 0;
            // Under Boehm (mono-boehm, Unity's collector), which keeps any object a word that looks like its address points
            // at, a share of sockets stays alive whatever the library does (16 of 50 in one full run of the suite). There the
            // second oracle is the control group: as many sockets made and used the same way, interleaved, with no wrapper;
            // the wrapped ones may stay alive no more often than those, and a wrapper the engine held would keep all of its 50.
            if (Runtime.IsConservativeCollector) allowed += control + Count / 10;
            Assert.Equal(AwaitsContract.Cell("unreferenced wrapper"), alive <= allowed && alive < Count ? "collected"
                : alive + " of " + Count + " sockets still alive after full collections (without a wrapper: " + control + ")");
            Assert.Equal(before, poller.Registered);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static WeakReference[] LeaveWrappersBehind(int count, out WeakReference[] unwrapped)
        {
            var sockets = new WeakReference[count];
            unwrapped = new WeakReference[count];
            using Socket client = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            for (int i = 0; i < count; i++)
            {
                Socket server = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                var wrapper = new AsyncDatagramSocket(server);
                // One receive that waits, so that the socket was armed in the poller.
                ValueTask<ReceivedDatagram> waiting = wrapper.ReceiveFromAsync(new byte[16]);
                client.SendTo(new byte[] { 1 }, server.LocalEndPoint!);
                Assert.Equal("", Awaits.Outcome(waiting, Bound, out ReceivedDatagram _));
                sockets[i] = new WeakReference(server);

                // The control: a socket made and used alike, read without a wrapper, then let go.
                Socket plain = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                plain.ReceiveTimeout = Bound;
                client.SendTo(new byte[] { 1 }, plain.LocalEndPoint!);
                Assert.Equal(1, plain.Receive(new byte[16]));
                unwrapped[i] = new WeakReference(plain);
            }
            return sockets;
        }

        [Observes(AwaitsContract.Section, "A1", "receive shut down")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithContinuations), MemberType = typeof(Matrix))]
        public void AnAwaitOnASocketShutDownForReceivingEndsWithShutdown(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            // Connected: Mono refuses to shut an unconnected socket down (NotConnected, before any system call).
            pair.Server.Connect(pair.ClientEndPoint);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            AwaitEngine poller = PathDispatch.Engine(path);
            ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(new byte[16]);
            Assert.False(waiting.IsCompleted);
            long emptyBefore = AwaitTestSeam.EmptyReports;
            ShutDownReceiving(pair.Server);
            // Windows reports no readiness for a socket shut down for receiving, and fails the next datagram's receive
            // with WSAESHUTDOWN: there the await ends when one arrives.
            bool windows = System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Windows);
            if (windows) pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            string? outcome = Awaits.Outcome(waiting, Bound, out ReceivedDatagram _);
            Assert.NotNull(outcome); // never a wait for ever
            // On every path: the runtime's paths end with what their synchronous receive reports, which is Shutdown too.
            Assert.Equal(AwaitsContract.Cell("receive shut down"), outcome);
            // A later receive says so too.
            ValueTask<ReceivedDatagram> later = server.ReceiveFromAsync(new byte[16]);
            if (windows) pair.Client.SendTo(new byte[] { 2 }, pair.ServerTarget);
            Assert.Equal("Shutdown", Awaits.Outcome(later, Bound, out ReceivedDatagram _));
            // And the poller never spun on readiness that brought nothing.
            Assert.True(AwaitTestSeam.EmptyReports - emptyBefore <= 2 * AwaitEngine.EmptyReportsBeforeDeferring + 2,
                (AwaitTestSeam.EmptyReports - emptyBefore) + " empty readiness reports");
        }

        /// <summary>
        /// A shutdown for receiving ends the socket's waiting receive, never its waiting send: the socket may still send. The
        /// send waits for room (a stand-in says the buffer is full) while the receive is armed beside it, so the report that
        /// ends the receive (epoll's EPOLLRDHUP) comes with the send's writability; the send goes on waiting, and sends once
        /// there is room. Where the poller reports no shutdown for receiving (WSAPoll), that is said, and checked to be Windows.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void AShutdownForReceivingEndsTheWaitingReceiveNotTheWaitingSend(DatagramContinuations mode)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!AwaitEngine.Native.ReportsReceiveShutDown)
            {
                Assert.True(System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Windows),
                    AwaitEngine.Native.Mechanism + " does not report a shutdown for receiving");
                return;
            }
            using var pair = new Loopback(Family.IPv4);
            // Connected: Mono refuses to shut an unconnected socket down.
            pair.Server.Connect(pair.ClientEndPoint);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            using FullSendBuffer full = FullSendBuffer.Install();
            full.Refusing = true;
            Task<int> send = server.SendToAsync(new byte[] { 7, 8, 9 }, pair.ClientKey).AsTask();
            Assert.False(send.IsCompleted);
            ShutDownReceiving(pair.Server);
            Assert.Equal("Shutdown", Awaits.Outcome(server.ReceiveFromAsync(new byte[16]), Bound, out ReceivedDatagram _));
            // The send is tried again at least once a slice while it waits: two more refusals, and it is still waiting.
            int refused = full.Refused;
            Assert.True(SpinWait.SpinUntil(() => send.IsCompleted || full.Refused >= refused + 2, Bound), "the waiting send was not tried again");
            if (send.IsCompleted) Assert.Fail("the send ended with the receive: " + Awaits.Outcome(new ValueTask<int>(send), 0, out int _));
            full.Refusing = false;
            Assert.Equal("", Awaits.Outcome(new ValueTask<int>(send), Bound, out int sent));
            Assert.Equal(3, sent);
            var arrived = new byte[16];
            Assert.Equal(3, pair.Client.Receive(arrived));
        }

        [Observes(AwaitsContract.Section, "A1", "empty readiness")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ReadinessThatNeverBringsADatagramIsNotSpunOn(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, DatagramContinuations.IoThread);
            AwaitEngine poller = PathDispatch.Engine(path);
            // Readiness that yields nothing, forever: the poller is told the socket is ready, the receive finds nothing.
            AwaitTestSeam.ReportEveryArmedAsReady = true;
            try
            {
                ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(new byte[16]);
                long before = AwaitTestSeam.EmptyReports;
                Thread.Sleep(1_000);
                long empty = AwaitTestSeam.EmptyReports - before;
                // At most a few tries right away, then one per slice (100 ms): never thousands.
                Assert.Equal(AwaitsContract.Cell("empty readiness"),
                    empty <= AwaitEngine.EmptyReportsBeforeDeferring + 1_000 / AwaitEngine.SliceMilliseconds + 3 ? "no spin" : empty + " empty reports in one second");
                Assert.False(waiting.IsCompleted);
                pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
                Assert.Equal("", Awaits.Outcome(waiting, Bound, out ReceivedDatagram _));
            }
            finally
            {
                AwaitTestSeam.ReportEveryArmedAsReady = false;
            }
        }

        private static void ShutDownReceiving(Socket socket) => socket.Shutdown(SocketShutdown.Receive);

        private static bool WaitQuietly(Task task, int timeoutMs)
        {
            try
            {
                return task.Wait(timeoutMs);
            }
            catch (AggregateException)
            {
                return true;
            }
        }
    }
}
