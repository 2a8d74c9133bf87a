using System.Collections.Generic;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>One receiver at one shard count in the shard scenario, over every fill of every round: a row of shards.csv.
    /// AllocatedBytes are the shard threads' while draining the measured fills.</summary>
    internal sealed class ShardRow : ReceiverCounts
    {
        public ShardRow(string runtime, string receiver, int shards)
            : base(runtime)
        {
            Receiver = receiver;
            Shards = shards;
        }

        /// <summary>library-shards (DatagramShardGroup + DatagramBatch, in this process) or c-shards (bench/native wa-shards).</summary>
        public string Receiver { get; }

        public int Shards { get; }

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
    }
}
