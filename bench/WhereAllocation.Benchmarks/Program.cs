using System;
using BenchmarkDotNet.Running;

namespace WhereAllocation.Benchmarks
{
    public static class Program
    {
        /// <summary>
        /// Runs the benchmarks named by BenchmarkDotNet's usual arguments (for example --filter '*Memory*'),
        /// or one of the console modes: --memory-distances [csv path] writes the allocation distances of the
        /// memory experiment (Memory/DistanceReport.cs).
        /// </summary>
        public static int Main(string[] args)
        {
            if (args.Length > 0 && args[0] == "--memory-distances") return Memory.DistanceReport.Run(args);
            BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
            return 0;
        }
    }
}
