using System.Collections.Generic;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>One receiver at one shard count in the shard scenario, over every fill of every round: a row of shards.csv.</summary>
    internal sealed class ShardRow
    {
        public ShardRow(string runtime, string receiver, int shards)
        {
            Runtime = runtime;
            Receiver = receiver;
            Shards = shards;
        }

        public string Runtime { get; }

        /// <summary>library-shards (DatagramShards + DatagramBatch, in this process) or c-shards (bench/native wa-shards).</summary>
        public string Receiver { get; }

        public int Shards { get; }

        public long Sent { get; set; }
        public long KernelDrops { get; set; }
        public long Read { get; set; }

        /// <summary>Valid, in-range datagrams, each sequence counted once over all the shards.</summary>
        public long Received { get; set; }

        public long Corrupt { get; set; }
        public long Duplicate { get; set; }
        public long OutOfRange { get; set; }
        public long Injected { get; set; }

        /// <summary>Managed bytes the shard threads allocated while draining the measured fills; null for C.</summary>
        public long? AllocatedBytes { get; set; }

        /// <summary>Garbage collections during the runs; null for C.</summary>
        public int? Gen0 { get; set; }

        /// <summary>Per measured fill: every shard's datagrams over the time from the first shard's first call to the last shard's last datagram.</summary>
        public List<double> FillRates { get; } = new List<double>();

        /// <summary>Per measured fill: the shard threads' CPU time (for C: the process's) per datagram.</summary>
        public List<double> FillCpuNs { get; } = new List<double>();

        /// <summary>The smallest share of a fill any shard got, times the shard count: 1 when every shard got as many as the others.</summary>
        public double SmallestShare { get; set; } = 1;

        public Spread Rate => Spread.Of(FillRates);

        public Spread CpuNsPerDatagram => Spread.Of(FillCpuNs);

        /// <summary>Per round: the median rate of that round's fills.</summary>
        public List<double> RoundRates { get; } = new List<double>();

        /// <summary>
        /// The median over rounds of this row's round rate divided by the same receiver's with one shard in the same round
        /// (both ran minutes apart at most, so a slow spell of the machine falls on both).
        /// </summary>
        public Spread? RatioToOneShard { get; set; }

        public long Lost => Sent - KernelDrops - Received;

        public double? BytesPerDatagram => AllocatedBytes == null ? (double?)null : Read > 0 ? (double)AllocatedBytes.Value / Read : 0;

        public bool Clean => Lost == 0 && Duplicate == 0 && OutOfRange == 0 && Corrupt == Injected;
    }
}
