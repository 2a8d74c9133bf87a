#nullable enable
using System;
using System.Collections;
using System.Collections.Generic;

namespace WhereAllocation
{
    public sealed partial class PeerTable<T>
    {
        /// <summary>
        /// Walks the peers of a <see cref="PeerTable{T}"/> without allocating. The current peer may be
        /// removed between steps; see <see cref="PeerTable{T}.GetEnumerator"/>.
        /// </summary>
        public struct Enumerator : IEnumerator<KeyValuePair<EndPointKey, T>>
        {
            // The walk starts just after a slot that was empty when it began. Entries only move into slots
            // emptied by a removal, and a removal shifts entries back by one toward it; so no entry can
            // cross that empty slot, and an entry after the current slot stays after it. After one removal,
            // the current slot is looked at again when its entry changed: that is the entry shifted in.
            private readonly PeerTable<T> _table;
            private readonly int _version;
            private int _removals;
            private int _start;
            private int _step; // 0 before the first MoveNext; the slot count + 1 when done
            private KeyValuePair<EndPointKey, T> _current;

            internal Enumerator(PeerTable<T> table)
            {
                _table = table;
                _version = table._version;
                _removals = table._removals;
                _start = 0;
                _step = 0;
                _current = default;
            }

            /// <summary>The peer at the current step, with its key in canonical form.</summary>
            public KeyValuePair<EndPointKey, T> Current => _current;

            object IEnumerator.Current => _current;

            /// <summary>Steps to the next peer.</summary>
            /// <returns>False when every peer has been seen.</returns>
            /// <exception cref="InvalidOperationException">A peer was added, the table was cleared, or more than one peer was removed since the last step.</exception>
            public bool MoveNext()
            {
                PeerTable<T> table = _table;
                if (table._version != _version) throw new InvalidOperationException("The peer table gained peers or was cleared during enumeration.");
                int removed = table._removals - _removals;
                if (removed > 1) throw new InvalidOperationException("More than one peer was removed in one step of an enumeration.");
                _removals = table._removals;

                uint[] hashes = table._hashes;
                Entry[] entries = table._entries;
                int step = _step;
                if (step > hashes.Length) return false;
                if (step == 0)
                {
                    _start = table.FirstEmptySlot();
                    step = 1;
                }
                else
                {
                    int at = (_start + step) & (int)table._mask;
                    bool shiftedIn = removed == 1 && (hashes[at] == 0 || !entries[at].Key.Equals(_current.Key));
                    if (!shiftedIn) step++;
                }

                for (; step <= hashes.Length; step++)
                {
                    int slot = (_start + step) & (int)table._mask;
                    if (hashes[slot] != 0)
                    {
                        _step = step;
                        ref Entry entry = ref entries[slot];
                        _current = new KeyValuePair<EndPointKey, T>(entry.Key, entry.Value);
                        return true;
                    }
                }
                _step = hashes.Length + 1;
                _current = default;
                return false;
            }

            /// <summary>Starts the walk again.</summary>
            /// <exception cref="InvalidOperationException">The table gained peers or was cleared since the enumerator was made.</exception>
            public void Reset()
            {
                if (_table._version != _version) throw new InvalidOperationException("The peer table gained peers or was cleared during enumeration.");
                _removals = _table._removals;
                _step = 0;
                _current = default;
            }

            /// <summary>Does nothing: the enumerator holds nothing to release.</summary>
            public void Dispose()
            {
            }
        }
    }
}
