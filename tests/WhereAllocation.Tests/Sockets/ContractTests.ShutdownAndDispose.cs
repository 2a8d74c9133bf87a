using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// docs/CONTRACT.md, "Shutdown, Dispose order and open readers": a socket shut down for receiving, a bad argument on a disposed socket, and calls made
    /// after Dispose while another thread still waits inside the library. Every cell on every path the runtime has.
    /// </summary>
    public partial class ContractTests
    {
        private const string ShutdownAndDispose = "Shutdown, Dispose order and open readers";

        /// <summary>Every path on IPv4 and IPv6.</summary>
        public static TheoryData<DatagramPath, Family> ReceiveShutDownCases => Matrix.PathsWithFamiliesWhere((p, f) => f != Family.DualMode);

        [Observes(ShutdownAndDispose, "R1 R2 R3 R4 R5 R6 B1 B2 A1 S1 S2 S3 T1 T2 T3 B3 A2", "receive shut down")]
        [Theory]
        [MemberData(nameof(ReceiveShutDownCases))]
        public void ReceiveShutDown(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed(ShutdownAndDispose);
            foreach (string id in s_receiveIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(family, BlockingTimeoutMs);
                    pair.Server.Connect(pair.ClientEndPoint);
                    pair.Server.Shutdown(SocketShutdown.Receive);
                    string result = Bounded(pair.Server, () => Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                    seen.Add(RowName(id, mode), id, "receive shut down", WindowsShutdownGap.Normalize(id, result));
                }
            }
            foreach (string id in s_sendIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(family, BlockingTimeoutMs);
                    pair.Client.Connect(pair.ServerTarget);
                    pair.Client.Shutdown(SocketShutdown.Receive);
                    seen.Add(RowName(id, mode), id, "receive shut down", SendTo(pair, id, mode, 24));
                }
            }
            seen.AssertAsDocumented();
        }

        /// <summary>
        /// The documented Windows difference (docs/CONTRACT.md, "Where the operating systems differ"): the library asks WSAPoll
        /// before every receive there, and WSAPoll never calls a socket shut down for receiving readable, so the receive
        /// behaves exactly as on an empty socket (the Receive table's "empty, blocking" cell). That answer, and only it,
        /// counts as the documented one on Windows; anything else (a spin, a hang, another error) still fails.
        /// </summary>
        private static class WindowsShutdownGap
        {
            private static Dictionary<string, Dictionary<string, string>>? s_receive;

            public static string Normalize(string id, string result)
            {
                if (!RuntimeInformation.IsOSPlatform(OSPlatform.Windows)) return result;
                s_receive ??= ContractTable.Load("Receive");
                return result == s_receive[id]["empty, blocking"] ? nameof(SocketError.Shutdown) : result;
            }
        }

        /// <summary>
        /// Runs <paramref name="call"/> on a thread of its own and gives it 3 s. One that is still inside then (a receive that
        /// spins on a shut-down socket) is ended by shutting the socket down for sending too (a full shutdown ends every
        /// wait), and described as what went wrong.
        /// </summary>
        private static string Bounded(Socket socket, Func<string> call)
        {
            string? result = null;
            var thread = new Thread(() =>
            {
                try
                {
                    result = call();
                }
                catch (Exception e)
                {
                    result = e.GetType().Name + ": " + e.Message;
                }
            }) { IsBackground = true };
            thread.Start();
            if (thread.Join(3000)) return result!;
            try
            {
                socket.Shutdown(SocketShutdown.Both);
            }
            catch (SocketException)
            {
                // Shut down already: the dispose at the end of the case ends it then.
            }
            return thread.Join(5000) ? "still inside after 3 s (then " + result + ")" : "still inside after 3 s and a full shutdown";
        }

        [Observes(ShutdownAndDispose, "R1 R2 R3 R4 R5 R6 B1 B2 A1 S1 S2 S3 T1 T2 T3 B3 A2", "bad argument, disposed before")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void BadArgumentOnADisposedSocket(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed(ShutdownAndDispose);
            foreach (string id in new[] { "R1", "R2", "R3", "R4", "R5", "R6", "B2", "S1", "S2", "S3", "T1", "T2", "T3" })
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(Family.IPv4);
                    pair.Server.Dispose();
                    seen.Add(RowName(id, mode), id, "bad argument, disposed before", WithBadArgument(pair, id, mode));
                }
            }
            seen.AssertAsDocumented();
        }

        private static string WithBadArgument(Loopback pair, string id, Variant mode)
        {
            Socket socket = pair.Server;
            var array = new byte[10];
            var endPoint = new IPEndPointNonAlloc(IPAddress.Any, 0);
            try
            {
                switch (id)
                {
                    case "R1": socket.ReceiveFrom_NonAlloc(null!, 0, 0, SocketFlags.None, endPoint); break;
                    case "R2": socket.ReceiveFrom_NonAlloc(null!, endPoint); break;
                    case "R3": socket.ReceiveFrom_NonAlloc(array, -1, 5, SocketFlags.None, out EndPointKey _); break;
                    case "R4": socket.ReceiveFrom_NonAlloc(array.AsSpan(), SocketFlags.OutOfBand); break;
                    case "R5": socket.TryReceiveFrom_NonAlloc(array, 4, 10, SocketFlags.None, endPoint, out ReceivedDatagram _); break;
                    case "R6": socket.TryReceiveFrom_NonAlloc(array.AsSpan(), SocketFlags.OutOfBand, out ReceivedDatagram _); break;
                    case "S1": socket.SendTo_NonAlloc(array, 0, 4, SocketFlags.None, (IPEndPointNonAlloc)null!); break;
                    case "S2": socket.SendTo_NonAlloc(array.AsSpan(), default(EndPointKey)); break;
                    case "S3": socket.SendTo_NonAlloc(null!, 0, 4, SocketFlags.None, pair.ClientKey); break;
                    // An unsupported flag: the one bad argument the three overloads share.
                    case "T1": socket.TrySendTo_NonAlloc(array, 0, 4, SocketFlags.OutOfBand, new IPEndPointNonAlloc(IPAddress.Loopback, 9)); break;
                    case "T2": socket.TrySendTo_NonAlloc(array.AsSpan(0, 4), SocketFlags.OutOfBand, pair.ClientKey); break;
                    case "T3": socket.TrySendTo_NonAlloc(array, 0, 4, SocketFlags.OutOfBand, pair.ClientKey); break;
                    default:
                    {
                        using var batch = new DatagramBatch(4, 100, mode.Batch);
                        batch.Receive(socket, -5);
                        break;
                    }
                }
                return "no exception";
            }
            catch (ObjectDisposedException)
            {
                return "ObjectDisposed";
            }
            catch (Exception e)
            {
                return e.GetType().Name;
            }
        }

        /// <summary>
        /// A call made after Dispose has returned, while another thread still waits in a library receive on the socket
        /// (and so holds its handle open): ObjectDisposedException, like "disposed before", for every receive and send.
        /// The calls go on, round after round, from the Dispose until the waiter has returned, so that they also meet the
        /// waiter after it was woken and before it let go of the handle: woken by the Dispose itself (on Mono, the watchdog's
        /// next tick), or by a datagram that comes after the Dispose (every other attempt), as on a server. A call in that
        /// moment once reached the disposed socket on Mono (a batch receive answered 0). Nothing is queued for the calls: one
        /// that reached the socket would answer, send or time out instead of throwing, and the socket's receive timeout
        /// bounds a receive that would wait. Bounded: 10 s per attempt at most.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void CallsAfterDisposeWhileAnotherThreadWaits(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            string[] ids = { "R1", "R2", "R3", "R4", "R5", "R6", "B1", "B2", "S1", "S2", "S3", "B3" };
            var wrong = new System.Collections.Generic.List<string>();
            int roundsInside = 0;
            for (int attempt = 0; attempt < 6; attempt++)
            {
                bool wakeWithDatagram = attempt % 2 == 1;
                using var pair = new Loopback(Family.IPv4, 0);
                pair.Server.ReceiveTimeout = 3000;
                bool waiterDone = false;
                int before = DisposeDuringWait.CountBefore();
                var waiter = new Thread(() =>
                {
                    var buffer = new byte[100];
                    var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
                    try
                    {
                        // Waits for a datagram; after the Dispose, takes the one that may come and ends with the next call.
                        while (true)
                        {
                            pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                        }
                    }
                    catch (Exception)
                    {
                        // Ended by the Dispose: what it throws is the "disposed during" column's business.
                    }
                    Volatile.Write(ref waiterDone, true);
                }) { IsBackground = true };
                waiter.Start();
                Assert.True(DisposeDuringWait.UntilInside(before, waiter), "the receive never reached its wait");
                pair.Server.Dispose();
                var watch = System.Diagnostics.Stopwatch.StartNew();
                int inside = 0;
                while (wrong.Count < 24 && watch.ElapsedMilliseconds < 10_000)
                {
                    foreach (string id in ids)
                    {
                        string result = AfterDispose(pair, id);
                        if (result != "ObjectDisposed") wrong.Add(id + " (attempt " + attempt + ", round " + (inside + 1) + "): " + result);
                    }
                    if (Volatile.Read(ref waiterDone)) break;
                    inside++; // the whole round was made while the waiter held the handle
                    if (wakeWithDatagram && inside == 1) pair.Client.SendTo(new byte[] { 9 }, pair.ServerTarget);
                }
                Assert.True(waiter.Join(10_000), "the waiting receive did not end after Dispose");
                roundsInside += inside;
            }
            // On Mono the waiter outlives the Dispose (the watchdog's tick; Mono's own receive, about a second), so rounds meet it
            // there. CoreCLR's Dispose shuts the descriptor down and wakes the wait at once: the first round at most overlaps
            // its return, and CoreCLR's handle refuses new references anyway.
            if (Runtime.IsMono) Assert.True(roundsInside > 0, "no round of calls was made while the waiter still waited: the case was never produced");
            Assert.True(wrong.Count == 0, "on " + DatagramPathSettings.Active + ", " + Runtime.Describe() + ", after Dispose (" + roundsInside + " rounds while the waiter held the handle):\n" + string.Join("\n", wrong));
        }

        private static string AfterDispose(Loopback pair, string id)
        {
            Socket socket = pair.Server;
            var array = new byte[100];
            var endPoint = new IPEndPointNonAlloc(IPAddress.Any, 0);
            try
            {
                switch (id)
                {
                    case "R1": return "received " + socket.ReceiveFrom_NonAlloc(array, 0, array.Length, SocketFlags.None, endPoint) + " B";
                    case "R2": return "received " + socket.ReceiveFrom_NonAlloc(array, endPoint) + " B";
                    case "R3": return "received " + socket.ReceiveFrom_NonAlloc(array, 0, array.Length, SocketFlags.None, out EndPointKey _) + " B";
                    case "R4": return "received " + socket.ReceiveFrom_NonAlloc(array.AsSpan()).Length + " B";
                    case "R5": return "returned " + socket.TryReceiveFrom_NonAlloc(array, 0, array.Length, SocketFlags.None, endPoint, out ReceivedDatagram _);
                    case "R6": return "returned " + socket.TryReceiveFrom_NonAlloc(array.AsSpan(), out ReceivedDatagram _);
                    case "S1": return "sent " + socket.SendTo_NonAlloc(array, 0, 4, SocketFlags.None, new IPEndPointNonAlloc(pair.ClientEndPoint.Address, pair.ClientEndPoint.Port));
                    case "S2": return "sent " + socket.SendTo_NonAlloc(array.AsSpan(0, 4), pair.ClientKey);
                    case "S3": return "sent " + socket.SendTo_NonAlloc(array, 0, 4, SocketFlags.None, pair.ClientKey);
                    case "B3":
                    {
                        using var batch = new DatagramBatch(4, 100);
                        Assert.True(batch.TryAdd(array.AsSpan(0, 4), pair.ClientKey));
                        return "sent " + batch.Send(socket);
                    }
                    default:
                    {
                        using var batch = new DatagramBatch(4, 100);
                        return "received " + (id == "B1" ? batch.Receive(socket) : batch.Receive(socket, 50));
                    }
                }
            }
            catch (ObjectDisposedException)
            {
                return "ObjectDisposed";
            }
            catch (Exception e)
            {
                return e.GetType().Name + (e is SocketException s ? " " + s.SocketErrorCode : "");
            }
        }
    
        /// <summary>
        /// "Readiness that yields no datagram must not become a busy loop": on the native path, with an OS whose socket always
        /// polls readable and never has a datagram, a waiting receive ends with TimedOut after the socket's ReceiveTimeout and a
        /// batch's with 0 after its timeout, each making at most one receive call per millisecond or so (a busy loop makes
        /// tens of thousands in 200 ms).
        /// </summary>
        [Fact]
        public void ReadinessWithoutADatagramIsNoBusyLoop()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            var wrong = new System.Collections.Generic.List<string>();
            foreach (string id in new[] { "R1", "R2", "R3", "R4", "B2" })
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(Family.IPv4, BlockingTimeoutMs);
                    int receives;
                    string result;
                    using (EmptyReadiness os = EmptyReadiness.Install())
                    {
                        result = Bounded(pair.Server, () => Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                        receives = os.Receives;
                    }
                    string expected = id == "B2" ? "0" : "TimedOut";
                    if (result != expected || receives > 1000) wrong.Add(RowName(id, mode) + ": " + result + " after " + receives + " receive calls");
                }
            }
            Assert.True(wrong.Count == 0, Runtime.Describe() + ":\n" + string.Join("\n", wrong));
        }

        /// <summary>
        /// A receive that must not wait (a TryReceiveFrom_NonAlloc, a batch's Receive without a timeout, an await's tries on
        /// the caller's thread and on the I/O thread) never waits, even when another reader of the socket took the datagram
        /// the readiness check saw (<see cref="TakenDatagram"/>): on a blocking socket without a ReceiveTimeout, where a plain
        /// receive would wait for the next datagram. The cells are the Receive table's "empty, blocking" ones; then the I/O
        /// thread, asked to try an empty socket over and over, still serves another socket's await.
        /// </summary>
        [Fact]
        public void AReceiveThatMustNotWaitNeverWaitsWhenAnotherReaderTookTheDatagram()
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            Dictionary<string, Dictionary<string, string>> table = ContractTable.Load("Receive");
            var wrong = new List<string>();
            using (TakenDatagram.Install())
            {
                foreach (string id in new[] { "R5", "R6", "B1", "A1" })
                {
                    foreach (Variant mode in ModesFor(id))
                    {
                        using var pair = new Loopback(Family.IPv4, 0);
                        string result = Bounded(pair.Server, () => Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                        if (result != table[id]["empty, blocking"]) wrong.Add(RowName(id, mode) + ": " + result);
                    }
                }
                foreach (DatagramContinuations continuations in new[] { DatagramContinuations.IoThread, DatagramContinuations.ThreadPool })
                {
                    using var empty = new Loopback(Family.IPv4, 0);
                    using var other = new Loopback(Family.IPv4, 0);
                    using var a = new AsyncDatagramSocket(empty.Server, continuations);
                    using var b = new AsyncDatagramSocket(other.Server, continuations);
                    AwaitTestSeam.ReportEveryArmedAsReady = true;
                    try
                    {
                        ValueTask<ReceivedDatagram> waiting = a.ReceiveFromAsync(new byte[16]);
                        ValueTask<ReceivedDatagram> served = b.ReceiveFromAsync(new byte[16]);
                        Thread.Sleep(3 * AwaitEngine.SliceMilliseconds); // the I/O thread tries the empty socket meanwhile
                        other.Client.SendTo(new byte[] { 1 }, other.ServerTarget);
                        string? outcome = Awaits.Outcome(served, 10_000, out ReceivedDatagram _);
                        if (outcome != "") wrong.Add("the I/O thread (" + continuations + "), another socket's await: " + (outcome ?? "still waiting after 10 s"));
                        if (waiting.IsCompleted) wrong.Add("the I/O thread (" + continuations + "): the empty socket's await completed");
                    }
                    finally
                    {
                        AwaitTestSeam.ReportEveryArmedAsReady = false;
                    }
                }
            }
            Assert.True(wrong.Count == 0, Runtime.Describe() + ":\n" + string.Join("\n", wrong));
        }

        /// <summary>
        /// The real case behind it on Linux: a socket whose user set IP_RECVERR keeps an ICMP error in its error queue, which
        /// makes poll say "error" (so "ready") until the queue is read with MSG_ERRQUEUE, which a receive does not do. After
        /// the error itself is reported (at most once), every receive behaves as on an empty socket: TimedOut, false, 0.
        /// Elsewhere the option does not exist here: the stand-in above covers the rule.
        /// </summary>
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AnErrorQueueIsNoBusyLoop(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            if (!System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Linux)) return;
            var wrong = new System.Collections.Generic.List<string>();
            foreach (string id in s_receiveIds)
            {
                if (id == "A1") continue; // the await's own loop: tested with the awaits
                foreach (Variant mode in ModesFor(id))
                {
                    IPEndPoint closed = Loopback.ClosedPort(Family.IPv4);
                    using Socket socket = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
                    socket.ReceiveTimeout = BlockingTimeoutMs;
                    SetRecvErr(socket);
                    socket.SendTo(new byte[] { 1 }, closed);
                    Assert.True(socket.Poll(2_000_000, SelectMode.SelectError), "no error came back from the closed port");
                    string first = Bounded(socket, () => Receive(socket, id, mode, 1500, null, BlockingTimeoutMs));
                    string second = Bounded(socket, () => Receive(socket, id, mode, 1500, null, BlockingTimeoutMs));
                    string empty = id == "R5" || id == "R6" ? "false" : id.StartsWith("B", StringComparison.Ordinal) ? "0" : "TimedOut";
                    if ((first != empty && first != "ConnectionRefused") || second != empty)
                        wrong.Add(RowName(id, mode) + ": " + first + ", then " + second);
                }
            }
            Assert.True(wrong.Count == 0, "on " + DatagramPathSettings.Active + ", " + Runtime.Describe() + ":\n" + string.Join("\n", wrong));
        }
    
        // Not SetSocketOption: the runtimes translate its option names (11 there is IP_MULTICAST_LOOP).
        [System.Runtime.InteropServices.DllImport("libc", SetLastError = true)]
        private static extern unsafe int setsockopt(int socket, int level, int name, int* value, uint length);

        private static unsafe void SetRecvErr(Socket socket)
        {
            int on = 1;
            Assert.Equal(0, setsockopt((int)socket.Handle, 0 /* IPPROTO_IP */, 11 /* IP_RECVERR */, &on, sizeof(int)));
        }
}
}
