namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// What every receiver row counts, whatever the scenario: the datagrams sent, dropped by the kernel, read and found good or bad,
    /// the managed bytes and collections, and the verdicts drawn from them (a row of results.csv or of shards.csv).
    /// </summary>
    internal abstract class ReceiverCounts
    {
        protected ReceiverCounts(string runtime)
        {
            Runtime = runtime;
        }

        public string Runtime { get; }

        /// <summary>Datagrams the sender sent.</summary>
        public long Sent { get; set; }

        /// <summary>Datagrams the kernel threw away because a receive queue was full (the sockets' own counters).</summary>
        public long KernelDrops { get; set; }

        /// <summary>Every datagram read from the socket(s), good or bad (the rates are computed from this).</summary>
        public long Read { get; set; }

        /// <summary>Valid datagrams with a sequence number in range, each sequence counted once (over all the shards of a group): the "received".</summary>
        public long Received { get; set; }

        public long Corrupt { get; set; }
        public long Duplicate { get; set; }
        public long OutOfRange { get; set; }

        /// <summary>Corrupted datagrams sent on purpose (--inject-corrupt); each must show up as corrupt.</summary>
        public long Injected { get; set; }

        /// <summary>Managed bytes the receiving thread(s) allocated; null for the C programs.</summary>
        public long? AllocatedBytes { get; set; }

        /// <summary>Garbage collections during the run; null for the C programs.</summary>
        public int? Gen0 { get; set; }

        /// <summary>Datagrams the kernel accepted that were not received intact: missing or corrupted. Must be 0.</summary>
        public long Lost => Sent - KernelDrops - Received;

        public double? BytesPerDatagram => AllocatedBytes == null ? (double?)null : Read > 0 ? (double)AllocatedBytes.Value / Read : 0;

        /// <summary>True when nothing is wrong with the row: lost = 0, no duplicates or strays, and exactly the injected datagrams corrupt.</summary>
        public bool Clean => Lost == 0 && Duplicate == 0 && OutOfRange == 0 && Corrupt == Injected;
    }
}
