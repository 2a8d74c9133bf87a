using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Runs one of the C receivers (wa-recv) against the same sender, datagram size, SO_RCVBUF and CPUs as
    /// the C# methods. wa-recv checks every datagram itself and counts drops with SO_RXQ_OVFL and SO_MEMINFO.
    /// In drain mode each round is a new wa-recv, stopped (SIGSTOP) while the sender fills its queue.
    /// </summary>
    internal static class NativeRunner
    {
        private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(120);
        private static int s_readyFiles;

        /// <summary>One run of <paramref name="method"/>: <c>--count</c> datagrams, <paramref name="inject"/> corrupted ones sent first.</summary>
        public static ResultRow Run(NativeMethod method, Options options, NativeTools tools, int inject, Progress progress)
        {
            bool drain = options.Drains;
            var row = new ResultRow(options.RuntimeLabel, options.ModeName, method.Name) { Injected = inject };
            using var injector = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            injector.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            long roundSize = drain ? options.DrainRound : options.Count;
            int rounds = 0;
            for (long first = 0; first < options.Count; first += roundSize)
            {
                long n = Math.Min(roundSize, options.Count - first);
                long extra = first == 0 ? inject : 0;
                string ready = Path.Combine(Path.GetTempPath(), "wa-recv-" + Process.GetCurrentProcess().Id + "-" + Interlocked.Increment(ref s_readyFiles) + ".port");
                Process receiver = tools.StartReceiver(method.WaRecvMethod, n + extra, first, options.BufferSize, options.ReceiverCpu,
                    options.ReceiveBuffer, IdleMs(options, extra), 60, ready, !method.ChecksContent);
                bool finished = false;
                try
                {
                    int port = NativeTools.WaitForPort(receiver, ready, TimeSpan.FromSeconds(10));
                    var to = new IPEndPoint(IPAddress.Loopback, port);
                    if (drain) Linux.Suspend(receiver.Id);
                    if (extra > 0) ManagedRunner.Inject(injector, to, options.Size, inject);
                    Process sender = tools.StartSender(port, n, options.Size, first, options.SenderCpu, options.SenderMode);
                    var watch = Stopwatch.StartNew();
                    while (!sender.WaitForExit(200))
                        progress.Show(method.Name, "sending, " + watch.Elapsed.TotalSeconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture) + " s");
                    SenderResult sent = NativeTools.FinishSender(sender, Timeout);
                    if (drain) Linux.Resume(receiver.Id);
                    Dictionary<string, string> result = NativeTools.FinishReceiver(receiver, Timeout, out string diagnostics);
                    finished = true;
                    Add(row, sent, result, diagnostics);
                    rounds++;
                    if (drain) progress.Show(method.Name, Progress.Count(row.Read) + " read in " + rounds + " rounds");
                }
                finally
                {
                    // On a failure before wa-recv finished (FinishReceiver disposes it), do not leave it behind, stopped.
                    if (!finished) NativeTools.Abandon(receiver);
                    File.Delete(ready);
                }
            }
            return row;
        }

        /// <summary>
        /// wa-recv stops this long after its last datagram. Its clock starts at the first datagram, not when the
        /// sender finishes as the C# runs' does, so it needs room for a sender that is slow to start or is
        /// briefly descheduled on a busy machine: at least 1 s, and 3 s when injected datagrams arrive before
        /// the sender has even started. It only costs time at the end of a run that had drops.
        /// </summary>
        private static int IdleMs(Options options, long injected) => Math.Max(options.IdleMs, injected > 0 ? 3000 : 1000);

        private static void Add(ResultRow row, SenderResult sent, Dictionary<string, string> r, string diagnostics)
        {
            long read = NativeTools.Long(r, "received");
            long corrupt = NativeTools.Long(r, "corrupt");
            long duplicate = NativeTools.Long(r, "duplicate");
            long outOfRange = NativeTools.Long(r, "out_of_range");
            row.Sent += sent.Sent;
            row.SenderMode = sent.Mode;
            row.Read += read;
            row.Corrupt += corrupt;
            row.Duplicate += duplicate;
            row.OutOfRange += outOfRange;
            row.Received += read - corrupt - duplicate - outOfRange;
            row.KernelDrops += NativeTools.Long(r, "kernel_drops");
            row.Seconds += NativeTools.Double(r, "seconds");
            row.ReceiveBufferGranted = (int)NativeTools.Long(r, "rcvbuf_granted");
            row.CpuNanoseconds = (row.CpuNanoseconds ?? 0) + NativeTools.CpuNanoseconds(diagnostics, "wa-recv");
            string stop = diagnostics.Contains("stopped by count") ? "count" : diagnostics.Contains("stopped by idle") ? "idle" : "max-seconds";
            row.StoppedBy = row.StoppedBy.Length == 0 || row.StoppedBy == stop ? stop : "mixed";
        }
    }
}
