using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace WhereAllocation.Samples.DatagramServer
{
    internal enum RunMode
    {
        /// <summary>The sender runs at full speed while the receiver reads: the receiver's sustained rate.</summary>
        Stream,
        /// <summary>The sender fills the receive queue first, then the receiver drains it alone.</summary>
        Drain,
    }

    /// <summary>The command line. <see cref="Help"/> is what --help prints.</summary>
    internal sealed class Options
    {
        public const long DefaultStreamCount = 2_000_000;
        public const long DefaultDrainCount = 200_000;

        public long Count { get; private set; }
        public int Size { get; private set; } = 64;
        public RunMode Mode { get; private set; } = RunMode.Stream;
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
        public string? NativeDirectory { get; private set; }
        public bool ShowHelp { get; private set; }
        public bool CheckFormat { get; private set; }

        /// <summary>The results folder: --out, else results/&lt;runtime label&gt; under the current folder.</summary>
        public string ResolvedOutput => Path.GetFullPath(OutputDirectory ?? Path.Combine("results", RuntimeLabel));

        public const string Help =
@"DatagramServer - receives 64-byte text datagrams on loopback in every way this build can, side by side:
decode (UTF-8) and check (format, Fletcher-32, sequence, duplicates) each one, count what the kernel
dropped and what went missing after, and report datagrams/s, bytes allocated per datagram and GCs.
With no options: stream mode, every method, then the game-frame (tick) scenario; under a minute.

usage: dotnet DatagramServer.dll [options]      (CoreCLR, net10.0 build)
       mono DatagramServer.dll [options]        (Mono, netstandard2.1 build)

  --count N          datagrams per method (default 2000000 in stream mode, 200000 in drain mode)
  --size S           datagram size in bytes, 24..1400 (default 64)
  --mode M           stream: the C sender saturates the receiver while it reads (default)
                     drain:  the sender fills the receive queue first, then the receiver drains it
                             alone, in rounds of --drain-round datagrams; only draining is timed
  --methods LIST     comma-separated rows to run (default: all this runtime can run):
                     alloc-baseline, managed-nonalloc, library, library-batch,
                     dotnet-socketaddress, raw-pinvoke (for scale: the least a C# receive
                     can do on this runtime), c-recvfrom, c-recvmmsg
  --out DIR          where results.csv, results.md, results.svg, details.csv and tick.csv go
                     (default: results/<runtime label> under the current folder)
  --runtime-label L  the runtime column of the results (default: coreclr or mono, detected)
  --rcvbuf BYTES     SO_RCVBUF to ask for on every receiving socket (default 8388608); the kernel
                     grants up to twice net.core.rmem_max and the granted value is reported
  --buffer BYTES     receive buffer per datagram, > size (default 2048)
  --sender-mode M    wa-sender mode: gso (default; sendmmsg + UDP_SEGMENT), mmsg or plain
  --warmup N         datagrams each C# method receives before it is measured (default 100000; 0 = none)
  --idle-ms M        a C# receiver that read nothing for M ms after the sender finished is stopped
                     (default 300; wa-recv gets at least 1000, as its clock starts at its first datagram)
  --drain-round N    datagrams per round in drain mode (default 6000; must fit the receive queue)
  --tick-frames F    frames of the tick scenario (default 20; 0 = skip it)
  --tick-clients K   client sockets in the tick scenario (default 4)
  --tick-entities E  entity updates per client per frame (default 1000)
  --receiver-cpu C   CPU the receiving thread is pinned to (default 0)
  --sender-cpu C     CPU the C sender is pinned to (default 1)
  --native-dir DIR   the bench/native folder (default: found above the program or the current folder)
  --inject-corrupt K for tests: send K corrupted datagrams to every receiver before the sender starts;
                     every row must then report exactly K corrupt in details.csv and still lost = 0
                     (they arrive before the sender starts, so the timings of such a run mean nothing)
  --check-format     for tests: check the datagram code against bench/native's test vectors and exit
  --help             this text

Exit code: 0 when every row has lost = 0, no duplicates and no unexpected corrupt datagrams;
3 when some row does not; 2 for bad options; 1 when a run failed.";

        /// <summary>Parses the arguments; throws <see cref="ArgumentException"/> with a message for the user.</summary>
        public static Options Parse(string[] args)
        {
            var o = new Options();
            bool countGiven = false;
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
                if (i + 1 >= args.Length) throw new ArgumentException("option " + name + " needs a value (see --help)");
                string value = args[++i];
                switch (name)
                {
                    case "--count": o.Count = Number(name, value, 1, 1_000_000_000); countGiven = true; break;
                    case "--size": o.Size = (int)Number(name, value, WaFormat.MinSize, WaFormat.MaxSize); break;
                    case "--mode":
                        if (value == "stream") o.Mode = RunMode.Stream;
                        else if (value == "drain") o.Mode = RunMode.Drain;
                        else throw new ArgumentException("--mode must be stream or drain");
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
                    case "--buffer": o.BufferSize = (int)Number(name, value, WaFormat.MinSize, 65536); break;
                    case "--sender-mode":
                        if (value != "gso" && value != "mmsg" && value != "plain") throw new ArgumentException("--sender-mode must be gso, mmsg or plain");
                        o.SenderMode = value;
                        break;
                    case "--warmup": o.WarmUp = Number(name, value, 0, 100_000_000); break;
                    case "--idle-ms": o.IdleMs = (int)Number(name, value, 50, 60_000); break;
                    case "--drain-round": o.DrainRound = (int)Number(name, value, 1, 1_000_000); break;
                    case "--tick-frames": o.TickFrames = (int)Number(name, value, 0, 1_000_000); break;
                    case "--tick-clients": o.TickClients = (int)Number(name, value, 1, 64); break;
                    case "--tick-entities": o.TickEntities = (int)Number(name, value, 1, 100_000); break;
                    case "--receiver-cpu": o.ReceiverCpu = (int)Number(name, value, 0, 63); break;
                    case "--sender-cpu": o.SenderCpu = (int)Number(name, value, 0, 63); break;
                    case "--native-dir": o.NativeDirectory = value; break;
                    case "--inject-corrupt": o.Inject = (int)Number(name, value, 0, 1000); break;
                    default: throw new ArgumentException("unknown option " + name + " (see --help)");
                }
            }
            if (!countGiven) o.Count = o.Mode == RunMode.Drain ? DefaultDrainCount : DefaultStreamCount;
            if (o.BufferSize <= o.Size) throw new ArgumentException("--buffer must be larger than --size, so that a longer datagram shows up as cut");
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
