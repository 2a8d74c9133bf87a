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
        internal static ulong Hash(ulong m0, ulong m1, ulong m2, ulong k0, ulong k1)
        {
            ulong v0 = k0 ^ 0x736f6d6570736575UL;
            ulong v1 = k1 ^ 0x646f72616e646f6dUL;
            ulong v2 = k0 ^ 0x6c7967656e657261UL;
            ulong v3 = k1 ^ 0x7465646279746573UL;

            Compress(ref v0, ref v1, ref v2, ref v3, m0);
            Compress(ref v0, ref v1, ref v2, ref v3, m1);
            Compress(ref v0, ref v1, ref v2, ref v3, m2);
            Compress(ref v0, ref v1, ref v2, ref v3, 24UL << 56); // the length block of a 24-byte message

            v2 ^= 0xff;
            Round(ref v0, ref v1, ref v2, ref v3);
            Round(ref v0, ref v1, ref v2, ref v3);
            Round(ref v0, ref v1, ref v2, ref v3);
            return v0 ^ v1 ^ v2 ^ v3;
        }

        private static void Compress(ref ulong v0, ref ulong v1, ref ulong v2, ref ulong v3, ulong m)
        {
            v3 ^= m;
            Round(ref v0, ref v1, ref v2, ref v3);
            v0 ^= m;
        }

        private static void Round(ref ulong v0, ref ulong v1, ref ulong v2, ref ulong v3)
        {
            v0 += v1; v1 = Rotl(v1, 13); v1 ^= v0; v0 = Rotl(v0, 32);
            v2 += v3; v3 = Rotl(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Rotl(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Rotl(v1, 17); v1 ^= v2; v2 = Rotl(v2, 32);
        }

        private static ulong Rotl(ulong x, int b) => (x << b) | (x >> (64 - b));
    }
}
