#nullable enable
using System;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// An open-addressing hash map from a non-zero pointer-sized key to two pointer-sized values, kept
    /// entirely in native memory (linear probing, Fibonacci hashing, backward-shift deletion, so no
    /// tombstones). It grows by doubling at half load; growing is the only time it calls the heap. Not
    /// thread-safe: its owner holds a lock around it.
    /// </summary>
    internal unsafe struct PointerMap
    {
        internal struct Entry
        {
            internal nuint Key;
            internal nuint A;
            internal nuint B;
        }

        private Entry* _entries;
        private int _capacity;
        private int _bits;
        private int _count;

        internal int Count => _count;
        internal int Capacity => _capacity;
        internal bool IsAllocated => _entries != null;

        /// <summary>Native bytes held by the table itself.</summary>
        internal long TableBytes => (long)_capacity * sizeof(Entry);

        internal void Init(int bits)
        {
            _bits = bits;
            _capacity = 1 << bits;
            _count = 0;
            nuint bytes = (nuint)_capacity * (nuint)sizeof(Entry);
            _entries = (Entry*)NativeHeap.Alloc(bytes);
            new Span<byte>(_entries, (int)bytes).Clear();
        }

        private int Home(nuint key) => (int)(((ulong)key * 0x9E3779B97F4A7C15UL) >> (64 - _bits));

        internal bool TryGet(nuint key, out nuint a, out nuint b)
        {
            int mask = _capacity - 1;
            for (int i = Home(key); ; i = (i + 1) & mask)
            {
                Entry* e = _entries + i;
                if (e->Key == key)
                {
                    a = e->A;
                    b = e->B;
                    return true;
                }
                if (e->Key == 0)
                {
                    a = 0;
                    b = 0;
                    return false;
                }
            }
        }

        /// <summary>Adds a key that is not in the map.</summary>
        internal void Add(nuint key, nuint a, nuint b)
        {
            if ((_count + 1) * 2 > _capacity) Grow();
            Insert(key, a, b);
            _count++;
        }

        private void Insert(nuint key, nuint a, nuint b)
        {
            int mask = _capacity - 1;
            int i = Home(key);
            while (_entries[i].Key != 0) i = (i + 1) & mask;
            Entry* e = _entries + i;
            e->Key = key;
            e->A = a;
            e->B = b;
        }

        private void Grow()
        {
            Entry* old = _entries;
            int oldCapacity = _capacity;
            Init(_bits + 1);
            for (int i = 0; i < oldCapacity; i++)
                if (old[i].Key != 0) Insert(old[i].Key, old[i].A, old[i].B);
            NativeHeap.Free(old);
        }

        internal bool Remove(nuint key, out nuint a, out nuint b)
        {
            int mask = _capacity - 1;
            int i = Home(key);
            while (true)
            {
                if (_entries[i].Key == key) break;
                if (_entries[i].Key == 0)
                {
                    a = 0;
                    b = 0;
                    return false;
                }
                i = (i + 1) & mask;
            }
            a = _entries[i].A;
            b = _entries[i].B;
            // Backward shift: move later members of the probe run into the hole when their home allows it.
            int j = i;
            while (true)
            {
                j = (j + 1) & mask;
                if (_entries[j].Key == 0) break;
                int home = Home(_entries[j].Key);
                bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
                if (movable)
                {
                    _entries[i] = _entries[j];
                    i = j;
                }
            }
            _entries[i].Key = 0;
            _count--;
            return true;
        }

        /// <summary>The entry at <paramref name="index"/> (0 .. Capacity-1), or false when that slot is empty.</summary>
        internal bool TryGetAt(int index, out nuint key, out nuint a, out nuint b)
        {
            Entry* e = _entries + index;
            key = e->Key;
            a = e->A;
            b = e->B;
            return key != 0;
        }

        internal void Dispose()
        {
            if (_entries != null) NativeHeap.Free(_entries);
            _entries = null;
            _capacity = 0;
            _count = 0;
        }
    }
}
