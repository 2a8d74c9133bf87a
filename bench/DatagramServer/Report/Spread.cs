using System;
using System.Collections.Generic;
using System.Linq;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>A median and the smallest and largest value of a few measurements (one per round).</summary>
    internal readonly struct Spread
    {
        public Spread(double median, double min, double max, int count)
        {
            Median = median;
            Min = min;
            Max = max;
            Count = count;
        }

        public double Median { get; }
        public double Min { get; }
        public double Max { get; }
        public int Count { get; }

        /// <summary>(max - min) / median: how far apart the rounds were, as a fraction of the median.</summary>
        public double Relative => Median != 0 ? (Max - Min) / Median : 0;

        public static Spread Of(IEnumerable<double> values)
        {
            double[] sorted = values.Where(v => !double.IsNaN(v)).OrderBy(v => v).ToArray();
            if (sorted.Length == 0) return new Spread(double.NaN, double.NaN, double.NaN, 0);
            int n = sorted.Length;
            double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            return new Spread(median, sorted[0], sorted[n - 1], n);
        }

        /// <summary>"1234 (1200–1300)": the median and the range, with <paramref name="decimals"/> decimals.</summary>
        public string Text(int decimals)
        {
            if (Count == 0) return "";
            return Numbers.Fixed(Median, decimals) + " (" + Numbers.Fixed(Min, decimals) + "–" + Numbers.Fixed(Max, decimals) + ")";
        }
    }

    /// <summary>One method over the interleaved rounds: its rows, and the median and spread of its costs.</summary>
    internal sealed class MethodSummary
    {
        public MethodSummary(string method, IReadOnlyList<ResultRow> rounds)
        {
            Method = method;
            Rounds = rounds;
            NsPerDatagram = Spread.Of(rounds.Select(r => r.NsPerDatagram));
            CpuNsPerDatagram = Spread.Of(rounds.Where(r => r.CpuNsPerDatagram != null).Select(r => r.CpuNsPerDatagram!.Value));
        }

        public string Method { get; }

        /// <summary>The method's row of every round, in round order.</summary>
        public IReadOnlyList<ResultRow> Rounds { get; }

        /// <summary>Wall-clock ns per datagram, first to last datagram of each fill, per round.</summary>
        public Spread NsPerDatagram { get; }

        /// <summary>The receiving thread's CPU time (for C: the process's) per datagram, per round.</summary>
        public Spread CpuNsPerDatagram { get; }

        public double MedianDatagramsPerSecond => NsPerDatagram.Median > 0 ? 1e9 / NsPerDatagram.Median : 0;

        /// <summary>The median over rounds of this method's rate divided by c-recvfrom's in the same round.</summary>
        public Spread? RatioToCRecvfrom { get; set; }
    }

    /// <summary>Two methods compared round by round: the median and spread of the per-round ratios of their rates and of their CPU costs.</summary>
    internal sealed class Comparison
    {
        public Comparison(string label, MethodSummary method, MethodSummary baseline)
        {
            Label = label;
            Method = method.Method;
            Baseline = baseline.Method;
            int rounds = Math.Min(method.Rounds.Count, baseline.Rounds.Count);
            var wall = new List<double>();
            var cpu = new List<double>();
            for (int r = 0; r < rounds; r++)
            {
                ResultRow a = method.Rounds[r], b = baseline.Rounds[r];
                if (a.NsPerDatagram > 0) wall.Add(b.NsPerDatagram / a.NsPerDatagram);
                if (a.CpuNsPerDatagram > 0 && b.CpuNsPerDatagram != null) cpu.Add(b.CpuNsPerDatagram.Value / a.CpuNsPerDatagram!.Value);
            }
            Wall = Spread.Of(wall);
            Cpu = Spread.Of(cpu);
        }

        public string Label { get; }
        public string Method { get; }
        public string Baseline { get; }

        /// <summary>Per round: the method's datagrams/s over the baseline's (above 1: the method is faster).</summary>
        public Spread Wall { get; }

        /// <summary>The same from CPU time per datagram: the baseline's over the method's.</summary>
        public Spread Cpu { get; }
    }
}
