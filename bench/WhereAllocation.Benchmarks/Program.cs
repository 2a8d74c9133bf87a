using System;
using BenchmarkDotNet.Running;

namespace WhereAllocation.Benchmarks
{
    public static class Program
    {
        /// <summary>
        /// Runs the benchmarks named by BenchmarkDotNet's usual arguments (for example --filter '*Peer*'). The memory
        /// package's benchmarks are in bench/Memory.Benchmarks.
        /// </summary>
        public static int Main(string[] args)
        {
            BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
            return 0;
        }
    }
}
