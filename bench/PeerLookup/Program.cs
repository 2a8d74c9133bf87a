using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.PeerLookup
{
    /// <summary>
    /// "Which peer sent this?" alone: <see cref="PeerTable{T}.TryGet"/> of senders drawn at random from N peers (N = 1, 100,
    /// 1 000, 10 000 by default), in groups of 64 lookups (a batch's worth), the groups timed and summed. Two ways:
    /// <c>warm</c>, lookup after lookup, where a table of 10 000 peers stays in the caches; and <c>swept</c>, where before
    /// every group the harness writes over a buffer larger than the second-level cache (4 MiB, untimed), as the kernel's
    /// receive does between two batches of a drain: its socket buffers stream through the caches and push the table out.
    /// Rows are interleaved in rounds (every N and way in turn, the order rotating), and the median of the rounds is
    /// reported with its ratio to N = 1 (the growth). A Dictionary&lt;EndPointKey, int&gt; with the same keys and seeded hash
    /// is measured beside it for scale. Allocates nothing while it measures, and says so.
    /// </summary>
    internal static class Program
    {
        private const int Group = 64;

        private static int Main(string[] args)
        {
            var counts = new List<int> { 1, 100, 1000, 10000 };
            int rounds = 9, groups = 2048, sweepBytes = 4 << 20;
            for (int i = 0; i + 1 < args.Length; i += 2)
            {
                switch (args[i])
                {
                    case "--peers":
                        counts.Clear();
                        foreach (string part in args[i + 1].Split(',')) counts.Add(int.Parse(part, CultureInfo.InvariantCulture));
                        break;
                    case "--rounds": rounds = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--groups": groups = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    case "--sweep-bytes": sweepBytes = int.Parse(args[i + 1], CultureInfo.InvariantCulture); break;
                    default:
                        Console.Error.WriteLine("usage: PeerLookup [--peers 1,100,1000,10000] [--rounds 9] [--groups 2048] [--sweep-bytes 4194304]");
                        return 2;
                }
            }

            var random = new Random(42);
            var setups = new List<Setup>();
            foreach (int n in counts) setups.Add(new Setup(n, groups * Group, random));
            var sweep = new byte[sweepBytes];
            string[] ways = { "peertable-warm", "peertable-swept", "dictionary-warm", "dictionary-swept" };
            var results = new Dictionary<string, List<double>>();
            long bytes = 0;
            foreach (Setup s in setups)
            {
                foreach (string way in ways)
                {
                    results[way + "/" + s.Count] = new List<double>();
                    s.Measure(way, sweep, Math.Min(groups, 64)); // compile and warm
                }
            }
            for (int round = 0; round < rounds; round++)
            {
                for (int k = 0; k < setups.Count; k++)
                {
                    Setup s = setups[(round + k) % setups.Count];
                    for (int w = 0; w < ways.Length; w++)
                    {
                        string way = ways[(round + w) % ways.Length];
                        long before = AllocatedBytes();
                        double ns = s.Measure(way, sweep, groups);
                        bytes += AllocatedBytes() - before;
                        results[way + "/" + s.Count].Add(ns);
                    }
                }
            }

            string runtime = Type.GetType("Mono.Runtime") != null ? "Mono " + MonoVersion() : ".NET " + Environment.Version;
            Console.WriteLine("PeerTable lookup alone, " + runtime + ", " + RuntimeInformation.ProcessArchitecture + ", " + Environment.ProcessorCount + " CPUs; load average " + LoadAverage());
            Console.WriteLine(rounds + " interleaved rounds of " + groups + " groups of " + Group + " lookups per row; swept: " + (sweepBytes >> 10) + " KiB written before every group (untimed)");
            Console.WriteLine();
            Console.Write("| ns per lookup (median of " + rounds + " rounds) |");
            foreach (int n in counts) Console.Write(" N = " + n.ToString("N0", CultureInfo.InvariantCulture) + " |");
            foreach (int n in counts) if (n != counts[0]) Console.Write(" x N = " + counts[0] + " at " + n.ToString("N0", CultureInfo.InvariantCulture) + " |");
            Console.WriteLine();
            Console.Write("|---|");
            for (int i = 0; i < 2 * counts.Count - 1; i++) Console.Write("---:|");
            Console.WriteLine();
            foreach (string way in ways)
            {
                Console.Write("| " + way + " |");
                foreach (int n in counts) Console.Write(" " + Median(results[way + "/" + n]).ToString("F1", CultureInfo.InvariantCulture) + " |");
                double baseline = Median(results[way + "/" + counts[0]]);
                foreach (int n in counts) if (n != counts[0]) Console.Write(" " + (Median(results[way + "/" + n]) / baseline).ToString("F2", CultureInfo.InvariantCulture) + " |");
                Console.WriteLine();
            }
            Console.WriteLine();
            Console.WriteLine("bytes allocated while measuring: " + (bytes < 0 ? "n/a" : bytes.ToString(CultureInfo.InvariantCulture)));
            return 0;
        }

        private static long AllocatedBytes() => GC.GetAllocatedBytesForCurrentThread();

        private static double Median(List<double> values)
        {
            var sorted = new List<double>(values);
            sorted.Sort();
            int n = sorted.Count;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        private static string LoadAverage()
        {
            try
            {
                string[] parts = System.IO.File.ReadAllText("/proc/loadavg").Split(' ');
                return parts[0] + " " + parts[1] + " " + parts[2];
            }
            catch (System.IO.IOException)
            {
                return "unknown";
            }
        }

        private static string MonoVersion()
        {
            var display = Type.GetType("Mono.Runtime")?.GetMethod("GetDisplayName", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
            string name = display?.Invoke(null, null) as string ?? "";
            int space = name.IndexOf(' ');
            return space > 0 ? name.Substring(0, space) : name;
        }

        /// <summary>N peers on 127.2.x.y with distinct ports (as the DatagramServer's scale scenario binds them), the two tables, and the order of the lookups.</summary>
        private sealed class Setup
        {
            public readonly int Count;
            private readonly PeerTable<int> _table;
            private readonly Dictionary<EndPointKey, int> _dictionary;
            private readonly EndPointKey[] _probes;
            private int _cursor;

            public Setup(int n, int probes, Random random)
            {
                Count = n;
                _table = new PeerTable<int>(n);
                _dictionary = new Dictionary<EndPointKey, int>(n);
                var keys = new EndPointKey[n];
                for (int i = 0; i < n; i++)
                {
                    keys[i] = EndPointKey.IPv4(127, 2, (byte)(i / 250), (byte)(i % 250 + 1), 32768 + random.Next(28000));
                    if (_table.TryAdd(keys[i], i) != PeerAddResult.Added) throw new InvalidOperationException("a key was not added");
                    _dictionary.Add(keys[i], i);
                }
                _probes = new EndPointKey[probes];
                for (int i = 0; i < probes; i++) _probes[i] = keys[random.Next(n)];
            }

            /// <summary>Nanoseconds per lookup over <paramref name="groups"/> groups, only the lookups timed.</summary>
            public double Measure(string way, byte[] sweep, int groups)
            {
                bool swept = way.EndsWith("-swept", StringComparison.Ordinal);
                bool table = way.StartsWith("peertable", StringComparison.Ordinal);
                EndPointKey[] probes = _probes;
                long ticks = 0, sum = 0;
                for (int g = 0; g < groups; g++)
                {
                    if (swept) Sweep(sweep, g);
                    int start = _cursor;
                    _cursor = (start + Group) % probes.Length;
                    long t0 = Stopwatch.GetTimestamp();
                    if (table)
                    {
                        for (int i = start; i < start + Group; i++)
                        {
                            if (_table.TryGet(probes[i], out int v)) sum += v;
                            else sum -= 1_000_000;
                        }
                    }
                    else
                    {
                        for (int i = start; i < start + Group; i++)
                        {
                            if (_dictionary.TryGetValue(probes[i], out int v)) sum += v;
                            else sum -= 1_000_000;
                        }
                    }
                    ticks += Stopwatch.GetTimestamp() - t0;
                }
                if (sum < 0) throw new InvalidOperationException("a peer was not found");
                return ticks * (1e9 / Stopwatch.Frequency) / ((double)groups * Group);
            }

            private static void Sweep(byte[] buffer, int salt)
            {
                for (int i = 0; i < buffer.Length; i += 64) buffer[i] = (byte)(i + salt);
            }
        }
    }
}
