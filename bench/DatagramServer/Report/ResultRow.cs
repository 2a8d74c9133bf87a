using System.Collections.Generic;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>One method's measured run: a row of results.csv (and of details.csv).</summary>
    internal sealed class ResultRow : ReceiverCounts
    {
        public ResultRow(string runtime, string mode, string method)
            : base(runtime)
        {
            Mode = mode;
            Method = method;
        }

        public string Mode { get; }
        public string Method { get; }

        /// <summary>The interleaved round this row measured (1-based); 0 for a row that adds up every round.</summary>
        public int Round { get; set; }

        /// <summary>Seconds from the first datagram to the last (summed over rounds in drain mode).</summary>
        public double Seconds { get; set; }

        /// <summary>CPU time (user + system) of the receiver over the run: the receiving thread, or the whole wa-recv process.</summary>
        public long? CpuNanoseconds { get; set; }

        /// <summary>The receiver's CPU time per datagram read: its cost even when the sender, not the receiver, set the pace.</summary>
        public double? CpuNsPerDatagram => CpuNanoseconds == null || Read == 0 ? (double?)null : (double)CpuNanoseconds.Value / Read;

        public int? Gen1 { get; set; }
        public int? Gen2 { get; set; }

        public int ReceiveBufferGranted { get; set; }
        public string StoppedBy { get; set; } = "";
        public string SenderMode { get; set; } = "";

        public double DatagramsPerSecond => Seconds > 0 ? Read / Seconds : 0;

        public double NsPerDatagram => Seconds > 0 && Read > 0 ? Seconds * 1e9 / Read : 0;

        /// <summary>datagrams_per_s of this row divided by that of c-recvfrom in the same run; null without one.</summary>
        public double? RatioToCRecvfrom { get; set; }

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
