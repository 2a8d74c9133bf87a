#nullable enable
namespace WhereAllocation.Memory
{
    /// <summary>The natural alignment of an unmanaged type: C# has no alignof, so it is measured as the offset of T after one byte.</summary>
    internal static unsafe class AlignOf<T> where T : unmanaged
    {
        private struct Probe
        {
#pragma warning disable CS0649 // never written: only its layout is read
            internal byte Leading;
            internal T Value;
#pragma warning restore CS0649
        }

        internal static readonly nuint Value = Compute();

        private static nuint Compute()
        {
            nuint alignment = (nuint)(sizeof(Probe) - sizeof(T));
            if (alignment == 0) alignment = 1;
            return alignment > (nuint)NativeAllocator.MaxAlignment ? (nuint)NativeAllocator.MaxAlignment : alignment;
        }
    }
}
