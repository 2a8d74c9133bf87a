using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The C programs of bench/native: built with the system compiler at the start of every run
    /// (bench/native/build.sh), then started as child processes: wa-sender for every method,
    /// wa-recv for the c-* rows. Their one-line key=value outputs are parsed here.
    /// </summary>
    internal sealed class NativeTools
    {
        private NativeTools(string directory, string sender, string receiver, string shards)
        {
            Directory = directory;
            SenderPath = sender;
            ReceiverPath = receiver;
            ShardsPath = shards;
        }

        public string Directory { get; }
        public string SenderPath { get; }
        public string ReceiverPath { get; }
        public string ShardsPath { get; }

        /// <summary>
        /// bench/native (--native-dir, else the first one found walking up from the program and from the current folder), its
        /// programs built: the start of every mode that runs them.
        /// </summary>
        public static NativeTools Prepare(Options options)
        {
            string directory = Locate(options.NativeDirectory) ?? throw new InvalidOperationException("bench/native not found; pass --native-dir");
            Console.Write("building the C programs (" + directory + "/build.sh) ... ");
            NativeTools tools = Build(directory);
            Console.WriteLine("done");
            return tools;
        }

        /// <summary>The path of a program built from bench/native (wa-fanout, wa-burst, wa-echo, ...).</summary>
        public string PathOf(string program) => Path.Combine(Directory, "build", program);

        private static string? Locate(string? given)
        {
            if (given != null) return File.Exists(Path.Combine(given, "build.sh")) ? Path.GetFullPath(given) : null;
            foreach (string start in new[] { AppContext.BaseDirectory, System.IO.Directory.GetCurrentDirectory() })
            {
                for (DirectoryInfo? dir = new DirectoryInfo(start); dir != null; dir = dir.Parent)
                {
                    string candidate = Path.Combine(dir.FullName, "bench", "native");
                    if (File.Exists(Path.Combine(candidate, "build.sh"))) return candidate;
                }
            }
            return null;
        }

        /// <summary>Runs build.sh (sh, the system C compiler) and returns the programs, or throws with the compiler's output.</summary>
        private static NativeTools Build(string directory)
        {
            ProcessOutput output = RunToEnd("sh", new[] { Path.Combine(directory, "build.sh") }, TimeSpan.FromSeconds(120));
            if (output.ExitCode != 0)
                throw new InvalidOperationException("bench/native/build.sh failed (exit " + output.ExitCode + "):\n" + output.StandardError + output.StandardOutput);
            string build = Path.Combine(directory, "build");
            return new NativeTools(directory, Path.Combine(build, "wa-sender"), Path.Combine(build, "wa-recv"), Path.Combine(build, "wa-shards"));
        }

        /// <summary>
        /// Starts wa-sender: <paramref name="count"/> datagrams from <paramref name="firstSequence"/> to 127.0.0.1:<paramref name="port"/>,
        /// from <paramref name="sources"/> source ports taking turns.
        /// </summary>
        public Process StartSender(int port, long count, int size, long firstSequence, int cpu, string mode, int sources = 1)
        {
            return Start(SenderPath, new[]
            {
                "--host", "127.0.0.1", "--port", Text(port), "--count", Text(count), "--size", Text(size),
                "--first-seq", Text(firstSequence), "--cpu", Text(cpu), "--mode", mode, "--sources", Text(sources),
            });
        }

        /// <summary>Starts wa-shards: <paramref name="shards"/> SO_REUSEPORT sockets on one port, drained in parallel once filled.</summary>
        public Process StartShards(int shards, long count, long firstSequence, int bufferSize, int cpu, int receiveBuffer, int maxSeconds, string readyFile)
        {
            return Start(ShardsPath, new[]
            {
                "--shards", Text(shards), "--bind", "127.0.0.1", "--method", "recvmmsg", "--batch", "64", "--count", Text(count),
                "--first-seq", Text(firstSequence), "--size", Text(bufferSize), "--cpu", Text(cpu),
                "--rcvbuf", Text(receiveBuffer), "--max-seconds", Text(maxSeconds), "--ready-file", readyFile,
            });
        }

        /// <summary>Waits for wa-sender and returns how many it sent and in which mode; throws when it failed.</summary>
        public static SenderResult FinishSender(Process sender, TimeSpan timeout)
        {
            ProcessOutput output = Finish(sender, timeout, "wa-sender");
            Dictionary<string, string> values = ParseLine(output.StandardOutput, "wa-sender");
            return new SenderResult(Long(values, "sent"), Double(values, "seconds"), values.TryGetValue("mode", out string? mode) ? mode : "?", output.StandardError.Trim());
        }

        /// <summary>Starts wa-recv; it writes its port to <paramref name="readyFile"/> once bound. <paramref name="countOnly"/>: --no-check.</summary>
        public Process StartReceiver(string method, long count, long firstSequence, int bufferSize, int cpu, int receiveBuffer, int idleMs, int maxSeconds, string readyFile,
            bool countOnly = false)
        {
            var arguments = new List<string>
            {
                "--bind", "127.0.0.1", "--method", method, "--batch", "64", "--count", Text(count),
                "--first-seq", Text(firstSequence), "--size", Text(bufferSize), "--cpu", Text(cpu),
                "--rcvbuf", Text(receiveBuffer), "--idle-ms", Text(idleMs), "--max-seconds", Text(maxSeconds),
                "--ready-file", readyFile,
            };
            if (countOnly) arguments.Add("--no-check");
            return Start(ReceiverPath, arguments.ToArray());
        }

        /// <summary>Waits until wa-recv has written its port (or has died).</summary>
        public static int WaitForPort(Process receiver, string readyFile, TimeSpan timeout)
        {
            var watch = Stopwatch.StartNew();
            while (watch.Elapsed < timeout)
            {
                if (File.Exists(readyFile))
                {
                    string text = File.ReadAllText(readyFile).Trim();
                    if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int port)) return port;
                }
                if (receiver.HasExited) break;
                Thread.Sleep(2);
            }
            string error = receiver.HasExited ? receiver.StandardError.ReadToEnd() : "";
            throw new InvalidOperationException("wa-recv did not report its port" + (error.Length > 0 ? ": " + error : " in time"));
        }

        /// <summary>Waits for wa-recv (or wa-shards) and returns its result line's values; throws when it failed.</summary>
        public static Dictionary<string, string> FinishReceiver(Process receiver, TimeSpan timeout, out string diagnostics, string name = "wa-recv")
        {
            ProcessOutput output = Finish(receiver, timeout, name);
            diagnostics = output.StandardError.Trim();
            return ParseLine(output.StandardOutput, name);
        }

        /// <summary>
        /// The CPU time a C receiver reports on stderr ("&lt;name&gt;: cpu user=U sys=S cpu_ns_per_datagram=X"), user + system,
        /// in nanoseconds; 0 when the line is missing.
        /// </summary>
        public static long CpuNanoseconds(string diagnostics, string name)
        {
            string prefix = name + ": cpu ";
            foreach (string line in diagnostics.Split('\n'))
            {
                if (!line.StartsWith(prefix, StringComparison.Ordinal)) continue;
                Dictionary<string, string> values = Pairs(line.Substring(prefix.Length));
                return (long)((Seconds(values, "user") + Seconds(values, "sys")) * 1e9);
            }
            return 0;
        }

        private static double Seconds(Dictionary<string, string> values, string key) =>
            values.TryGetValue(key, out string? text) && double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds) ? seconds : 0;

        /// <summary>Ends a child that is no longer wanted (resuming it first in case it was stopped).</summary>
        public static void Abandon(Process process)
        {
            try
            {
                if (!process.HasExited)
                {
                    Linux.Resume(process.Id);
                    process.Kill();
                    process.WaitForExit(5000);
                }
            }
            catch (InvalidOperationException) { }
            process.Dispose();
        }

        public static long Long(Dictionary<string, string> values, string key)
        {
            if (!values.TryGetValue(key, out string? text) || !long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value))
                throw new FormatException("missing or bad '" + key + "' in the C program's output");
            return value;
        }

        public static double Double(Dictionary<string, string> values, string key)
        {
            if (!values.TryGetValue(key, out string? text) || !double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
                throw new FormatException("missing or bad '" + key + "' in the C program's output");
            return value;
        }

        private static Dictionary<string, string> ParseLine(string stdout, string program)
        {
            string line = stdout.Trim();
            int newline = line.LastIndexOf('\n');
            Dictionary<string, string> values = Pairs(newline >= 0 ? line.Substring(newline + 1) : line);
            if (values.Count == 0) throw new FormatException(program + " printed no result line: '" + stdout.Trim() + "'");
            return values;
        }

        /// <summary>The key=value pairs of one line, separated by spaces (what every C program of bench/native prints).</summary>
        private static Dictionary<string, string> Pairs(string line)
        {
            var values = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (string pair in line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries))
            {
                int equals = pair.IndexOf('=');
                if (equals > 0) values[pair.Substring(0, equals)] = pair.Substring(equals + 1);
            }
            return values;
        }

        private static string Text(long value) => value.ToString(CultureInfo.InvariantCulture);

        // ----- child processes -----

        private sealed class Captured
        {
            public Task<string>? Out;
            public Task<string>? Err;
        }

        private static readonly System.Runtime.CompilerServices.ConditionalWeakTable<Process, Captured> s_captured =
            new System.Runtime.CompilerServices.ConditionalWeakTable<Process, Captured>();

        /// <summary>Starts a program with both its outputs read from the start; <see cref="FinishProgram"/> collects them.</summary>
        public static Process StartProgram(string file, params string[] arguments) => Start(file, arguments);

        /// <summary>Waits for a program started by <see cref="StartProgram"/>: its exit code and outputs (no exception for a failing exit).</summary>
        public static ProcessOutput FinishProgram(Process process, TimeSpan timeout, string name)
        {
            if (!process.WaitForExit((int)timeout.TotalMilliseconds))
            {
                Abandon(process);
                throw new TimeoutException(name + " did not finish within " + timeout.TotalSeconds + " s");
            }
            process.WaitForExit();
            s_captured.TryGetValue(process, out Captured? captured);
            var output = new ProcessOutput(process.ExitCode, captured?.Out?.Result ?? "", captured?.Err?.Result ?? "");
            process.Dispose();
            return output;
        }

        /// <summary>The key=value pairs of the last line a C program printed.</summary>
        public static Dictionary<string, string> ResultLine(string stdout, string program) => ParseLine(stdout, program);

        private static Process Start(string file, string[] arguments)
        {
            var info = new ProcessStartInfo(file, Join(arguments))
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                CreateNoWindow = true,
            };
            Process process = Process.Start(info) ?? throw new InvalidOperationException("could not start " + file);
            // Read both streams from the start, so that a chatty child never blocks on a full pipe.
            s_captured.Add(process, new Captured { Out = process.StandardOutput.ReadToEndAsync(), Err = process.StandardError.ReadToEndAsync() });
            return process;
        }

        private static ProcessOutput Finish(Process process, TimeSpan timeout, string name)
        {
            ProcessOutput output = FinishProgram(process, timeout, name);
            if (output.ExitCode != 0) throw new InvalidOperationException(name + " failed (exit " + output.ExitCode + "): " + output.StandardError.Trim());
            return output;
        }

        private static ProcessOutput RunToEnd(string file, string[] arguments, TimeSpan timeout) => FinishProgram(Start(file, arguments), timeout, file);

        private static string Join(string[] arguments)
        {
            var parts = new string[arguments.Length];
            for (int i = 0; i < arguments.Length; i++)
            {
                string a = arguments[i];
                parts[i] = a.Length > 0 && a.IndexOfAny(new[] { ' ', '"', '\'', '\\' }) < 0 ? a : "\"" + a.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
            }
            return string.Join(" ", parts);
        }

        internal readonly struct ProcessOutput
        {
            public ProcessOutput(int exitCode, string standardOutput, string standardError)
            {
                ExitCode = exitCode;
                StandardOutput = standardOutput;
                StandardError = standardError;
            }

            public int ExitCode { get; }
            public string StandardOutput { get; }
            public string StandardError { get; }
        }
    }

    /// <summary>wa-sender's result line.</summary>
    internal sealed class SenderResult
    {
        public SenderResult(long sent, double seconds, string mode, string diagnostics)
        {
            Sent = sent;
            Seconds = seconds;
            Mode = mode;
            Diagnostics = diagnostics;
        }

        public long Sent { get; }
        public double Seconds { get; }
        public string Mode { get; }
        public string Diagnostics { get; }
    }
}
