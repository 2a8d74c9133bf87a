using System;
using System.Globalization;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>How numbers are written in every output: invariant culture, empty for "not applicable".</summary>
    internal static class Numbers
    {
        private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;

        public static string Int(long value) => value.ToString(Invariant);

        public static string Optional(int? value) => value == null ? "" : value.Value.ToString(Invariant);

        public static string Fixed(double value, int decimals) => value.ToString("F" + decimals, Invariant);

        /// <summary>Bytes per datagram or frame: exactly "0" for nothing, otherwise enough digits that a stray byte does not read as 0.</summary>
        public static string Bytes(double? value)
        {
            if (value == null) return "";
            double v = value.Value;
            if (v == 0) return "0";
            if (Math.Abs(v) >= 10) return v.ToString("F1", Invariant);
            return v.ToString("G4", Invariant);
        }

        public static string Ratio(double? value) => value == null ? "" : value.Value.ToString("F2", Invariant);

        /// <summary>1234567 as "1.23 M", 12345 as "12.3 K": for the console and the chart.</summary>
        public static string Short(double value)
        {
            if (value >= 1e6) return (value / 1e6).ToString("F2", Invariant) + " M";
            if (value >= 1e3) return (value / 1e3).ToString("F1", Invariant) + " K";
            return value.ToString("F0", Invariant);
        }
    }
}
