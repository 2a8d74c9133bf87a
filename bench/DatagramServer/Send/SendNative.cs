using System;
using System.Diagnostics;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>The bare Linux calls of the send rows (raw-sendto, raw-sendmmsg) and the receivers' drain, and the C program's runner.</summary>
    internal static unsafe class SendNative
    {
        public const int MsgDontWait = 0x40;

        [DllImport("libc", EntryPoint = "sendto", SetLastError = true)]
        public static extern nint SendTo(int socket, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        [DllImport("libc", EntryPoint = "sendmmsg", SetLastError = true)]
        public static extern int SendMMsg(int socket, RawCalls.MMsgHdr* messages, uint count, int flags);

        [DllImport("libc", EntryPoint = "recv", SetLastError = true)]
        public static extern nint Recv(int socket, byte* buffer, nuint length, int flags);

        /// <summary>Destination <paramref name="index"/>'s address: 127.1.(i / 250).(i % 250 + 1), as bench/native's wa-fanout lays them out.</summary>
        public static System.Net.IPAddress DestinationAddress(int index) =>
            new System.Net.IPAddress(new byte[] { 127, 1, (byte)(index / 250), (byte)(index % 250 + 1) });

        /// <summary>Runs a C program to its end and returns its standard output's key=value pairs; throws when it fails.</summary>
        public static System.Collections.Generic.Dictionary<string, string> RunC(string path, string arguments, int seconds)
        {
            var start = new ProcessStartInfo(path, arguments) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            using (Process process = Process.Start(start) ?? throw new InvalidOperationException("could not start " + path))
            {
                var error = process.StandardError.ReadToEndAsync();
                string output = process.StandardOutput.ReadToEnd();
                if (!process.WaitForExit(seconds * 1000))
                {
                    process.Kill();
                    throw new TimeoutException(path + " did not end within " + seconds + " s");
                }
                if (process.ExitCode != 0) throw new InvalidOperationException(path + " " + arguments + " exited with " + process.ExitCode + ": " + output + error.Result);
                var values = new System.Collections.Generic.Dictionary<string, string>();
                foreach (string part in output.Trim().Split(' '))
                {
                    int eq = part.IndexOf('=');
                    if (eq > 0) values[part.Substring(0, eq)] = part.Substring(eq + 1);
                }
                return values;
            }
        }

        public static double Median(System.Collections.Generic.List<double> values)
        {
            var sorted = new System.Collections.Generic.List<double>(values);
            sorted.Sort();
            int n = sorted.Count;
            if (n == 0) return double.NaN;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
    }
}
