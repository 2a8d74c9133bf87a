using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>The command line of the frame-time benchmark (--frame-times): its own options, parsed apart from the others.</summary>
    internal sealed class FrameTimesOptions
    {
        public const string Flag = "--frame-times";

        public const string Help =
@"--frame-times        the frame-time benchmark instead of the receive table: a game server's frames, each one
                     sending K clients x E entity updates and receiving them all, at a fixed rate and flat out,
                     over a live heap of ordinary objects standing for game state; per frame its duration, the
                     thread's CPU time, whether a collection ran in it and its pause; the allocating way and the
                     library's, interleaved. Writes frametimes.md, frametimes.csv, frames.csv, frametimes.svg.
  --frames N         measured frames per way and rate (default 360)
  --frame-rates LIST frames per second, 0 = flat out (default 60,0)
  --live-heap-mb M   live game state in MB of small objects that survive the run (default 256)
  --frame-clients K  client sockets (default 8)
  --frame-entities E entity updates per client per frame (default 64)
  --frame-rounds R   interleaved rounds per rate: the ways take turns in R parts (default 2)
  --frame-warmup W   unmeasured frames per way first (default 30)
  --out DIR          results folder (default results/<runtime label>, the label mono-boehm under Boehm)";

        public int Frames { get; private set; } = 360;
        public List<int> Rates { get; private set; } = new List<int> { 60, 0 };
        public int LiveHeapMb { get; private set; } = 256;
        public int Clients { get; private set; } = 8;
        public int Entities { get; private set; } = 64;
        public int Rounds { get; private set; } = 2;
        public int WarmUpFrames { get; private set; } = 30;
        public string? OutputDirectory { get; private set; }
        public int Size { get; private set; } = 64;
        public int BufferSize { get; private set; } = 2048;

        public static bool Wanted(string[] args) => Array.IndexOf(args, Flag) >= 0;

        public string ResolvedOutput(string label) => Path.GetFullPath(OutputDirectory ?? Path.Combine("results", label));

        /// <summary>Parses the arguments after removing --frame-times; throws <see cref="ArgumentException"/> for the user.</summary>
        public static FrameTimesOptions Parse(string[] args)
        {
            var o = new FrameTimesOptions();
            for (int i = 0; i < args.Length; i++)
            {
                string name = args[i];
                if (name == Flag) continue;
                if (i + 1 >= args.Length) throw new ArgumentException("option " + name + " needs a value (see --help)");
                string value = args[++i];
                switch (name)
                {
                    case "--frames": o.Frames = (int)Number(name, value, 10, 1_000_000); break;
                    case "--frame-rates":
                        o.Rates = new List<int>();
                        foreach (string part in value.Split(new[] { ',' }, StringSplitOptions.RemoveEmptyEntries)) o.Rates.Add((int)Number(name, part.Trim(), 0, 1000));
                        if (o.Rates.Count == 0) throw new ArgumentException("--frame-rates needs at least one rate");
                        break;
                    case "--live-heap-mb": o.LiveHeapMb = (int)Number(name, value, 0, 16_384); break;
                    case "--frame-clients": o.Clients = (int)Number(name, value, 1, 64); break;
                    case "--frame-entities": o.Entities = (int)Number(name, value, 1, 10_000); break;
                    case "--frame-rounds": o.Rounds = (int)Number(name, value, 1, 100); break;
                    case "--frame-warmup": o.WarmUpFrames = (int)Number(name, value, 0, 10_000); break;
                    case "--out": o.OutputDirectory = value; break;
                    default: throw new ArgumentException("unknown option " + name + " with " + Flag + " (see --help)");
                }
            }
            if (o.Frames < o.Rounds) throw new ArgumentException("--frames must be at least --frame-rounds");
            return o;
        }

        private static long Number(string name, string value, long min, long max)
        {
            if (!long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n < min || n > max)
                throw new ArgumentException(name + " must be a whole number from " + min.ToString(CultureInfo.InvariantCulture) + " to " + max.ToString(CultureInfo.InvariantCulture));
            return n;
        }
    }
}
