using System;
using System.Collections.Generic;
using System.Linq;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Many cores on one port: the same decode and check as the other rows, on 1, 2, ... N shards of one loopback
    /// port (SO_REUSEPORT), each drained by its own pinned thread, the library's way and C's, in drain mode. Every
    /// round runs each shard count with the library, then with C; the rows give each one's median aggregate rate
    /// over its fills and its ratio to one shard.
    /// </summary>
    internal static class ShardScenario
    {
        public static List<ShardRow> Run(Options options, NativeTools tools, Progress progress)
        {
            var library = new List<ShardRow>();
            var c = new List<ShardRow>();
            foreach (int n in options.ShardCounts)
            {
                library.Add(new ShardRow(options.RuntimeLabel, LibraryShards.Name, n));
                c.Add(new ShardRow(options.RuntimeLabel, NativeShards.Name, n));
            }
            for (int round = 0; round < options.Rounds; round++)
            {
                int inject = round == 0 ? options.Inject : 0;
                for (int i = 0; i < options.ShardCounts.Count; i++)
                {
                    int n = options.ShardCounts[i];
                    if (!DatagramShardGroup.IsSupported) break;
                    int before = library[i].FillRates.Count;
                    LibraryShards.Run(n, options, tools, inject, library[i], progress);
                    library[i].RoundRates.Add(Spread.Of(library[i].FillRates.Skip(before)).Median);
                    before = c[i].FillRates.Count;
                    NativeShards.Run(n, options, tools, inject, c[i], progress);
                    c[i].RoundRates.Add(Spread.Of(c[i].FillRates.Skip(before)).Median);
                    progress.Done("shards " + n + ", round " + (round + 1),
                        LibraryShards.Name + " " + Numbers.Short(library[i].Rate.Median) + "/s, " + NativeShards.Name + " " + Numbers.Short(c[i].Rate.Median) + "/s (medians so far)");
                }
            }
            var rows = new List<ShardRow>();
            for (int i = 0; i < library.Count; i++)
            {
                rows.Add(library[i]);
                rows.Add(c[i]);
            }
            foreach (List<ShardRow> receiver in new[] { library, c })
            {
                ShardRow? one = receiver.Find(r => r.Shards == 1);
                foreach (ShardRow r in receiver)
                {
                    if (one == null) continue;
                    var ratios = new List<double>();
                    for (int round = 0; round < Math.Min(r.RoundRates.Count, one.RoundRates.Count); round++)
                        if (one.RoundRates[round] > 0) ratios.Add(r.RoundRates[round] / one.RoundRates[round]);
                    r.RatioToOneShard = Spread.Of(ratios);
                }
            }
            return rows;
        }
    }
}
