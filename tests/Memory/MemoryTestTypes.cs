using System.Runtime.InteropServices;

namespace WhereAllocation.Tests.Memory
{
    /// <summary>An unmanaged struct with 8-byte alignment and 24 bytes of size, for typed views.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Sample24
    {
        public long Id;
        public double Value;
        public int Flags;
    }

    /// <summary>A 3-byte struct with alignment 1.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct Rgb
    {
        public byte R, G, B;
    }
}
