using System;
using System.Globalization;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>What one segment measured; also used for the sum over segments.</summary>
    internal sealed class SegmentResult
    {
        internal SegmentResult(string label)
        {
            Label = label;
        }

        internal string Label { get; }
        internal long Sent { get; set; }
        internal long Received { get; set; }

        /// <summary>The receiving socket's own drop count (DatagramSocketStatus.DroppedDatagrams), after − before; -1 when the OS keeps none.</summary>
        internal long SocketDrops { get; set; }
        internal UdpCounters Snmp { get; set; } = UdpCounters.Zero;
        internal long Bad { get; set; }
        internal long OutOfOrder { get; set; }
        internal long SendErrors { get; set; }
        internal double Seconds { get; set; }
        internal long ReceiveBytes { get; set; }
        internal long SendBytes { get; set; }

        /// <summary>Whole-process managed allocation over the segment (.NET); -1 where the runtime has no such counter (Mono).</summary>
        internal long ProcessBytes { get; set; }

        /// <summary>Why the segment failed beyond its counts (a thread that did not end, an exception, a sender that gave up), else null.</summary>
        internal string? Problem { get; set; }

        internal long Lost => Sent - Received - Math.Max(0, SocketDrops);

        internal bool Failed => Lost != 0 || Bad != 0 || SendErrors != 0 || Problem != null;

        internal void Add(SegmentResult r)
        {
            Sent += r.Sent;
            Received += r.Received;
            SocketDrops = SocketDrops < 0 || r.SocketDrops < 0 ? -1 : SocketDrops + r.SocketDrops;
            Snmp = UdpCounters.Sum(Snmp, r.Snmp);
            Bad += r.Bad;
            OutOfOrder += r.OutOfOrder;
            SendErrors += r.SendErrors;
            Seconds += r.Seconds;
            ReceiveBytes += r.ReceiveBytes;
            SendBytes += r.SendBytes;
            ProcessBytes = ProcessBytes < 0 || r.ProcessBytes < 0 ? -1 : ProcessBytes + r.ProcessBytes;
            if (r.Problem != null) Problem = "see the segments";
        }

        internal const string Header =
            "segment                              |       sent   received | sock drops | snmp4 in/rcvbuf | snmp6 in/rcvbuf | lost  bad  ooo |  dgram/s | recv B  send B  process B";

        internal string Row()
        {
            var c = CultureInfo.InvariantCulture;
            return string.Format(c, "{0,-36} | {1,10} {2,10} | {3,10} | {4,15} | {5,15} | {6,4} {7,4} {8,4} | {9,8:N0} | {10,6} {11,7} {12,10}",
                Label, Sent, Received, SocketDrops < 0 ? "n/a" : SocketDrops.ToString(c),
                UdpCounters.Pair(Snmp.InErrors4, Snmp.RcvbufErrors4), UdpCounters.Pair(Snmp.InErrors6, Snmp.RcvbufErrors6),
                Lost, Bad, OutOfOrder, Seconds > 0 ? Received / Seconds : 0,
                ReceiveBytes, SendBytes, ProcessBytes < 0 ? "n/a" : ProcessBytes.ToString(c));
        }
    }
}
