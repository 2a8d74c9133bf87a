using System;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Threading;

// AwaitStress: N sockets (default 1000) each awaiting ReceiveFromAsync at once, fed round by round by one sender: every
// datagram carries its receiver, its place in that receiver's stream, its send time and a checksum. Checks that nothing
// is lost or mixed up and that every await completes (each wait has a deadline that prints what is missing); prints the
// completion latency (from the datagram's own send to the code after the await) p50/p99 and the bytes the whole process
// allocated per await over the measured rounds, with a meter that has first seen a byte[1000] canary. Then the same
// while sockets are disposed and made anew at random moments (StressRun's remarks). Always ends by itself: a watchdog
// ends the process at --time-limit.
// The latency is from each datagram's own sendto, but a round's N datagrams are sent back to back by one thread, so it
// includes the queue of completions behind it: a figure for comparing runs on one machine, not a per-datagram cost.
//
// Run everything (CoreCLR, Mono, Wine; both continuation modes; epoll, WSAPoll and Socket.Select), with one table:
//   bash bench/AwaitStress/run.sh
// One configuration:
//   dotnet bench/AwaitStress/bin/Release/net10.0/AwaitStress.dll [options]          (CoreCLR)
//   LD_LIBRARY_PATH=<dir of libmono-profiler-alloccount.so> mono --profile=alloccount \
//     bench/AwaitStress/bin/Release/netstandard2.1/AwaitStress.dll [options]         (Mono, with its allocation counter)
// Options: --sockets N (1000)  --rounds M (50: measured M then 2M rounds)  --warmup W (10)  --warmup-ms T (1000)  --mode ThreadPool|IoThread
//          --path Native|SocketAddress|Managed  --churn-rounds C (100; 0: no churn phase)  --churn-pause-ms P (2)
//          --churn-orders 012 (how the churn disposes: 0 wrapper then socket, 1 socket then wrapper, 2 the socket alone)
//          --expect-zero (check 0 B per await where the library does not promise it, e.g. Socket.Select below 40 sockets)
//          --no-steady  --deadline S (10: seconds per wait)  --time-limit S (900)  --seed N
namespace WhereAllocation.Bench.AwaitStress
{
    internal static class Program
    {
        private static int Main(string[] args)
        {
            Options? options = Options.Parse(args, out string? error);
            if (options == null)
            {
                Console.Error.WriteLine("AwaitStress: " + error);
                Console.Error.WriteLine(Options.Usage);
                return 2;
            }
            StartWatchdog(options.TimeLimitSeconds);
            try
            {
                if (options.Path.HasValue) DatagramPathSettings.Force(options.Path.Value);
            }
            catch (PlatformNotSupportedException e)
            {
                Console.WriteLine("AwaitStress: " + e.Message);
                return 2;
            }
            DatagramPath path = DatagramPathSettings.Active;
            DatagramContinuations mode = options.Mode;
            string runtime = Host.RuntimeLabel;
            string poller = Host.PollerOf(path);
            ProcessAllocations meter = ProcessAllocations.Open();
            Promise promise = Host.ZeroPromise(path, options.ExpectZero, mode, out string why);
            Console.WriteLine($"AwaitStress: {runtime} ({Host.Description}), path {path}, poller {poller}, continuations {mode}");
            Console.WriteLine("  allocation meter: " + (meter.Works
                ? $"{meter.Name} (saw {meter.CanarySeen} B of a byte[{ProcessAllocations.CanaryLength}] canary)"
                : $"{ProcessAllocations.NoCounter}: {meter.Name} saw {meter.CanarySeen} B of a byte[{ProcessAllocations.CanaryLength}] canary"));
            long bare = meter.Works ? WhereAllocation.Tests.BareAwait.LeastBytes(meter.Read, 10_000) : -1;
            if (bare >= 0) Console.WriteLine($"  the runtime's own cost of resuming an await (a bare IValueTaskSource, no library code): {bare / 10_000.0:0.00} B per await");
            Console.WriteLine("  0 B per await: " + why);

            bool passed = true;
            var phases = new System.Collections.Generic.List<bool>();
            if (options.Steady) phases.Add(false);
            if (options.ChurnRounds > 0) phases.Add(true);
            foreach (bool churn in phases)
            {
                PhaseResult result;
                try
                {
                    result = new StressRun(options, meter, churn).Run();
                }
                catch (Exception e)
                {
                    Console.WriteLine("  the phase failed: " + e);
                    passed = false;
                    continue;
                }
                passed &= Print(result, meter, promise, bare / 10_000.0, runtime, poller, mode);
            }
            Console.WriteLine(passed ? "AwaitStress: passed" : "AwaitStress: FAILED");
            return passed ? 0 : 1;
        }

        /// <summary>Prints a phase's lines and its table row; true when it passed.</summary>
        private static bool Print(PhaseResult r, ProcessAllocations meter, Promise promise, double bare, string runtime, string poller, DatagramContinuations mode)
        {
            CultureInfo inv = CultureInfo.InvariantCulture;
            string p50 = double.IsNaN(r.P50Microseconds) ? "-" : r.P50Microseconds.ToString("0", inv);
            string p99 = double.IsNaN(r.P99Microseconds) ? "-" : r.P99Microseconds.ToString("0", inv);
            string bytes = "-";
            string verdict = "ok";
            // The first failure says why (a round that did not complete adds one); then what the counts say.
            if (r.Failures.Count > 0) verdict = "FAIL: " + r.Failures[0];
            else if (!r.Complete) verdict = "FAIL: did not complete";
            else if (r.Lost != 0 || r.Wrong != 0) verdict = "FAIL: lost or wrong datagrams";
            Console.WriteLine($"  {r.Phase}: {r.Received} datagrams received in {r.Seconds:0.0} s; {r.WarmupRounds} warm-up rounds; receives started {r.Started}: {r.Waited} waited, {r.Immediate} found a datagram queued, {r.Started - r.Waited - r.Immediate} were refused at once; lost {r.Lost}, wrong {r.Wrong}"
                + (r.Phase == "churn" ? $", stale (port given again) {r.Stale}, dropped with a disposed socket {r.DroppedByDisposal}; sockets replaced {r.Churned}" : "")
                + $"; latency p50 {p50} us, p99 {p99} us ({r.LatencySamples} samples)");
            if (r.Phase == "steady" && r.Complete)
            {
                // Two windows, the second twice as long: a cost per await shows in both (twice the bytes in the second), a
                // one-time cost of the runtime in one only. The steady state is the lesser of the two per-await figures.
                double first = (double)r.BytesFirst / Math.Max(1, r.AwaitsFirst);
                double second = (double)r.BytesSecond / Math.Max(1, r.AwaitsSecond);
                bool firstIsLess = first <= second;
                bytes = meter.PerAwait(firstIsLess ? r.BytesFirst : r.BytesSecond, firstIsLess ? r.AwaitsFirst : r.AwaitsSecond);
                double steady = Math.Min(first, second);
                if (meter.Works)
                {
                    Console.WriteLine($"  allocated by the process: {r.BytesFirst} B over {r.AwaitsFirst} awaits ({first.ToString("0.00", inv)} B per await),"
                        + $" then {r.BytesSecond} B over {r.AwaitsSecond} awaits ({second.ToString("0.00", inv)} B per await): {bytes} B per await in the steady state (the lesser)");
                }
                else
                {
                    Console.WriteLine("  allocated by the process: " + ProcessAllocations.NoCounter);
                }
                if (meter.Works && promise == Promise.Zero && steady != 0 && verdict == "ok")
                    verdict = "FAIL: " + bytes + " B per await where 0 is promised";
                if (meter.Works && promise == Promise.NoMoreThanHost && steady > bare && verdict == "ok")
                    verdict = "FAIL: " + bytes + " B per await, more than the bare await's " + bare.ToString("0.00", inv) + " B";
            }
            foreach (string failure in r.Failures) Console.WriteLine("  failure: " + failure);
            long awaits = r.Received;
            string tableBytes = bytes == ProcessAllocations.NoCounter ? "n/a" : bytes;
            if (tableBytes != "-" && tableBytes != "n/a" && promise == Promise.None) tableBytes += " (not promised)";
            if (tableBytes != "-" && tableBytes != "n/a" && promise == Promise.NoMoreThanHost) tableBytes += " (bare await " + bare.ToString("0.00", inv) + ")";
            // One line for run.sh's table: runtime | poller | mode | phase | sockets | awaits | lost/wrong | p50 | p99 | B/await | churned | verdict
            Console.WriteLine(string.Join("|", "row", runtime, poller, mode.ToString(), r.Phase, r.Sockets.ToString(inv), awaits.ToString(inv),
                r.Lost.ToString(inv) + "/" + r.Wrong.ToString(inv), p50, p99, tableBytes, r.Phase == "churn" ? r.Churned.ToString(inv) : "-", verdict));
            return verdict == "ok";
        }

        private static void StartWatchdog(int seconds)
        {
            var watchdog = new Thread(() =>
            {
                Thread.Sleep(seconds * 1000);
                Console.WriteLine($"AwaitStress: FAILED: still running after the time limit of {seconds} s; ending the process");
                Environment.Exit(3);
            }) { IsBackground = true, Name = "watchdog" };
            watchdog.Start();
        }
    }

    /// <summary>What the bytes per waiting await are held to.</summary>
    internal enum Promise
    {
        /// <summary>Exactly 0 over the measured rounds.</summary>
        Zero,

        /// <summary>No more than the runtime's own cost of resuming a bare await (under Wine).</summary>
        NoMoreThanHost,

        /// <summary>Reported, not checked.</summary>
        None,
    }

    /// <summary>The command line.</summary>
    internal sealed class Options
    {
        public const string Usage = "usage: AwaitStress [--sockets N] [--rounds M] [--warmup W] [--warmup-ms T] [--mode ThreadPool|IoThread] [--path Native|SocketAddress|Managed]"
            + " [--churn-rounds C] [--churn-pause-ms P] [--churn-limit K] [--churn-orders 012] [--no-steady] [--expect-zero] [--deadline S] [--time-limit S] [--seed N]";

        public int Sockets = 1000;
        public int Rounds = 50;
        public int Warmup = 10;
        public int WarmupMilliseconds = 1000;
        public DatagramContinuations Mode = AsyncDatagramSocket.DefaultContinuations;
        public DatagramPath? Path;
        public int ChurnRounds = 100;
        public int ChurnPauseMilliseconds = 2;
        public int ChurnLimit = 20_000;
        public int[] ChurnOrders = { 0, 1, 2 };
        public bool Steady = true;
        public bool ExpectZero;
        public double DeadlineSeconds = 10;
        public int TimeLimitSeconds = 900;
        public int Seed = 12345;

        public static Options? Parse(string[] args, out string? error)
        {
            var options = new Options();
            error = null;
            for (int i = 0; i < args.Length; i++)
            {
                string name = args[i];
                if (name == "--no-steady")
                {
                    options.Steady = false;
                    continue;
                }
                if (name == "--expect-zero")
                {
                    options.ExpectZero = true;
                    continue;
                }
                if (i + 1 >= args.Length)
                {
                    error = name + " needs a value";
                    return null;
                }
                string value = args[++i];
                try
                {
                    switch (name)
                    {
                        case "--sockets": options.Sockets = Positive(value); break;
                        case "--rounds": options.Rounds = Positive(value); break;
                        case "--warmup": options.Warmup = int.Parse(value, CultureInfo.InvariantCulture); break;
                        case "--warmup-ms": options.WarmupMilliseconds = int.Parse(value, CultureInfo.InvariantCulture); break;
                        case "--mode": options.Mode = EnumValue<DatagramContinuations>(value); break;
                        case "--path": options.Path = EnumValue<DatagramPath>(value); break;
                        case "--churn-rounds": options.ChurnRounds = int.Parse(value, CultureInfo.InvariantCulture); break;
                        case "--churn-pause-ms": options.ChurnPauseMilliseconds = int.Parse(value, CultureInfo.InvariantCulture); break;
                        case "--churn-limit": options.ChurnLimit = Positive(value); break;
                        case "--churn-orders": options.ChurnOrders = Orders(value); break;
                        case "--deadline": options.DeadlineSeconds = double.Parse(value, CultureInfo.InvariantCulture); break;
                        case "--time-limit": options.TimeLimitSeconds = Positive(value); break;
                        case "--seed": options.Seed = int.Parse(value, CultureInfo.InvariantCulture); break;
                        default:
                            error = "unknown option " + name;
                            return null;
                    }
                }
                catch (FormatException)
                {
                    error = "bad value for " + name + ": " + value;
                    return null;
                }
                catch (ArgumentException e)
                {
                    error = "bad value for " + name + ": " + value + " (" + e.Message + ")";
                    return null;
                }
            }
            if (options.Warmup < 1 || options.WarmupMilliseconds < 0 || options.ChurnRounds < 0 || options.ChurnPauseMilliseconds < 0 || options.DeadlineSeconds <= 0)
            {
                error = "--warmup must be 1 or more; --warmup-ms, --churn-rounds, --churn-pause-ms 0 or more; --deadline more than 0";
                return null;
            }
            if (!options.Steady && options.ChurnRounds == 0)
            {
                error = "nothing to run (--no-steady and --churn-rounds 0)";
                return null;
            }
            return options;
        }

        /// <summary>"012": which ways of disposing the churn picks from (0 wrapper then socket, 1 socket then wrapper, 2 the socket alone).</summary>
        private static int[] Orders(string value)
        {
            if (value.Length == 0) throw new FormatException();
            var orders = new int[value.Length];
            for (int i = 0; i < value.Length; i++)
            {
                orders[i] = value[i] - '0';
                if (orders[i] < 0 || orders[i] > 2) throw new FormatException();
            }
            return orders;
        }

        private static int Positive(string value)
        {
            int n = int.Parse(value, CultureInfo.InvariantCulture);
            if (n < 1) throw new ArgumentException("must be 1 or more");
            return n;
        }

        private static T EnumValue<T>(string value) where T : struct, Enum
        {
            // Enum.Parse<T> is not in netstandard2.1; a number is refused (only the names are meant).
            if (value.Length == 0 || char.IsDigit(value[0]) || value[0] == '-') throw new FormatException();
            var parsed = (T)Enum.Parse(typeof(T), value, true);
            if (!Enum.IsDefined(typeof(T), parsed)) throw new FormatException();
            return parsed;
        }
    }

    /// <summary>What runs this process, and what the library promises there.</summary>
    internal static class Host
    {
        public static readonly bool IsMono = Type.GetType("Mono.Runtime") != null;

        public static readonly bool IsBoehm = IsMono && GC.MaxGeneration == 0;

        public static readonly bool IsWindows = RuntimeInformation.IsOSPlatform(OSPlatform.Windows);

        public static readonly bool IsWine = IsWindows && WineVersionExport() != IntPtr.Zero;

        public static string RuntimeLabel => IsMono ? (IsBoehm ? "mono-boehm" : "mono") : IsWine ? "coreclr-wine" : "coreclr";

        public static string Description => RuntimeInformation.FrameworkDescription + ", " + RuntimeInformation.OSDescription
            + (IsWine ? ", under Wine" : "") + ", " + Environment.ProcessorCount + " CPUs";

        /// <summary>The readiness mechanism the library waits with on <paramref name="path"/> here (docs/ARCHITECTURE.md, "Awaits").</summary>
        public static string PollerOf(DatagramPath path)
        {
            if (path != DatagramPath.Native) return "Socket.Select";
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) return "epoll";
            if (IsWindows) return "WSAPoll";
            if (RuntimeInformation.IsOSPlatform(OSPlatform.OSX)) return "kqueue";
            return "unknown";
        }

        /// <summary>What this run holds the bytes per waiting await to, and why (the library's XML docs, docs/testing-under-wine.md, measurements).</summary>
        public static Promise ZeroPromise(DatagramPath path, bool expectZero, DatagramContinuations mode, out string why)
        {
            if (path == DatagramPath.Managed)
            {
                why = "not promised: the Managed path allocates per datagram received, by design";
                return Promise.None;
            }
            if (path == DatagramPath.SocketAddress && !expectZero)
            {
                why = "not promised (AsyncDatagramSocket's docs promise it on the native path): the runtime's Socket.Select allocates"
                    + " 8 B per list entry once its lists hold 80 entries (measured on .NET 10, Linux), and the poller puts each waiting socket in two lists";
                return Promise.None;
            }
            if (IsMono && mode == DatagramContinuations.ThreadPool)
            {
                why = "not promised: Mono's thread pool allocates per item queued (DatagramContinuations.ThreadPool's docs); IoThread is Mono's default";
                return Promise.None;
            }
            if (IsWine)
            {
                why = "the library must add nothing to the bare await's cost (the win-x64 runtime under Wine allocates to resume any await"
                    + " of an IValueTaskSource, without the library: docs/testing-under-wine.md); checked";
                return Promise.NoMoreThanHost;
            }
            why = expectZero ? "checked (--expect-zero)" : "promised; checked: a non-zero count over the measured rounds fails the run";
            return Promise.Zero;
        }

        private static IntPtr WineVersionExport()
        {
            try
            {
                IntPtr ntdll = GetModuleHandleW("ntdll.dll");
                return ntdll == IntPtr.Zero ? IntPtr.Zero : GetProcAddress(ntdll, "wine_get_version");
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                return IntPtr.Zero;
            }
        }

        [DllImport("kernel32", CharSet = CharSet.Unicode)]
        private static extern IntPtr GetModuleHandleW(string name);

        [DllImport("kernel32", CharSet = CharSet.Ansi, BestFitMapping = false)]
        private static extern IntPtr GetProcAddress(IntPtr module, string name);
    }
}
