using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using WhereAllocation.Memory;

namespace WhereAllocation.Memory.Benchmarks
{
    /// <summary>
    /// The layout half of the article's experiment: 1000 allocations of 4 bytes aligned to 4 from each
    /// allocator, and the distance from each allocation to the previous one, written as CSV
    /// (allocator,index,distance) and summed up as counts per distance bucket (a markdown table on
    /// standard output). Run: <c>dotnet run -c Release -- --memory-distances [csv path]</c>.
    /// </summary>
    public static unsafe class DistanceReport
    {
        private static readonly (string Name, long UpTo)[] Buckets =
        {
            ("= 4 B", 4), ("5-16 B", 16), ("17-64 B", 64), ("65 B-4 KiB", 4096), ("4-64 KiB", 65536), ("64 KiB-1 MiB", 1 << 20), ("> 1 MiB", long.MaxValue),
        };

        public static int Run(string[] args)
        {
            string path = args.Length > 1 ? args[1] : Path.Combine("BenchmarkDotNet.Artifacts", "memory-distances.csv");
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
            const int Count = LifetimeBenchmarks.Count;
            var series = new List<(string Name, long[] Addresses)>();

            using (var frame = new FrameAllocator(16 * 1024))
                series.Add(("frame (16 KiB block)", Collect(Count, () => frame.Allocate((nuint)4, 4))));
            using (var small = new FrameAllocator(1024))
                series.Add(("frame (1 KiB block, overflows)", Collect(Count, () => small.Allocate((nuint)4, 4))));
            using (var multi = new MultiFrameAllocator { CaptureAllocationSites = false })
                series.Add(("multi-frame", Collect(Count, () => multi.Allocate((nuint)4, 4))));
            using (var persistent = new PersistentAllocator())
                series.Add(("persistent", Collect(Count, () => persistent.Allocate((nuint)4, 4))));
            var raw = new List<IntPtr>();
            series.Add(("Marshal.AllocHGlobal", Collect(Count, () =>
            {
                IntPtr p = Marshal.AllocHGlobal(4);
                raw.Add(p);
                return (void*)p;
            })));
            foreach (IntPtr p in raw) Marshal.FreeHGlobal(p);

            var csv = new StringBuilder("allocator,index,distance\n");
            var table = new StringBuilder();
            table.Append("| allocator | ");
            foreach (var bucket in Buckets) table.Append(bucket.Name).Append(" | ");
            table.Append("backwards | median | max |\n|---|");
            for (int i = 0; i < Buckets.Length + 3; i++) table.Append("---:|");
            table.Append('\n');
            foreach (var (name, addresses) in series)
            {
                var counts = new int[Buckets.Length];
                int backwards = 0;
                var magnitudes = new long[addresses.Length - 1];
                for (int i = 1; i < addresses.Length; i++)
                {
                    long distance = addresses[i] - addresses[i - 1];
                    csv.Append(name).Append(',').Append(i).Append(',').Append(distance.ToString(CultureInfo.InvariantCulture)).Append('\n');
                    if (distance < 0) backwards++;
                    long magnitude = Math.Abs(distance);
                    magnitudes[i - 1] = magnitude;
                    for (int b = 0; b < Buckets.Length; b++)
                        if (magnitude <= Buckets[b].UpTo)
                        {
                            counts[b]++;
                            break;
                        }
                }
                Array.Sort(magnitudes);
                table.Append("| ").Append(name).Append(" | ");
                foreach (int c in counts) table.Append(c).Append(" | ");
                table.Append(backwards).Append(" | ").Append(magnitudes[magnitudes.Length / 2]).Append(" | ").Append(magnitudes[magnitudes.Length - 1]).Append(" |\n");
            }
            File.WriteAllText(path, csv.ToString());
            Console.WriteLine("Distances between consecutive allocations (" + Count + " x 4 bytes aligned to 4; |distance| in bytes; " + (Count - 1) + " distances each), " + RuntimeInformation.FrameworkDescription + ":");
            Console.WriteLine();
            Console.Write(table.ToString());
            Console.WriteLine();
            Console.WriteLine("CSV: " + Path.GetFullPath(path));
            return 0;
        }

        private delegate void* Allocation();

        private static long[] Collect(int count, Allocation allocate)
        {
            var addresses = new long[count];
            for (int i = 0; i < count; i++) addresses[i] = (long)allocate();
            return addresses;
        }
    }
}
