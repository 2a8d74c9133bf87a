using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The calls an await that waits makes on the native path, counted, never timed: what goes through the library's OS
    /// layer (a stand-in that passes every call on to the real OS and counts those made on one socket) and the armings of
    /// the socket in the engine's poller (one <c>epoll_ctl</c> or <c>kevent</c> each). The engine's own wait
    /// (<c>epoll_wait</c>) serves every socket at once and is not counted here. Native only: the runtime's paths receive
    /// through the runtime's Socket, which the OS layer does not see.
    /// </summary>
    public sealed class AwaitCallsTests : IDisposable
    {
        private const int Bound = 10_000;

        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary>
        /// One receive at the call (it finds nothing), one arming, one receive after the report (which asks no readiness of its
        /// own: on Windows no second WSAPoll after the poller's, see <see cref="OsSocketCalls.ReceiveAfterReadiness"/>), and nothing else once a wait
        /// of the wrapper has received a datagram: in particular no question whether the socket was shut down for receiving,
        /// which the poller answers with its report (epoll, kqueue). The wrapper's first await still asks it once at the call,
        /// so that an await on a socket shut down before it ends at once, as the synchronous receive does; where the poller
        /// reports no such thing (WSAPoll) every try asks, and Windows answers without a system call.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void AnAwaitThatWaitsMakesTwoReceivesAndOneArming(DatagramContinuations mode)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4, 0);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            int later = AwaitEngine.Native.ReportsReceiveShutDown ? 0 : 1;
            Assert.Equal("receives 2, after readiness 1, shutdown questions 1, polls 0, armings 1", WaitedAwait(pair, server));
            Assert.Equal("receives 2, after readiness 1, shutdown questions " + later + ", polls 0, armings 1", WaitedAwait(pair, server));
            Assert.Equal("receives 2, after readiness 1, shutdown questions " + later + ", polls 0, armings 1", WaitedAwait(pair, server));
        }

        /// <summary>
        /// An await on a socket shut down for receiving after its wrapper's waits received datagrams ends with Shutdown
        /// without asking the OS whether it was: the try at the call finds nothing, the poller reports the socket at once as
        /// hung up for reading, the try after the report finds nothing, and the engine ends the await. Where the poller
        /// reports no such thing (WSAPoll: Windows reports no readiness at all for such a socket, see docs/CONTRACT.md) that
        /// is said, and checked to be Windows.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void AnAwaitOnASocketShutDownForReceivingLearnsItFromTheReport(DatagramContinuations mode)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            if (!AwaitEngine.Native.ReportsReceiveShutDown)
            {
                Assert.True(RuntimeInformation.IsOSPlatform(OSPlatform.Windows), AwaitEngine.Native.Mechanism + " does not report a shutdown for receiving");
                return;
            }
            using var pair = new Loopback(Family.IPv4, 0);
            // Connected: Mono refuses to shut an unconnected socket down.
            pair.Server.Connect(pair.ClientEndPoint);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            WaitedAwait(pair, server);
            pair.Server.Shutdown(SocketShutdown.Receive);
            using CountedCalls calls = CountedCalls.Install(pair.Server);
            int armings = server.Awaited.Arming;
            Assert.Equal("Shutdown", Awaits.Outcome(server.ReceiveFromAsync(new byte[16]), Bound, out ReceivedDatagram _));
            Assert.Equal("receives 2, after readiness 1, shutdown questions 0, polls 0, armings 1", calls.Counts + ", armings " + (server.Awaited.Arming - armings));
        }

        /// <summary>One await that has to wait, ended by a datagram the client sends once it waits: the calls it made, counted.</summary>
        private static string WaitedAwait(Loopback pair, AsyncDatagramSocket server)
        {
            using CountedCalls calls = CountedCalls.Install(pair.Server);
            int armings = server.Awaited.Arming;
            ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(new byte[16]);
            Assert.False(waiting.IsCompleted);
            pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
            Assert.Equal("", Awaits.Outcome(waiting, Bound, out ReceivedDatagram datagram));
            Assert.Equal(3, datagram.Length);
            return calls.Counts + ", armings " + (server.Awaited.Arming - armings);
        }

        /// <summary>The OS this process runs on, with the calls made on one socket counted.</summary>
        private sealed unsafe class CountedCalls : RealOsCalls
        {
            private readonly IntPtr _socket;
            private int _receives, _readied, _questions, _polls;

            private CountedCalls(IntPtr socket)
                : base("with one socket's calls counted")
            {
                _socket = socket;
            }

            public static CountedCalls Install(Socket socket) => Installed(new CountedCalls(SocketHandles.Get(socket).DangerousGetHandle()));

            public string Counts =>
                "receives " + Volatile.Read(ref _receives) + ", after readiness " + Volatile.Read(ref _readied) + ", shutdown questions " + Volatile.Read(ref _questions) + ", polls " + Volatile.Read(ref _polls);

            private void Count(IntPtr socket, ref int counter)
            {
                if (socket == _socket) Interlocked.Increment(ref counter);
            }

            internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                Count(socket, ref _receives);
                return Os.Receive(socket, payload, size, peek, address, addressLength, out error);
            }

            internal override long ReceiveAfterReadiness(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
            {
                Count(socket, ref _receives);
                Count(socket, ref _readied);
                return Os.ReceiveAfterReadiness(socket, payload, size, peek, address, addressLength, out error);
            }

            internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
            {
                Count(socket, ref _polls);
                return Os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
            }

            internal override bool IsReceiveShutDown(IntPtr socket)
            {
                Count(socket, ref _questions);
                return Os.IsReceiveShutDown(socket);
            }

            internal override bool HasInput(IntPtr socket, out SocketError pending)
            {
                Count(socket, ref _polls);
                return Os.HasInput(socket, out pending);
            }
        }
    }
}
