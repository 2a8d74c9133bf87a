#nullable enable
using System;
using System.Collections;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// A table from sender (<see cref="EndPointKey"/>) to a value of yours, built for the question a
    /// server asks on every datagram: "which peer sent this?". Lookups, adds and removes allocate
    /// nothing; the table never grows past the capacity it was made with; two different endpoints are
    /// never the same peer, whatever their hashes.
    /// </summary>
    /// <remarks>
    /// <para><b>Collision free.</b> The whole key (family, address, port, scope id) is stored and compared;
    /// the hash only chooses where to start looking.</para>
    /// <para><b>Flood resistant.</b> The hash is <see cref="EndPointKey.GetHashCode64"/>, keyed with a random
    /// seed per process, so a sender who picks its source address cannot pick which peers share a bucket.
    /// Open addressing with Robin Hood linear probing over at least 4/3 × <see cref="Capacity"/> slots
    /// (load at most 0.75) keeps probe sequences short; removal shifts the following entries back
    /// instead of leaving tombstones, so a table that churns for days probes as well as a fresh one.</para>
    /// <para><b>Compact probing.</b> The slots' hashes are an array of their own (4 bytes a slot), apart from the keys and
    /// values: a lookup walks the hashes, which a busy server keeps in its caches even with thousands of peers, and reads
    /// one key and its value, where the hash matched.</para>
    /// <para><b>Dual mode.</b> Every key is taken in its canonical form (<see cref="EndPointKey.Canonical"/>):
    /// an IPv4 sender and the same sender seen IPv4-mapped (<c>::ffff:a.b.c.d</c>) on a dual-mode socket
    /// are one peer, stored and enumerated as the IPv4 key. Sending to that key through a dual-mode
    /// socket maps it back (see <see cref="SocketExtensions"/>).</para>
    /// <para><b>Pending senders.</b> <see cref="Pending"/> is a small bounded set for senders that have not
    /// been accepted yet; <see cref="Accept"/> moves one into the table. Spoofed sources that never
    /// answer stay there until pushed out, so they cannot fill the table.</para>
    /// <para>Not thread safe: use one table per thread, or lock around it. Enumerating through the
    /// collection interfaces (LINQ, for example) boxes the enumerator; <c>foreach</c> on the table does not.</para>
    /// </remarks>
    /// <typeparam name="T">The value kept per peer: a connection object, an index, or a struct of state (see <see cref="GetValueRef"/>).</typeparam>
    public sealed partial class PeerTable<T> : IReadOnlyCollection<KeyValuePair<EndPointKey, T>>
    {
        /// <summary>The largest capacity a table can have (2^28 peers).</summary>
        public const int MaxCapacity = 1 << 28;

        // Set in every stored hash so that 0 means an empty slot; bucket indices never reach this bit.
        private const uint Occupied = 0x8000_0000u;

        // Slot i: _hashes[i] is 0 when empty, else the key's hash with the Occupied bit set; _entries[i] holds its key and value.
        // Apart, so that probing reads 4 bytes a slot (16 slots a cache line) and touches an entry only where the hash matched.
        private readonly uint[] _hashes;
        private readonly Entry[] _entries;
        private readonly uint _mask;
        private readonly int _capacity;
        private readonly PendingPeerSet? _pending;
        private int _count;
        private int _version;  // bumped by adds and Clear: an enumerator cannot survive them
        private int _removals; // an enumerator survives one removal per step
        private T _scratch = default!;

        /// <summary>
        /// A table for up to <paramref name="capacity"/> peers, with a pending set of
        /// <c>min(capacity, 256)</c> senders. All memory is allocated here, once.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is not 1..<see cref="MaxCapacity"/>.</exception>
        public PeerTable(int capacity)
            : this(capacity, CheckCapacity(capacity, nameof(capacity)) < 256 ? capacity : 256)
        {
        }

        /// <summary>
        /// A table for up to <paramref name="capacity"/> peers, with a pending set of up to
        /// <paramref name="pendingCapacity"/> senders. All memory is allocated here, once.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> or <paramref name="pendingCapacity"/> is not 1..<see cref="MaxCapacity"/>.</exception>
        public PeerTable(int capacity, int pendingCapacity)
            : this(capacity, new PendingPeerSet(pendingCapacity))
        {
        }

        /// <summary>A table without a pending set: the pending set's own index.</summary>
        internal PeerTable(int capacity, PendingPeerSet? pending)
        {
            CheckCapacity(capacity, nameof(capacity));
            _capacity = capacity;
            int slots = SlotCountFor(capacity);
            _hashes = new uint[slots];
            _entries = new Entry[slots];
            _mask = (uint)slots - 1;
            _pending = pending;
        }

        /// <summary>The most peers the table holds. <see cref="TryAdd"/> answers <see cref="PeerAddResult.Full"/> beyond it.</summary>
        public int Capacity => _capacity;

        /// <summary>How many peers the table holds now.</summary>
        public int Count => _count;

        /// <summary>The bounded set of senders not yet accepted; see <see cref="PendingPeerSet"/> and <see cref="Accept"/>.</summary>
        /// <exception cref="InvalidOperationException">This is an internal table made without one.</exception>
        public PendingPeerSet Pending => _pending ?? throw new InvalidOperationException("This table has no pending set.");

        /// <summary>Finds the peer <paramref name="key"/> (in either dual-mode form). Allocates nothing.</summary>
        /// <returns>True when the peer is in the table; <paramref name="value"/> is then its value.</returns>
        public bool TryGet(in EndPointKey key, [MaybeNullWhen(false)] out T value)
        {
            EndPointKey k = key.Canonical();
            int i = Find(k, Hash(k));
            if (i >= 0)
            {
                value = _entries[i].Value;
                return true;
            }
            value = default!;
            return false;
        }

        /// <summary>True when the peer <paramref name="key"/> (in either dual-mode form) is in the table. Allocates nothing.</summary>
        public bool ContainsKey(in EndPointKey key)
        {
            EndPointKey k = key.Canonical();
            return Find(k, Hash(k)) >= 0;
        }

        /// <summary>
        /// A reference to the value of peer <paramref name="key"/>, to read or change in place (useful when
        /// <typeparamref name="T"/> is a struct). Allocates nothing.
        /// </summary>
        /// <param name="key">The peer, in either dual-mode form.</param>
        /// <param name="exists">True when the peer is in the table. When false, the reference points to a
        /// scratch value that belongs to no peer and is reset to default on every miss.</param>
        /// <remarks>The reference is valid until the next add or remove; those move entries.</remarks>
        public ref T GetValueRef(in EndPointKey key, out bool exists)
        {
            EndPointKey k = key.Canonical();
            int i = Find(k, Hash(k));
            if (i >= 0)
            {
                exists = true;
                return ref _entries[i].Value;
            }
            exists = false;
            _scratch = default!;
            return ref _scratch;
        }

        /// <summary>
        /// Adds peer <paramref name="key"/> (stored in canonical form) with <paramref name="value"/>, unless it is
        /// there already or the table is full. Allocates nothing. An added peer leaves <see cref="Pending"/>.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="key"/> is the empty (default) key.</exception>
        public PeerAddResult TryAdd(in EndPointKey key, T value)
        {
            EndPointKey k = CheckKey(key);
            uint hash = Hash(k);
            uint[] hashes = _hashes;
            uint mask = _mask;
            uint i = hash & mask;
            uint distance = 0;
            while (true)
            {
                uint h = hashes[i];
                if (h == hash && _entries[i].Key.Equals(k)) return PeerAddResult.Exists;
                // Robin Hood: the key would sit no further than the first empty or "richer" slot.
                if (h == 0 || ((i - h) & mask) < distance) break;
                i = (i + 1) & mask;
                distance++;
            }
            if (_count >= _capacity) return PeerAddResult.Full;
            Place(i, distance, hash, new Entry(k, value));
            _count++;
            _version++;
            _pending?.Remove(k);
            return PeerAddResult.Added;
        }

        /// <summary>
        /// Moves a pending sender into the table with <paramref name="value"/>: the step after the sender has
        /// proved it receives what is sent to it (answered a challenge, completed a handshake). Allocates nothing.
        /// </summary>
        /// <returns>
        /// <see cref="PeerAddResult.Added"/> (and no longer pending); <see cref="PeerAddResult.Exists"/> when it is
        /// already a peer (and no longer pending); <see cref="PeerAddResult.Full"/> when the table is full (it stays
        /// pending); <see cref="PeerAddResult.NotPending"/> when it is not pending (nothing changes).
        /// </returns>
        /// <exception cref="ArgumentException"><paramref name="key"/> is the empty (default) key.</exception>
        /// <exception cref="InvalidOperationException">This is an internal table made without a pending set.</exception>
        public PeerAddResult Accept(in EndPointKey key, T value)
        {
            EndPointKey k = CheckKey(key);
            PendingPeerSet pending = Pending;
            if (ContainsKey(k))
            {
                pending.Remove(k);
                return PeerAddResult.Exists;
            }
            if (!pending.Contains(k)) return PeerAddResult.NotPending;
            return TryAdd(k, value); // removes it from the pending set when added
        }

        /// <summary>Removes peer <paramref name="key"/> (in either dual-mode form). Allocates nothing.</summary>
        /// <returns>True when the peer was there.</returns>
        public bool Remove(in EndPointKey key) => Remove(key, out _);

        /// <summary>Removes peer <paramref name="key"/> (in either dual-mode form) and gives its value. Allocates nothing.</summary>
        /// <returns>True when the peer was there.</returns>
        public bool Remove(in EndPointKey key, [MaybeNullWhen(false)] out T value)
        {
            EndPointKey k = key.Canonical();
            int i = Find(k, Hash(k));
            if (i < 0)
            {
                value = default!;
                return false;
            }
            value = _entries[i].Value;
            RemoveAt((uint)i);
            return true;
        }

        /// <summary>Removes every peer (not the pending senders: see <see cref="PendingPeerSet.Clear"/>). Allocates nothing.</summary>
        public void Clear()
        {
            Array.Clear(_hashes, 0, _hashes.Length);
            Array.Clear(_entries, 0, _entries.Length); // no value of a removed peer is kept alive
            _count = 0;
            _version++;
        }

        /// <summary>
        /// Enumerates the peers without allocating (<c>foreach</c> uses this struct enumerator). Removing the
        /// current peer during the loop is allowed; adding a peer, <see cref="Clear"/>, or removing more than
        /// one peer per step makes the next step throw <see cref="InvalidOperationException"/>.
        /// </summary>
        public Enumerator GetEnumerator() => new Enumerator(this);

        IEnumerator<KeyValuePair<EndPointKey, T>> IEnumerable<KeyValuePair<EndPointKey, T>>.GetEnumerator() => GetEnumerator();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        // ----- the probing itself -----

        private uint Hash(in EndPointKey key)
        {
            return (uint)key.GetHashCode64() | Occupied;
        }

        /// <summary>The slot holding <paramref name="key"/>, or -1.</summary>
        /// <remarks>
        /// The walk reads only the hashes until one matches; the key is compared there, and the comparison nearly always
        /// succeeds (31 bits of hash agree), so a processor runs on past it while the entry is still being fetched.
        /// </remarks>
        private int Find(in EndPointKey key, uint hash)
        {
            uint[] hashes = _hashes;
            uint mask = _mask;
            uint i = hash & mask;
            uint distance = 0;
            while (true)
            {
                uint h = hashes[i];
                if (h == hash)
                {
                    if (_entries[i].Key.Equals(key)) return (int)i;
                }
                // An empty slot, or one whose entry is closer to its home than the key would be here,
                // ends the search: Robin Hood insertion would have placed the key before it.
                else if (h == 0 || ((i - h) & mask) < distance)
                {
                    return -1;
                }
                i = (i + 1) & mask;
                distance++;
            }
        }

        /// <summary>Stores <paramref name="carry"/> (hash <paramref name="carryHash"/>) from slot <paramref name="i"/>, at <paramref name="distance"/> from its home, displacing entries nearer to theirs.</summary>
        private void Place(uint i, uint distance, uint carryHash, Entry carry)
        {
            uint[] hashes = _hashes;
            Entry[] entries = _entries;
            uint mask = _mask;
            while (true)
            {
                uint h = hashes[i];
                if (h == 0)
                {
                    hashes[i] = carryHash;
                    entries[i] = carry;
                    return;
                }
                uint theirs = (i - h) & mask;
                if (theirs < distance)
                {
                    Entry displaced = entries[i];
                    hashes[i] = carryHash;
                    entries[i] = carry;
                    carryHash = h;
                    carry = displaced;
                    distance = theirs;
                }
                i = (i + 1) & mask;
                distance++;
            }
        }

        /// <summary>Empties slot <paramref name="i"/> by shifting the entries after it back by one until one is at home or a slot is empty (no tombstones).</summary>
        private void RemoveAt(uint i)
        {
            uint[] hashes = _hashes;
            Entry[] entries = _entries;
            uint mask = _mask;
            while (true)
            {
                uint next = (i + 1) & mask;
                uint h = hashes[next];
                if (h == 0 || ((next - h) & mask) == 0) break;
                hashes[i] = h;
                entries[i] = entries[next];
                i = next;
            }
            hashes[i] = 0;
            entries[i] = default;
            _count--;
            _removals++;
        }

        private int FirstEmptySlot()
        {
            uint[] hashes = _hashes;
            for (int i = 0; i < hashes.Length; i++)
            {
                if (hashes[i] == 0) return i;
            }
            throw new InvalidOperationException("A peer table always keeps an empty slot."); // unreachable: slots > capacity
        }

        // ----- sizes and checks -----

        /// <summary>The power of two at least 4/3 of <paramref name="capacity"/>: the load never exceeds 0.75, and one slot is always empty.</summary>
        internal static int SlotCountFor(int capacity)
        {
            long wanted = ((long)capacity * 4 + 2) / 3;
            int slots = 2;
            while (slots < wanted) slots <<= 1;
            return slots;
        }

        private static int CheckCapacity(int capacity, string name)
        {
            if (capacity < 1 || capacity > MaxCapacity) throw new ArgumentOutOfRangeException(name, capacity, "A capacity is 1.." + MaxCapacity + ".");
            return capacity;
        }

        private static EndPointKey CheckKey(in EndPointKey key)
        {
            if (key.IsEmpty) throw new ArgumentException("The empty EndPointKey names no peer.", nameof(key));
            return key.Canonical();
        }

        /// <summary>An occupied slot's key and value (its hash is in <see cref="_hashes"/>): 32 bytes with an int or a reference.</summary>
        [StructLayout(LayoutKind.Auto)]
        private struct Entry
        {
            public EndPointKey Key;
            public T Value;

            public Entry(in EndPointKey key, T value)
            {
                Key = key;
                Value = value;
            }
        }
    }
}
