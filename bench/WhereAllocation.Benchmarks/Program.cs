using BenchmarkDotNet.Running;

namespace WhereAllocation.Benchmarks
{
    public static class Program
    {
        /// <summary>Runs the benchmarks named by BenchmarkDotNet's usual arguments (for example --filter '*Memory*').</summary>
        public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
