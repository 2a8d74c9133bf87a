using System;
using System.IO;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>What the run was measured on: the runtime (CoreCLR or Mono) and the machine.</summary>
    internal static class Machine
    {
        public static readonly bool IsMono = Type.GetType("Mono.Runtime") != null;

        /// <summary>"mono" or "coreclr": the default runtime label in the results.</summary>
        public static string RuntimeLabel => IsMono ? "mono" : "coreclr";

        public static string RuntimeDescription => (IsMono ? "Mono" : "CoreCLR") + " (" + RuntimeInformation.FrameworkDescription + ")";

        /// <summary>The runtime and its version only (".NET 10.0.12", "Mono 6.8.0.105"): for one-line summaries.</summary>
        public static string RuntimeShort
        {
            get
            {
                string d = RuntimeInformation.FrameworkDescription;
                int paren = d.IndexOf(" (", StringComparison.Ordinal);
                return paren > 0 ? d.Substring(0, paren) : d;
            }
        }

        public static string CpuModel
        {
            get
            {
                try
                {
                    foreach (string line in File.ReadAllLines("/proc/cpuinfo"))
                    {
                        if (line.StartsWith("model name", StringComparison.Ordinal))
                        {
                            int colon = line.IndexOf(':');
                            if (colon >= 0) return line.Substring(colon + 1).Trim();
                        }
                    }
                }
                catch (IOException) { }
                catch (UnauthorizedAccessException) { }
                return "unknown CPU";
            }
        }

        public static string Kernel
        {
            get
            {
                try { return "Linux " + File.ReadAllText("/proc/sys/kernel/osrelease").Trim(); }
                catch (IOException) { return RuntimeInformation.OSDescription; }
                catch (UnauthorizedAccessException) { return RuntimeInformation.OSDescription; }
            }
        }

        public static string Describe() => CpuModel + ", " + Environment.ProcessorCount + " CPUs, " + Kernel;

        /// <summary>The load averages over 1, 5 and 15 minutes (/proc/loadavg), as Linux gives them: how busy the shared machine was.</summary>
        public static string LoadAverage
        {
            get
            {
                try
                {
                    string[] parts = File.ReadAllText("/proc/loadavg").Split(' ');
                    return parts.Length >= 3 ? parts[0] + " " + parts[1] + " " + parts[2] : "unknown";
                }
                catch (IOException) { return "unknown"; }
                catch (UnauthorizedAccessException) { return "unknown"; }
            }
        }

        /// <summary>net.core.rmem_max, the cap of SO_RCVBUF requests (the kernel grants up to twice this); -1 when unknown.</summary>
        public static long ReceiveBufferMax
        {
            get
            {
                try { return long.Parse(File.ReadAllText("/proc/sys/net/core/rmem_max").Trim(), System.Globalization.CultureInfo.InvariantCulture); }
                catch (Exception e) when (e is IOException || e is FormatException || e is UnauthorizedAccessException) { return -1; }
            }
        }
    }
}
