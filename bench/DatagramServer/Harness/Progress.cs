using System;
using System.Diagnostics;
using System.Globalization;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Shows a running count while a method runs: one line rewritten in place on a terminal, a new line
    /// per second when the output goes to a file or a pipe. Only the controlling thread writes here.
    /// </summary>
    internal sealed class Progress
    {
        private readonly bool _terminal = !Console.IsOutputRedirected;
        private readonly Stopwatch _sinceLine = Stopwatch.StartNew();
        private int _width;

        public void Show(string method, string text)
        {
            string line = "  " + (method + " ").PadRight(32) + text; // a label longer than the column still gets a space
            if (_terminal)
            {
                Console.Write("\r" + line.PadRight(_width));
                _width = Math.Max(_width, line.Length);
            }
            else if (_sinceLine.ElapsedMilliseconds >= 1000)
            {
                Console.WriteLine(line);
                _sinceLine.Restart();
            }
        }

        /// <summary>Replaces the running line with the final one.</summary>
        public void Done(string method, string text)
        {
            string line = "  " + (method + " ").PadRight(32) + text; // a label longer than the column still gets a space
            if (_terminal) Console.WriteLine("\r" + line.PadRight(_width));
            else Console.WriteLine(line);
            _width = 0;
            _sinceLine.Restart();
        }

        public static string Count(long n) => n.ToString("N0", CultureInfo.InvariantCulture);
    }
}
