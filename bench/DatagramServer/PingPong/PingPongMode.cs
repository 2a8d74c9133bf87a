using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// --mode pingpong: N clients (bench/native's wa-pingpong, one thread on the other CPU), each with one datagram in flight,
    /// against one echo thread; every server once per client count and round, interleaved. A server whose receive waits most
    /// of the time, unlike the drain rows, whose queue is full. Writes pingpong.md, pingpong.csv and pingpong-summary.txt.
    /// </summary>
    internal static class PingPongMode
    {
        private const string CEcho = "c-echo";

        internal sealed class EchoRun
        {
            public long Echoes;          // round trips the clients completed within the run's time
            public double Seconds;
            public long ServerEchoes;    // datagrams the server echoed (all of them: the clients' grace included)
            public long Lost;
            public long Wrong;
            public double CpuNsPerEcho;
            public double BytesPerEcho;  // NaN for C
            public double P50Us, P99Us, P999Us;
            public double Rate => Echoes / Seconds;
        }

        internal sealed class Row
        {
            public string Name = "";
            public string Description = "";
            public int Clients;
            public readonly List<EchoRun> Runs = new List<EchoRun>();
            public double SyscallsPerEcho = double.NaN;
            public string SyscallDetail = "";
            public double Rate => Median(Runs.Select(r => r.Rate));
            public double Cpu => Median(Runs.Select(r => r.CpuNsPerEcho));
            public double Bytes => Runs.Count == 0 ? double.NaN : Runs.Max(r => r.BytesPerEcho);
            public double P50 => Median(Runs.Select(r => r.P50Us));
            public double P99 => Median(Runs.Select(r => r.P99Us));
            public double P999 => Median(Runs.Select(r => r.P999Us));
            public long CountLost;   // lost or wrong in the counting run
            public long Lost => Runs.Sum(r => r.Lost) + CountLost;
            public long Wrong => Runs.Sum(r => r.Wrong);
        }

        public static int Run(Options options)
        {
            Console.WriteLine("where-allocation DatagramServer --mode pingpong on " + Machine.RuntimeDescription);
            Console.WriteLine("machine: " + Machine.Describe() + "; load average " + Machine.LoadAverage);
            NativeTools tools = NativeTools.Prepare(options);
            string client = tools.PathOf("wa-pingpong");
            string echo = tools.PathOf("wa-echo");

            var servers = new List<EchoServer>();
            var names = new List<string>();
            foreach (EchoServer server in EchoServer.All())
            {
                if (options.Methods != null && !options.Methods.Contains(server.Name)) continue;
                if (server.Unavailable != null)
                {
                    Console.WriteLine("pingpong: " + server.Name + " absent: " + server.Unavailable);
                    continue;
                }
                servers.Add(server);
                names.Add(server.Name);
            }
            bool withC = options.Methods == null || options.Methods.Contains(CEcho);
            if (withC) names.Add(CEcho);
            if (options.Methods != null)
            {
                foreach (string m in options.Methods)
                    if (!names.Contains(m)) throw new ArgumentException("--methods: no ping-pong server named " + m + " here (library, library-batch, library-async, runtime, runtime-socketaddress, runtime-async, c-echo)");
            }

            var rows = new Dictionary<string, Row>();
            foreach (int n in options.ClientCounts)
            {
                foreach (string name in names)
                {
                    rows[Key(name, n)] = new Row
                    {
                        Name = name,
                        Clients = n,
                        Description = name == CEcho ? "bench/native's wa-echo: recvfrom, sendto, one thread" : servers.First(s => s.Name == name).Description,
                    };
                }
            }

            int serverCpu = options.ReceiverCpu, clientCpu = options.SenderCpu;
            var started = DateTime.UtcNow;
            for (int round = 1; round <= options.Rounds; round++)
            {
                foreach (int n in options.ClientCounts)
                {
                    foreach (string name in names)
                    {
                        EchoRun run = name == CEcho
                            ? RunC(echo, client, n, options, serverCpu, clientCpu, null, out _)
                            : RunLibrary(servers.First(s => s.Name == name), client, n, options, serverCpu, clientCpu, null, out _);
                        rows[Key(name, n)].Runs.Add(run);
                        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "round {0}, {1} clients, {2,-22} {3,9:N0} echoes/s  cpu {4,6:F2} us/echo  p50/p99/p99.9 {5:F0}/{6:F0}/{7:F0} us  lost {8}",
                            round, n, name, run.Rate, run.CpuNsPerEcho / 1000, run.P50Us, run.P99Us, run.P999Us, run.Lost));
                    }
                }
            }

            // System calls per echo: one more run per server at the middle client count, its process's calls counted (perf stat on the
            // kernel's syscall tracepoints, else strace -c -f, which slows the server several times over and so lets a batch find
            // more datagrams per call than it would: the tables say which counted).
            // At the first client count (1 by default: nearly every receive waits) and at the middle one (the targets' count).
            int syscallClients = options.ClientCounts[options.ClientCounts.Count / 2];
            var countedClients = new List<int> { options.ClientCounts[0] };
            if (!countedClients.Contains(syscallClients)) countedClients.Add(syscallClients);
            string syscallNote;
            CallCounter? counter = options.CountSystemCalls ? FindCounter() : null;
            if (counter == null)
            {
                syscallNote = options.CountSystemCalls ? "neither perf nor strace can count system calls here: no counts" : "system calls not counted (--syscalls off)";
                Console.WriteLine("pingpong: " + syscallNote);
            }
            else
            {
                syscallNote = "system calls per echo: every call of the server's process, " + (counter.IsPerf ? "perf stat on raw_syscalls:sys_enter" : "strace -c -f (which slows the server: a batch then finds more per call)")
                    + ", at " + string.Join(" and ", countedClients) + " clients, one run of " + SyscallMillis(options) + " ms each";
                foreach (int n in countedClients)
                {
                    foreach (string name in names)
                    {
                        Row row = rows[Key(name, n)];
                        EchoRun run = name == CEcho
                            ? RunC(echo, client, n, options, serverCpu, clientCpu, counter, out Dictionary<string, long> calls)
                            : RunLibrary(servers.First(s => s.Name == name), client, n, options, serverCpu, clientCpu, counter, out calls);
                        long total = calls["total"];
                        row.SyscallsPerEcho = run.ServerEchoes > 0 ? (double)total / run.ServerEchoes : double.NaN;
                        row.SyscallDetail = string.Join(", ", calls.Where(c => c.Key != "total" && c.Value * 20 >= run.ServerEchoes)
                            .OrderByDescending(c => c.Value).Select(c => c.Key + " " + ((double)c.Value / run.ServerEchoes).ToString("F2", CultureInfo.InvariantCulture)));
                        row.CountLost += run.Lost + run.Wrong;
                        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "syscalls, {0} clients, {1,-22} {2:F2} per echo ({3})", n, name, row.SyscallsPerEcho, row.SyscallDetail));
                    }
                }
            }

            string runtime = Machine.RuntimeShort + ", load " + Machine.LoadAverage;
            string markdown = Markdown(rows, names, options, syscallNote) + "\n(" + (DateTime.UtcNow - started).TotalSeconds.ToString("F0", CultureInfo.InvariantCulture) + " s)\n";
            string output = options.ResolvedOutput;
            Directory.CreateDirectory(output);
            File.WriteAllText(Path.Combine(output, "pingpong.md"), markdown);
            File.WriteAllText(Path.Combine(output, "pingpong.csv"), Csv(rows, names, options));
            string summary = SummaryLine(rows, options, runtime, syscallClients, countedClients);
            File.WriteAllText(Path.Combine(output, "pingpong-summary.txt"), summary + "\n");
            Console.WriteLine();
            Console.WriteLine(markdown);
            Console.WriteLine(summary);
            bool clean = rows.Values.All(r => r.Lost == 0 && r.Wrong == 0);
            return clean ? 0 : 3;
        }

        private static int SyscallMillis(Options options) => Math.Max(300, options.PingPongMillis / 2);

        private static string Key(string name, int clients) => name + "@" + clients.ToString(CultureInfo.InvariantCulture);

        /// <summary>One run of a C# server on a thread of this process (pinned to <paramref name="serverCpu"/>), against wa-pingpong.</summary>
        private static EchoRun RunLibrary(EchoServer server, string client, int clients, Options options, int serverCpu, int clientCpu, CallCounter? counter, out Dictionary<string, long> calls)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            Linux.SetReceiveBuffer(socket, options.ReceiveBuffer);
            int port = ((IPEndPoint)socket.LocalEndPoint!).Port;
            var meter = new EchoMeter();
            Exception? failure = null;
            var thread = new Thread(() =>
            {
                try
                {
                    if (serverCpu >= 0) Linux.PinCurrentThread(serverCpu);
                    server.Serve(socket, new byte[options.BufferSize], meter, serverCpu);
                }
                catch (Exception e)
                {
                    failure = e;
                }
            }) { IsBackground = true, Name = "echo " + server.Name };
            thread.Start();
            Dictionary<string, string> result = RunClients(client, port, clients, options, clientCpu, counter, Process.GetCurrentProcess().Id, out calls);
            if (!thread.Join(10_000))
            {
                Linux.DumpThreadsIfMono("pingpong: " + server.Name + " did not stop after the clients' STOP");
                socket.Dispose(); // ends a server that never saw STOP
                thread.Join(10_000);
                throw new InvalidOperationException("pingpong: " + server.Name + " did not stop");
            }
            if (failure != null) throw new InvalidOperationException("pingpong: " + server.Name + " failed: " + failure.Message, failure);
            EchoRun run = FromClients(result);
            run.ServerEchoes = meter.Echoes;
            run.CpuNsPerEcho = meter.CountedEchoes > 0 ? (double)meter.CpuNs / meter.CountedEchoes : double.NaN;
            run.BytesPerEcho = meter.CountedEchoes > 0 ? (double)meter.Bytes / meter.CountedEchoes : double.NaN;
            return run;
        }

        /// <summary>One run of bench/native's wa-echo (pinned to <paramref name="serverCpu"/>) against wa-pingpong.</summary>
        private static EchoRun RunC(string echo, string client, int clients, Options options, int serverCpu, int clientCpu, CallCounter? counter, out Dictionary<string, long> calls)
        {
            string ready = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "wa-echo-" + Guid.NewGuid().ToString("N") + ".port");
            Process server = NativeTools.StartProgram(echo, "--ready-file", ready, "--cpu", serverCpu.ToString(CultureInfo.InvariantCulture),
                "--rcvbuf", options.ReceiveBuffer.ToString(CultureInfo.InvariantCulture));
            int serverPid = server.Id;
            Dictionary<string, string> result;
            try
            {
                int port = NativeTools.WaitForPort(server, ready, TimeSpan.FromSeconds(10));
                result = RunClients(client, port, clients, options, clientCpu, counter, serverPid, out calls);
            }
            catch
            {
                NativeTools.Abandon(server);
                throw;
            }
            finally
            {
                File.Delete(ready);
            }
            NativeTools.ProcessOutput output = NativeTools.FinishProgram(server, TimeSpan.FromSeconds(10), "wa-echo");
            if (output.ExitCode != 0) throw new InvalidOperationException("wa-echo failed (exit " + output.ExitCode + "): " + output.StandardError.Trim());
            Dictionary<string, string> served = NativeTools.ResultLine(output.StandardOutput, "wa-echo");
            EchoRun run = FromClients(result);
            run.ServerEchoes = NativeTools.Long(served, "echoes");
            run.CpuNsPerEcho = run.ServerEchoes > 0 ? (double)NativeTools.Long(served, "cpu_ns") / run.ServerEchoes : double.NaN;
            run.BytesPerEcho = double.NaN;
            return run;
        }

        /// <summary>
        /// Runs wa-pingpong against the server at <paramref name="port"/>. With a <paramref name="counter"/>, the clients are started
        /// first with a delay before their first send, and the counter then attaches to the server's process <paramref name="serverPid"/>
        /// (all its threads, not the clients' process), and stops once the clients are done.
        /// </summary>
        private static Dictionary<string, string> RunClients(string client, int port, int clients, Options options, int clientCpu, CallCounter? counter, int serverPid, out Dictionary<string, long> calls)
        {
            calls = new Dictionary<string, long>();
            int millis = counter != null ? SyscallMillis(options) : options.PingPongMillis;
            int delay = counter == null ? 0 : counter.IsPerf ? 1500 : 3000;
            Process process = NativeTools.StartProgram(client, "--port", port.ToString(CultureInfo.InvariantCulture), "--clients", clients.ToString(CultureInfo.InvariantCulture),
                "--millis", millis.ToString(CultureInfo.InvariantCulture), "--cpu", clientCpu.ToString(CultureInfo.InvariantCulture),
                "--start-delay-ms", delay.ToString(CultureInfo.InvariantCulture));
            Process? counting = null;
            NativeTools.ProcessOutput output;
            try
            {
                if (counter != null) counting = StartCounter(counter, serverPid);
                output = NativeTools.FinishProgram(process, TimeSpan.FromMilliseconds(delay + millis + 30_000), "wa-pingpong");
            }
            finally
            {
                if (counting != null) calls = StopCounter(counter!, counting);
            }
            if (output.ExitCode != 0) throw new InvalidOperationException("wa-pingpong failed (exit " + output.ExitCode + "): " + output.StandardError.Trim());
            return NativeTools.ResultLine(output.StandardOutput, "wa-pingpong");
        }

        private static EchoRun FromClients(Dictionary<string, string> result)
        {
            return new EchoRun
            {
                Echoes = NativeTools.Long(result, "echoes"),
                Seconds = NativeTools.Long(result, "millis") / 1000.0,
                Lost = NativeTools.Long(result, "lost"),
                Wrong = NativeTools.Long(result, "wrong"),
                P50Us = NativeTools.Long(result, "p50_ns") / 1000.0,
                P99Us = NativeTools.Long(result, "p99_ns") / 1000.0,
                P999Us = NativeTools.Long(result, "p999_ns") / 1000.0,
            };
        }

        // ----- counting system calls: perf stat on the kernel's syscall tracepoints, else strace -c -----

        /// <summary>What counts the server's system calls: perf (counted in the kernel, the server runs at full speed) or strace (ptrace, which slows it several times over).</summary>
        internal sealed class CallCounter
        {
            public string Tool = "";
            public string Path = "";
            public bool IsPerf => Tool == "perf";
        }

        // The calls a receive or a send loop makes, counted one by one besides the total.
        private static readonly string[] s_countedCalls =
        {
            "recvfrom", "sendto", "recvmsg", "sendmsg", "epoll_ctl", "recvmmsg", "sendmmsg", "poll", "ppoll", "epoll_wait", "epoll_pwait", "futex", "sched_yield", "getsockopt",
        };

        /// <summary>perf when it can count the syscall tracepoints here (tried once), else strace; null when neither.</summary>
        private static CallCounter? FindCounter()
        {
            string? perf = FindOnPath("perf");
            if (perf != null)
            {
                try
                {
                    Process probe = NativeTools.StartProgram(perf, "stat", "-x,", "-e", "raw_syscalls:sys_enter", "--", "true");
                    NativeTools.ProcessOutput output = NativeTools.FinishProgram(probe, TimeSpan.FromSeconds(30), "perf");
                    if (output.ExitCode == 0 && output.StandardError.Contains("raw_syscalls:sys_enter") && !output.StandardError.Contains("<not"))
                        return new CallCounter { Tool = "perf", Path = perf };
                }
                catch (Exception e) when (e is InvalidOperationException || e is TimeoutException || e is System.ComponentModel.Win32Exception)
                {
                    // perf present but unusable here (permissions): strace next.
                }
            }
            string? strace = FindOnPath("strace");
            return strace != null ? new CallCounter { Tool = "strace", Path = strace } : null;
        }

        private static string? FindOnPath(string program)
        {
            foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':'))
            {
                if (dir.Length == 0) continue;
                string candidate = System.IO.Path.Combine(dir, program);
                if (File.Exists(candidate)) return candidate;
            }
            return null;
        }

        private static readonly Dictionary<Process, string> s_countFiles = new Dictionary<Process, string>();

        /// <summary>Starts counting the system calls of every thread of <paramref name="pid"/>; returns once the counter is attached.</summary>
        private static Process StartCounter(CallCounter counter, int pid)
        {
            string file = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "wa-pingpong-" + Guid.NewGuid().ToString("N") + "." + counter.Tool);
            string target = pid.ToString(CultureInfo.InvariantCulture);
            Process process;
            if (counter.IsPerf)
            {
                string events = "raw_syscalls:sys_enter," + string.Join(",", s_countedCalls.Select(c => "syscalls:sys_enter_" + c));
                process = NativeTools.StartProgram(counter.Path, "stat", "-x,", "-o", file, "-e", events, "-p", target);
            }
            else
            {
                process = NativeTools.StartProgram(counter.Path, "-c", "-f", "-o", file, "-p", target);
            }
            s_countFiles[process] = file;
            var watch = Stopwatch.StartNew();
            // strace: until every thread says it is traced; perf (no sign of it in /proc): a moment for it to open its counters.
            while (counter.IsPerf ? watch.ElapsedMilliseconds < 500 : !AllThreadsTraced(pid))
            {
                if (process.HasExited || watch.Elapsed > TimeSpan.FromSeconds(10))
                {
                    NativeTools.Abandon(process);
                    throw new InvalidOperationException(counter.Tool + " did not attach to process " + pid);
                }
                Thread.Sleep(10);
            }
            return process;
        }

        private static bool AllThreadsTraced(int pid)
        {
            try
            {
                foreach (string task in Directory.GetDirectories("/proc/" + pid.ToString(CultureInfo.InvariantCulture) + "/task"))
                {
                    string status = File.ReadAllText(System.IO.Path.Combine(task, "status"));
                    int at = status.IndexOf("TracerPid:", StringComparison.Ordinal);
                    if (at < 0) return false;
                    string value = status.Substring(at + 10, status.IndexOf('\n', at) - at - 10).Trim();
                    if (value == "0") return false;
                }
                return true;
            }
            catch (IOException)
            {
                return false; // a thread ended while we looked
            }
        }

        /// <summary>Stops the counter (SIGINT: perf writes its counts, strace detaches and writes its table) and returns calls per system call and "total".</summary>
        private static Dictionary<string, long> StopCounter(CallCounter counter, Process process)
        {
            string file = s_countFiles[process];
            s_countFiles.Remove(process);
            // wa-echo ends at STOP, and the counter with it; the library's server process goes on, and the counter is told to stop.
            if (!process.HasExited) Linux.Interrupt(process.Id);
            NativeTools.FinishProgram(process, TimeSpan.FromSeconds(30), counter.Tool);
            string text = File.Exists(file) ? File.ReadAllText(file) : "";
            File.Delete(file);
            Dictionary<string, long> calls = counter.IsPerf ? ParsePerfCounts(text) : ParseStraceSummary(text);
            if (!calls.ContainsKey("total")) throw new InvalidOperationException(counter.Tool + " wrote no total: '" + text.Trim() + "'");
            return calls;
        }

        /// <summary>perf stat -x, lines ("count,unit,event,...") as calls per system call; raw_syscalls:sys_enter is the total.</summary>
        internal static Dictionary<string, long> ParsePerfCounts(string text)
        {
            var calls = new Dictionary<string, long>(StringComparer.Ordinal);
            foreach (string line in text.Split('\n'))
            {
                string[] f = line.Split(',');
                if (f.Length < 3 || !long.TryParse(f[0], NumberStyles.None, CultureInfo.InvariantCulture, out long n)) continue;
                string name = f[2] == "raw_syscalls:sys_enter" ? "total" : f[2].StartsWith("syscalls:sys_enter_", StringComparison.Ordinal) ? f[2].Substring(19) : "";
                if (name.Length > 0) calls[name] = n;
            }
            return calls;
        }

        /// <summary>strace -c's table as calls per system call (and "total").</summary>
        internal static Dictionary<string, long> ParseStraceSummary(string table)
        {
            var calls = new Dictionary<string, long>(StringComparer.Ordinal);
            foreach (string raw in table.Split('\n'))
            {
                string line = raw.Trim();
                if (line.Length == 0 || line[0] == '%' || line[0] == '-') continue;
                string[] f = line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
                // % time, seconds, usecs/call, calls, [errors,] syscall
                if (f.Length < 5 || !long.TryParse(f[3], NumberStyles.None, CultureInfo.InvariantCulture, out long n)) continue;
                calls[f[f.Length - 1]] = n;
            }
            return calls;
        }

        // ----- reports -----

        private static double Median(IEnumerable<double> values)
        {
            double[] v = values.Where(x => !double.IsNaN(x)).OrderBy(x => x).ToArray();
            if (v.Length == 0) return double.NaN;
            return v.Length % 2 == 1 ? v[v.Length / 2] : (v[v.Length / 2 - 1] + v[v.Length / 2]) / 2;
        }

        private static string F(double value, string format) => double.IsNaN(value) ? "–" : value.ToString(format, CultureInfo.InvariantCulture);

        private static string Markdown(Dictionary<string, Row> rows, List<string> names, Options options, string syscallNote)
        {
            var md = new StringBuilder();
            md.Append("### Ping-pong: ").Append(Machine.RuntimeDescription).Append("\n\n");
            md.Append("machine: ").Append(Machine.Describe()).Append("; load average ").Append(Machine.LoadAverage)
              .Append(" (shared, loaded); ").Append(options.Size).Append("-byte datagrams; the server's thread on CPU ").Append(options.ReceiverCpu)
              .Append(", bench/native's wa-pingpong (every client on one thread, epoll) on CPU ").Append(options.SenderCpu).Append("; ")
              .Append(options.PingPongMillis).Append(" ms per row, client count and round, ").Append(options.Rounds)
              .Append(" interleaved rounds, medians. Round trip = from the client's send to its receive of the echo. CPU = the serving thread's, from its ")
              .Append(EchoMeter.WarmEchoes).Append("th echo on (C: from its first receive). ").Append(syscallNote).Append(".\n\n");
            foreach (int n in options.ClientCounts)
            {
                md.Append("**").Append(n).Append(n == 1 ? " client**\n\n" : " clients**\n\n");
                md.Append("| server | echoes/s | × runtime | CPU µs/echo | B/echo | syscalls/echo | p50 µs | p99 µs | p99.9 µs | lost |\n");
                md.Append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
                rows.TryGetValue(Key("runtime", n), out Row? runtime);
                foreach (string name in names)
                {
                    Row r = rows[Key(name, n)];
                    md.Append("| `").Append(name).Append("` | ").Append(F(r.Rate, "N0")).Append(" | ")
                      .Append(runtime != null ? F(r.Rate / runtime.Rate, "F2") : "–").Append(" | ")
                      .Append(F(r.Cpu / 1000, "F2")).Append(" | ").Append(F(r.Bytes, "F0")).Append(" | ")
                      .Append(F(r.SyscallsPerEcho, "F2")).Append(" | ")
                      .Append(F(r.P50, "F0")).Append(" | ").Append(F(r.P99, "F0")).Append(" | ").Append(F(r.P999, "F0")).Append(" | ")
                      .Append(r.Lost + r.Wrong).Append(" |\n");
                }
                md.Append('\n');
                if (names.Any(x => !double.IsNaN(rows[Key(x, n)].SyscallsPerEcho)))
                {
                    foreach (string name in names)
                    {
                        Row r = rows[Key(name, n)];
                        if (r.SyscallDetail.Length > 0) md.Append("- `").Append(name).Append("`: ").Append(r.SyscallDetail).Append('\n');
                    }
                    md.Append('\n');
                }
            }
            md.Append("| server | what it runs |\n|---|---|\n");
            foreach (string name in names) md.Append("| `").Append(name).Append("` | ").Append(rows[Key(name, options.ClientCounts[0])].Description).Append(" |\n");
            return md.ToString();
        }

        private static string Csv(Dictionary<string, Row> rows, List<string> names, Options options)
        {
            var csv = new StringBuilder("runtime,server,clients,rounds,echoes_per_second_median,cpu_ns_per_echo_median,bytes_per_echo,syscalls_per_echo,p50_us,p99_us,p999_us,lost,wrong\n");
            foreach (int n in options.ClientCounts)
            {
                foreach (string name in names)
                {
                    Row r = rows[Key(name, n)];
                    csv.Append(options.RuntimeLabel).Append(',').Append(name).Append(',').Append(n).Append(',').Append(options.Rounds).Append(',')
                       .Append(F(r.Rate, "F0")).Append(',').Append(F(r.Cpu, "F0")).Append(',').Append(double.IsNaN(r.Bytes) ? "" : F(r.Bytes, "F0")).Append(',')
                       .Append(double.IsNaN(r.SyscallsPerEcho) ? "" : F(r.SyscallsPerEcho, "F2")).Append(',')
                       .Append(F(r.P50, "F1")).Append(',').Append(F(r.P99, "F1")).Append(',').Append(F(r.P999, "F1")).Append(',')
                       .Append(r.Lost).Append(',').Append(r.Wrong).Append('\n');
                }
            }
            return csv.ToString();
        }

        /// <summary>One line with the ratios the targets name: syscalls against the runtime's, echoes/s against the runtime's, latency against C's, the awaits against the blocking loop.</summary>
        private static string SummaryLine(Dictionary<string, Row> rows, Options options, string runtime, int syscallClients, List<int> countedClients)
        {
            var line = new StringBuilder("pingpong, ").Append(runtime).Append(": ");
            Row? Get(string name, int n) => rows.TryGetValue(Key(name, n), out Row? r) ? r : null;
            var calls = new List<string>();
            foreach (int n in countedClients)
            {
                Row? lib = Get("library", n), rt = Get("runtime", n);
                if (lib != null && rt != null && !double.IsNaN(lib.SyscallsPerEcho))
                    calls.Add(string.Format(CultureInfo.InvariantCulture, "{0:F2} vs runtime's {1:F2} at {2}", lib.SyscallsPerEcho, rt.SyscallsPerEcho, n));
            }
            if (calls.Count > 0) line.Append("one-call syscalls/echo ").Append(string.Join(", ", calls)).Append(" clients (target <=); ");
            var rates = new List<string>();
            foreach (int n in options.ClientCounts)
            {
                Row? l = Get("library", n), r = Get("runtime", n);
                if (l != null && r != null) rates.Add(n + ": " + (l.Rate / r.Rate).ToString("F2", CultureInfo.InvariantCulture) + "x");
            }
            if (rates.Count > 0) line.Append("one-call echoes/s vs runtime ").Append(string.Join(", ", rates)).Append(Machine.IsMono ? " (target >= 1.5)" : " (target >= 1.0)").Append("; ");
            Row? l100 = Get("library", syscallClients), c100 = Get(CEcho, syscallClients);
            if (l100 != null && c100 != null)
                line.Append(string.Format(CultureInfo.InvariantCulture, "p50/p99 vs C at {0} clients {1:F2}x/{2:F2}x (target <= 1.1); ", syscallClients, l100.P50 / c100.P50, l100.P99 / c100.P99));
            Row? a = Get("library-async", syscallClients);
            if (a != null && l100 != null)
                line.Append(string.Format(CultureInfo.InvariantCulture, "awaits vs blocking loop at {0} clients: echoes/s {1:F2}x, p50 {2:F2}x (target within 1.2); ", syscallClients, a.Rate / l100.Rate, a.P50 / l100.P50));
            Row? ra = Get("runtime-async", syscallClients);
            if (a != null && ra != null)
            {
                line.Append(string.Format(CultureInfo.InvariantCulture, "awaits vs the runtime's awaits at {0} clients: echoes/s {1:F2}x", syscallClients, a.Rate / ra.Rate));
                var awaitCalls = new List<string>();
                foreach (int n in countedClients)
                {
                    Row? an = Get("library-async", n), rn = Get("runtime-async", n);
                    if (an != null && rn != null && !double.IsNaN(an.SyscallsPerEcho) && !double.IsNaN(rn.SyscallsPerEcho))
                        awaitCalls.Add(string.Format(CultureInfo.InvariantCulture, "{0:F2} vs {1:F2} at {2}", an.SyscallsPerEcho, rn.SyscallsPerEcho, n));
                }
                if (awaitCalls.Count > 0) line.Append(", syscalls/echo ").Append(string.Join(", ", awaitCalls)).Append(" clients");
                line.Append("; ");
            }
            double maxBytes = rows.Values.Where(r => r.Name.StartsWith("library", StringComparison.Ordinal)).Select(r => r.Bytes).DefaultIfEmpty(double.NaN).Max();
            line.Append("library ").Append(F(maxBytes, "F0")).Append(" B/echo, ").Append(rows.Values.Sum(r => r.Lost + r.Wrong)).Append(" lost");
            return line.ToString();
        }
    }
}
