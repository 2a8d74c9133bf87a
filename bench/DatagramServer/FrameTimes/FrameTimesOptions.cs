using System.Collections.Generic;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>The frame-time benchmark's settings (--frame-times), read from the command line by <see cref="Options.Parse"/>.</summary>
    internal sealed class FrameTimesOptions
    {
        /// <summary>The options that go with --frame-times (besides --out); every other one is refused there, and these are refused without it.</summary>
        public static readonly string[] Names = { "--frames", "--frame-rates", "--live-heap-mb", "--frame-clients", "--frame-entities", "--frame-rounds", "--frame-warmup" };

        public int Frames { get; set; } = 360;
        public List<int> Rates { get; set; } = new List<int> { 60, 0 };
        public int LiveHeapMb { get; set; } = 256;
        public int Clients { get; set; } = 8;
        public int Entities { get; set; } = 64;
        public int Rounds { get; set; } = 2;
        public int WarmUpFrames { get; set; } = 30;
        public int Size { get; } = 64;
        public int BufferSize { get; } = 2048;
    }
}
