using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// <see cref="AsyncDatagramSocket"/>: the awaitable receive and send. Behaviour on every path and in both continuation
    /// modes: datagrams, truncation, errors, cancellation, Dispose of the socket or of the wrapper during an await, one
    /// outstanding call at a time, a checksummed run that loses nothing, where awaits resume, and the I/O thread ending
    /// once every wrapper is disposed. The contract table cells are checked by ContractTests; the bytes by AsyncAllocationTests.
    /// </summary>
    public class AsyncDatagramSocketTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        // A sample of path × mode × family, listed by hand: every path in both modes, every family on Native.
        [Theory]
        [InlineData(DatagramPath.Native, DatagramContinuations.ThreadPool, Family.IPv4)]
        [InlineData(DatagramPath.Native, DatagramContinuations.IoThread, Family.IPv4)]
        [InlineData(DatagramPath.Native, DatagramContinuations.IoThread, Family.IPv6)]
        [InlineData(DatagramPath.Native, DatagramContinuations.ThreadPool, Family.DualMode)]
        [InlineData(DatagramPath.SocketAddress, DatagramContinuations.ThreadPool, Family.IPv4)]
        [InlineData(DatagramPath.SocketAddress, DatagramContinuations.IoThread, Family.DualMode)]
        [InlineData(DatagramPath.Managed, DatagramContinuations.ThreadPool, Family.IPv4)]
        [InlineData(DatagramPath.Managed, DatagramContinuations.IoThread, Family.IPv6)]
        public void ReceivesQueuedAndAwaitedDatagramsAndSends(DatagramPath path, DatagramContinuations mode, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            using var client = new AsyncDatagramSocket(pair.Client, mode);
            Assert.Equal(path, server.Path);
            Assert.Equal(mode, server.Continuations);
            Awaits.Run(async () =>
            {
                var buffer = new byte[1500];
                // Queued first: the await completes at once.
                int sent = await client.SendToAsync(Bytes(24, 1), pair.ServerKey);
                Assert.Equal(24, sent);
                Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
                ReceivedDatagram first = await server.ReceiveFromAsync(buffer);
                AssertDatagram(first, buffer, Bytes(24, 1), pair.ClientAsSeenByServer);

                // Nothing queued: the await waits until the datagram is sent.
                ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer.AsMemory(0, 1000));
                Assert.False(waiting.IsCompleted);
                Assert.Equal(300, await client.SendToAsync(Bytes(300, 2), pair.ServerKey));
                AssertDatagram(await waiting, buffer, Bytes(300, 2), pair.ClientAsSeenByServer);

                // And back: the server answers the sender it saw.
                ValueTask<ReceivedDatagram> reply = client.ReceiveFromAsync(buffer);
                Assert.Equal(5, await server.SendToAsync(Bytes(5, 3), first.RemoteEndPoint));
                AssertDatagram(await reply, buffer, Bytes(5, 3), pair.ServerKey);
            });
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInTurn), MemberType = typeof(Matrix))]
        public void LongerThanTheBufferIsCutAndSaidSo(DatagramPath path, DatagramContinuations mode)
        {
            WithServer(path, mode, async (pair, server) =>
            {
                var buffer = new byte[64];
                pair.Client.SendTo(Bytes(100, 4), pair.ServerTarget);
                Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
                ReceivedDatagram now = await server.ReceiveFromAsync(buffer.AsMemory(0, 40));
                Assert.True(now.Truncated);
                Assert.Equal(40, now.Length);
                Assert.True(buffer.AsSpan(0, 40).SequenceEqual(Bytes(100, 4).AsSpan(0, 40)));
                Assert.Equal(pair.ClientKey, now.RemoteEndPoint);

                ValueTask<ReceivedDatagram> later = server.ReceiveFromAsync(buffer.AsMemory(0, 0));
                pair.Client.SendTo(Bytes(100, 5), pair.ServerTarget);
                ReceivedDatagram empty = await later;
                Assert.True(empty.Truncated);
                Assert.Equal(0, empty.Length);
                Assert.Equal(pair.ClientKey, empty.RemoteEndPoint);
            });
        }

        /// <summary>Every path on IPv4; Native also on IPv6.</summary>
        public static TheoryData<DatagramPath, Family> ReceiveErrorCases => Matrix.PathsWithFamiliesWhere((p, f) => f == Family.IPv4 || (f == Family.IPv6 && p == DatagramPath.Native));

        [Theory]
        [MemberData(nameof(ReceiveErrorCases))]
        public void AnErrorThePendingOrWaitingReceiveMeetsIsReported(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            if (Runtime.IsWine)
            {
                AnErrorIsReportedUnderWine(path, family);
                return;
            }
            IPEndPoint closed = Loopback.ClosedPort(family);
            using Socket socket = Loopback.Bound(closed.AddressFamily, closed.Address, false);
            socket.Connect(closed);
            using var connected = new AsyncDatagramSocket(socket);
            string expected = System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Windows) ? "ConnectionReset" : "ConnectionRefused";
            Awaits.Run(async () =>
            {
                var buffer = new byte[100];
                // The error arrives while the receive waits.
                ValueTask<ReceivedDatagram> waiting = connected.ReceiveFromAsync(buffer);
                Assert.False(waiting.IsCompleted);
                socket.Send(new byte[] { 1 });
                Assert.Equal(expected, await Failure(waiting));
                // The error is pending before the receive: reported at once, and once.
                socket.Send(new byte[] { 2 });
                Assert.True(socket.Poll(2_000_000, SelectMode.SelectError));
                Assert.Equal(expected, await Failure(connected.ReceiveFromAsync(buffer)));
                using var cancel = new CancellationTokenSource(300);
                Assert.Equal("OperationCanceled", await Failure(connected.ReceiveFromAsync(buffer, cancel.Token)));
            });
        }

        /// <summary>
        /// Wine 8 drops the ICMP port unreachable, so no receive ever meets WSAECONNRESET (Loopback.ClosedPortError asserts
        /// that of the runtime's own receive). On the native path, whose OS calls the library makes itself, the reset Windows
        /// would report is put at the OS boundary by <see cref="WindowsLikeResets"/>: a report that arrives while the receive
        /// waits (the socket turns readable, as an ICMP error makes it on Windows; here a datagram does), and one pending
        /// before the call. The runtime's paths get from Wine what the runtime gets: a receive that waits until cancelled.
        /// </summary>
        private static void AnErrorIsReportedUnderWine(DatagramPath path, Family family)
        {
            Assert.Equal(SocketError.TimedOut, Loopback.ClosedPortError());
            using var pair = new Loopback(family == Family.IPv6 ? Family.IPv6 : Family.IPv4);
            using var connected = new AsyncDatagramSocket(pair.Server);
            if (path != DatagramPath.Native)
            {
                pair.Server.Connect(Loopback.ClosedPort(family));
                Awaits.Run(async () =>
                {
                    pair.Server.Send(new byte[] { 1 });
                    using var cancel = new CancellationTokenSource(300);
                    Assert.Equal("OperationCanceled", await Failure(connected.ReceiveFromAsync(new byte[100], cancel.Token)));
                });
                return;
            }
            pair.Server.Connect(pair.ClientEndPoint);
            using WindowsLikeResets resets = WindowsLikeResets.Install();
            Awaits.Run(async () =>
            {
                var buffer = new byte[100];
                // The report arrives while the receive waits.
                ValueTask<ReceivedDatagram> waiting = connected.ReceiveFromAsync(buffer);
                Assert.False(waiting.IsCompleted);
                resets.QueueResets(1);
                pair.Client.SendTo(new byte[] { 7 }, pair.ServerTarget);
                Assert.Equal("ConnectionReset", await Failure(waiting));
                // The datagram that made the socket readable is still there, next.
                ReceivedDatagram datagram = await connected.ReceiveFromAsync(buffer);
                Assert.Equal(1, datagram.Length);
                Assert.Equal(7, buffer[0]);
                // The report is pending before the receive: reported at once, and once.
                resets.QueueResets(1);
                Assert.Equal("ConnectionReset", await Failure(connected.ReceiveFromAsync(buffer)));
                Assert.Equal(0, resets.Pending);
                using var cancel = new CancellationTokenSource(300);
                Assert.Equal("OperationCanceled", await Failure(connected.ReceiveFromAsync(buffer, cancel.Token)));
            });
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInOtherTurn), MemberType = typeof(Matrix))]
        public void CancellationEndsTheAwaitAndConsumesNothing(DatagramPath path, DatagramContinuations mode)
        {
            WithServer(path, mode, async (pair, server) =>
            {
                var buffer = new byte[100];
                // Cancelled before the call: refused at once; the datagram queued stays for the next call.
                pair.Client.SendTo(Bytes(10, 6), pair.ServerTarget);
                Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
                using (var before = new CancellationTokenSource())
                {
                    before.Cancel();
                    ValueTask<ReceivedDatagram> refused = server.ReceiveFromAsync(buffer, before.Token);
                    Assert.True(refused.IsCanceled);
                    Assert.Equal("OperationCanceled", await Failure(refused));
                }
                AssertDatagram(await server.ReceiveFromAsync(buffer), buffer, Bytes(10, 6), pair.ClientKey);

                // Cancelled while waiting, many times with the same token source renewed: each ends the wait, and the
                // datagram sent afterwards is the next call's.
                for (int i = 0; i < 20; i++)
                {
                    using var during = new CancellationTokenSource();
                    ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer, during.Token);
                    Assert.False(waiting.IsCompleted);
                    during.Cancel();
                    Assert.Equal("OperationCanceled", await Failure(waiting));
                    pair.Client.SendTo(Bytes(11, (byte)i), pair.ServerTarget);
                    AssertDatagram(await server.ReceiveFromAsync(buffer, during.IsCancellationRequested ? default : during.Token), buffer, Bytes(11, (byte)i), pair.ClientKey);
                }

                // One token for many calls (registered once), cancelled in the end.
                using var loop = new CancellationTokenSource();
                for (int i = 0; i < 50; i++)
                {
                    pair.Client.SendTo(Bytes(12, (byte)i), pair.ServerTarget);
                    AssertDatagram(await server.ReceiveFromAsync(buffer, loop.Token), buffer, Bytes(12, (byte)i), pair.ClientKey);
                }
                ValueTask<ReceivedDatagram> last = server.ReceiveFromAsync(buffer, loop.Token);
                loop.CancelAfter(50);
                Assert.Equal("OperationCanceled", await Failure(last));
            });
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInTurn), MemberType = typeof(Matrix))]
        public void DisposingTheSocketDuringAnAwaitEndsItWithObjectDisposed(DatagramPath path, DatagramContinuations mode)
        {
            WithServer(path, mode, async (pair, server) =>
            {
                var buffer = new byte[100];
                ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
                Assert.False(waiting.IsCompleted);
                await Task.Delay(50);
                pair.Server.Dispose();
                Assert.Equal("ObjectDisposed", await Failure(waiting));
                // After: every call says so.
                Assert.Equal("ObjectDisposed", await Failure(server.ReceiveFromAsync(buffer)));
                Assert.Equal("ObjectDisposed", await Failure(server.SendToAsync(buffer, pair.ClientKey)));
            }, receiveTimeoutMs: 0);
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInOtherTurn), MemberType = typeof(Matrix))]
        public void DisposingTheWrapperDuringAnAwaitEndsItAndLeavesTheSocketOpen(DatagramPath path, DatagramContinuations mode)
        {
            WithServer(path, mode, async (pair, server) =>
            {
                var buffer = new byte[100];
                ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
                Assert.False(waiting.IsCompleted);
                server.Dispose();
                Assert.Equal("ObjectDisposed", await Failure(waiting));
                Assert.Equal("ObjectDisposed", await Failure(server.ReceiveFromAsync(buffer)));
                server.Dispose(); // again: nothing
                // The socket is the caller's and still works; a new wrapper takes over.
                pair.Client.SendTo(Bytes(7, 7), pair.ServerTarget);
                using var again = new AsyncDatagramSocket(pair.Server, mode);
                AssertDatagram(await again.ReceiveFromAsync(buffer), buffer, Bytes(7, 7), pair.ClientKey);
            });
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void OneReceiveAtATimeAndEachValueTaskAwaitedOnce(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server);
            Awaits.Run(async () =>
            {
                var buffer = new byte[100];
                var other = new byte[100];
                ValueTask<ReceivedDatagram> first = server.ReceiveFromAsync(buffer);
                Assert.False(first.IsCompleted);
                Assert.Equal("InvalidOperation", await Failure(server.ReceiveFromAsync(other)));
                pair.Client.SendTo(Bytes(9, 8), pair.ServerTarget);
                ReceivedDatagram got = await first;
                AssertDatagram(got, buffer, Bytes(9, 8), pair.ClientKey);
                // The ValueTask's result was taken: a second await of it is refused.
                Assert.Throws<InvalidOperationException>(() => first.GetAwaiter().GetResult());
                // And the next receive works.
                pair.Client.SendTo(Bytes(9, 9), pair.ServerTarget);
                AssertDatagram(await server.ReceiveFromAsync(buffer), buffer, Bytes(9, 9), pair.ClientKey);
            });
        }

        [Fact]
        public void ArgumentsAreCheckedByTheCall()
        {
            Assert.Throws<ArgumentNullException>(() => new AsyncDatagramSocket(null!));
            using (var stream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
                Assert.Throws<ArgumentException>(() => new AsyncDatagramSocket(stream));
            using var pair = new Loopback(Family.IPv4);
            Assert.Throws<ArgumentOutOfRangeException>(() => new AsyncDatagramSocket(pair.Server, (DatagramContinuations)7));
            using var server = new AsyncDatagramSocket(pair.Server);
            Assert.Throws<ArgumentException>(() => server.SendToAsync(new byte[1], default(EndPointKey)));
            Assert.Throws<ArgumentException>(() => server.SendToAsync(new byte[1], EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.IPv6Loopback, 9))));
            using var unbound = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            using var wrapper = new AsyncDatagramSocket(unbound);
            Assert.Throws<InvalidOperationException>(() => wrapper.ReceiveFromAsync(new byte[1]));
            var disposed = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            disposed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => new AsyncDatagramSocket(disposed));
        }

        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void ASendThatFindsTheBufferFullWaitsForRoom(DatagramContinuations mode)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            using var pair = new Loopback(Family.IPv4);
            using var client = new AsyncDatagramSocket(pair.Client, mode);
            using FullSendBuffer full = FullSendBuffer.Install();
            Awaits.Run(async () =>
            {
                // Refused once: the send waits, the poller reports room, and the second try sends it.
                full.RefuseNext(1);
                ValueTask<int> waiting = client.SendToAsync(Bytes(33, 1), pair.ServerKey);
                Assert.Equal(33, await waiting);
                Assert.Equal(1, full.Refused); // the first try was refused: the send waited
                Assert.True(Arrives(pair, Bytes(33, 1)));

                // Refused until cancelled: the wait ends with OperationCanceled and nothing was sent.
                full.Refusing = true;
                using var cancel = new CancellationTokenSource();
                ValueTask<int> blocked = client.SendToAsync(Bytes(34, 2), pair.ServerKey, cancel.Token);
                Assert.False(blocked.IsCompleted);
                Assert.Equal("InvalidOperation", await Failure(client.SendToAsync(Bytes(1, 0), pair.ServerKey)));
                cancel.CancelAfter(30);
                Assert.Equal("OperationCanceled", await Failure(blocked));
                full.Refusing = false;
                pair.Server.Blocking = false;
                Assert.False(pair.Server.Poll(50_000, SelectMode.SelectRead));
                pair.Server.Blocking = true;

                // Refused until the wrapper is disposed.
                full.Refusing = true;
                ValueTask<int> disposed = client.SendToAsync(Bytes(35, 3), pair.ServerKey);
                await Task.Delay(20);
                client.Dispose();
                Assert.Equal("ObjectDisposed", await Failure(disposed));
                full.Refusing = false;
            });
            Assert.True(full.Refused >= 3);
        }

        /// <summary>Every path in IoThread mode; all but Managed also in ThreadPool mode.</summary>
        public static TheoryData<DatagramPath, DatagramContinuations> ChecksummedRunCases => Matrix.PathsWithContinuationsWhere((p, m) => p != DatagramPath.Managed || m == DatagramContinuations.IoThread);

        [Theory]
        [MemberData(nameof(ChecksummedRunCases))]
        public void NothingIsLostOverAChecksummedRun(DatagramPath path, DatagramContinuations mode)
        {
            if (!Paths.TryForce(path)) return;
            const int Count = 20_000;
            const int Window = 200;
            const int PauseEvery = 1000;
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            int received = 0;
            int waited = 0;
            bool stop = false;
            var sender = new Thread(() =>
            {
                var payload = new byte[64];
                for (int i = 0; i < Count; i++)
                {
                    // Flow control: at most Window datagrams ahead of the receiver, so the kernel drops none. And every
                    // PauseEvery datagrams the sender waits until the receiver has waited once more, so that the run tests
                    // the waiting path however the threads are timed (a fast receiver under Wine found every datagram queued).
                    var spin = new SpinWait();
                    int waits = i / PauseEvery;
                    while ((i - Volatile.Read(ref received) >= Window || Volatile.Read(ref waited) < waits) && !Volatile.Read(ref stop)) spin.SpinOnce();
                    Checksummed.Fill(payload, i);
                    pair.Client.SendTo_NonAlloc(payload, pair.ServerKey);
                }
            }) { IsBackground = true };
            try
            {
                Awaits.Run(async () =>
                {
                    var buffer = new byte[100];
                    sender.Start();
                    for (int i = 0; i < Count; i++)
                    {
                        ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
                        if (!next.IsCompleted) Interlocked.Increment(ref waited);
                        ReceivedDatagram d = await next;
                        Assert.False(d.Truncated);
                        Assert.Equal(64, d.Length);
                        Assert.Equal(pair.ClientKey, d.RemoteEndPoint);
                        Assert.Equal(i, Checksummed.Check(buffer.AsSpan(0, d.Length)));
                        Volatile.Write(ref received, i + 1);
                    }
                }, 120_000);
            }
            finally
            {
                Volatile.Write(ref stop, true);
            }
            Assert.True(sender.Join(10_000));
            Assert.Equal(Count, received);
            Assert.True(waited >= Count / PauseEvery - 1, "only " + waited + " awaits waited: the run did not test the waiting path");
        }

        [Theory]
        [MemberData(nameof(Matrix.PathsWithModesInOtherTurn), MemberType = typeof(Matrix))]
        public void AwaitsResumeWhereTheModeSays(DatagramPath path, DatagramContinuations mode)
        {
            WithServer(path, mode, async (pair, server) =>
            {
                AwaitEngine poller = PathDispatch.Engine(path);
                var buffer = new byte[100];
                for (int i = 0; i < 20; i++)
                {
                    ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
                    Assert.False(waiting.IsCompleted);
                    // Sent once the await surely waits: a datagram that arrives between the call and the await
                    // completes the call before the awaiter is there, and the awaiter then resumes on the thread pool.
                    SendLater(pair, Bytes(3, (byte)i), 20);
                    await waiting;
                    if (mode == DatagramContinuations.IoThread) Assert.True(poller.IsIoThread, "resumed off the I/O thread");
                    else Assert.True(Thread.CurrentThread.IsThreadPoolThread && !poller.IsIoThread, "resumed off the thread pool");
                }
            });
        }

        [Theory]
        [MemberData(nameof(Matrix.Continuations), MemberType = typeof(Matrix))]
        public void ACapturedSynchronizationContextGetsTheContinuation(DatagramContinuations mode)
        {
            using var pair = new Loopback(Family.IPv4);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            var context = new CountingContext();
            Awaits.Run(async () =>
            {
                var buffer = new byte[100];
                SynchronizationContext.SetSynchronizationContext(context);
                try
                {
                    Task<bool> awaited = OnContext(server, buffer, context);
                    pair.Client.SendTo(Bytes(3, 1), pair.ServerTarget);
                    SynchronizationContext.SetSynchronizationContext(null);
                    Assert.True(await awaited.ConfigureAwait(false));
                }
                finally
                {
                    SynchronizationContext.SetSynchronizationContext(null);
                }
                Assert.Equal(1, context.Posts);
            });
        }

        private static async Task<bool> OnContext(AsyncDatagramSocket server, byte[] buffer, SynchronizationContext context)
        {
            ValueTask<ReceivedDatagram> waiting = server.ReceiveFromAsync(buffer);
            Assert.False(waiting.IsCompleted);
            await waiting; // a plain await: resumes through the context it captured
            return SynchronizationContext.Current == context;
        }

        /// <summary>Every path but Managed.</summary>
        public static TheoryData<DatagramPath> GiveWayPaths => Matrix.PathsWhere(p => p != DatagramPath.Managed);

        [Theory]
        [MemberData(nameof(GiveWayPaths))]
        public void ALoopOnTheIoThreadGivesWayToTheOtherSockets(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            const int Flood = 2000;
            using var flooded = new Loopback(Family.IPv4);
            using var other = new Loopback(Family.IPv4);
            using var a = new AsyncDatagramSocket(flooded.Server, DatagramContinuations.IoThread);
            using var b = new AsyncDatagramSocket(other.Server, DatagramContinuations.IoThread);
            AwaitEngine poller = PathDispatch.Engine(path);
            int received = 0;
            int receivedWhenOtherDone = -1;
            Awaits.Run(async () =>
            {
                var buffer = new byte[100];
                // The other socket's receive waits, its continuation noting how far the flooded loop had come.
                Task otherDone = NoteWhenDone(b.ReceiveFromAsync(new byte[100]), () => Volatile.Write(ref receivedWhenOtherDone, Volatile.Read(ref received)));
                // Onto the I/O thread: one wait.
                ValueTask<ReceivedDatagram> first = a.ReceiveFromAsync(buffer);
                SendLater(flooded, Bytes(1, 0), 20);
                await first;
                Assert.True(poller.IsIoThread);
                // On the I/O thread: queue a flood for this loop and one datagram for the other socket, then drain the
                // flood. Every receive completes at once; the other socket's report waits for this loop to give way.
                for (int i = 0; i < Flood; i++) flooded.Client.SendTo_NonAlloc(Bytes(8, 1), flooded.ServerKey);
                other.Client.SendTo_NonAlloc(Bytes(8, 2), other.ServerKey);
                Assert.True(other.Server.Poll(2_000_000, SelectMode.SelectRead));
                for (int i = 0; i < Flood; i++)
                {
                    await a.ReceiveFromAsync(buffer);
                    Volatile.Write(ref received, i + 1);
                }
                await otherDone;
            });
            Assert.True(receivedWhenOtherDone > 0 && receivedWhenOtherDone < Flood,
                "the other socket's datagram was served after " + receivedWhenOtherDone + " of the " + Flood + " queued for the busy loop");
        }

        private static async Task NoteWhenDone(ValueTask<ReceivedDatagram> pending, Action note)
        {
            await pending;
            note();
        }

        [Fact]
        public void TheIoThreadEndsOnceEveryWrapperIsDisposed()
        {
            foreach (DatagramPath path in new[] { DatagramPath.Native, DatagramPath.Managed })
            {
                if (!Paths.TryForce(path)) continue;
                AwaitEngine poller = PathDispatch.Engine(path);
                Awaits.CollectLeftWrappers();
                var pairs = new Loopback[4];
                var wrappers = new AsyncDatagramSocket[4];
                Thread? io = null;
                Awaits.Run(async () =>
                {
                    var buffer = new byte[16];
                    for (int i = 0; i < pairs.Length; i++)
                    {
                        pairs[i] = new Loopback(Family.IPv4);
                        wrappers[i] = new AsyncDatagramSocket(pairs[i].Server);
                        ValueTask<ReceivedDatagram> waiting = wrappers[i].ReceiveFromAsync(buffer);
                        pairs[i].Client.SendTo(new byte[] { 1 }, pairs[i].ServerTarget);
                        await waiting;
                    }
                    io = poller.CurrentThread;
                });
                Assert.NotNull(io);
                Assert.True(io!.IsAlive);
                Assert.Equal(pairs.Length, poller.Registered);
                // One wrapper disposed: the thread stays for the others.
                wrappers[0].Dispose();
                pairs[0].Dispose();
                Thread.Sleep(3 * AwaitEngine.SliceMilliseconds);
                Assert.True(io.IsAlive);
                for (int i = 1; i < pairs.Length; i++)
                {
                    wrappers[i].Dispose();
                    pairs[i].Dispose();
                }
                Assert.Equal(0, poller.Registered);
                Assert.True(io.Join(5_000), path + ": the I/O thread still runs 5 s after the last wrapper was disposed");
                Assert.Null(poller.CurrentThread);
            }
        }

        // ----- helpers -----

        /// <summary>
        /// On <paramref name="path"/> (nothing where this platform has not got it): an IPv4 loopback pair whose server socket is
        /// wrapped with <paramref name="mode"/>, given to <paramref name="body"/> run by <see cref="Awaits.Run"/>
        /// (<paramref name="receiveTimeoutMs"/>: the pair's, as <see cref="Loopback"/> takes it; null for its default).
        /// </summary>
        private static void WithServer(DatagramPath path, DatagramContinuations mode, Func<Loopback, AsyncDatagramSocket, Task> body, int? receiveTimeoutMs = null)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = receiveTimeoutMs == null ? new Loopback(Family.IPv4) : new Loopback(Family.IPv4, receiveTimeoutMs.Value);
            using var server = new AsyncDatagramSocket(pair.Server, mode);
            Awaits.Run(() => body(pair, server));
        }

        internal static byte[] Bytes(int length, byte seed)
        {
            var bytes = new byte[length];
            for (int i = 0; i < length; i++) bytes[i] = (byte)(i * 13 + seed);
            return bytes;
        }

        private static void AssertDatagram(ReceivedDatagram datagram, byte[] buffer, byte[] expected, EndPointKey sender)
        {
            Assert.False(datagram.Truncated);
            Assert.Equal(expected.Length, datagram.Length);
            Assert.True(buffer.AsSpan(0, datagram.Length).SequenceEqual(expected), "wrong bytes");
            Assert.Equal(sender, datagram.RemoteEndPoint);
        }

        /// <summary>The name of the exception the ValueTask ends with ("" when it succeeds).</summary>
        internal static async Task<string> Failure<T>(ValueTask<T> pending)
        {
            try
            {
                await pending;
                return "";
            }
            catch (Exception e)
            {
                return Awaits.Name(e);
            }
        }

        private static void SendLater(Loopback pair, byte[] payload, int delayMs)
        {
            new Thread(() =>
            {
                Thread.Sleep(delayMs);
                pair.Client.SendTo(payload, pair.ServerTarget);
            }) { IsBackground = true }.Start();
        }

        private static bool Arrives(Loopback pair, byte[] payload)
        {
            var buffer = new byte[2048];
            EndPoint from = new IPEndPoint(IPAddress.Any, 0);
            pair.Server.ReceiveTimeout = 2000;
            int n = pair.Server.ReceiveFrom(buffer, ref from);
            return n == payload.Length && buffer.AsSpan(0, n).SequenceEqual(payload);
        }

        private sealed class CountingContext : SynchronizationContext
        {
            private int _posts;

            public int Posts => Volatile.Read(ref _posts);

            public override void Post(SendOrPostCallback d, object? state)
            {
                Interlocked.Increment(ref _posts);
                var thread = new Thread(() =>
                {
                    SetSynchronizationContext(this);
                    d(state);
                }) { IsBackground = true };
                thread.Start();
            }
        }
    }

    /// <summary>Datagrams that carry their sequence number and a checksum of the rest.</summary>
    public static class Checksummed
    {
        public static void Fill(byte[] payload, int sequence)
        {
            payload[0] = (byte)sequence;
            payload[1] = (byte)(sequence >> 8);
            payload[2] = (byte)(sequence >> 16);
            payload[3] = (byte)(sequence >> 24);
            for (int i = 8; i < payload.Length; i++) payload[i] = (byte)(sequence * 31 + i * 7);
            uint sum = Sum(payload);
            payload[4] = (byte)sum;
            payload[5] = (byte)(sum >> 8);
            payload[6] = (byte)(sum >> 16);
            payload[7] = (byte)(sum >> 24);
        }

        /// <summary>The sequence number, or -1 when the checksum is wrong.</summary>
        public static int Check(Span<byte> datagram)
        {
            if (datagram.Length < 8) return -1;
            uint stored = datagram[4] | (uint)datagram[5] << 8 | (uint)datagram[6] << 16 | (uint)datagram[7] << 24;
            byte[] copy = datagram.ToArray();
            return Sum(copy) == stored ? datagram[0] | datagram[1] << 8 | datagram[2] << 16 | datagram[3] << 24 : -1;
        }

        private static uint Sum(byte[] payload)
        {
            // Fletcher-32 over everything but the checksum's own bytes.
            uint a = 0xffff, b = 0xffff;
            for (int i = 0; i < payload.Length; i++)
            {
                if (i >= 4 && i < 8) continue;
                a = (a + payload[i]) % 65535;
                b = (b + a) % 65535;
            }
            return b << 16 | a;
        }
    }
}
