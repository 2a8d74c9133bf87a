using System;
using System.Globalization;
using System.IO;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The kernel's system-wide UDP receive error counters (Linux): <c>Udp: InErrors, RcvbufErrors</c> from
    /// /proc/net/snmp and <c>Udp6InErrors, Udp6RcvbufErrors</c> from /proc/net/snmp6. They count every socket
    /// in the network namespace, so other processes' drops show in them too. -1 where a file cannot be read.
    /// </summary>
    internal readonly struct UdpCounters
    {
        private UdpCounters(long inErrors4, long rcvbufErrors4, long inErrors6, long rcvbufErrors6)
        {
            InErrors4 = inErrors4;
            RcvbufErrors4 = rcvbufErrors4;
            InErrors6 = inErrors6;
            RcvbufErrors6 = rcvbufErrors6;
        }

        internal long InErrors4 { get; }
        internal long RcvbufErrors4 { get; }
        internal long InErrors6 { get; }
        internal long RcvbufErrors6 { get; }

        internal static UdpCounters Zero => new UdpCounters(0, 0, 0, 0);

        internal static UdpCounters Read()
        {
            long in4 = -1, buf4 = -1, in6 = -1, buf6 = -1;
            try
            {
                // Two "Udp:" lines: the names, then the values.
                string[] lines = File.ReadAllLines("/proc/net/snmp");
                for (int i = 0; i + 1 < lines.Length; i++)
                {
                    if (!lines[i].StartsWith("Udp: ", StringComparison.Ordinal) || !lines[i + 1].StartsWith("Udp: ", StringComparison.Ordinal)) continue;
                    string[] names = lines[i].Split(' '), values = lines[i + 1].Split(' ');
                    for (int k = 1; k < names.Length && k < values.Length; k++)
                    {
                        if (names[k] == "InErrors") in4 = long.Parse(values[k], CultureInfo.InvariantCulture);
                        if (names[k] == "RcvbufErrors") buf4 = long.Parse(values[k], CultureInfo.InvariantCulture);
                    }
                    break;
                }
            }
            catch (IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
            try
            {
                foreach (string line in File.ReadAllLines("/proc/net/snmp6"))
                {
                    string[] parts = line.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
                    if (parts.Length != 2) continue;
                    if (parts[0] == "Udp6InErrors") in6 = long.Parse(parts[1], CultureInfo.InvariantCulture);
                    if (parts[0] == "Udp6RcvbufErrors") buf6 = long.Parse(parts[1], CultureInfo.InvariantCulture);
                }
            }
            catch (IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
            return new UdpCounters(in4, buf4, in6, buf6);
        }

        /// <summary>after − before per counter; -1 where either reading failed.</summary>
        internal static UdpCounters Delta(UdpCounters before, UdpCounters after) => new UdpCounters(
            Sub(after.InErrors4, before.InErrors4), Sub(after.RcvbufErrors4, before.RcvbufErrors4),
            Sub(after.InErrors6, before.InErrors6), Sub(after.RcvbufErrors6, before.RcvbufErrors6));

        internal static UdpCounters Sum(UdpCounters a, UdpCounters b) => new UdpCounters(
            Add(a.InErrors4, b.InErrors4), Add(a.RcvbufErrors4, b.RcvbufErrors4),
            Add(a.InErrors6, b.InErrors6), Add(a.RcvbufErrors6, b.RcvbufErrors6));

        private static long Sub(long after, long before) => after < 0 || before < 0 ? -1 : after - before;

        private static long Add(long a, long b) => a < 0 || b < 0 ? -1 : a + b;

        internal static string Pair(long inErrors, long rcvbufErrors)
            => (inErrors < 0 ? "?" : inErrors.ToString(CultureInfo.InvariantCulture)) + "/" + (rcvbufErrors < 0 ? "?" : rcvbufErrors.ToString(CultureInfo.InvariantCulture));
    }
}
