#nullable enable
namespace WhereAllocation
{
    public sealed partial class PeerTable<T>
    {
        // Probe counts for the flood tests, read from the table rather than counted on the hot path.

        /// <summary>The number of slots (a power of two, at least 4/3 of the capacity).</summary>
        internal int SlotCount => _hashes.Length;

        /// <summary>How many slots a lookup of <paramref name="key"/> looks at, found or not: the walk of <see cref="Find"/>, counted.</summary>
        internal int ProbesFor(in EndPointKey key)
        {
            EndPointKey k = key.Canonical();
            uint hash = Hash(k);
            uint mask = _mask;
            uint i = hash & mask;
            uint distance = 0;
            while (true)
            {
                uint h = _hashes[i];
                if (h == hash && _entries[i].Key.Equals(k)) return (int)distance + 1;
                if (h != hash && (h == 0 || ((i - h) & mask) < distance)) return (int)distance + 1;
                i = (i + 1) & mask;
                distance++;
            }
        }

        /// <summary>
        /// The longest and the total displacement of the stored peers from their home slots. A successful lookup
        /// looks at displacement + 1 slots; an unsuccessful one at most the longest displacement + 2.
        /// </summary>
        internal void MeasureDisplacement(out int longest, out long total)
        {
            longest = 0;
            total = 0;
            uint[] hashes = _hashes;
            for (uint i = 0; i < (uint)hashes.Length; i++)
            {
                uint h = hashes[i];
                if (h == 0) continue;
                int d = (int)((i - h) & _mask);
                total += d;
                if (d > longest) longest = d;
            }
        }
    }
}
