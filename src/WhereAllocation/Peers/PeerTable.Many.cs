#nullable enable
using System;
using System.Runtime.InteropServices;
#if NET8_0_OR_GREATER
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;
#endif

namespace WhereAllocation
{
    public sealed partial class PeerTable<T>
    {
        // Keys hashed and fetched ahead per step of TryGetMany: a receive batch's worth, on the stack.
        private const int ManyStep = 64;

        /// <summary>
        /// Finds the peers of several keys at once (a received batch's senders, say): <paramref name="found"/>[i] tells
        /// whether <paramref name="keys"/>[i] (in either dual-mode form) is in the table, and <paramref name="values"/>[i]
        /// is then its value (else default). Allocates nothing.
        /// </summary>
        /// <remarks>
        /// The same answers as <see cref="TryGet"/> key by key. In a table of thousands of peers each lookup may wait for
        /// the memory of its slot; this hashes a step of up to 64 keys first and asks for each one's first slot (its
        /// 4-byte hash and its entry) before looking any of them up, so that the waits overlap instead of following
        /// each other. On x86 under .NET 8+ the asking is a prefetch instruction; elsewhere an ordinary read.
        /// </remarks>
        /// <returns>How many of the keys were found.</returns>
        /// <exception cref="ArgumentException"><paramref name="values"/> or <paramref name="found"/> is shorter than <paramref name="keys"/>.</exception>
        public int TryGetMany(ReadOnlySpan<EndPointKey> keys, Span<T> values, Span<bool> found)
        {
            if (values.Length < keys.Length) throw new ArgumentException("values is shorter than keys.", nameof(values));
            if (found.Length < keys.Length) throw new ArgumentException("found is shorter than keys.", nameof(found));
            Span<EndPointKey> canonical = stackalloc EndPointKey[ManyStep];
            Span<uint> hashes = stackalloc uint[ManyStep];
            uint mask = _mask;
            uint touched = 0;
            int hits = 0;
            for (int start = 0; start < keys.Length; start += ManyStep)
            {
                int n = Math.Min(ManyStep, keys.Length - start);
                for (int i = 0; i < n; i++)
                {
                    // Not keys[start + i]: Mono 6.8 has no ReadOnlySpan indexer (see CONTRIBUTING).
                    EndPointKey k = MemoryMarshal.GetReference(keys.Slice(start + i)).Canonical();
                    uint hash = Hash(k);
                    canonical[i] = k;
                    hashes[i] = hash;
                }
                // A loop of its own, short, so that a processor has many of these fetches under way at once: where they
                // are ordinary reads, a fetch between two hashes would hold up everything behind it once the processor's
                // window of instructions fills with the hash that follows.
                for (int i = 0; i < n; i++) touched += Touch(hashes[i] & mask);
                for (int i = 0; i < n; i++)
                {
                    int slot = Find(canonical[i], hashes[i]);
                    if (slot >= 0)
                    {
                        values[start + i] = _entries[slot].Value;
                        found[start + i] = true;
                        hits++;
                    }
                    else
                    {
                        values[start + i] = default!;
                        found[start + i] = false;
                    }
                }
            }
            _touchSink = touched;
            return hits;
        }

        // Where ordinary reads stand for prefetches, their sum is kept here so that no compiler drops them.
        private uint _touchSink;

        /// <summary>Asks for slot <paramref name="slot"/>'s hash and entry to be brought into the caches, without waiting for them.</summary>
        private unsafe uint Touch(uint slot)
        {
#if NET8_0_OR_GREATER
            if (Sse.IsSupported)
            {
                Sse.Prefetch0(Unsafe.AsPointer(ref _hashes[slot]));
                Sse.Prefetch0(Unsafe.AsPointer(ref _entries[slot]));
                return 0;
            }
#endif
            return _hashes[slot] + _entries[slot].Key.ScopeId;
        }
    }
}
