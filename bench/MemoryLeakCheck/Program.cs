using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using WhereAllocation.Memory;
using WhereAllocation.Tests.Memory;

namespace WhereAllocation.MemoryLeakCheck
{
    /// <summary>
    /// Runs the mixed workload (default 10^6 operations; the first argument changes it), prints every
    /// allocator's accounting, and exits 0 only if nothing is left live. Everything the library allocated
    /// is freed before exit (the instances are disposed, ArenaPool.Shared is trimmed), so a leak checker
    /// watching the process sees any block the library lost.
    /// </summary>
    public static class Program
    {
        public static int Main(string[] args)
        {
            int operations = args.Length > 0 ? int.Parse(args[0]) : 1_000_000;
            if (args.Length > 1 && args[1] == "--canary")
            {
                // Loses one 12345-byte block through the call the library's netstandard2.1 build makes
                // (Marshal.AllocHGlobal), to show what a block lost on that path looks like to the leak checker.
                Marshal.AllocHGlobal(12345);
                Console.WriteLine("canary: lost one 12345-byte block from Marshal.AllocHGlobal on purpose");
            }
            Console.WriteLine("MemoryLeakCheck on " + (Type.GetType("Mono.Runtime") != null ? "Mono" : "CoreCLR") + " (" + RuntimeInformation.FrameworkDescription + "), " + operations + " operations");
            var watch = Stopwatch.StartNew();
            MixedWorkload.Result result = MixedWorkload.Run(operations);
            ArenaPool.Shared.Trim();
            Console.WriteLine(result.ToString());
            Console.WriteLine("elapsed " + watch.ElapsedMilliseconds + " ms");
            bool clean = result.MultiFrameLiveBytes == 0 && result.MultiFrameLiveAllocations == 0 && result.MultiFrameLeaksReported == 0
                && result.PersistentLiveBytes == 0 && result.PersistentLiveAllocations == 0 && result.SharedPersistentLiveBytes == 0
                && result.ArenaRented == 0 && result.ArenaNativeBytesAfterTrim == 0 && ArenaPool.Shared.NativeBytes == 0;
            Console.WriteLine(clean ? "clean: 0 live bytes in every allocator" : "LEAK: some allocator still holds memory");
            return clean ? 0 : 1;
        }
    }
}
