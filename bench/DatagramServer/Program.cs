using System;
using System.IO;
using System.Net.Sockets;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The datagram server benchmark: one command line (<see cref="Options"/>), one mode per run. The receive table (drain,
    /// the default, or stream): every way of receiving this build can run, side by side, against the C receivers of
    /// bench/native, and the sweep (batch sizes and modes, count only, the one-call forms); send, scale and pingpong; and the
    /// frame-time benchmark (--frame-times). See README.md and --help.
    /// </summary>
    public static class Program
    {
        public static int Main(string[] args)
        {
            Options options;
            try
            {
                options = Options.Parse(args);
            }
            catch (ArgumentException e)
            {
                Console.Error.WriteLine("DatagramServer: " + e.Message);
                return 2;
            }
            if (options.ShowHelp)
            {
                Console.WriteLine(Options.Help);
                return 0;
            }
            if (options.CheckFormat) return FormatSelfTest.Run() == 0 ? 0 : 3;
            // Frame times need sockets only; every other mode pins threads, reads SO_MEMINFO and runs bench/native's programs.
            if (options.Mode != RunMode.FrameTimes && !Linux.IsLinux)
            {
                Console.Error.WriteLine("DatagramServer: Linux only (CPU pinning, SO_MEMINFO and the C programs of bench/native).");
                return 1;
            }

            try
            {
                switch (options.Mode)
                {
                    case RunMode.Send: return SendMode.Run(options);
                    case RunMode.Scale: return ScaleMode.Run(options);
                    case RunMode.PingPong: return PingPongMode.Run(options);
                    case RunMode.FrameTimes: return FrameTimesScenario.Run(options);
                    default: return ReceiveMode.Run(options); // drain, stream, sweep
                }
            }
            catch (ArgumentException e)
            {
                // An option only the mode can judge (a --methods name it does not have).
                Console.Error.WriteLine("DatagramServer: " + e.Message);
                return 2;
            }
            catch (Exception e) when (e is InvalidOperationException || e is TimeoutException || e is FormatException || e is IOException || e is SocketException)
            {
                Console.WriteLine();
                Console.Error.WriteLine("DatagramServer: " + e.Message);
                return 1;
            }
        }
    }
}
