using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The native path's receive that waits, in both of its shapes: in the kernel (one <c>recvfrom</c> that the kernel ends
    /// when the datagram comes, where the OS has such a receive and the runtime's Dispose wakes it) and in slices (a try,
    /// then <c>poll</c> in slices that check for Dispose between them). Each shape keeps the contract's waiting cells, and
    /// the calls it makes to the OS are counted: the kernel shape makes one per datagram.
    /// </summary>
    public sealed class ReceiveWaitTests : IDisposable
    {
        private readonly bool _defaultShape = WaitPolicy.WaitsInKernel;
        private CountedReceives? _sliced;

        /// <summary>
        /// Each test starts where a process starts: on Mono (the watchdog wakes kernel waits) with no run of kernel waits, so a
        /// receive tries first. The run is the process's: left as a test before left it, the counts below would depend on
        /// the order the runner chose (a receive that found nothing queued starts a run, and the next go to the kernel at once).
        /// </summary>
        public ReceiveWaitTests()
        {
            if (WaitPolicy.WatchdogWakes) WaitPolicy.KernelRun = 0;
        }

        public void Dispose()
        {
            _sliced?.Dispose();
            DatagramPathSettings.Reset();
        }

        /// <summary>
        /// Sets the shape a test runs in: slices everywhere (the fallback of every wait: through the OS seam, an OS that has no
        /// receive that waits in the kernel, <paramref name="calls"/> when the test counts its calls), the kernel's where it is
        /// the default. Where it is not (macOS, Windows) a test of the kernel's shape checks just that and ends.
        /// </summary>
        private bool Use(bool inKernel, CountedReceives? calls = null)
        {
            if (inKernel && !_defaultShape)
            {
                Assert.False(WaitPolicy.WaitsInKernel, "the kernel's wait is not this runtime's default, yet it is in use");
                return false;
            }
            if (!inKernel)
            {
                if (calls == null) calls = _sliced = CountedReceives.Install();
                calls.KernelWaits = false;
                Assert.False(WaitPolicy.WaitsInKernel, "an OS without a receive that waits in the kernel is in use, yet the kernel waits");
            }
            return true;
        }

        [Fact]
        public void TheKernelWaitsWhereTheOsHasSuchAReceiveAndADisposeWakesIt()
        {
            // Linux has the receive; CoreCLR's Dispose shuts the socket down until the last reference is released, Mono's
            // closes it only then and wakes only its own calls, so there the library's watchdog wakes it.
            bool linux = RuntimeInformation.IsOSPlatform(OSPlatform.Linux);
            Assert.Equal(linux, OsSocketCalls.Current.HasWaitingReceive);
            Assert.Equal(linux, WaitPolicy.WaitsInKernel);
            Assert.Equal(linux && Runtime.IsMono, WaitPolicy.WatchdogWakes);
            using (var claims = CountedReceives.Install())
            {
                // Never where the OS the process runs on has no such receive, whatever an OS in between claims.
                claims.ClaimsWaitingReceive = true;
                Assert.Equal(linux, WaitPolicy.WaitsInKernel);
                // And never while the OS in use has none: the policy asks it at each wait, never from a copy.
                claims.ClaimsWaitingReceive = false;
                Assert.False(WaitPolicy.WaitsInKernel);
            }
            Assert.Equal(linux, WaitPolicy.WaitsInKernel);
        }

#if !MONO_RUNNER // netstandard2.1, the Mono suite's target, has no SafeSocketHandle: no Socket over a non-owning handle is made there
        /// <summary>
        /// A Socket over a handle that does not own its descriptor: CoreCLR's Dispose does not shut such a descriptor down (the
        /// runtime's own receive waiting on it goes on waiting), so the library waits in slices there and still ends in
        /// ObjectDisposedException. The handles of ordinary sockets are told apart from it (where the kernel waits at all).
        /// </summary>
        [Fact]
        public void ASocketOverANonOwningHandleStillEndsWithObjectDisposed()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            var wrapper = new Socket(new SafeSocketHandle(pair.Server.Handle, ownsHandle: false));
            if (WaitPolicy.WaitsInKernel)
            {
                Assert.True(WaitPolicy.DisposeWakesKernelWait(SocketHandles.Get(pair.Server)), "an ordinary socket's handle was not seen owning its descriptor");
                Assert.False(WaitPolicy.DisposeWakesKernelWait(SocketHandles.Get(wrapper)), "a non-owning handle was seen owning its descriptor");
            }
            DisposeDuringWait.AssertEndsWithObjectDisposed(
                () => wrapper.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)),
                () => wrapper.Dispose());
        }
#endif

        /// <summary>
        /// The close-on-exec flag that decides a kernel wait on CoreCLR (WaitPolicy.DisposeWakesKernelWait) costs one system
        /// call at a socket's first receive, none per datagram after it, whichever its answer (a descriptor without the flag, as
        /// systemd hands a server, must not pay a call per datagram either); Mono asks it never (its watchdog wakes a wait
        /// whatever the flag), nor does an OS whose receives do not wait in the kernel.
        /// </summary>
        [Theory]
        [InlineData(true)]
        [InlineData(false)]
        public void TheCloseOnExecFlagIsAskedOncePerSocketNotPerDatagram(bool closeOnExec)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4, 5000);
            if (!closeOnExec)
            {
                if (System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Windows)) return; // no such flag: asked never (true above)
                Assert.True(Fcntl((int)pair.Server.Handle, SetDescriptorFlags, 0) == 0, "fcntl(F_SETFD) failed");
            }
            using var calls = CountedReceives.Install();
            var buffer = new byte[64];
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            for (int i = 0; i < 100; i++)
            {
                pair.Client.SendTo(new byte[] { (byte)i }, pair.ServerTarget);
                Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            }
            bool asks = WaitPolicy.WaitsInKernel && !WaitPolicy.WatchdogWakes;
            Assert.Equal(asks ? 1 : 0, calls.CloseOnExecReads);
            if (asks) Assert.Equal(closeOnExec, WaitPolicy.DisposeWakesKernelWait(SocketHandles.Get(pair.Server)));
        }

        [System.Runtime.InteropServices.DllImport("libc", SetLastError = true, EntryPoint = "fcntl")]
        private static extern int Fcntl(int descriptor, int command, int argument);

        private const int SetDescriptorFlags = 2;

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void AWaitingReceiveGetsTheDatagramThatComesLater(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var calls = CountedReceives.Install();
            if (!Use(inKernel, calls)) return;
            using var pair = new Loopback(Family.IPv4);
            var buffer = new byte[1500];
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            // On Mono a try comes first while the receives before found datagrams queued, and the receives after one that found
            // nothing go straight to the kernel's wait: one such receive first, whose counts are left out.
            if (inKernel) FindNothingFirst(pair, 5000);
            string before = calls.Counts;
            using (SendLater(pair, new byte[] { 1, 2, 3, 4, 5 }))
            {
                int length = pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                Assert.Equal(5, length);
                Assert.Equal(pair.ClientEndPoint.Port, from.Port);
            }
            if (inKernel)
            {
                // One call, which the kernel ended when the datagram came: no try before it, no poll, no timeout read.
                Assert.Equal(WaitPolicy.WatchdogWakes ? "waiting 1, non-waiting 1, polls 0, timeout reads 1" : "waiting 0, non-waiting 0, polls 0, timeout reads 0", before);
                Assert.Equal(WaitPolicy.WatchdogWakes ? "waiting 2, non-waiting 1, polls 0, timeout reads 1" : "waiting 1, non-waiting 0, polls 0, timeout reads 0", calls.Counts);
            }
            else
            {
                // A try that found nothing, the timeout read once, polls until the datagram came, and the receive after the last,
                // which asks no readiness of its own (Windows: no second WSAPoll).
                Assert.Equal(2, calls.NonWaiting);
                Assert.Equal(1, calls.AfterReadiness);
                Assert.Equal(0, calls.Waiting);
                Assert.True(calls.Polls >= 1, calls.Counts);
                Assert.Equal(1, calls.TimeoutReads);
            }
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void AQueuedDatagramTakesOneCallInEitherShape(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Client.SendTo(new byte[] { 7, 7, 7 }, pair.ServerTarget);
            Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead), "the datagram did not arrive");
            using var calls = CountedReceives.Install();
            if (!Use(inKernel, calls)) return;
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, from));
            // On Mono the kernel's wait is the one call only after a receive that found nothing queued (see the test above).
            Assert.Equal(inKernel && !WaitPolicy.WatchdogWakes ? "waiting 1, non-waiting 0, polls 0, timeout reads 0" : "waiting 0, non-waiting 1, polls 0, timeout reads 0", calls.Counts);
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void TheReceiveTimeoutEndsTheWaitWithTimedOut(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4, 200);
            using var calls = CountedReceives.Install();
            if (!Use(inKernel, calls)) return;
            var error = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)));
            Assert.Equal(SocketError.TimedOut, error.SocketErrorCode);
            // In the kernel: its one receive, ended by the socket's timeout, which is then read to tell that from a descriptor
            // in non-blocking mode; no wait after it.
            if (inKernel) Assert.Equal(WaitPolicy.WatchdogWakes ? "waiting 1, non-waiting 1, polls 0, timeout reads 1" : "waiting 1, non-waiting 0, polls 0, timeout reads 1", calls.Counts);
            else Assert.Equal(1, calls.TimeoutReads);
            // The socket's own timeout, in the kernel where the runtime's own receive reads it, is untouched.
            Assert.Equal(200, OsSocketCalls.Current.ReceiveTimeoutMilliseconds(pair.Server.Handle));
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void DisposeDuringTheWaitEndsItWithObjectDisposed(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(inKernel)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            DisposeDuringWait.AssertEndsWithObjectDisposed(
                () => pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)),
                () => pair.Server.Dispose());
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void AReceiveOnlyShutdownEndsTheWaitAtOnce(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(inKernel)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            pair.Server.Connect(pair.ClientEndPoint); // the runtime's Shutdown refuses an unconnected socket
            Exception? caught = null;
            var thread = new Thread(() =>
            {
                try { pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)); }
                catch (Exception e) { caught = e; }
            }) { IsBackground = true };
            thread.Start();
            Thread.Sleep(200);
            pair.Server.Shutdown(SocketShutdown.Receive);
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows))
            {
                // docs/CONTRACT.md's Windows difference: WSAPoll never calls a socket shut down for receiving readable, so the
                // wait goes on as on an empty socket, until Dispose ends it.
                Assert.False(thread.Join(300), "on Windows the shutdown ended the wait: " + caught);
                pair.Server.Dispose();
                Assert.True(thread.Join(5000), "the waiting receive did not return after Dispose");
                Assert.IsType<ObjectDisposedException>(caught);
                return;
            }
            Assert.True(thread.Join(5000), "the waiting receive did not return after the shutdown");
            var error = Assert.IsType<SocketException>(caught);
            Assert.Equal(SocketError.Shutdown, error.SocketErrorCode);
        }

        /// <summary>
        /// A blocking Socket whose descriptor the runtime made non-blocking for its own asynchronous calls (CoreCLR keeps it so for
        /// good): the kernel's receive answers at once there, and the wait goes on in slices, still getting the datagram that comes later.
        /// </summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ADescriptorLeftNonBlockingStillWaits(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(inKernel)) return;
            using var pair = new Loopback(Family.IPv4, 2000);
            Task<SocketReceiveFromResult> first = pair.Server.ReceiveFromAsync(new ArraySegment<byte>(new byte[64]), SocketFlags.None, new IPEndPoint(IPAddress.Any, 0));
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            Assert.True(first.Wait(10_000), "the asynchronous receive did not end");
            Assert.Equal(1, first.Result.ReceivedBytes);
            Assert.True(pair.Server.Blocking);
            using var later = SendLater(pair, new byte[] { 9, 9 });
            Assert.Equal(2, pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)));
            var error = Assert.Throws<SocketException>(() =>
            {
                pair.Server.ReceiveTimeout = 200;
                pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0));
            });
            Assert.Equal(SocketError.TimedOut, error.SocketErrorCode);
        }

        // ----- the library's own wake-up of kernel waits (Mono on Linux: KernelWaitWatchdog) -----

        /// <summary>
        /// A receive waiting in the kernel on Mono is registered with the watchdog for the length of its one call (and counted
        /// among the library's waits); on CoreCLR, whose Dispose wakes it itself, nothing registers and no watchdog runs.
        /// </summary>
        [Fact]
        public void AKernelWaitIsRegisteredWithTheWatchdogWhereTheRuntimeDoesNotWakeIt()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(true)) return;
            int starts = KernelWaitWatchdog.Starts;
            using var pair = new Loopback(Family.IPv4, 20_000);
            using var calls = CountedReceives.Install();
            FindNothingFirst(pair, 20_000);
            int nonWaiting = calls.NonWaiting;
            int waiting = calls.Waiting;
            int others = calls.Polls + calls.TimeoutReads;
            int length = 0;
            int before = DisposeDuringWait.CountBefore();
            var thread = new Thread(() => length = pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0))) { IsBackground = true };
            thread.Start();
            Assert.True(DisposeDuringWait.UntilInside(before, thread), "the receive never reached its wait");
            Assert.Equal(WaitPolicy.WatchdogWakes, KernelWaitWatchdog.IsWaiting(pair.Server));
            Assert.Equal(WaitPolicy.WatchdogWakes, KernelWaitWatchdog.IsRunning); // it cannot end while a receive is registered
            pair.Client.SendTo(new byte[] { 4, 4, 4, 4 }, pair.ServerTarget);
            Assert.True(thread.Join(10_000), "the waiting receive did not return with the datagram");
            Assert.Equal(4, length);
            Assert.False(KernelWaitWatchdog.IsWaiting(pair.Server), "the receive left its registration behind");
            // One call to the OS, the kernel's wait: no try before it, no poll, no timeout read.
            Assert.Equal(waiting + 1, calls.Waiting);
            Assert.Equal(nonWaiting, calls.NonWaiting);
            Assert.Equal(others, calls.Polls + calls.TimeoutReads);
            if (!WaitPolicy.WatchdogWakes) Assert.Equal(starts, KernelWaitWatchdog.Starts);
        }

        /// <summary>
        /// A Dispose on another thread during a Mono kernel wait ends it with ObjectDisposedException, bounded by the watchdog's
        /// tick: the watchdog shut the disposed socket down (its count of wake-ups says so). With the wake-up turned off the
        /// receive would wait for a datagram that never comes. On CoreCLR the runtime's Dispose wakes it, and the watchdog is not involved.
        /// </summary>
        [Fact]
        public void DisposeDuringAKernelWaitIsWokenByTheWatchdogWhereTheRuntimeDoesNot()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(true)) return;
            long wakeUps = KernelWaitWatchdog.WakeUps;
            using var pair = new Loopback(Family.IPv4, 0);
            DisposeDuringWait.AssertEndsWithObjectDisposed(
                () => pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)),
                () => pair.Server.Dispose());
            if (WaitPolicy.WatchdogWakes) Assert.True(KernelWaitWatchdog.WakeUps > wakeUps, "the wait ended, but not by the watchdog's wake-up");
            else Assert.Equal(wakeUps, KernelWaitWatchdog.WakeUps);
        }

        /// <summary>
        /// Two receives wait in the kernel on two sockets; one socket is disposed, and its receive ends. The other is never shut
        /// down by the watchdog: after several more of its ticks it still waits, is not shut down for receiving, and gets the
        /// datagram that comes then.
        /// </summary>
        [Fact]
        public void TheWatchdogNeverShutsDownASocketThatIsNotDisposed()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(true)) return;
            using var disposed = new Loopback(Family.IPv4, 20_000);
            using var live = new Loopback(Family.IPv4, 20_000);
            Exception? disposedEnd = null, liveEnd = null;
            int liveLength = 0;
            int before = DisposeDuringWait.CountBefore();
            var first = new Thread(() =>
            {
                try { disposed.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)); }
                catch (Exception e) { disposedEnd = e; }
            }) { IsBackground = true };
            var second = new Thread(() =>
            {
                try { liveLength = live.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)); }
                catch (Exception e) { liveEnd = e; }
            }) { IsBackground = true };
            first.Start();
            Assert.True(DisposeDuringWait.UntilInside(before, first), "the first receive never reached its wait");
            second.Start();
            Assert.True(DisposeDuringWait.UntilInside(before + 1, second), "the second receive never reached its wait");
            disposed.Server.Dispose();
            Assert.True(first.Join(10_000), "the receive on the disposed socket did not end");
            Assert.IsType<ObjectDisposedException>(disposedEnd);
            if (WaitPolicy.WatchdogWakes)
            {
                long ticks = KernelWaitWatchdog.Ticks;
                var watch = System.Diagnostics.Stopwatch.StartNew();
                while (KernelWaitWatchdog.Ticks < ticks + 4 && watch.ElapsedMilliseconds < 10_000) Thread.Sleep(5);
                Assert.True(KernelWaitWatchdog.Ticks >= ticks + 4, "the watchdog made no more ticks while a receive waited");
            }
            else
            {
                Thread.Sleep(100);
            }
            Assert.True(second.IsAlive, "the receive on the socket that was not disposed ended: " + liveEnd);
            Assert.False(OsSocketCalls.Current.IsReceiveShutDown(live.Server.Handle), "the socket that was not disposed was shut down");
            live.Client.SendTo(new byte[] { 8, 8 }, live.ServerTarget);
            Assert.True(second.Join(10_000), "the receive on the live socket did not get its datagram");
            Assert.Null(liveEnd);
            Assert.Equal(2, liveLength);
        }

        /// <summary>
        /// The watchdog runs only while kernel waits come: a second after the last, it ends its thread, and the next kernel wait
        /// starts it again. Where the runtime wakes its own waits it never starts.
        /// </summary>
        [Fact]
        public void TheWatchdogEndsWhenNoReceiveWaitsAndStartsAgainWithTheNext()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Use(true)) return;
            using var pair = new Loopback(Family.IPv4, 20_000);
            int starts = KernelWaitWatchdog.Starts;
            WaitOnce(pair);
            var watch = System.Diagnostics.Stopwatch.StartNew();
            while (KernelWaitWatchdog.IsRunning && watch.ElapsedMilliseconds < 30_000) Thread.Sleep(20);
            Assert.False(KernelWaitWatchdog.IsRunning, "the watchdog still runs 30 s after the last kernel wait");
            int stoppedAt = KernelWaitWatchdog.Starts;
            WaitOnce(pair);
            if (WaitPolicy.WatchdogWakes) Assert.Equal(stoppedAt + 1, KernelWaitWatchdog.Starts);
            else Assert.Equal(starts, KernelWaitWatchdog.Starts);
        }

        /// <summary>
        /// On Mono, one receive that finds nothing queued and times out (the socket's timeout is set to 1 ms for it, then to
        /// <paramref name="timeoutAfter"/>): the one-call receives after it go straight to the kernel's wait instead of trying
        /// first (see WaitPolicy.KernelRun). Elsewhere nothing.
        /// </summary>
        private static void FindNothingFirst(Loopback pair, int timeoutAfter)
        {
            if (!WaitPolicy.WatchdogWakes) return;
            pair.Server.ReceiveTimeout = 1;
            var error = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)));
            Assert.Equal(SocketError.TimedOut, error.SocketErrorCode);
            pair.Server.ReceiveTimeout = timeoutAfter;
        }

        /// <summary>One receive that waits in the kernel until a datagram comes; while it waits the watchdog runs (where it is used at all).</summary>
        private static void WaitOnce(Loopback pair)
        {
            int length = 0;
            int before = DisposeDuringWait.CountBefore();
            var thread = new Thread(() => length = pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0))) { IsBackground = true };
            thread.Start();
            Assert.True(DisposeDuringWait.UntilInside(before, thread), "the receive never reached its wait");
            Assert.Equal(WaitPolicy.WatchdogWakes, KernelWaitWatchdog.IsRunning);
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            Assert.True(thread.Join(10_000), "the waiting receive did not return with the datagram");
            Assert.Equal(1, length);
        }

        // ----- the batch's wait without a limit (recvmmsg mode) -----

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ABatchWaitingWithoutALimitGetsTheDatagramThatComesLater(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native) || !DatagramBatch.IsModeAvailable(DatagramBatchMode.MultiMessage)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            using var batch = new DatagramBatch(8, 1500, DatagramBatchMode.MultiMessage);
            using var calls = CountedReceives.Install();
            if (!Use(inKernel, calls)) return;
            using (SendLater(pair, new byte[] { 1, 2, 3 }))
                Assert.Equal(1, batch.Receive(pair.Server, Timeout.Infinite));
            Assert.Equal(3, batch.GetDatagram(0, out EndPointKey sender).Length);
            Assert.Equal(EndPointKey.FromIPEndPoint(pair.ClientEndPoint), sender);
            if (inKernel) Assert.Equal("waiting 1, non-waiting 0, polls 0, timeout reads 0", calls.Counts);
            else
            {
                Assert.Equal(0, calls.Waiting);
                Assert.Equal(2, calls.NonWaiting);
                Assert.True(calls.Polls >= 1, calls.Counts);
            }
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ABatchWaitingWithoutALimitEndsWithObjectDisposed(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native) || !DatagramBatch.IsModeAvailable(DatagramBatchMode.MultiMessage)) return;
            if (!Use(inKernel)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            using var batch = new DatagramBatch(8, 1500, DatagramBatchMode.MultiMessage);
            DisposeDuringWait.AssertEndsWithObjectDisposed(() => batch.Receive(pair.Server, Timeout.Infinite), () => pair.Server.Dispose());
        }

        /// <summary>A shutdown ends the batch's wait with Shutdown; the same batch then receives on another socket with each sender named.</summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ABatchWaitEndedByAShutdownLeavesTheBatchWhole(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native) || !DatagramBatch.IsModeAvailable(DatagramBatchMode.MultiMessage)) return;
            if (!Use(inKernel)) return;
            using var batch = new DatagramBatch(8, 1500, DatagramBatchMode.MultiMessage);
            using (var pair = new Loopback(Family.IPv4, 0))
            {
                pair.Server.Connect(pair.ClientEndPoint);
                Exception? caught = null;
                var thread = new Thread(() =>
                {
                    try { batch.Receive(pair.Server, Timeout.Infinite); }
                    catch (Exception e) { caught = e; }
                }) { IsBackground = true };
                thread.Start();
                Thread.Sleep(200);
                pair.Server.Shutdown(SocketShutdown.Receive);
                Assert.True(thread.Join(5000), "the waiting batch did not return after the shutdown");
                Assert.Equal(SocketError.Shutdown, Assert.IsType<SocketException>(caught).SocketErrorCode);
            }
            using (var pair = new Loopback(Family.IPv4, 0))
            {
                pair.Client.SendTo(new byte[] { 5, 6 }, pair.ServerTarget);
                Assert.Equal(1, batch.Receive(pair.Server, 5000));
                Assert.Equal(2, batch.GetDatagram(0, out EndPointKey sender).Length);
                Assert.Equal(EndPointKey.FromIPEndPoint(pair.ClientEndPoint), sender);
            }
        }

        // ----- a wait in slices asks the OS once whether the datagram came -----

        /// <summary>
        /// A receive that waits in slices (Windows' only shape; forced elsewhere) asks the OS whether a datagram came once per
        /// wait: the slice's poll that says readable is the question, and the receive after it asks nothing more
        /// (<see cref="OsSocketCalls.ReceiveAfterReadiness"/>: on Windows the overlapped WSARecvFrom without WSAPoll, where a plain
        /// receive checks with WSAPoll first). Counted through the OS seam for the one-call receive and for the batch's
        /// slot-by-slot calls: before, the receive after the wait was a plain one, a second WSAPoll on Windows.
        /// </summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void AReceiveThatWaitedInSlicesAsksForReadinessOnce(bool batch)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4, 5000);
            using var slots = new DatagramBatch(8, 1500, DatagramBatchMode.SingleCalls);
            using var calls = CountedReceives.Install();
            Assert.True(Use(false, calls));
            using (SendLater(pair, new byte[] { 6, 6, 6 }))
            {
                if (batch) Assert.Equal(1, slots.Receive(pair.Server, 5000));
                else Assert.Equal(3, pair.Server.ReceiveFrom_NonAlloc(new byte[1500], 0, 1500, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)));
            }
            Assert.True(calls.Polls >= 1, calls.Counts);
            // The try that found nothing (a WSAPoll on Windows), the wait's polls, then the receive without a question of its
            // own; a batch then tries its next slot, which finds the queue empty.
            Assert.Equal(1, calls.AfterReadiness);
            Assert.Equal(batch ? 3 : 2, calls.NonWaiting);
            Assert.Equal(0, calls.Waiting);
        }

        // ----- the coalesced batch's wait without a limit -----

        /// <summary>
        /// A coalesced batch (UDP_GRO) that waits without a limit waits in the kernel too, where the other receives do: its first
        /// <c>recvmsg</c> without MSG_DONTWAIT, which the datagram ends, then one that finds the queue empty; no try before the
        /// wait, no poll. In slices: a try that found nothing, polls until the datagram came, the receive after them and the one
        /// that finds the queue empty.
        /// </summary>
        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ACoalescedBatchWaitingWithoutALimitGetsTheDatagramThatComesLater(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native) || !DatagramBatch.IsCoalescedReceiveAvailable) return; // the refusal elsewhere: SegmentationTests
            using var pair = new Loopback(Family.IPv4, 0);
            pair.Server.EnableCoalescedReceive();
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500, DatagramBatchMode.MultiMessage) { CoalescedReceive = true };
            using var calls = CountedReceives.Install();
            if (!Use(inKernel, calls)) return;
            for (int wakeUp = 0; wakeUp < 3; wakeUp++)
            {
                string before = calls.Counts;
                using (SendLater(pair, new byte[] { 1, 2, (byte)wakeUp }))
                    Assert.Equal(1, batch.Receive(pair.Server, Timeout.Infinite));
                Assert.Equal(3, batch.GetDatagram(0, out EndPointKey sender).Length);
                Assert.Equal(EndPointKey.FromIPEndPoint(pair.ClientEndPoint), sender);
                string after = calls.Counts;
                calls.Reset();
                if (inKernel) Assert.Equal("waiting 1, non-waiting 1, polls 0, timeout reads 0", after);
                else
                {
                    Assert.True(calls.Waiting == 0 && calls.NonWaiting == 0, before);
                    Assert.Contains("waiting 0, non-waiting 3, polls ", after);
                }
            }
        }

        [Theory]
        [InlineData(false)]
        [InlineData(true)]
        public void ACoalescedBatchWaitingWithoutALimitEndsWithObjectDisposed(bool inKernel)
        {
            if (!Paths.TryForce(DatagramPath.Native) || !DatagramBatch.IsCoalescedReceiveAvailable) return;
            if (!Use(inKernel)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            pair.Server.EnableCoalescedReceive();
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500, DatagramBatchMode.MultiMessage) { CoalescedReceive = true };
            DisposeDuringWait.AssertEndsWithObjectDisposed(() => batch.Receive(pair.Server, Timeout.Infinite), () => pair.Server.Dispose());
        }

        /// <summary>Sends <paramref name="payload"/> to the server 150 ms from now, on a thread of its own; Dispose waits for it.</summary>
        private static SentLater SendLater(Loopback pair, byte[] payload) => new SentLater(pair, payload);

        private sealed class SentLater : IDisposable
        {
            private readonly Thread _thread;

            public SentLater(Loopback pair, byte[] payload)
            {
                _thread = new Thread(() =>
                {
                    Thread.Sleep(150);
                    pair.Client.SendTo(payload, pair.ServerTarget);
                }) { IsBackground = true };
                _thread.Start();
            }

            public void Dispose() => Assert.True(_thread.Join(10_000), "the sending thread did not end");
        }

        /// <summary>The OS this process runs on, with the receive side's calls counted.</summary>
        private sealed unsafe class CountedReceives : RealOsCalls
        {
            private int _waiting, _nonWaiting, _polls, _timeoutReads;

            private CountedReceives()
                : base("with its receive calls counted")
            {
            }

            public static CountedReceives Install() => Installed(new CountedReceives());

            public int Waiting => Volatile.Read(ref _waiting);
            public int NonWaiting => Volatile.Read(ref _nonWaiting);
            public int Polls => Volatile.Read(ref _polls);
            public int TimeoutReads => Volatile.Read(ref _timeoutReads);
            public int CloseOnExecReads => Volatile.Read(ref _closeOnExecReads);

            private int _closeOnExecReads;

            internal override bool IsCloseOnExec(IntPtr socket)
            {
                Interlocked.Increment(ref _closeOnExecReads);
                return Os.IsCloseOnExec(socket);
            }
            public string Counts => "waiting " + Waiting + ", non-waiting " + NonWaiting + ", polls " + Polls + ", timeout reads " + TimeoutReads;

            /// <summary>False: this OS has no receive that waits in the kernel, and every wait is sliced.</summary>
            public bool KernelWaits { get; set; } = true;

            /// <summary>Not null: what this OS claims of its receive that waits in the kernel, whatever it has.</summary>
            public bool? ClaimsWaitingReceive { get; set; }

            internal override bool HasWaitingReceive => ClaimsWaitingReceive ?? (KernelWaits && Os.HasWaitingReceive);

            internal override long ReceiveWaiting(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                Interlocked.Increment(ref _waiting);
                return Os.ReceiveWaiting(socket, payload, size, peek, address, addressLength, out error);
            }

            internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                Interlocked.Increment(ref _nonWaiting);
                return Os.Receive(socket, payload, size, peek, address, addressLength, out error);
            }

            /// <summary>Counted among the non-waiting receives, and apart: a receive right after a wait said readable, which asks no readiness of its own.</summary>
            internal override long ReceiveAfterReadiness(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                Interlocked.Increment(ref _nonWaiting);
                Interlocked.Increment(ref _afterReadiness);
                return Os.ReceiveAfterReadiness(socket, payload, size, peek, address, addressLength, out error);
            }

            private int _afterReadiness;

            /// <summary>Receives made right after a wait said readable (<see cref="OsSocketCalls.ReceiveAfterReadiness"/>), among <see cref="NonWaiting"/>.</summary>
            public int AfterReadiness => Volatile.Read(ref _afterReadiness);

            internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
            {
                Interlocked.Increment(ref _polls);
                return Os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
            }

            internal override int ReceiveTimeoutMilliseconds(IntPtr socket)
            {
                Interlocked.Increment(ref _timeoutReads);
                return Os.ReceiveTimeoutMilliseconds(socket);
            }

            internal override bool IsReceiveShutDown(IntPtr socket) => Os.IsReceiveShutDown(socket);

            internal override bool HasMultiMessage => Os.HasMultiMessage;

            internal override int ReceiveMany(IntPtr socket, Interop.Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
            {
                Interlocked.Increment(ref _nonWaiting);
                return Os.ReceiveMany(socket, messages, count, out error);
            }

            internal override int ReceiveManyWaiting(IntPtr socket, Interop.Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
            {
                Interlocked.Increment(ref _waiting);
                return Os.ReceiveManyWaiting(socket, messages, count, out error);
            }

            internal override bool HasCoalescedReceive => Os.HasCoalescedReceive;

            internal override int CoalescedReceiveControlRoom => Os.CoalescedReceiveControlRoom;

            internal override SocketError EnableCoalescedReceive(IntPtr socket) => Os.EnableCoalescedReceive(socket);

            internal override long ReceiveCoalesced(IntPtr socket, Interop.Libc.LinuxMsgHdr* message, bool wait, out int segmentSize, out bool cut, out bool unsplittable, out SocketError error)
            {
                Interlocked.Increment(ref wait ? ref _waiting : ref _nonWaiting);
                return Os.ReceiveCoalesced(socket, message, wait, out segmentSize, out cut, out unsplittable, out error);
            }

            /// <summary>Every count back to 0.</summary>
            public void Reset()
            {
                Volatile.Write(ref _waiting, 0);
                Volatile.Write(ref _nonWaiting, 0);
                Volatile.Write(ref _polls, 0);
                Volatile.Write(ref _timeoutReads, 0);
                Volatile.Write(ref _afterReadiness, 0);
            }
        }
    }
}
