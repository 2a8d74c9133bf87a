using System;
using System.Collections.Generic;
using System.Net;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;

namespace WhereAllocation.Benchmarks.Peers
{
    /// <summary>
    /// "Which peer sent this?" at 100, 10 000 and 100 000 peers: <see cref="PeerTable{T}"/> against
    /// <c>Dictionary&lt;EndPointKey, int&gt;</c> (the baseline: same key, same seeded hash) and
    /// <c>Dictionary&lt;IPEndPoint, int&gt;</c>, both with endpoints built once (best case: the address caches
    /// its hash) and with one built per lookup, as a runtime ReceiveFrom hands a server a new one per datagram.
    /// Each operation is one lookup; lookups walk 65 536 keys in random order. Hits and misses (senders that
    /// are not peers, as in a flood) are grouped separately, each with its own baseline.
    /// Run: <c>dotnet run -c Release -- --filter '*PeerLookup*'</c>.
    /// </summary>
    [MemoryDiagnoser]
    // Shorter than the default job, longer than ShortRun: on a shared 2-core machine three iterations are too few.
    [SimpleJob(launchCount: 1, warmupCount: 3, iterationCount: 15)]
    [GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
    [CategoriesColumn]
    public class PeerLookupBenchmarks
    {
        private const int Lookups = 4096;
        private const int Probes = 65_536; // a power of two

        private PeerTable<int> _table = null!;
        private Dictionary<EndPointKey, int> _byKey = null!;
        private Dictionary<IPEndPoint, int> _byEndPoint = null!;
        private EndPointKey[] _hits = null!;
        private IPEndPoint[] _hitEndPoints = null!;
        private EndPointKey[] _misses = null!;
        private int _cursor;

        /// <summary>How many peers the tables hold.</summary>
        [Params(100, 10_000, 100_000)]
        public int Peers { get; set; }

        /// <summary>Fills the three tables with the same peers and draws the keys to look up.</summary>
        [GlobalSetup]
        public void Setup()
        {
            var random = new Random(42);
            var all = new HashSet<EndPointKey>();
            var peers = new List<EndPointKey>();
            while (peers.Count < Peers)
            {
                EndPointKey key = EndPointKey.IPv4(127, (byte)random.Next(256), (byte)random.Next(256), (byte)random.Next(256), random.Next(1, 65536));
                if (all.Add(key)) peers.Add(key);
            }
            _table = new PeerTable<int>(Peers);
            _byKey = new Dictionary<EndPointKey, int>(Peers);
            _byEndPoint = new Dictionary<IPEndPoint, int>(Peers);
            for (int i = 0; i < peers.Count; i++)
            {
                _table.TryAdd(peers[i], i);
                _byKey.Add(peers[i], i);
                _byEndPoint.Add(peers[i].ToIPEndPoint(), i);
            }

            _hits = new EndPointKey[Probes];
            _hitEndPoints = new IPEndPoint[Probes];
            _misses = new EndPointKey[Probes];
            for (int i = 0; i < Probes; i++)
            {
                _hits[i] = peers[random.Next(peers.Count)];
                _hitEndPoints[i] = _hits[i].ToIPEndPoint(); // not the instance stored in the dictionary
                EndPointKey stranger;
                do stranger = EndPointKey.IPv4(127, (byte)random.Next(256), (byte)random.Next(256), (byte)random.Next(256), random.Next(1, 65536));
                while (all.Contains(stranger));
                _misses[i] = stranger;
            }
        }

        /// <summary>Baseline for hits: the same keys in a Dictionary.</summary>
        [BenchmarkCategory("Hit"), Benchmark(Baseline = true, OperationsPerInvoke = Lookups)]
        public int Dictionary_EndPointKey()
        {
            int sum = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_byKey.TryGetValue(_hits[c & (Probes - 1)], out int v)) sum += v;
            }
            _cursor = c;
            return sum;
        }

        /// <summary>The peer table.</summary>
        [BenchmarkCategory("Hit"), Benchmark(OperationsPerInvoke = Lookups)]
        public int PeerTable()
        {
            int sum = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_table.TryGet(_hits[c & (Probes - 1)], out int v)) sum += v;
            }
            _cursor = c;
            return sum;
        }

        /// <summary>A Dictionary keyed by IPEndPoint, looked up with endpoints built once (their hashes cached).</summary>
        [BenchmarkCategory("Hit"), Benchmark(OperationsPerInvoke = Lookups)]
        public int Dictionary_IPEndPoint_Prebuilt()
        {
            int sum = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_byEndPoint.TryGetValue(_hitEndPoints[c & (Probes - 1)], out int v)) sum += v;
            }
            _cursor = c;
            return sum;
        }

        /// <summary>A Dictionary keyed by IPEndPoint, looked up with a new endpoint per lookup (what ReceiveFrom gives).</summary>
        [BenchmarkCategory("Hit"), Benchmark(OperationsPerInvoke = Lookups)]
        public int Dictionary_IPEndPoint_PerDatagram()
        {
            int sum = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_byEndPoint.TryGetValue(_hits[c & (Probes - 1)].ToIPEndPoint(), out int v)) sum += v;
            }
            _cursor = c;
            return sum;
        }

        /// <summary>Baseline for misses: strangers looked up in the Dictionary.</summary>
        [BenchmarkCategory("Miss"), Benchmark(Baseline = true, OperationsPerInvoke = Lookups)]
        public int Dictionary_EndPointKey_Miss()
        {
            int found = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_byKey.ContainsKey(_misses[c & (Probes - 1)])) found++;
            }
            _cursor = c;
            return found;
        }

        /// <summary>Strangers looked up in the peer table.</summary>
        [BenchmarkCategory("Miss"), Benchmark(OperationsPerInvoke = Lookups)]
        public int PeerTable_Miss()
        {
            int found = 0, c = _cursor;
            for (int i = 0; i < Lookups; i++, c++)
            {
                if (_table.ContainsKey(_misses[c & (Probes - 1)])) found++;
            }
            _cursor = c;
            return found;
        }
    }
}
