#nullable enable
using System.Security.Cryptography;

namespace WhereAllocation
{
    /// <summary>
    /// SipHash-1-3 over three 64-bit words with a key drawn at random once per process, so that a
    /// sender who chooses its source address cannot predict which endpoints share a bucket.
    /// </summary>
    internal static class SeededHash
    {
        private static readonly ulong K0;
        private static readonly ulong K1;

        static SeededHash()
        {
            var seed = new byte[16];
            using (var rng = RandomNumberGenerator.Create()) rng.GetBytes(seed);
            K0 = System.BitConverter.ToUInt64(seed, 0);
            K1 = System.BitConverter.ToUInt64(seed, 8);
        }

        internal static ulong Hash(ulong m0, ulong m1, ulong m2)
        {
            return Hash(m0, m1, m2, K0, K1);
        }

        /// <summary>SipHash-1-3 of the 24-byte message (m0, m1, m2) under the key (k0, k1).</summary>
        /// <remarks>
        /// Every SipRound is written out on the four locals. As helpers taking the state by reference, CoreCLR's fully
        /// optimising compiler (no tiering) and Mono left them as calls, with the state in memory: a hash cost about 45 ns
        /// instead of 10 on .NET 10 here, the most of a lookup in a small peer table.
        /// </remarks>
        internal static ulong Hash(ulong m0, ulong m1, ulong m2, ulong k0, ulong k1)
        {
            ulong v0 = k0 ^ 0x736f6d6570736575UL;
            ulong v1 = k1 ^ 0x646f72616e646f6dUL;
            ulong v2 = k0 ^ 0x6c7967656e657261UL;
            ulong v3 = k1 ^ 0x7465646279746573UL;

            // Compression: one round per 8-byte block (m0, m1, m2, then the length block of a 24-byte message).
            v3 ^= m0;
            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);
            v0 ^= m0;

            v3 ^= m1;
            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);
            v0 ^= m1;

            v3 ^= m2;
            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);
            v0 ^= m2;

            const ulong LengthBlock = 24UL << 56;
            v3 ^= LengthBlock;
            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);
            v0 ^= LengthBlock;

            // Finalisation: three rounds.
            v2 ^= 0xff;
            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);

            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);

            v0 += v1; v1 = (v1 << 13) | (v1 >> 51); v1 ^= v0; v0 = (v0 << 32) | (v0 >> 32);
            v2 += v3; v3 = (v3 << 16) | (v3 >> 48); v3 ^= v2;
            v0 += v3; v3 = (v3 << 21) | (v3 >> 43); v3 ^= v0;
            v2 += v1; v1 = (v1 << 17) | (v1 >> 47); v1 ^= v2; v2 = (v2 << 32) | (v2 >> 32);

            return v0 ^ v1 ^ v2 ^ v3;
        }
    }
}
