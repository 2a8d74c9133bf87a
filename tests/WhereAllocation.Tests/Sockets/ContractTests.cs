using System;
using System.Collections.Generic;
using System.Net;
using System.Linq;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// docs/CONTRACT.md, cell by cell: every receive and send member in every situation of its tables, on the
    /// path given, compared with what the document says. The document is the one contract; a path that gives
    /// anything else fails here, with every differing cell named.
    /// </summary>
    public partial class ContractTests : IDisposable
    {
        private static readonly string[] s_receiveIds = { "R1", "R2", "R3", "R4", "R5", "R6", "B1", "B2", "A1" };
        private static readonly string[] s_sendIds = { "S1", "S2", "S3", "T1", "T2", "T3", "B3", "A2" };
        // The sends whose full-buffer cells can be produced: one datagram per call, on the native path's OS stand-in.
        private static readonly string[] s_singleSendIds = { "S1", "S2", "S3", "T1", "T2", "T3" };
        private const int BlockingTimeoutMs = 200;

        public void Dispose() => DatagramPathSettings.Reset();

        // ----- receive: the situations that need no waiting -----

        [Observes("Receive", "R1 R2 R3 R4 R5 R6 B1 B2 A1", "datagram; empty datagram; longer than buffer; empty buffer; empty, non-blocking; disposed before")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]
        public void ReceiveWithoutWaiting(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed("Receive");
            foreach (string id in s_receiveIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    string row = RowName(id, mode);
                    using (var pair = new Loopback(family))
                        seen.Add(row, id, "datagram", ReceiveQueued(pair, id, mode, 24, 1500));
                    using (var pair = new Loopback(family))
                        seen.Add(row, id, "empty datagram", ReceiveQueued(pair, id, mode, 0, 1500));
                    using (var pair = new Loopback(family))
                        seen.Add(row, id, "longer than buffer", ReceiveQueued(pair, id, mode, 100, 40));
                    if (!id.StartsWith("B", StringComparison.Ordinal))
                    {
                        using (var pair = new Loopback(family))
                            seen.Add(row, id, "empty buffer", ReceiveQueued(pair, id, mode, 100, 0));
                    }
                    using (var pair = new Loopback(family))
                    {
                        pair.Server.Blocking = false;
                        seen.Add(row, id, "empty, non-blocking", Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                        if (id == "A1") seen.Add(row, id, "empty, non-blocking", NextIsMarker(pair));
                    }
                    using (var pair = new Loopback(family))
                    {
                        pair.Server.Dispose();
                        seen.Add(row, id, "disposed before", Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                    }
                }
            }
            seen.AssertAsDocumented();
        }

        // ----- receive: the situations that wait -----

        [Observes("Receive", "R1 R2 R3 R4 R5 R6 B1 B2 A1", "empty, blocking")]
        [Observes("Receive", "R1 R2 R3 R4 B2 A1", "empty datagram, waiting; disposed during")]
        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ReceiveThatWaits(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed("Receive");
            foreach (string id in s_receiveIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    string row = RowName(id, mode);
                    using (var pair = new Loopback(Family.IPv4, BlockingTimeoutMs))
                    {
                        seen.Add(row, id, "empty, blocking", Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs));
                        seen.Add(row, id, "empty, blocking", NextIsMarker(pair));
                    }
                    if (id == "R5" || id == "R6" || id == "B1") continue; // never wait: the columns of a wait do not apply
                    using (var pair = new Loopback(Family.IPv4, 0))
                        seen.Add(row, id, "empty datagram, waiting", ReceiveWhileAnEmptyDatagramComes(pair, id, mode));
                    using (var pair = new Loopback(Family.IPv4, 0))
                        seen.Add(row, id, "disposed during", ReceiveWhileDisposed(pair.Server, id, mode));
                }
            }
            seen.AssertAsDocumented();
        }

        // ----- receive: an error the OS holds for the socket -----

        /// <summary>Every path on IPv4 and IPv6.</summary>
        public static TheoryData<DatagramPath, Family> PendingErrorCases => Matrix.PathsWithFamiliesWhere((p, f) => f != Family.DualMode);

        [Observes("Receive", "R1 R2 R3 R4 R5 R6 B1 B2 A1", "pending error")]
        [Theory]
        [MemberData(nameof(PendingErrorCases))]
        public void ReceiveWithAPendingError(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            if (Runtime.IsWine)
            {
                ReceiveWithAPendingErrorUnderWine(path, family);
                return;
            }
            var seen = new Observed("Receive");
            foreach (string id in s_receiveIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using Socket connected = ConnectedToAClosedPort(family);
                    string result = Receive(connected, id, mode, 1500, null, BlockingTimeoutMs);
                    // Reported once: the call after it finds nothing (and no error) instead.
                    if (connected.Poll(0, SelectMode.SelectError)) result += ", and again";
                    seen.Add(RowName(id, mode), id, "pending error", OsNames.Normalize(result));
                }
            }
            seen.AssertAsDocumented();
        }

        /// <summary>
        /// Wine 8 drops the ICMP port unreachable and reports nothing (Loopback.ClosedPortError asserts that of the
        /// runtime's own receive), so under Wine the error Windows would report (WSAECONNRESET on the next receive)
        /// is put at the OS boundary by <see cref="WindowsLikeResets"/>, on the native path, the one whose OS calls
        /// the library makes itself. The runtime paths get from Wine what the runtime gets: nothing to check.
        /// </summary>
        private static void ReceiveWithAPendingErrorUnderWine(DatagramPath path, Family family)
        {
            Assert.Equal(SocketError.TimedOut, Loopback.ClosedPortError());
            if (path != DatagramPath.Native) return;
            var seen = new Observed("Receive", nameof(ReceiveWithAPendingError));
            foreach (string id in s_receiveIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(family == Family.IPv6 ? Family.IPv6 : Family.IPv4, BlockingTimeoutMs);
                    pair.Server.Connect(pair.ClientEndPoint);
                    using WindowsLikeResets resets = WindowsLikeResets.Install();
                    resets.QueueResets(1);
                    string result = Receive(pair.Server, id, mode, 1500, null, BlockingTimeoutMs);
                    if (resets.Pending != 0) result += ", and again";
                    seen.Add(RowName(id, mode), id, "pending error", OsNames.Normalize(result));
                }
            }
            seen.AssertAsDocumented();
        }

        // ----- send -----

        [Observes("Send", "S1 S2 S3 T1 T2 T3 B3 A2", "sent; longer than 65 507 bytes; disposed before")]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]
        public void Send(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed("Send");
            foreach (string id in s_sendIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    string row = RowName(id, mode);
                    using (var pair = new Loopback(family))
                        seen.Add(row, id, "sent", SendTo(pair, id, mode, 24));
                    using (var pair = new Loopback(family))
                        seen.Add(row, id, "longer than 65 507 bytes", SendTo(pair, id, mode, 65536));
                    using (var pair = new Loopback(family))
                    {
                        pair.Client.Dispose();
                        seen.Add(row, id, "disposed before", SendTo(pair, id, mode, 24));
                    }
                }
            }
            seen.AssertAsDocumented();
        }

        /// <summary>
        /// The "buffer full" columns: the native path with an OS stand-in that refuses the next send with WouldBlock
        /// (a UDP send on loopback never finds a real full buffer here). Then a send must arrive normally again.
        /// </summary>
        [Observes("Send", "S1 S2 S3 T1 T2 T3", "sent; buffer full, non-blocking; buffer full, blocking")]
        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void SendWithFullBuffer(Family family)
        {
            if (!Paths.TryForce(DatagramPath.Native)) return;
            var seen = new Observed("Send");
            foreach (bool blocking in new[] { false, true })
            {
                string column = blocking ? "buffer full, blocking" : "buffer full, non-blocking";
                foreach (string id in s_singleSendIds)
                {
                    using var pair = new Loopback(family);
                    pair.Client.Blocking = blocking;
                    using (FullSendBuffer full = FullSendBuffer.Install())
                    {
                        full.RefuseNext(1);
                        string result = SendTo(pair, id, default, 24);
                        if (full.Refused != 1) result += ", refused " + full.Refused + " times";
                        else if (result == "sent") result = "sent after room"; // refused once, then sent: it waited for room
                        // A refused datagram was not sent: the next thing the server gets is the marker.
                        if (result == "false" || result == "WouldBlock") result += NextIsMarker(pair).Length == 0 ? "" : ", but something was sent";
                        seen.Add(id + (blocking ? " blocking" : ""), id, column, result);
                    }
                    seen.Add(id, id, "sent", SendTo(pair, id, default, 24)); // the stand-in gone, the socket sends as before
                }
            }
            seen.AssertAsDocumented();
        }

        // ----- the situations -----

        /// <summary>Queues a datagram of <paramref name="length"/> bytes, receives it with a buffer (or slots) of <paramref name="bufferSize"/>, and checks that the next datagram comes next.</summary>
        private static string ReceiveQueued(Loopback pair, string id, Variant mode, int length, int bufferSize)
        {
            byte[] payload = Payload(length, 1);
            pair.Client.SendTo(payload, pair.ServerTarget);
            Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead), "the datagram did not arrive");
            string result = Receive(pair.Server, id, mode, bufferSize, new Expected(payload, pair.ClientAsSeenByServer), BlockingTimeoutMs);
            string next = NextIsMarker(pair);
            return next.Length == 0 ? result : result + ", " + next;
        }

        /// <summary>Sends a marker and receives it with the runtime's own call: "" when it comes next, else what came.</summary>
        private static string NextIsMarker(Loopback pair)
        {
            byte[] marker = Encoding.ASCII.GetBytes("marker");
            pair.Client.SendTo(marker, pair.ServerTarget);
            var buffer = new byte[2048];
            EndPoint from = new IPEndPoint(pair.Family == Family.IPv4 ? IPAddress.Any : IPAddress.IPv6Any, 0);
            int previousTimeout = pair.Server.ReceiveTimeout;
            pair.Server.ReceiveTimeout = 2000;
            pair.Server.Blocking = true;
            int n = pair.Server.ReceiveFrom(buffer, ref from);
            pair.Server.ReceiveTimeout = previousTimeout;
            return n == marker.Length && buffer.AsSpan(0, n).SequenceEqual(marker) ? "" : "not consumed (next: " + n + " B)";
        }

        /// <summary>
        /// The call on a thread of its own, the Dispose once it is inside its wait: the library's count of calls inside a
        /// wait went up (a synchronous call), or the await returned without a result (it waits for the engine's report).
        /// </summary>
        private static string ReceiveWhileDisposed(Socket socket, string id, Variant mode)
        {
            if (id == "A1") return AwaitWhileDisposed(socket, mode.Continuations);
            string? result = null;
            int before = DisposeDuringWait.CountBefore();
            var thread = new Thread(() => result = Receive(socket, id, mode, 1500, null, Timeout.Infinite)) { IsBackground = true };
            thread.Start();
            if (!DisposeDuringWait.UntilInside(before, thread))
            {
                socket.Dispose();
                return "never in its wait (" + (thread.Join(10_000) ? "it ended: " + result : "still running") + ")";
            }
            socket.Dispose();
            if (!thread.Join(10_000)) return "still waiting 10 s after Dispose";
            return result!;
        }

        /// <summary>
        /// The call on a thread of its own (an await: pending), waiting without a limit; once it is inside its wait a datagram of
        /// 0 bytes comes. "datagram" when that ends the wait as a datagram with its sender (not as a shutdown, which a waiting
        /// <c>recvfrom</c> also ends with 0 bytes, but without a sender), and the next datagram comes next.
        /// </summary>
        private static string ReceiveWhileAnEmptyDatagramComes(Loopback pair, string id, Variant mode)
        {
            var expected = new Expected(new byte[0], pair.ClientAsSeenByServer);
            string? result;
            if (id == "A1")
            {
                using var wrapper = new AsyncDatagramSocket(pair.Server, mode.Continuations);
                var buffer = new byte[1500];
                ValueTask<ReceivedDatagram> pending = wrapper.ReceiveFromAsync(buffer);
                if (pending.IsCompleted) return "did not wait";
                pair.Client.SendTo(new byte[0], pair.ServerTarget);
                result = Awaits.Outcome(pending, 10_000, out ReceivedDatagram d);
                if (result == null) return "still waiting 10 s after the datagram came";
                if (result.Length == 0) result = Datagram(d.Length, d.Truncated, buffer, d.RemoteEndPoint, 1500, expected);
            }
            else
            {
                result = null;
                int before = DisposeDuringWait.CountBefore();
                var thread = new Thread(() => result = Receive(pair.Server, id, mode, 1500, expected, Timeout.Infinite)) { IsBackground = true };
                thread.Start();
                bool inside = DisposeDuringWait.UntilInside(before, thread);
                pair.Client.SendTo(new byte[0], pair.ServerTarget);
                if (!thread.Join(10_000))
                {
                    pair.Server.Dispose(); // ends the call, so that the thread does not outlive the test
                    return "still waiting 10 s after the datagram came";
                }
                if (!inside) return "never in its wait (it ended: " + result + ")";
            }
            string next = NextIsMarker(pair);
            return next.Length == 0 ? result! : result + ", " + next;
        }

        private static string AwaitWhileDisposed(Socket socket, DatagramContinuations continuations)
        {
            using var wrapper = new AsyncDatagramSocket(socket, continuations);
            ValueTask<ReceivedDatagram> pending = wrapper.ReceiveFromAsync(new byte[1500]);
            if (pending.IsCompleted) return "did not wait";
            socket.Dispose();
            return Awaits.Outcome(pending, 10_000, out ReceivedDatagram _) ?? "still waiting 10 s after Dispose";
        }

        /// <summary>A socket connected to a port nobody listens on, after a send there, with the OS's error pending.</summary>
        private static Socket ConnectedToAClosedPort(Family family)
        {
            IPEndPoint closed = Loopback.ClosedPort(family);
            Socket socket = Loopback.Bound(closed.AddressFamily, closed.Address, false);
            socket.ReceiveTimeout = BlockingTimeoutMs;
            socket.Connect(closed);
            // Loopback is exempt from Linux's per-destination ICMP limit but not from its global one (icmp_msgs_per_sec, a
            // burst of 50, with a randomised credit since 6.x), which a suite sending to closed ports in quick succession can
            // reach: the kernel then sends no "port unreachable" and no error becomes pending (seen once under mono-boehm).
            // A second datagram gets a second chance; an error that never comes within 4 tries still fails the setup.
            bool pending = false;
            for (int attempt = 0; attempt < 4 && !pending; attempt++)
            {
                socket.Send(new byte[] { 1 });
                pending = socket.Poll(1_000_000, SelectMode.SelectError);
            }
            Assert.True(pending, "no error became pending after sending to a closed port 4 times");
            return socket;
        }

        // ----- the members -----

        private readonly struct Expected
        {
            public Expected(byte[] payload, EndPointKey sender)
            {
                Payload = payload;
                Sender = sender;
            }

            public byte[] Payload { get; }
            public EndPointKey Sender { get; }
        }

        /// <summary>One call of member <paramref name="id"/>, described as the contract's cell it produced.</summary>
        private static string Receive(Socket socket, string id, Variant mode, int bufferSize, Expected? expected, int batchTimeoutMs)
        {
            const int offset = 3;
            var array = new byte[offset + bufferSize + 5];
            IPEndPointNonAlloc? endPoint = null;
            EndPointKey key = default;
            try
            {
                switch (id)
                {
                    case "R1":
                        endPoint = NewEndPoint(socket);
                        return Datagram(socket.ReceiveFrom_NonAlloc(array, offset, bufferSize, SocketFlags.None, endPoint), false, array.AsSpan(offset), endPoint.CurrentKey, bufferSize, expected);
                    case "R2":
                    {
                        endPoint = NewEndPoint(socket);
                        var exact = new byte[bufferSize];
                        try
                        {
                            return Datagram(socket.ReceiveFrom_NonAlloc(exact, endPoint), false, exact, endPoint.CurrentKey, bufferSize, expected);
                        }
                        catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                        {
                            return CutAsError(exact, endPoint.CurrentKey, bufferSize, expected);
                        }
                    }
                    case "R3":
                        return Datagram(socket.ReceiveFrom_NonAlloc(array, offset, bufferSize, SocketFlags.None, out key), false, array.AsSpan(offset), key, bufferSize, expected);
                    case "R4":
                    {
                        ReceivedDatagram d = socket.ReceiveFrom_NonAlloc(array.AsSpan(offset, bufferSize));
                        return Datagram(d.Length, d.Truncated, array.AsSpan(offset), d.RemoteEndPoint, bufferSize, expected);
                    }
                    case "R5":
                    {
                        endPoint = NewEndPoint(socket);
                        if (!socket.TryReceiveFrom_NonAlloc(array, offset, bufferSize, SocketFlags.None, endPoint, out ReceivedDatagram d)) return "false";
                        if (!d.RemoteEndPoint.Equals(endPoint.CurrentKey)) return "endpoint and result disagree";
                        return Datagram(d.Length, d.Truncated, array.AsSpan(offset), d.RemoteEndPoint, bufferSize, expected);
                    }
                    case "R6":
                    {
                        if (!socket.TryReceiveFrom_NonAlloc(array.AsSpan(offset, bufferSize), out ReceivedDatagram d)) return "false";
                        return Datagram(d.Length, d.Truncated, array.AsSpan(offset), d.RemoteEndPoint, bufferSize, expected);
                    }
                    case "A1":
                        return ReceiveAwaited(socket, mode.Continuations, array, offset, bufferSize, expected, batchTimeoutMs);
                    default:
                    {
                        using var batch = new DatagramBatch(4, bufferSize, mode.Batch);
                        int n = id == "B1" ? batch.Receive(socket) : batch.Receive(socket, batchTimeoutMs);
                        if (n == 0) return "0";
                        if (n > 1) return n + " datagrams";
                        ReadOnlySpan<byte> bytes = batch.GetDatagram(0, out EndPointKey from);
                        var copy = new byte[bufferSize + 5];
                        bytes.CopyTo(copy);
                        return Datagram(bytes.Length, batch.IsTruncated(0), copy, from, bufferSize, expected);
                    }
                }
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize && endPoint != null)
            {
                return CutAsError(array.AsSpan(offset), endPoint.CurrentKey, bufferSize, expected);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize && id == "R3")
            {
                return CutAsError(array.AsSpan(offset), key, bufferSize, expected);
            }
            catch (SocketException e)
            {
                return e.SocketErrorCode.ToString();
            }
            catch (ObjectDisposedException)
            {
                return "ObjectDisposed";
            }
        }

        /// <summary>"datagram" or "truncated" when the bytes and the sender are right, else what is wrong.</summary>
        private static string Datagram(int length, bool truncated, Span<byte> stored, EndPointKey sender, int bufferSize, Expected? expected)
        {
            if (expected == null) return "a datagram from nowhere (" + length + " B)";
            Expected e = expected.Value;
            if (!sender.Equals(e.Sender)) return "wrong sender " + sender + " (expected " + e.Sender + ")";
            if (truncated)
            {
                if (length != bufferSize) return "truncated to " + length + " B, not " + bufferSize;
                if (!stored.Slice(0, length).SequenceEqual(e.Payload.AsSpan(0, length))) return "truncated, wrong bytes";
                return e.Payload.Length > bufferSize ? "truncated" : "truncated though it fit";
            }
            if (e.Payload.Length > bufferSize) return "cut silently to " + length + " B";
            if (length != e.Payload.Length || !stored.Slice(0, length).SequenceEqual(e.Payload)) return "wrong bytes (" + length + " B)";
            return "datagram";
        }

        /// <summary>"MessageSize" when the first bytes and the sender were stored, as the contract says.</summary>
        private static string CutAsError(Span<byte> stored, EndPointKey sender, int bufferSize, Expected? expected)
        {
            if (expected == null) return "MessageSize from nowhere";
            Expected e = expected.Value;
            if (!sender.Equals(e.Sender)) return "MessageSize, wrong sender " + sender;
            if (!stored.Slice(0, bufferSize).SequenceEqual(e.Payload.AsSpan(0, bufferSize))) return "MessageSize, wrong bytes";
            return "MessageSize";
        }

        private static IPEndPointNonAlloc NewEndPoint(Socket socket)
        {
            // The socket may be disposed already: AddressFamily still answers.
            return new IPEndPointNonAlloc(socket.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
        }

        private static string SendTo(Loopback pair, string id, Variant mode, int length)
        {
            byte[] payload = Payload(length, 2);
            try
            {
                switch (id)
                {
                    case "S1":
                    {
                        var to = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
                        return Sent(pair, payload, pair.Client.SendTo_NonAlloc(payload, 0, length, SocketFlags.None, to), length);
                    }
                    case "S2":
                        return Sent(pair, payload, pair.Client.SendTo_NonAlloc(payload.AsSpan(), pair.ServerKey), length);
                    case "S3":
                        return Sent(pair, payload, pair.Client.SendTo_NonAlloc(payload, 0, length, SocketFlags.None, pair.ServerKey), length);
                    case "T1":
                    {
                        var to = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
                        return TrySent(pair, payload, pair.Client.TrySendTo_NonAlloc(payload, 0, length, SocketFlags.None, to));
                    }
                    case "T2":
                        return TrySent(pair, payload, pair.Client.TrySendTo_NonAlloc(payload.AsSpan(), pair.ServerKey));
                    case "T3":
                        return TrySent(pair, payload, pair.Client.TrySendTo_NonAlloc(payload, 0, length, SocketFlags.None, pair.ServerKey));
                    case "A2":
                    {
                        using var wrapper = new AsyncDatagramSocket(pair.Client, mode.Continuations);
                        string? outcome = Awaits.Outcome(wrapper.SendToAsync(payload, pair.ServerKey), 10_000, out int sent);
                        if (outcome == null) return "still waiting after 10 s";
                        return outcome.Length > 0 ? outcome : Sent(pair, payload, sent, length);
                    }
                    default:
                    {
                        using var batch = new DatagramBatch(4, DatagramBatch.MaxSlotSize, mode.Batch);
                        byte[] after = Payload(10, 3);
                        Assert.True(batch.TryAdd(payload, pair.ServerKey));
                        Assert.True(batch.TryAdd(after, pair.ServerKey));
                        int sent = batch.Send(pair.Client);
                        if (length <= 65507) return sent == 2 && Arrives(pair, payload) && Arrives(pair, after) ? "sent" : "sent " + sent + " of 2";
                        if (batch.FailedCount != 1 || batch.GetSendError(1) != SocketError.Success) return "failed " + batch.FailedCount;
                        string error = batch.GetSendError(0).ToString();
                        return sent == 1 && Arrives(pair, after) ? error : error + ", and the next datagram did not go";
                    }
                }
            }
            catch (SocketException e)
            {
                return e.SocketErrorCode.ToString();
            }
            catch (ObjectDisposedException)
            {
                return "ObjectDisposed";
            }
        }

        private static string TrySent(Loopback pair, byte[] payload, bool returned)
        {
            if (!returned) return "false";
            return Arrives(pair, payload) ? "sent" : "did not arrive whole";
        }

        private static string Sent(Loopback pair, byte[] payload, int returned, int length)
        {
            if (returned != length) return "returned " + returned;
            return Arrives(pair, payload) ? "sent" : "did not arrive whole";
        }

        private static bool Arrives(Loopback pair, byte[] payload)
        {
            var buffer = new byte[70_000];
            EndPoint from = new IPEndPoint(pair.Family == Family.IPv4 ? IPAddress.Any : IPAddress.IPv6Any, 0);
            pair.Server.ReceiveTimeout = 2000;
            int n = pair.Server.ReceiveFrom(buffer, ref from);
            return n == payload.Length && buffer.AsSpan(0, n).SequenceEqual(payload);
        }

        private static byte[] Payload(int length, int seed)
        {
            var bytes = new byte[length];
            for (int i = 0; i < length; i++) bytes[i] = (byte)(i * 7 + seed);
            return bytes;
        }

        /// <summary>
        /// A1: one await of ReceiveFromAsync. Where the contract expects a datagram or an error, the await is given 10 s;
        /// where the socket is empty it is given twice the socket's ReceiveTimeout, then its token is cancelled ("waits"
        /// when that ends it with OperationCanceled); "disposed during" (<paramref name="timeoutMs"/> infinite) gets 10 s
        /// for the Dispose to end it.
        /// </summary>
        private static string ReceiveAwaited(Socket socket, DatagramContinuations continuations, byte[] array, int offset, int bufferSize, Expected? expected, int timeoutMs)
        {
            using var wrapper = new AsyncDatagramSocket(socket, continuations);
            using var cancel = new CancellationTokenSource();
            ValueTask<ReceivedDatagram> pending = wrapper.ReceiveFromAsync(array.AsMemory(offset, bufferSize), cancel.Token);
            bool mayWait = expected == null && timeoutMs != Timeout.Infinite;
            Task<ReceivedDatagram> task = pending.AsTask();
            string? outcome = Awaits.Outcome(new ValueTask<ReceivedDatagram>(task), mayWait ? 2 * BlockingTimeoutMs : 10_000, out ReceivedDatagram d);
            if (outcome == null)
            {
                if (!mayWait) return "still waiting after 10 s";
                cancel.Cancel();
                outcome = Awaits.Outcome(new ValueTask<ReceivedDatagram>(task), 10_000, out d);
                return outcome == "OperationCanceled" ? "waits" : "waited, then " + (outcome ?? "still waiting after the cancellation");
            }
            if (outcome.Length > 0) return outcome;
            return Datagram(d.Length, d.Truncated, array.AsSpan(offset), d.RemoteEndPoint, bufferSize, expected);
        }

        // ----- awaits: the token, the wrapper, the reusable operation -----

        [Observes("Awaits", "A1", "canceled before; canceled during; wrapper disposed during; second call; awaited twice")]
        [Observes("Awaits", "A2", "canceled before")]
        // Only the native path's OS calls can be stood in for: a send waits on a full buffer there only.
        [Observes("Awaits", "A2", "canceled during; wrapper disposed during; second call; awaited twice", OnlyOn = DatagramPath.Native)]
        [Theory]
        [MemberData(nameof(Matrix.PathsWithContinuations), MemberType = typeof(Matrix))]
        public void AwaitSituations(DatagramPath path, DatagramContinuations continuations)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed("Awaits");
            string row = "A1 (" + continuations + ")";
            foreach (string column in new[] { "canceled before", "canceled during", "wrapper disposed during", "second call", "awaited twice" })
            {
                using var pair = new Loopback(Family.IPv4);
                seen.Add(row, "A1", column, AwaitedReceive(pair, continuations, column));
            }
            row = "A2 (" + continuations + ")";
            using (var pair = new Loopback(Family.IPv4))
                seen.Add(row, "A2", "canceled before", AwaitedSend(pair, continuations, "canceled before", null));
            if (path == DatagramPath.Native)
            {
                // Only the native path's OS calls can be stood in for: a full send buffer makes the send wait.
                foreach (string column in new[] { "canceled during", "wrapper disposed during", "second call", "awaited twice" })
                {
                    using var pair = new Loopback(Family.IPv4);
                    using FullSendBuffer full = FullSendBuffer.Install();
                    seen.Add(row, "A2", column, AwaitedSend(pair, continuations, column, full));
                }
            }
            seen.AssertAsDocumented();
        }

        private static string AwaitedReceive(Loopback pair, DatagramContinuations continuations, string column)
        {
            var wrapper = new AsyncDatagramSocket(pair.Server, continuations);
            try
            {
                var buffer = new byte[100];
                byte[] queued = Payload(20, 5);
                using var cancel = new CancellationTokenSource();
                switch (column)
                {
                    case "canceled before":
                    {
                        pair.Client.SendTo(queued, pair.ServerTarget);
                        Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
                        cancel.Cancel();
                        string outcome = Awaits.Outcome(wrapper.ReceiveFromAsync(buffer, cancel.Token), 10_000, out _) ?? "still waiting";
                        return Arrives(pair, queued) ? outcome : outcome + ", and the queued datagram was consumed";
                    }
                    case "canceled during":
                    case "wrapper disposed during":
                    {
                        ValueTask<ReceivedDatagram> pending = wrapper.ReceiveFromAsync(buffer, cancel.Token);
                        if (pending.IsCompleted) return "did not wait";
                        Thread.Sleep(50);
                        if (column == "canceled during") cancel.Cancel();
                        else wrapper.Dispose();
                        string outcome = Awaits.Outcome(pending, 10_000, out _) ?? "still waiting";
                        string next = NextIsMarker(pair);
                        return next.Length == 0 ? outcome : outcome + ", " + next;
                    }
                    case "second call":
                    {
                        ValueTask<ReceivedDatagram> first = wrapper.ReceiveFromAsync(buffer);
                        if (first.IsCompleted) return "did not wait";
                        string outcome = Awaits.Outcome(wrapper.ReceiveFromAsync(new byte[100]), 10_000, out _) ?? "still waiting";
                        pair.Client.SendTo(queued, pair.ServerTarget);
                        string firstOutcome = Awaits.Outcome(first, 10_000, out ReceivedDatagram d) ?? "still waiting";
                        bool intact = firstOutcome.Length == 0 && d.Length == queued.Length && buffer.AsSpan(0, d.Length).SequenceEqual(queued);
                        return intact ? outcome : outcome + ", and the first call ended " + (firstOutcome.Length > 0 ? firstOutcome : "with the wrong datagram");
                    }
                    default: // awaited twice
                    {
                        ValueTask<ReceivedDatagram> pending = wrapper.ReceiveFromAsync(buffer);
                        if (pending.IsCompleted) return "did not wait";
                        pair.Client.SendTo(queued, pair.ServerTarget);
                        return AwaitTwice(pending);
                    }
                }
            }
            finally
            {
                wrapper.Dispose();
            }
        }

        private static string AwaitedSend(Loopback pair, DatagramContinuations continuations, string column, FullSendBuffer? full)
        {
            var wrapper = new AsyncDatagramSocket(pair.Client, continuations);
            try
            {
                byte[] payload = Payload(20, 6);
                using var cancel = new CancellationTokenSource();
                switch (column)
                {
                    case "canceled before":
                    {
                        cancel.Cancel();
                        string outcome = Awaits.Outcome(wrapper.SendToAsync(payload, pair.ServerKey, cancel.Token), 10_000, out _) ?? "still waiting";
                        return NothingArrives(pair) ? outcome : outcome + ", and the datagram was sent";
                    }
                    case "canceled during":
                    case "wrapper disposed during":
                    {
                        full!.Refusing = true;
                        ValueTask<int> pending = wrapper.SendToAsync(payload, pair.ServerKey, cancel.Token);
                        if (pending.IsCompleted) return "did not wait";
                        Thread.Sleep(20);
                        if (column == "canceled during") cancel.Cancel();
                        else wrapper.Dispose();
                        string outcome = Awaits.Outcome(pending, 10_000, out _) ?? "still waiting";
                        full.Refusing = false;
                        return NothingArrives(pair) ? outcome : outcome + ", and the datagram was sent";
                    }
                    case "second call":
                    {
                        full!.Refusing = true;
                        ValueTask<int> first = wrapper.SendToAsync(payload, pair.ServerKey);
                        if (first.IsCompleted) return "did not wait";
                        string outcome = Awaits.Outcome(wrapper.SendToAsync(Payload(3, 7), pair.ServerKey), 10_000, out _) ?? "still waiting";
                        full.Refusing = false;
                        string firstOutcome = Awaits.Outcome(first, 10_000, out int sent) ?? "still waiting";
                        bool intact = firstOutcome.Length == 0 && sent == payload.Length && Arrives(pair, payload);
                        return intact ? outcome : outcome + ", and the first call ended " + (firstOutcome.Length > 0 ? firstOutcome : "without its datagram arriving");
                    }
                    default: // awaited twice
                    {
                        full!.RefuseNext(1);
                        ValueTask<int> pending = wrapper.SendToAsync(payload, pair.ServerKey);
                        if (full.Refused == 0) return "did not wait";
                        return AwaitTwice(pending);
                    }
                }
            }
            finally
            {
                wrapper.Dispose();
            }
        }

        /// <summary>Takes a waiting call's result once (it must succeed), then again: the second's exception name.</summary>
        private static string AwaitTwice<T>(ValueTask<T> pending)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            while (!pending.IsCompleted && watch.ElapsedMilliseconds < 10_000) Thread.Sleep(1);
            if (!pending.IsCompleted) return "still waiting";
            try
            {
                pending.GetAwaiter().GetResult();
            }
            catch (Exception e)
            {
                return "the first await failed: " + Awaits.Name(e);
            }
            try
            {
                pending.GetAwaiter().GetResult();
                return "awaited twice without complaint";
            }
            catch (Exception e)
            {
                return Awaits.Name(e);
            }
        }

        private static bool NothingArrives(Loopback pair) => !pair.Server.Poll(50_000, SelectMode.SelectRead);

        // ----- rows, modes, OS names -----

        /// <summary>How a row is run: a batch row in a batch mode, an await row with a continuation mode.</summary>
        private readonly struct Variant
        {
            public Variant(DatagramBatchMode batch, DatagramContinuations continuations)
            {
                Batch = batch;
                Continuations = continuations;
            }

            public DatagramBatchMode Batch { get; }
            public DatagramContinuations Continuations { get; }
        }

        /// <summary>
        /// The batch rows run in every batch mode (the ones this OS has; the others must be refused explicitly), the
        /// await rows in both continuation modes, the others once.
        /// </summary>
        private static IEnumerable<Variant> ModesFor(string id)
        {
            if (id.StartsWith("A", StringComparison.Ordinal))
            {
                yield return new Variant(DatagramBatchMode.SingleCalls, DatagramContinuations.ThreadPool);
                yield return new Variant(DatagramBatchMode.SingleCalls, DatagramContinuations.IoThread);
                yield break;
            }
            if (!id.StartsWith("B", StringComparison.Ordinal))
            {
                yield return new Variant(DatagramBatchMode.SingleCalls, default); // unused for the socket extensions
                yield break;
            }
            foreach (DatagramBatchMode mode in new[] { DatagramBatchMode.MultiMessage, DatagramBatchMode.SingleCalls })
            {
                if (DatagramBatch.IsModeAvailable(mode)) yield return new Variant(mode, default);
                else Assert.Throws<PlatformNotSupportedException>(() => new DatagramBatch(4, 1500, mode));
            }
        }

        private static string RowName(string id, Variant mode)
        {
            if (id.StartsWith("B", StringComparison.Ordinal)) return id + " (" + mode.Batch + ")";
            if (id.StartsWith("A", StringComparison.Ordinal)) return id + " (" + mode.Continuations + ")";
            return id;
        }

        /// <summary>The one documented OS difference (docs/CONTRACT.md): Windows reports a closed peer port on a connected socket as ConnectionReset.</summary>
        private static class OsNames
        {
            public static string Normalize(string result)
            {
                if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows) && result.StartsWith(nameof(SocketError.ConnectionReset), StringComparison.Ordinal))
                    return nameof(SocketError.ConnectionRefused) + result.Substring(nameof(SocketError.ConnectionReset).Length);
                return result;
            }
        }

        /// <summary>
        /// Cells as observed, compared with the document's at the end, all differences in one message. The test that
        /// observes (<paramref name="test"/>: the caller) must declare each cell it observes (<see cref="ObservesAttribute"/>)
        /// and observe each cell it declares for this path, so that its declarations, which
        /// <see cref="EveryDocumentedCellIsObservedByATest"/> reads, are what it does.
        /// </summary>
        private sealed class Observed
        {
            private readonly string _section;
            private readonly MethodInfo _test;
            private readonly Dictionary<string, Dictionary<string, string>> _documented;
            private readonly List<string> _differences = new List<string>();
            private readonly HashSet<string> _seen = new HashSet<string>(StringComparer.Ordinal);
            private int _cells;

            public Observed(string section, [CallerMemberName] string test = "")
            {
                _section = section;
                _test = ContractCoverage.Test(typeof(ContractTests), test);
                _documented = ContractTable.Load(section);
            }

            public void Add(string row, string id, string column, string result)
            {
                Assert.True(_documented.ContainsKey(id), "docs/CONTRACT.md has no row " + id);
                Assert.True(_documented[id].ContainsKey(column), "docs/CONTRACT.md has no column '" + column + "'");
                Assert.True(ContractCoverage.Declares(_test, _section, id, column), _test.Name + " observes '" + _section + "' / " + id + " / " + column + " without declaring it ([Observes])");
                _seen.Add(id + " / " + column);
                if (result.Length == 0) return; // a follow-up check that found nothing wrong
                _cells++;
                string documented = _documented[id][column];
                if (result != documented) _differences.Add(row + " / " + column + ": documented '" + documented + "', got '" + result + "'");
            }

            public void AssertAsDocumented()
            {
                Assert.True(_cells > 0, "no cell was checked");
                Assert.True(_differences.Count == 0, "on " + DatagramPathSettings.Active + ", " + Runtime.Describe() + ":\n" + string.Join("\n", _differences));
                HashSet<string> unobserved = ContractCoverage.Required(_test, _section, DatagramPathSettings.Active);
                unobserved.ExceptWith(_seen);
                Assert.True(unobserved.Count == 0, _test.Name + " declares cells of '" + _section + "' it did not observe on " + DatagramPathSettings.Active + ":\n" + string.Join("\n", unobserved.OrderBy(c => c, StringComparer.Ordinal)));
            }
        }
    }
}
