using BenchmarkDotNet.Running;

namespace WhereAllocation.Memory.Benchmarks
{
    public static class Program
    {
        /// <summary>
        /// Runs the benchmarks named by BenchmarkDotNet's usual arguments (for example --filter '*Arena*'), or
        /// --memory-distances [csv path], which writes the allocation distances of the lifetime experiment (DistanceReport.cs).
        /// </summary>
        public static int Main(string[] args)
        {
            if (args.Length > 0 && args[0] == "--memory-distances") return DistanceReport.Run(args);
            BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
            return 0;
        }
    }
}
