using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace WhereAllocation.Bench.DatagramServer
{
    internal enum RunMode
    {
        /// <summary>The sender fills the receive queue first, then the receiver drains it alone: the headline.</summary>
        Drain,
        /// <summary>The sender runs at full speed while the receiver reads: the view under a saturating sender.</summary>
        Stream,
        /// <summary>Drain mode over the sweep's rows: batch sizes and modes, count only, the one-call forms, each beside C doing the same work.</summary>
        Sweep,
        /// <summary>The send half: one datagram per tick to each of N destinations, and bursts to one peer (Send/).</summary>
        Send,
        /// <summary>N distinct senders filling the queue, drained with a peer lookup per datagram (Scale/).</summary>
        Scale,
        /// <summary>N clients with one datagram each in flight against one echo thread: receives that wait (PingPong/).</summary>
        PingPong,
        /// <summary>--frame-times: a game server's frames over a live heap, the allocating way and the library's (FrameTimes/).</summary>
        FrameTimes,
    }

    /// <summary>The command line. <see cref="Help"/> is what --help prints.</summary>
    internal sealed class Options
    {
        public const long DefaultStreamCount = 2_000_000;
        public const long DefaultDrainCount = 60_000;
        public const int DefaultDrainRounds = 5;
        public const int DefaultSendScaleRounds = 9;
        public const int DefaultPingPongRounds = 3;
        public const int DefaultSweepRounds = 21;
        /// <summary>The sweep's slots, and wa-recv's buffer beside them: DatagramBatch's default slot size.</summary>
        public const int DefaultSweepBuffer = 1500;

        public long Count { get; private set; }
        public int Size { get; private set; } = 64;
        public RunMode Mode { get; private set; } = RunMode.Drain;
        public int Rounds { get; private set; }
        public List<string>? Methods { get; private set; }
        public string? OutputDirectory { get; private set; }
        public string RuntimeLabel { get; private set; } = Machine.RuntimeLabel;
        public int ReceiveBuffer { get; private set; } = 8 * 1024 * 1024;
        public int BufferSize { get; private set; } = 2048;
        public int IdleMs { get; private set; } = 300;
        public int DrainRound { get; private set; } = 6000;
        public string SenderMode { get; private set; } = "gso";
        public long WarmUp { get; private set; } = 100_000;
        public int Inject { get; private set; }
        public int ReceiverCpu { get; private set; }
        public int SenderCpu { get; private set; } = 1;
        public int TickFrames { get; private set; } = 20;
        public int TickClients { get; private set; } = 4;
        public int TickEntities { get; private set; } = 1000;
        public List<int> BatchSizes { get; private set; } = new List<int> { 1, 8, 32, 64 };
        public List<int> ShardCounts { get; private set; } = DefaultShardCounts();
        public int ShardFills { get; private set; } = 4;
        public int ShardFill { get; private set; } = 6000;
        public int Sources { get; private set; } = 1024;
        public List<int> PeerCounts { get; private set; } = new List<int> { 1, 100, 1000, 10000 };
        public List<int> ClientCounts { get; private set; } = new List<int> { 1, 100, 500 };
        public int PingPongMillis { get; private set; } = 1000;
        public bool CountSystemCalls { get; private set; } = true;
        public string? NativeDirectory { get; private set; }
        public bool ShowHelp { get; private set; }
        public bool CheckFormat { get; private set; }
        public FrameTimesOptions FrameTimes { get; } = new FrameTimesOptions();

        /// <summary>True in the modes whose receivers drain prefilled queues (drain, sweep); false in stream mode.</summary>
        public bool Drains => Mode == RunMode.Drain || Mode == RunMode.Sweep;

        /// <summary>The mode column of the receive table's files: drain, stream or sweep.</summary>
        public string ModeName => Mode == RunMode.Stream ? "stream" : Mode == RunMode.Sweep ? "sweep" : "drain";

        /// <summary>The results folder: --out, else results/&lt;runtime label&gt; under the current folder.</summary>
        public string ResolvedOutput => Path.GetFullPath(OutputDirectory ?? Path.Combine("results", RuntimeLabel));

        public const string Help =
@"DatagramServer - receives 64-byte text datagrams on loopback in every way this build can, side by side:
decode (UTF-8) and check (format, Fletcher-32, sequence, duplicates) each one, count what the kernel
dropped and what went missing after, and report ns per datagram (median and spread over interleaved
rounds), the receiver's CPU time per datagram, bytes allocated per datagram and GCs.
With no options: drain mode, 5 interleaved rounds of every method, then the shard scenario (1..N shards
on one port) and the game-frame (tick) scenario; under a minute.

usage: dotnet DatagramServer.dll [options]      (CoreCLR, net10.0 build)
       mono DatagramServer.dll [options]        (Mono, netstandard2.1 build)

  --count N          datagrams per method and round (default 60000 in drain mode, 2000000 in stream mode,
                     --drain-round in sweep mode)
  --size S           datagram size in bytes, 24..1400 (default 64)
  --mode M           drain:  the sender fills the receive queue first, then the receiver drains it
                             alone, in fills of --drain-round datagrams; only draining is timed (default)
                     stream: the C sender saturates the receiver while it reads
                     sweep:  drain mode over its own rows, each datagram checked as bytes (no decode), as
                             the C receiver checks it: DatagramBatch at every --batches size (MultiMessage),
                             the largest by single calls, and count only (length and sender); the one-call
                             receive forms, count only; each beside wa-recv doing the same work (recvmmsg
                             of 64, or recvfrom; --no-check for count only). 21 rounds of one fill
                             (--drain-round) per row; --buffer 1500; no shard or tick scenario
                     send:   the send half: one datagram per tick to each of --peers destinations (library
                             one-call and batch, bare P/Invoke, bench/native's wa-fanout), then bursts to
                             one peer with segmentation offload on and off beside C's (bench/native's
                             wa-burst); writes send.md, send.csv and send-summary.txt
                     scale:  drain mode from --peers distinct senders, each datagram's sender looked up in a
                             PeerTable; writes scale.md, scale.csv and scale-summary.txt
                     pingpong: --clients clients (bench/native's wa-pingpong on --sender-cpu), each with one
                             datagram in flight, against one echo thread on --receiver-cpu: the library's
                             one-call, batch and awaitable servers, the runtime's own calls and bench/native's
                             wa-echo; echoes/s, CPU and system calls per echo, round-trip percentiles;
                             writes pingpong.md, pingpong.csv and pingpong-summary.txt
  --rounds K         interleaved rounds: every method once per round, in the same order (method A, B, C,
                     ..., A, B, C, ...); the tables give each method's median and spread over the rounds
                     (default 5 in drain mode, 21 in sweep mode, 9 in send and scale mode, 1 in stream mode)
  --methods LIST     comma-separated rows to run (default: all this runtime can run):
                     alloc-baseline, managed-nonalloc, library, library-batch,
                     dotnet-socketaddress, raw-pinvoke and raw-recvmmsg (for scale: the least a
                     C# receive can do on this runtime, one datagram or 64 per call), c-recvfrom, c-recvmmsg;
                     pingpong: library, library-batch, library-async, runtime, runtime-socketaddress,
                     runtime-async, c-echo; sweep: its rows (README.md, or a wrong name lists them)
  --out DIR          where results.csv, summary.csv, results.md, results.svg, details.csv, rounds.csv,
                     shards.csv and tick.csv go (default: results/<runtime label> under the current folder)
  --runtime-label L  the runtime column of the results (default: coreclr or mono, detected)
  --rcvbuf BYTES     SO_RCVBUF to ask for on every receiving socket (default 8388608); the kernel
                     grants up to twice net.core.rmem_max and the granted value is reported
  --buffer BYTES     receive buffer per datagram, > size (default 2048; 1500 in sweep mode)
  --batches LIST     sweep: the batch sizes, e.g. 1,8,32,64 (the default), each 1..1024
  --sender-mode M    wa-sender mode: gso (default; sendmmsg + UDP_SEGMENT), mmsg or plain
  --warmup N         datagrams each C# method receives before it is measured (default 100000; 0 = none)
  --idle-ms M        a C# receiver that read nothing for M ms after the sender finished is stopped
                     (default 300; wa-recv gets at least 1000, as its clock starts at its first datagram)
  --drain-round N    datagrams per queue fill in drain mode (default 6000; must fit the receive queue)
  --shards LIST      shard counts of the shard scenario, e.g. 1,2,4 (default 1..the CPU count; 0 = skip it):
                     one port served by N sockets (SO_REUSEPORT), each drained by its own pinned thread,
                     the library (DatagramShardGroup + DatagramBatch) beside bench/native's wa-shards
  --shard-fills F    queue fills per shard count, receiver and round (default 4)
  --shard-fill N     datagrams per shard in one fill (default 6000; all shards' queues are filled at once)
  --peers LIST       destinations (send) or senders (scale), e.g. 1,100,1000,10000 (the default)
  --clients LIST     pingpong: client counts, e.g. 1,100,500 (the default)
  --pingpong-ms T    pingpong: how long each row runs per client count and round (default 1000)
  --syscalls on|off  pingpong: one more run per row at the first and the middle client counts with the
                     server's system calls counted (perf stat, else strace -c -f) (default on; said so where
                     neither can count)
  --sources K        source ports the sender spreads a shard fill over (default 1024)
  --tick-frames F    frames of the tick scenario (default 20; 0 = skip it)
  --tick-clients K   client sockets in the tick scenario (default 4)
  --tick-entities E  entity updates per client per frame (default 1000)
  --receiver-cpu C   CPU the receiving thread is pinned to (default 0); shard i gets C + i (mod CPUs)
  --sender-cpu C     CPU the C sender is pinned to (default 1)
  --native-dir DIR   the bench/native folder (default: found above the program or the current folder)
  --inject-corrupt K for tests: send K corrupted datagrams to every receiver in the first round (and to
                     every shard group once) before the sender starts; every row must then report exactly
                     K corrupt in details.csv and still lost = 0 (the timings of such a run mean nothing)
  --check-format     for tests: check the datagram code against bench/native's test vectors and exit
  --help             this text

--frame-times        the frame-time benchmark instead of the receive table: a game server's frames, each one
                     sending K clients x E entity updates and receiving them all, at a fixed rate and flat out,
                     over a live heap of ordinary objects standing for game state; per frame its duration, the
                     thread's CPU time, whether a collection ran in it and its pause; the allocating way and the
                     library's, interleaved. Writes frametimes.md, frametimes.csv, frames.csv, frametimes.svg.
                     Only these options (and --out) go with it, and these only with it:
  --frames N         measured frames per way and rate (default 360)
  --frame-rates LIST frames per second, 0 = flat out (default 60,0)
  --live-heap-mb M   live game state in MB of small objects that survive the run (default 256)
  --frame-clients K  client sockets (default 8)
  --frame-entities E entity updates per client per frame (default 64)
  --frame-rounds R   interleaved rounds per rate: the ways take turns in R parts (default 2)
  --frame-warmup W   unmeasured frames per way first (default 30)
  (its --out default is results/<runtime label>, the label mono-boehm under Boehm)

Exit code: 0 when every row has lost = 0, no duplicates and no unexpected corrupt datagrams;
3 when some row does not; 2 for bad options; 1 when a run failed.";

        /// <summary>Parses the arguments; throws <see cref="ArgumentException"/> with a message for the user.</summary>
        public static Options Parse(string[] args)
        {
            var o = new Options();
            bool countGiven = false, modeGiven = false, bufferGiven = false;
            var given = new List<string>();
            for (int i = 0; i < args.Length; i++)
            {
                string name = args[i];
                if (name == "--help" || name == "-h")
                {
                    o.ShowHelp = true;
                    continue;
                }
                if (name == "--check-format")
                {
                    o.CheckFormat = true;
                    continue;
                }
                if (name == "--frame-times")
                {
                    if (modeGiven && o.Mode != RunMode.FrameTimes) throw new ArgumentException("--frame-times is a mode of its own: not with --mode");
                    o.Mode = RunMode.FrameTimes;
                    modeGiven = true;
                    continue;
                }
                if (i + 1 >= args.Length) throw new ArgumentException("option " + name + " needs a value (see --help)");
                string value = args[++i];
                given.Add(name);
                FrameTimesOptions frames = o.FrameTimes;
                switch (name)
                {
                    case "--count": o.Count = Number(name, value, 1, 1_000_000_000); countGiven = true; break;
                    case "--size": o.Size = (int)Number(name, value, WaFormat.MinSize, WaFormat.MaxSize); break;
                    case "--mode":
                        if (modeGiven && o.Mode == RunMode.FrameTimes) throw new ArgumentException("--frame-times is a mode of its own: not with --mode");
                        modeGiven = true;
                        if (value == "stream") o.Mode = RunMode.Stream;
                        else if (value == "drain") o.Mode = RunMode.Drain;
                        else if (value == "sweep") o.Mode = RunMode.Sweep;
                        else if (value == "send") o.Mode = RunMode.Send;
                        else if (value == "scale") o.Mode = RunMode.Scale;
                        else if (value == "pingpong") o.Mode = RunMode.PingPong;
                        else throw new ArgumentException("--mode must be drain, stream, sweep, send, scale or pingpong");
                        break;
                    case "--methods":
                        o.Methods = new List<string>();
                        foreach (string m in value.Split(new[] { ',' }, StringSplitOptions.RemoveEmptyEntries)) o.Methods.Add(m.Trim());
                        if (o.Methods.Count == 0) throw new ArgumentException("--methods needs at least one name");
                        break;
                    case "--out": o.OutputDirectory = value; break;
                    case "--runtime-label":
                        if (value.Length == 0 || value.IndexOfAny(new[] { ',', '"', '\n', '/' }) >= 0) throw new ArgumentException("--runtime-label must be a plain word");
                        o.RuntimeLabel = value;
                        break;
                    case "--rcvbuf": o.ReceiveBuffer = (int)Number(name, value, 4096, int.MaxValue / 2); break;
                    case "--buffer": o.BufferSize = (int)Number(name, value, WaFormat.MinSize, 65536); bufferGiven = true; break;
                    case "--batches": o.BatchSizes = Distinct(List(name, value, 1, DatagramBatch.MaxCapacity, "size")); break;
                    case "--sender-mode":
                        if (value != "gso" && value != "mmsg" && value != "plain") throw new ArgumentException("--sender-mode must be gso, mmsg or plain");
                        o.SenderMode = value;
                        break;
                    case "--warmup": o.WarmUp = Number(name, value, 0, 100_000_000); break;
                    case "--idle-ms": o.IdleMs = (int)Number(name, value, 50, 60_000); break;
                    case "--drain-round": o.DrainRound = (int)Number(name, value, 1, 1_000_000); break;
                    case "--rounds": o.Rounds = (int)Number(name, value, 1, 1000); break;
                    case "--shards": o.ShardCounts = ShardList(value); break;
                    case "--shard-fills": o.ShardFills = (int)Number(name, value, 1, 1000); break;
                    case "--shard-fill": o.ShardFill = (int)Number(name, value, 1, 1_000_000); break;
                    case "--peers": o.PeerCounts = List(name, value, 1, 10000, "count"); break;
                    case "--clients": o.ClientCounts = List(name, value, 1, 4096, "count"); break;
                    case "--pingpong-ms": o.PingPongMillis = (int)Number(name, value, 100, 600_000); break;
                    case "--syscalls":
                        if (value != "on" && value != "off") throw new ArgumentException("--syscalls must be on or off");
                        o.CountSystemCalls = value == "on";
                        break;
                    case "--sources": o.Sources = (int)Number(name, value, 1, 1024); break;
                    case "--tick-frames": o.TickFrames = (int)Number(name, value, 0, 1_000_000); break;
                    case "--tick-clients": o.TickClients = (int)Number(name, value, 1, 64); break;
                    case "--tick-entities": o.TickEntities = (int)Number(name, value, 1, 100_000); break;
                    case "--receiver-cpu": o.ReceiverCpu = (int)Number(name, value, 0, 63); break;
                    case "--sender-cpu": o.SenderCpu = (int)Number(name, value, 0, 63); break;
                    case "--native-dir": o.NativeDirectory = value; break;
                    case "--inject-corrupt": o.Inject = (int)Number(name, value, 0, 1000); break;
                    case "--frames": frames.Frames = (int)Number(name, value, 10, 1_000_000); break;
                    case "--frame-rates": frames.Rates = List(name, value, 0, 1000, "rate"); break;
                    case "--live-heap-mb": frames.LiveHeapMb = (int)Number(name, value, 0, 16_384); break;
                    case "--frame-clients": frames.Clients = (int)Number(name, value, 1, 64); break;
                    case "--frame-entities": frames.Entities = (int)Number(name, value, 1, 10_000); break;
                    case "--frame-rounds": frames.Rounds = (int)Number(name, value, 1, 100); break;
                    case "--frame-warmup": frames.WarmUpFrames = (int)Number(name, value, 0, 10_000); break;
                    default: throw new ArgumentException("unknown option " + name + " (see --help)");
                }
            }
            // The frame-time benchmark has options of its own and takes none of the others but --out.
            foreach (string name in given)
            {
                bool frameOption = Array.IndexOf(FrameTimesOptions.Names, name) >= 0;
                if (o.Mode == RunMode.FrameTimes && !frameOption && name != "--out") throw new ArgumentException(name + " does not go with --frame-times (see --help)");
                if (o.Mode != RunMode.FrameTimes && frameOption) throw new ArgumentException(name + " goes with --frame-times only (see --help)");
            }
            if (o.FrameTimes.Frames < o.FrameTimes.Rounds) throw new ArgumentException("--frames must be at least --frame-rounds");
            // The frame-time results of Mono with the Boehm collector go apart from Mono's (SGen): its own label.
            if (o.Mode == RunMode.FrameTimes) o.RuntimeLabel = FrameCounters.RuntimeLabel;
            // The sweep: one queue fill per row and round, into slots of DatagramBatch's default size (as bench/native gets too).
            if (!countGiven) o.Count = o.Mode == RunMode.Sweep ? o.DrainRound : o.Mode == RunMode.Drain ? DefaultDrainCount : DefaultStreamCount;
            if (!bufferGiven && o.Mode == RunMode.Sweep) o.BufferSize = DefaultSweepBuffer;
            // Send and scale: rows of a few milliseconds each, whose rounds on a shared machine spread by a tenth or more; nine
            // rounds keep their medians steady and both runs under a minute per runtime on an idle 2-CPU machine.
            if (o.Rounds == 0) o.Rounds = o.Mode == RunMode.Stream ? 1 : o.Mode == RunMode.PingPong ? DefaultPingPongRounds : o.Mode == RunMode.Send || o.Mode == RunMode.Scale ? DefaultSendScaleRounds : o.Mode == RunMode.Sweep ? DefaultSweepRounds : DefaultDrainRounds;
            if (o.BufferSize <= o.Size) throw new ArgumentException("--buffer must be larger than --size, so that a longer datagram shows up as cut");
            return o;
        }

        /// <summary>1, 2, ... up to the CPU count: the design assumes no particular number of cores.</summary>
        private static List<int> DefaultShardCounts()
        {
            var counts = new List<int>();
            for (int n = 1; n <= Math.Min(Environment.ProcessorCount, 64); n++) counts.Add(n);
            return counts;
        }

        /// <summary>A comma-separated list of whole numbers from <paramref name="min"/> to <paramref name="max"/>, at least one.</summary>
        private static List<int> List(string name, string value, long min, long max, string what)
        {
            var counts = new List<int>();
            foreach (string part in value.Split(new[] { ',' }, StringSplitOptions.RemoveEmptyEntries)) counts.Add((int)Number(name, part.Trim(), min, max));
            if (counts.Count == 0) throw new ArgumentException(name + " needs at least one " + what);
            return counts;
        }

        private static List<int> Distinct(List<int> values)
        {
            var distinct = new List<int>();
            foreach (int v in values) if (!distinct.Contains(v)) distinct.Add(v);
            return distinct;
        }

        private static List<int> ShardList(string value)
        {
            var counts = new List<int>();
            if (value == "0") return counts;
            foreach (string part in value.Split(new[] { ',' }, StringSplitOptions.RemoveEmptyEntries))
            {
                int n = (int)Number("--shards", part.Trim(), 1, 64);
                if (!counts.Contains(n)) counts.Add(n);
            }
            if (counts.Count == 0) throw new ArgumentException("--shards needs at least one count (or 0 to skip the scenario)");
            return counts;
        }

        private static long Number(string name, string value, long min, long max)
        {
            if (!long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n < min || n > max)
                throw new ArgumentException(name + " must be a whole number from " + min.ToString(CultureInfo.InvariantCulture) + " to " + max.ToString(CultureInfo.InvariantCulture));
            return n;
        }
    }
}
