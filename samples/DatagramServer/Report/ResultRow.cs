using System.Collections.Generic;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>One method's measured run: a row of results.csv (and of details.csv).</summary>
    internal sealed class ResultRow
    {
        public ResultRow(string runtime, string mode, string method)
        {
            Runtime = runtime;
            Mode = mode;
            Method = method;
        }

        public string Runtime { get; }
        public string Mode { get; }
        public string Method { get; }

        /// <summary>The interleaved round this row measured (1-based); 0 for a row that adds up every round.</summary>
        public int Round { get; set; }

        /// <summary>Datagrams the sender sent.</summary>
        public long Sent { get; set; }

        /// <summary>Datagrams the kernel threw away because the receive queue was full (the socket's own counter).</summary>
        public long KernelDrops { get; set; }

        /// <summary>Every datagram read from the socket, good or bad (the rates are computed from this).</summary>
        public long Read { get; set; }

        /// <summary>Valid datagrams with a sequence number in range, each counted once: the results' "received".</summary>
        public long Received { get; set; }

        public long Corrupt { get; set; }
        public long Duplicate { get; set; }
        public long OutOfRange { get; set; }

        /// <summary>Corrupted datagrams sent on purpose (--inject-corrupt); each must show up as corrupt.</summary>
        public long Injected { get; set; }

        /// <summary>Seconds from the first datagram to the last (summed over rounds in drain mode).</summary>
        public double Seconds { get; set; }

        /// <summary>Managed bytes the receiving thread allocated; null for the C programs.</summary>
        public long? AllocatedBytes { get; set; }

        /// <summary>CPU time (user + system) of the receiver over the run: the receiving thread, or the whole wa-recv process.</summary>
        public long? CpuNanoseconds { get; set; }

        /// <summary>The receiver's CPU time per datagram read: its cost even when the sender, not the receiver, set the pace.</summary>
        public double? CpuNsPerDatagram => CpuNanoseconds == null || Read == 0 ? (double?)null : (double)CpuNanoseconds.Value / Read;

        public int? Gen0 { get; set; }
        public int? Gen1 { get; set; }
        public int? Gen2 { get; set; }

        public int ReceiveBufferGranted { get; set; }
        public string StoppedBy { get; set; } = "";
        public string SenderMode { get; set; } = "";

        /// <summary>Datagrams the kernel accepted that were not received intact: missing or corrupted. Must be 0.</summary>
        public long Lost => Sent - KernelDrops - Received;

        public double DatagramsPerSecond => Seconds > 0 ? Read / Seconds : 0;

        public double NsPerDatagram => Seconds > 0 && Read > 0 ? Seconds * 1e9 / Read : 0;

        public double? BytesPerDatagram => AllocatedBytes == null ? (double?)null : Read > 0 ? (double)AllocatedBytes.Value / Read : 0;

        /// <summary>datagrams_per_s of this row divided by that of c-recvfrom in the same run; null without one.</summary>
        public double? RatioToCRecvfrom { get; set; }

        /// <summary>True when nothing is wrong with the row: lost = 0, no duplicates or strays, and exactly the injected datagrams corrupt.</summary>
        public bool Clean => Lost == 0 && Duplicate == 0 && OutOfRange == 0 && Corrupt == Injected;

        /// <summary>One method's rows of every round as one row: counts, times, bytes and GCs added up.</summary>
        public static ResultRow Combine(IReadOnlyList<ResultRow> rounds)
        {
            ResultRow first = rounds[0];
            var all = new ResultRow(first.Runtime, first.Mode, first.Method)
            {
                ReceiveBufferGranted = first.ReceiveBufferGranted,
                SenderMode = first.SenderMode,
                StoppedBy = first.StoppedBy,
            };
            foreach (ResultRow r in rounds)
            {
                all.Sent += r.Sent;
                all.KernelDrops += r.KernelDrops;
                all.Read += r.Read;
                all.Received += r.Received;
                all.Corrupt += r.Corrupt;
                all.Duplicate += r.Duplicate;
                all.OutOfRange += r.OutOfRange;
                all.Injected += r.Injected;
                all.Seconds += r.Seconds;
                all.AllocatedBytes = r.AllocatedBytes == null ? null : (all.AllocatedBytes ?? 0) + r.AllocatedBytes;
                all.CpuNanoseconds = r.CpuNanoseconds == null ? null : (all.CpuNanoseconds ?? 0) + r.CpuNanoseconds;
                all.Gen0 = r.Gen0 == null ? null : (all.Gen0 ?? 0) + r.Gen0;
                all.Gen1 = r.Gen1 == null ? null : (all.Gen1 ?? 0) + r.Gen1;
                all.Gen2 = r.Gen2 == null ? null : (all.Gen2 ?? 0) + r.Gen2;
                if (r.StoppedBy != all.StoppedBy) all.StoppedBy = "mixed";
            }
            return all;
        }
    }
}
