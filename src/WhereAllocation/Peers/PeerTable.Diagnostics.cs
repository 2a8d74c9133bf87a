namespace WhereAllocation
{
    public sealed partial class PeerTable<T>
    {
        // Probe counts for the flood tests, read from the table rather than counted on the hot path.

        /// <summary>The number of slots (a power of two, at least 4/3 of the capacity).</summary>
        internal int SlotCount => _slots.Length;

        /// <summary>How many slots a lookup of <paramref name="key"/> looks at, found or not.</summary>
        internal int ProbesFor(in EndPointKey key)
        {
            EndPointKey k = key.Canonical();
            Find(k, Hash(k), out int probes);
            return probes;
        }

        /// <summary>
        /// The longest and the total displacement of the stored peers from their home slots. A successful lookup
        /// looks at displacement + 1 slots; an unsuccessful one at most the longest displacement + 2.
        /// </summary>
        internal void MeasureDisplacement(out int longest, out long total)
        {
            longest = 0;
            total = 0;
            Slot[] slots = _slots;
            for (uint i = 0; i < (uint)slots.Length; i++)
            {
                uint h = slots[i].Hash;
                if (h == 0) continue;
                int d = (int)((i - h) & _mask);
                total += d;
                if (d > longest) longest = d;
            }
        }
    }
}
