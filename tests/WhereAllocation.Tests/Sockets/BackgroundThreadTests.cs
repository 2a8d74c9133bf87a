using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The library's own threads, the watchdog of kernel waits (Mono on Linux) and the awaits' I/O thread, never end the process
    /// and never stay dead because of what a user, a runtime or the machine did: a thread that cannot be created, a thread that
    /// was aborted, an exception of the library's own questions about a socket. A test whose failure would end its process runs
    /// in a child process (<see cref="ChildProcess"/>), so that the suite reports it and goes on.
    /// </summary>
    public sealed class BackgroundThreadTests : IDisposable
    {
        public void Dispose()
        {
            KernelWaitWatchdog.FailThreadStart = false;
            OsSocketCalls.InUse = null!;
            DatagramPathSettings.Reset();
        }

        /// <summary>
        /// Mono: the watchdog's thread is aborted (as a domain reload or a user's Thread.Abort would), and the next kernel wait
        /// starts a new one, which wakes it at a Dispose; then the runtime cannot create the thread: that receive waits in slices,
        /// still ends at a Dispose, and the next registration starts the thread. Where the runtime wakes its own kernel waits
        /// (CoreCLR), no watchdog ever runs.
        /// </summary>
        [Fact]
        public void TheWatchdogStartsAgainAfterItsThreadDiedOrCouldNotStart()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!WaitPolicy.WatchdogWakes)
            {
                int starts = KernelWaitWatchdog.Starts;
                DisposeDuringAWait();
                Assert.Equal(starts, KernelWaitWatchdog.Starts);
                Assert.Null(KernelWaitWatchdog.CurrentThread);
                return;
            }
            DisposeDuringAWait(); // the thread exists
            Thread dead = AbortTheWatchdog();
            long wakeUps = KernelWaitWatchdog.WakeUps;
            DisposeDuringAWait();
            Assert.True(KernelWaitWatchdog.WakeUps > wakeUps, "the wait after the watchdog's death ended, but not by a new watchdog");
            Assert.NotSame(dead, KernelWaitWatchdog.CurrentThread);

            AbortTheWatchdog();
            Assert.Null(KernelWaitWatchdog.CurrentThread);
            Assert.False(KernelWaitWatchdog.IsRunning, "the watchdog says it runs after its thread ended");
            int failures = KernelWaitWatchdog.StartFailures;
            KernelWaitWatchdog.FailThreadStart = true;
            DisposeDuringAWait(); // in slices: no thread can wake a kernel wait
            Assert.Equal(failures + 1, KernelWaitWatchdog.StartFailures);
            Assert.False(KernelWaitWatchdog.IsRunning, "the watchdog says it runs, though its thread could not be made");
            KernelWaitWatchdog.FailThreadStart = false;
            wakeUps = KernelWaitWatchdog.WakeUps;
            DisposeDuringAWait();
            Assert.True(KernelWaitWatchdog.WakeUps > wakeUps, "the registration after a failed start did not start the watchdog");
        }

        private static void DisposeDuringAWait()
        {
            using var pair = new Loopback(Family.IPv4, 0);
            DisposeDuringWait.AssertEndsWithObjectDisposed(
                () => pair.Server.ReceiveFrom_NonAlloc(new byte[1500], new IPEndPointNonAlloc(IPAddress.Any, 0)),
                () => pair.Server.Dispose());
        }

        private static Thread AbortTheWatchdog()
        {
            Thread watchdog = KernelWaitWatchdog.CurrentThread ?? throw new InvalidOperationException("no watchdog thread to abort");
            Abort(watchdog);
            Assert.True(watchdog.Join(5000), "the aborted watchdog thread did not end");
            return watchdog;
        }

#pragma warning disable SYSLIB0006 // Mono only (KernelWaitsWatched)
        private static void Abort(Thread thread) => thread.Abort();
#pragma warning restore SYSLIB0006

        /// <summary>
        /// Mono: the awaits' I/O thread is aborted while awaits wait on it (as a user's Thread.Abort would; a domain reload ends
        /// the whole engine with its domain): each ends with InvalidOperationException, in either continuation mode, and the
        /// next await starts a new thread that serves it. CoreCLR refuses Thread.Abort.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void AnAbortedIoThreadEndsItsAwaitsAndTheNextStartsAnother(DatagramContinuations mode)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!Runtime.IsMono)
            {
                Assert.Throws<PlatformNotSupportedException>(() => Abort(new Thread(() => { })));
                return;
            }
            using (var pair = new Loopback(Family.IPv4, 0))
            using (var wrapper = new AsyncDatagramSocket(pair.Server, mode))
            {
                Task<ReceivedDatagram> waiting = wrapper.ReceiveFromAsync(new byte[64]).AsTask();
                Assert.False(waiting.IsCompleted, "the await did not wait");
                Thread io = Awaits.IoThread(AwaitEngine.Native) ?? throw new InvalidOperationException("no I/O thread while an await waits");
                Abort(io);
                Assert.True(io.Join(5000), "the aborted I/O thread did not end");
                Assert.True(((IAsyncResult)waiting).AsyncWaitHandle.WaitOne(5000), "the await on the aborted thread never ended");
                Assert.IsType<InvalidOperationException>(waiting.Exception?.InnerException);
                Task<ReceivedDatagram> next = wrapper.ReceiveFromAsync(new byte[64]).AsTask();
                pair.Client.SendTo(new byte[] { 3, 3, 3 }, pair.ServerTarget);
                Assert.True(next.Wait(10_000), "no I/O thread served the await after the abort");
                Assert.Equal(3, next.Result.Length);
                Assert.NotSame(io, AwaitEngine.Native.CurrentThread);
            }
        }

        /// <summary>
        /// The awaits' I/O thread meets an exception of the library's own question about a socket (planted: an OS whose
        /// shutdown question throws on that thread, after two reports that brought nothing): that await ends with the exception,
        /// and the thread goes on serving: an await on another socket gets its datagram. Before, the exception ended the thread,
        /// and with it the process: run in a child process.
        /// </summary>
        [Fact]
        public void TheIoThreadSurvivesAnExceptionOfItsOwnQuestions()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (ChildProcess.Available && !ChildProcess.InChild)
            {
                ChildProcess.AssertPasses(GetType(), nameof(TheIoThreadSurvivesAnExceptionOfItsOwnQuestions));
                return;
            }
            using var planted = ThrowingShutdownQuestion.Install();
            using (var pair = new Loopback(Family.IPv4, 0))
            using (var wrapper = new AsyncDatagramSocket(pair.Server))
            {
                Task<ReceivedDatagram> failing = wrapper.ReceiveFromAsync(new byte[64]).AsTask();
                Assert.False(failing.IsCompleted, "the await did not wait");
                pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget); // readable for ever: the planted receive never takes it
                Assert.True(((IAsyncResult)failing).AsyncWaitHandle.WaitOne(10_000), "the await whose question threw never ended");
                Exception error = Assert.IsType<InvalidOperationException>(failing.Exception?.InnerException);
                Assert.Equal(ThrowingShutdownQuestion.Message, error.Message);
            }
            planted.Dispose();
            using (var pair = new Loopback(Family.IPv4, 0))
            using (var wrapper = new AsyncDatagramSocket(pair.Server))
            {
                Task<ReceivedDatagram> next = wrapper.ReceiveFromAsync(new byte[64]).AsTask();
                pair.Client.SendTo(new byte[] { 1, 2 }, pair.ServerTarget);
                Assert.True(next.Wait(10_000), "the I/O thread served no await after the exception");
                Assert.Equal(2, next.Result.Length);
            }
        }

        /// <summary>This OS, with a receive that never takes the datagram and a shutdown question that throws on the awaits' I/O thread.</summary>
        private sealed unsafe class ThrowingShutdownQuestion : RealOsCalls
        {
            public const string Message = "planted: the shutdown question failed on the I/O thread";

            private ThrowingShutdownQuestion()
                : base("with a shutdown question that throws on the I/O thread")
            {
            }

            public static ThrowingShutdownQuestion Install() => Installed(new ThrowingShutdownQuestion());

            internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                error = SocketError.WouldBlock;
                return -1;
            }

            internal override bool IsReceiveShutDown(IntPtr socket)
            {
                if (Thread.CurrentThread.Name?.StartsWith("where-allocation I/O", StringComparison.Ordinal) == true) throw new InvalidOperationException(Message);
                return Os.IsReceiveShutDown(socket);
            }
        }
    }
}
