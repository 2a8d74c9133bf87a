#nullable enable
using System;
using System.Collections;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// A small bounded set of senders that are not peers yet: the place a server keeps "someone new wrote
    /// to us" until the sender proves it can receive (answers a challenge), so that spoofed source
    /// addresses, which never answer, cost a fixed amount of memory and never reach the peer table.
    /// </summary>
    /// <remarks>
    /// <para>Bounded: it never holds more than <see cref="Capacity"/> senders. A new sender arriving when it
    /// is full pushes out the sender that has been pending longest (first seen earliest), so a flood of
    /// new sources only ever replaces other unanswered sources.</para>
    /// <para>Times are whatever clock you pass to <see cref="Observe"/> (ticks, milliseconds, frame numbers);
    /// the set only compares them. Keys are taken in canonical form (<see cref="EndPointKey.Canonical"/>), as in
    /// <see cref="PeerTable{T}"/>. Nothing here allocates after construction. Not thread safe.</para>
    /// </remarks>
    public sealed class PendingPeerSet : IReadOnlyCollection<PendingPeer>
    {
        private readonly PeerTable<int> _index; // sender -> entry
        private readonly Entry[] _entries;
        private int _oldest = -1; // a list in the order first seen, oldest first
        private int _newest = -1;
        private int _free;         // unused entries, chained through Next
        private int _count;
        private int _version;

        /// <summary>A pending set for up to <paramref name="capacity"/> senders. All memory is allocated here, once.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is not 1..<see cref="PeerTable{T}.MaxCapacity"/>.</exception>
        public PendingPeerSet(int capacity)
        {
            if (capacity < 1 || capacity > PeerTable<int>.MaxCapacity)
                throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "A capacity is 1.." + PeerTable<int>.MaxCapacity + ".");
            _index = new PeerTable<int>(capacity, null);
            _entries = new Entry[capacity];
            for (int i = 0; i < capacity; i++) _entries[i].Next = i + 1 < capacity ? i + 1 : -1;
            _free = 0;
        }

        /// <summary>The most senders the set holds.</summary>
        public int Capacity => _entries.Length;

        /// <summary>How many senders are pending now.</summary>
        public int Count => _count;

        /// <summary>
        /// Records a datagram from <paramref name="key"/> at time <paramref name="now"/>: a new sender becomes
        /// pending (pushing out the oldest when the set is full); a pending one has its last-seen time and
        /// datagram count updated. Allocates nothing.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="key"/> is the empty (default) key.</exception>
        public PendingObserveResult Observe(in EndPointKey key, long now)
        {
            if (key.IsEmpty) throw new ArgumentException("The empty EndPointKey names no sender.", nameof(key));
            EndPointKey k = key.Canonical();
            int known = _index.GetValueRef(k, out bool exists);
            if (exists)
            {
                ref Entry entry = ref _entries[known];
                entry.LastSeen = now;
                if (entry.Datagrams != int.MaxValue) entry.Datagrams++;
                return PendingObserveResult.AlreadyPending;
            }

            PendingObserveResult result = PendingObserveResult.Added;
            if (_count == _entries.Length)
            {
                RemoveEntry(_oldest);
                result = PendingObserveResult.AddedEvictingOldest;
            }

            int e = _free;
            ref Entry fresh = ref _entries[e];
            _free = fresh.Next;
            fresh.Key = k;
            fresh.FirstSeen = now;
            fresh.LastSeen = now;
            fresh.Datagrams = 1;
            fresh.Previous = _newest;
            fresh.Next = -1;
            if (_newest >= 0) _entries[_newest].Next = e;
            else _oldest = e;
            _newest = e;
            _index.TryAdd(k, e);
            _count++;
            _version++;
            return result;
        }

        /// <summary>True when <paramref name="key"/> (in either dual-mode form) is pending. Allocates nothing.</summary>
        public bool Contains(in EndPointKey key) => _index.ContainsKey(key);

        /// <summary>What is known about pending sender <paramref name="key"/> (in either dual-mode form). Allocates nothing.</summary>
        /// <returns>False when the sender is not pending.</returns>
        public bool TryGet(in EndPointKey key, out PendingPeer peer)
        {
            if (_index.TryGet(key, out int e))
            {
                peer = ToPeer(e);
                return true;
            }
            peer = default;
            return false;
        }

        /// <summary>The sender pending longest, the next to be pushed out. Allocates nothing.</summary>
        /// <returns>False when the set is empty.</returns>
        public bool TryPeekOldest(out PendingPeer peer)
        {
            if (_oldest < 0)
            {
                peer = default;
                return false;
            }
            peer = ToPeer(_oldest);
            return true;
        }

        /// <summary>Forgets pending sender <paramref name="key"/> (in either dual-mode form). Allocates nothing.</summary>
        /// <returns>True when it was pending.</returns>
        public bool Remove(in EndPointKey key)
        {
            if (!_index.TryGet(key, out int e)) return false;
            RemoveEntry(e);
            return true;
        }

        /// <summary>Forgets every pending sender first seen before <paramref name="cutoff"/> (for example <c>now - timeout</c>). Allocates nothing.</summary>
        /// <returns>How many were forgotten.</returns>
        public int RemoveFirstSeenBefore(long cutoff)
        {
            int removed = 0;
            int e = _oldest;
            while (e >= 0)
            {
                int next = _entries[e].Next;
                if (_entries[e].FirstSeen < cutoff)
                {
                    RemoveEntry(e);
                    removed++;
                }
                e = next;
            }
            return removed;
        }

        /// <summary>Forgets every pending sender. Allocates nothing.</summary>
        public void Clear()
        {
            while (_oldest >= 0) RemoveEntry(_oldest);
        }

        /// <summary>Enumerates the pending senders, oldest first, without allocating. Any change to the set makes the next step throw.</summary>
        public Enumerator GetEnumerator() => new Enumerator(this);

        IEnumerator<PendingPeer> IEnumerable<PendingPeer>.GetEnumerator() => GetEnumerator();

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        private void RemoveEntry(int e)
        {
            ref Entry entry = ref _entries[e];
            _index.Remove(entry.Key);
            if (entry.Previous >= 0) _entries[entry.Previous].Next = entry.Next;
            else _oldest = entry.Next;
            if (entry.Next >= 0) _entries[entry.Next].Previous = entry.Previous;
            else _newest = entry.Previous;
            entry = default;
            entry.Next = _free;
            _free = e;
            _count--;
            _version++;
        }

        private PendingPeer ToPeer(int e)
        {
            ref Entry entry = ref _entries[e];
            return new PendingPeer(entry.Key, entry.FirstSeen, entry.LastSeen, entry.Datagrams);
        }

        [StructLayout(LayoutKind.Auto)]
        private struct Entry
        {
            public EndPointKey Key;
            public long FirstSeen;
            public long LastSeen;
            public int Datagrams;
            public int Previous;
            public int Next;
        }

        /// <summary>Walks the pending senders, oldest first, without allocating.</summary>
        public struct Enumerator : IEnumerator<PendingPeer>
        {
            private readonly PendingPeerSet _set;
            private readonly int _version;
            private int _next;
            private PendingPeer _current;

            internal Enumerator(PendingPeerSet set)
            {
                _set = set;
                _version = set._version;
                _next = set._oldest;
                _current = default;
            }

            /// <summary>The pending sender at the current step.</summary>
            public PendingPeer Current => _current;

            object IEnumerator.Current => _current;

            /// <summary>Steps to the next pending sender.</summary>
            /// <returns>False when every one has been seen.</returns>
            /// <exception cref="InvalidOperationException">A sender was added or removed since the enumerator was made.</exception>
            public bool MoveNext()
            {
                if (_set._version != _version) throw new InvalidOperationException("The pending set changed during enumeration.");
                if (_next < 0)
                {
                    _current = default;
                    return false;
                }
                _current = _set.ToPeer(_next);
                _next = _set._entries[_next].Next;
                return true;
            }

            /// <summary>Starts the walk again.</summary>
            /// <exception cref="InvalidOperationException">The set changed since the enumerator was made.</exception>
            public void Reset()
            {
                if (_set._version != _version) throw new InvalidOperationException("The pending set changed during enumeration.");
                _next = _set._oldest;
                _current = default;
            }

            /// <summary>Does nothing: the enumerator holds nothing to release.</summary>
            public void Dispose()
            {
            }
        }
    }
}
