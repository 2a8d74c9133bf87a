using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// docs/CONTRACT.md, "Coalesced receive": a batch with <see cref="DatagramBatch.CoalescedReceive"/> on meets a datagram cut
    /// in its last free slot, a run on a socket whose other options add control messages, a run whose control data the kernel
    /// cut, and a run with more datagrams than the slots left. Every cell on every path the runtime has (a MultiMessage batch
    /// reads natively whichever path is forced: the cells must not change).
    /// </summary>
    public partial class ContractTests
    {
        private const string Coalesced = "Coalesced receive";

        /// <summary>Every path on IPv4; all but SocketAddress also on IPv6.</summary>
        public static TheoryData<DatagramPath, Family> CoalescedCases => Matrix.PathsWithFamiliesWhere((p, f) => f == Family.IPv4 || (f == Family.IPv6 && p != DatagramPath.SocketAddress));

        [Theory]
        [MemberData(nameof(CoalescedCases))]
        [Observes(Coalesced, "B1 B2", "cut in the last free slot; control messages on; cut control data; run beyond the free slots; empty datagrams")]
        public void CoalescedReceive(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            if (!DatagramBatch.IsCoalescedReceiveAvailable)
            {
                // Where the OS has no coalesced receive the table's rows cannot be produced: the switch must be refused.
                Assert.False(RuntimeInformation.IsOSPlatform(OSPlatform.Linux), "coalesced receive should be available on " + Runtime.Describe());
                using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500);
                Assert.Throws<PlatformNotSupportedException>(() => batch.CoalescedReceive = true);
                return;
            }
            var seen = new Observed(Coalesced);
            // The OS seam's stand-in counts the segmented sends and gives the kernel less room for control data on demand.
            using BatchOs watched = BatchOs.Install();
            foreach (string id in new[] { "B1", "B2" })
            {
                seen.Add(id, id, "cut in the last free slot", CutInTheLastFreeSlot(family, id));
                seen.Add(id, id, "control messages on", RunWithControlMessages(watched, family, id, 0));
                seen.Add(id, id, "cut control data", RunWithControlMessages(watched, family, id, 64));
                seen.Add(id, id, "run beyond the free slots", RunBeyondTheFreeSlots(watched, family, id));
                seen.Add(id, id, "empty datagrams", EmptyDatagrams(family, id));
            }
            seen.AssertAsDocumented();
        }

        /// <summary>Every path on IPv4 and IPv6; dual mode on Native.</summary>
        public static TheoryData<DatagramPath, Family> SendShutDownCases => Matrix.PathsWithFamiliesWhere((p, f) => f != Family.DualMode || p == DatagramPath.Native);

        /// <summary>
        /// "Send shut down": the sending socket, connected to its peer, was shut down for sending (<c>Shutdown(SocketShutdown.Send)</c>). Every send member
        /// reports <c>Shutdown</c>, as the runtime's own SendTo does; a batch's run (two datagrams that would leave as one segmented
        /// send) fails slot by slot with it and leaves <see cref="DatagramBatch.SegmentationOffload"/> as it was.
        /// </summary>
        [Theory]
        [MemberData(nameof(SendShutDownCases))]
        [Observes(SendShutdownSection, "S1 S2 S3 T1 T2 T3 B3 A2", "send shut down")]
        public void SendShutDown(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed(SendShutdownSection);
            foreach (string id in s_sendIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(family);
                    pair.Client.Connect(pair.ServerTarget); // a datagram socket can be shut down only once connected
                    pair.Client.Shutdown(SocketShutdown.Send);
                    string result = id == "B3" ? BatchSendShutDown(pair, mode.Batch) : SendTo(pair, id, mode, 24);
                    seen.Add(RowName(id, mode), id, "send shut down", result);
                }
            }
            seen.AssertAsDocumented();
        }

        private const string SendShutdownSection = "A socket shut down for sending";

        private static string BatchSendShutDown(Loopback pair, DatagramBatchMode mode)
        {
            using var batch = new DatagramBatch(4, 1500, mode);
            bool segmenting = batch.SegmentationOffload;
            Assert.True(batch.TryAdd(Payload(100, 1), pair.ServerKey));
            Assert.True(batch.TryAdd(Payload(100, 2), pair.ServerKey));
            int sent;
            try
            {
                sent = batch.Send(pair.Client);
            }
            catch (SocketException e)
            {
                return "threw " + e.SocketErrorCode;
            }
            if (sent != 0 || batch.FailedCount != 2) return "sent " + sent + ", failed " + batch.FailedCount;
            SocketError first = batch.GetSendError(0), second = batch.GetSendError(1);
            if (first != second) return first + ", then " + second;
            return segmenting && !batch.SegmentationOffload ? first + ", and segmentation offload turned off" : first.ToString();
        }

        private static int ReceiveFor(string id, DatagramBatch batch, Socket socket) => id == "B1" ? batch.Receive(socket) : batch.Receive(socket, 200);

        /// <summary>
        /// 127 small datagrams fill all slots but one, then one of 2 000 bytes comes: the kernel cuts it to the last slot's
        /// 1 500 bytes. "truncated" when the slot says so; the small ones must come whole.
        /// </summary>
        private static string CutInTheLastFreeSlot(Family family, string id)
        {
            using Socket sender = BatchTraffic.Bound(family);
            using Socket peer = BatchTraffic.Bound(family);
            peer.EnableCoalescedReceive();
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500);
            batch.CoalescedReceive = true;
            int small = DatagramBatch.MinCoalescedReceiveCapacity - 1;
            for (int i = 0; i < small; i++) sender.SendTo(Payload(20 + i % 7, i), peer.LocalEndPoint!);
            byte[] big = Payload(2000, 9);
            sender.SendTo(big, peer.LocalEndPoint!);
            int n = ReceiveFor(id, batch, peer);
            if (n != small + 1) return "received " + n + " of " + (small + 1);
            for (int i = 0; i < small; i++)
            {
                if (batch.IsTruncated(i) || !batch.GetDatagram(i).SequenceEqual(Payload(20 + i % 7, i))) return "datagram " + i + " damaged";
            }
            ReadOnlySpan<byte> last = batch.GetDatagram(small);
            if (!last.SequenceEqual(big.AsSpan(0, 1500))) return "last slot holds " + last.Length + " B, not the first 1500 B";
            return batch.IsTruncated(small) ? "truncated" : "cut to " + last.Length + " B, not flagged";
        }

        /// <summary>
        /// Ten 100-byte datagrams leave as one segmented send to a socket on which receive timestamps (in every form) and the
        /// IP-level receive options are on: the kernel adds their control messages before and after the segment size.
        /// "datagrams" when the ten come back as ten, whole and in order.
        /// </summary>
        /// <remarks>With <paramref name="controlRoom"/> above 0 the OS seam's stand-in gives the kernel only that much room for the control
        /// data (64 bytes: SO_TIMESTAMPING's message alone fills it), so the kernel cuts it before the segment size.</remarks>
        private static string RunWithControlMessages(BatchOs watched, Family family, string id, int controlRoom)
        {
            using Socket sender = BatchTraffic.Bound(family);
            using Socket peer = BatchTraffic.Bound(family);
            peer.EnableCoalescedReceive();
            ControlOptions.TurnOnEvery(peer, family);
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500);
            batch.CoalescedReceive = true;
            string sent = SendRun(watched, sender, BatchTraffic.KeyOf(peer), 10, 100);
            if (sent.Length > 0) return sent;
            watched.ControlRoom = controlRoom;
            int n;
            try
            {
                n = ReceiveFor(id, batch, peer);
            }
            finally
            {
                watched.ControlRoom = 0;
            }
            string result = Run(batch, n, 10, 100);
            if (result == "flagged into one 1000 B datagram") return batch.GetDatagram(0).SequenceEqual(Concatenated(10, 100)) ? "flagged" : "flagged, but not the run's bytes";
            return result;
        }

        /// <summary>
        /// 124 single datagrams leave four slots free, then a run of ten comes as one: "datagrams, rest next" when the four slots
        /// hold its first four and the next receive starts with the other six, all whole and in order, nothing else in between.
        /// </summary>
        private static string RunBeyondTheFreeSlots(BatchOs watched, Family family, string id)
        {
            using Socket sender = BatchTraffic.Bound(family);
            using Socket peer = BatchTraffic.Bound(family);
            peer.EnableCoalescedReceive();
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500);
            batch.CoalescedReceive = true;
            int singles = DatagramBatch.MinCoalescedReceiveCapacity - 4;
            for (int i = 0; i < singles; i++) sender.SendTo(Payload(30, i), peer.LocalEndPoint!);
            string sent = SendRun(watched, sender, BatchTraffic.KeyOf(peer), 10, 100);
            if (sent.Length > 0) return sent;
            int n = ReceiveFor(id, batch, peer);
            if (n != singles + 4) return "received " + n + " of " + (singles + 4);
            EndPointKey from = BatchTraffic.KeyOf(sender);
            for (int i = 0; i < n; i++)
            {
                byte[] expected = i < singles ? Payload(30, i) : Payload(100, 40 + i - singles);
                if (batch.IsTruncated(i) || !batch.GetDatagram(i, out EndPointKey source).SequenceEqual(expected) || !source.Equals(from)) return "datagram " + i + " damaged";
            }
            n = ReceiveFor(id, batch, peer);
            if (n != 6) return "datagrams, then " + n + " of the 6 left";
            for (int i = 0; i < 6; i++)
            {
                if (batch.IsTruncated(i) || !batch.GetDatagram(i, out EndPointKey source).SequenceEqual(Payload(100, 44 + i)) || !source.Equals(from)) return "datagrams, then datagram " + (4 + i) + " of the run damaged";
            }
            return batch.Receive(peer) == 0 ? "datagrams, rest next" : "datagrams, rest next, then more";
        }

        /// <summary>
        /// Datagrams of 0, 10, 0 and 10 bytes: the first lands in the slots (128 free), the others in the spill (fewer free).
        /// "datagrams" when the four come back as four, whole, in order, each with its sender, and nothing after them.
        /// </summary>
        private static string EmptyDatagrams(Family family, string id)
        {
            using Socket sender = BatchTraffic.Bound(family);
            using Socket peer = BatchTraffic.Bound(family);
            peer.EnableCoalescedReceive();
            using var batch = new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500);
            batch.CoalescedReceive = true;
            int[] lengths = { 0, 10, 0, 10 };
            for (int i = 0; i < lengths.Length; i++) sender.SendTo(Payload(lengths[i], i), peer.LocalEndPoint!);
            int n = ReceiveFor(id, batch, peer);
            var got = new StringBuilder();
            for (int i = 0; i < n; i++) got.Append(i == 0 ? "" : ", ").Append(batch.GetDatagram(i).Length);
            if (n != lengths.Length) return "received " + n + " of " + lengths.Length + " (" + got + " B)";
            EndPointKey from = BatchTraffic.KeyOf(sender);
            for (int i = 0; i < n; i++)
            {
                if (batch.IsTruncated(i) || !batch.GetDatagram(i, out EndPointKey source).SequenceEqual(Payload(lengths[i], i)) || !source.Equals(from)) return "datagram " + i + " damaged";
            }
            return batch.Receive(peer) == 0 ? "datagrams" : "datagrams, then more";
        }

        private static byte[] Concatenated(int count, int size)
        {
            var all = new byte[count * size];
            for (int i = 0; i < count; i++) Payload(size, 40 + i).CopyTo(all, i * size);
            return all;
        }

        /// <summary>Sends <paramref name="count"/> datagrams of <paramref name="size"/> bytes as one segmented run: "" when they went so.</summary>
        private static string SendRun(BatchOs watched, Socket sender, EndPointKey to, int count, int size)
        {
            long segmented = watched.SegmentedSends;
            using var run = new DatagramBatch(count, size);
            for (int i = 0; i < count; i++) Assert.True(run.TryAdd(Payload(size, 40 + i), to));
            int sent = run.Send(sender);
            if (sent != count) return "the run was not sent (" + sent + ")";
            return watched.SegmentedSends - segmented == 1 ? "" : "the run did not leave as one segmented send";
        }

        /// <summary>"datagrams" when the batch's <paramref name="n"/> slots are the run's datagrams, whole, unflagged and in order.</summary>
        private static string Run(DatagramBatch batch, int n, int count, int size)
        {
            if (n == 1 && batch.GetDatagram(0).Length == count * size) return (batch.IsTruncated(0) ? "flagged" : "merged") + " into one " + count * size + " B datagram";
            if (n != count) return "received " + n + " of " + count;
            for (int i = 0; i < count; i++)
            {
                if (batch.IsTruncated(i) || !batch.GetDatagram(i).SequenceEqual(Payload(size, 40 + i))) return "datagram " + i + " damaged";
            }
            return "datagrams";
        }

        /// <summary>The receive options a user can turn on that make the kernel add control messages to every datagram (Linux numbers).</summary>
        internal static class ControlOptions
        {
            private const int SolSocket = 1, SoTimestamp = 29, SoTimestampNs = 35, SoTimestamping = 37, SoRxqOvfl = 40, SoRcvMark = 75;
            private const int TimestampingRxSoftware = 1 << 3, TimestampingSoftware = 1 << 4, TimestampingOptPktInfo = 1 << 13;
            private const int IpProtoIp = 0, IpRecvTtl = 12, IpRecvTos = 13, IpPktInfo = 8, IpRecvOrigDstAddr = 20, IpRecvFragSize = 25;
            private const int IpProtoIPv6 = 41, IPv6RecvPktInfo = 49, IPv6RecvHopLimit = 51, IPv6RecvTClass = 66, IPv6RecvOrigDstAddr = 74, IPv6RecvFragSize = 77;

            [DllImport("libc", EntryPoint = "setsockopt", SetLastError = true)]
            private static extern unsafe int SetSockOpt(int fd, int level, int name, int* value, uint length);

            public static unsafe void TurnOnEvery(Socket socket, Family family)
            {
                int fd = (int)socket.Handle;
                Set(fd, SolSocket, SoTimestamp, 1);
                Set(fd, SolSocket, SoTimestampNs, 1);
                Set(fd, SolSocket, SoTimestamping, TimestampingRxSoftware | TimestampingSoftware | TimestampingOptPktInfo);
                Set(fd, SolSocket, SoRxqOvfl, 1);
                TrySet(fd, SolSocket, SoRcvMark, 1); // Linux 5.19+
                if (family == Family.IPv4)
                {
                    Set(fd, IpProtoIp, IpPktInfo, 1);
                    Set(fd, IpProtoIp, IpRecvTtl, 1);
                    Set(fd, IpProtoIp, IpRecvTos, 1);
                    Set(fd, IpProtoIp, IpRecvOrigDstAddr, 1);
                    TrySet(fd, IpProtoIp, IpRecvFragSize, 1); // Linux 4.14+
                }
                else
                {
                    Set(fd, IpProtoIPv6, IPv6RecvPktInfo, 1);
                    Set(fd, IpProtoIPv6, IPv6RecvHopLimit, 1);
                    Set(fd, IpProtoIPv6, IPv6RecvTClass, 1);
                    Set(fd, IpProtoIPv6, IPv6RecvOrigDstAddr, 1);
                    TrySet(fd, IpProtoIPv6, IPv6RecvFragSize, 1);
                }
            }

            private static unsafe void Set(int fd, int level, int name, int value)
            {
                Assert.True(SetSockOpt(fd, level, name, &value, sizeof(int)) == 0, "setsockopt(" + level + ", " + name + ") failed: errno " + Marshal.GetLastWin32Error());
            }

            private static unsafe void TrySet(int fd, int level, int name, int value) => SetSockOpt(fd, level, name, &value, sizeof(int));
        }
    }
}
