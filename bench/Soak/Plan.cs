using System.Collections.Generic;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>The receive members of the library; each is driven by its own loop in <see cref="Receiver"/>.</summary>
    internal enum ReceiveForm
    {
        /// <summary><c>int ReceiveFrom_NonAlloc(byte[], int, int, SocketFlags, IPEndPointNonAlloc)</c>, blocking.</summary>
        R1,
        /// <summary><c>int ReceiveFrom_NonAlloc(byte[], IPEndPointNonAlloc)</c>, blocking.</summary>
        R2,
        /// <summary><c>int ReceiveFrom_NonAlloc(byte[], int, int, SocketFlags, out EndPointKey)</c>, blocking.</summary>
        R3,
        /// <summary><c>ReceivedDatagram ReceiveFrom_NonAlloc(Span&lt;byte&gt;, SocketFlags)</c>, blocking.</summary>
        R4,
        /// <summary><c>bool TryReceiveFrom_NonAlloc(byte[], int, int, SocketFlags, IPEndPointNonAlloc, out ReceivedDatagram)</c>; Socket.Poll when empty.</summary>
        R5,
        /// <summary><c>bool TryReceiveFrom_NonAlloc(Span&lt;byte&gt;, SocketFlags, out ReceivedDatagram)</c>; Socket.Poll when empty.</summary>
        R6,
        /// <summary><c>int DatagramBatch.Receive(Socket)</c>, never waits; Socket.Poll when empty.</summary>
        B1,
        /// <summary><c>int DatagramBatch.Receive(Socket, int)</c>, waits up to 200 ms.</summary>
        B2,
    }

    /// <summary>The send members of the library.</summary>
    internal enum SendForm
    {
        /// <summary><c>int SendTo_NonAlloc(byte[], int, int, SocketFlags, IPEndPointNonAlloc)</c>.</summary>
        S1,
        /// <summary><c>int SendTo_NonAlloc(ReadOnlySpan&lt;byte&gt;, SocketFlags, in EndPointKey)</c>.</summary>
        S2,
        /// <summary><c>int SendTo_NonAlloc(byte[], int, int, SocketFlags, in EndPointKey)</c>.</summary>
        S3,
        /// <summary><c>int DatagramBatch.Send(Socket)</c>, slots filled in place with <c>TryAdd(int, in EndPointKey, out Span&lt;byte&gt;)</c>.</summary>
        B3,
    }

    /// <summary>The socket families of a segment.</summary>
    internal enum Family
    {
        /// <summary>IPv4 senders on 127.0.0.1 to an IPv4 receiver on 127.0.0.1.</summary>
        IPv4,
        /// <summary>IPv6 senders on ::1 to an IPv6-only receiver on ::1.</summary>
        IPv6,
        /// <summary>IPv4 senders on 127.0.0.1 to a dual-mode IPv6 receiver on ::ffff:127.0.0.1 (it sees them IPv4-mapped).</summary>
        Dual,
    }

    /// <summary>One measured run: a receive member with its matching send member, a datagram path, a family.</summary>
    internal sealed class Segment
    {
        internal Segment(int id, ReceiveForm receive, DatagramBatchMode mode, DatagramPath path, Family family)
        {
            Id = id;
            Receive = receive;
            Mode = mode;
            Path = path;
            Family = family;
        }

        internal int Id { get; }
        internal ReceiveForm Receive { get; }

        /// <summary>The batch mode of both sides' batches (batch members only).</summary>
        internal DatagramBatchMode Mode { get; }
        internal DatagramPath Path { get; }
        internal Family Family { get; }
        internal long Planned { get; set; }

        internal bool IsBatch => Receive == ReceiveForm.B1 || Receive == ReceiveForm.B2;

        /// <summary>
        /// The send member that matches the receive member: the same shape of arguments (array and
        /// IPEndPointNonAlloc, array and key, span and key, batch and batch of the same mode).
        /// </summary>
        internal SendForm Send
        {
            get
            {
                switch (Receive)
                {
                    case ReceiveForm.R1:
                    case ReceiveForm.R2:
                    case ReceiveForm.R5: return SendForm.S1;
                    case ReceiveForm.R3: return SendForm.S3;
                    case ReceiveForm.R4:
                    case ReceiveForm.R6: return SendForm.S2;
                    default: return SendForm.B3;
                }
            }
        }

        internal string ReceiveName => IsBatch ? Receive + ModeSuffix : Receive.ToString();
        internal string SendName => IsBatch ? Send + ModeSuffix : Send.ToString();
        private string ModeSuffix => Mode == DatagramBatchMode.MultiMessage ? "-MM" : "-SC";
        internal string Name => ReceiveName + " " + SendName + " " + Path + " " + Family;

        /// <summary>
        /// Every receive member (batches in every available mode), each over every datagram path the runtime has
        /// and each family, in that nesting; <paramref name="total"/> datagrams spread evenly over them.
        /// </summary>
        internal static List<Segment> All(long total, string? only)
        {
            var segments = new List<Segment>();
            var forms = new List<(ReceiveForm, DatagramBatchMode)>();
            foreach (ReceiveForm form in new[] { ReceiveForm.R1, ReceiveForm.R2, ReceiveForm.R3, ReceiveForm.R4, ReceiveForm.R5, ReceiveForm.R6 })
                forms.Add((form, DatagramBatchMode.SingleCalls));
            foreach (ReceiveForm form in new[] { ReceiveForm.B1, ReceiveForm.B2 })
            {
                foreach (DatagramBatchMode mode in new[] { DatagramBatchMode.MultiMessage, DatagramBatchMode.SingleCalls })
                {
                    if (DatagramBatch.IsModeAvailable(mode)) forms.Add((form, mode));
                }
            }
            foreach ((ReceiveForm form, DatagramBatchMode mode) in forms)
            {
                foreach (DatagramPath path in new[] { DatagramPath.Native, DatagramPath.SocketAddress, DatagramPath.Managed })
                {
                    if (!DatagramPathSettings.IsAvailable(path)) continue;
                    foreach (Family family in new[] { Family.IPv4, Family.IPv6, Family.Dual })
                    {
                        var segment = new Segment(segments.Count + 1, form, mode, path, family);
                        if (only == null || segment.Name.Contains(only)) segments.Add(segment);
                    }
                }
            }
            for (int i = 0; i < segments.Count; i++)
                segments[i].Planned = total / segments.Count + (i < total % segments.Count ? 1 : 0);
            return segments;
        }
    }
}
