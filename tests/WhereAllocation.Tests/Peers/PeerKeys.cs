using System;
using System.Collections.Generic;

namespace WhereAllocation.Tests
{
    /// <summary>Endpoint keys built directly (no traffic) for the peer table tests.</summary>
    public static class PeerKeys
    {
        /// <summary>
        /// <paramref name="count"/> distinct loopback keys whose home slot in a table of <paramref name="slots"/> slots is one of
        /// the <paramref name="width"/> slots from <paramref name="first"/> on, wrapping round the end: searched under the hash
        /// the table itself uses (seeded per process), so a test makes clusters without replacing the table's hash.
        /// </summary>
        public static EndPointKey[] WithHomes(int count, int first, int width, int slots)
        {
            var keys = new EndPointKey[count];
            uint mask = (uint)slots - 1;
            int n = 0;
            for (int port = 1; n < count && port < 65536; port++)
            {
                for (int host = 1; n < count && host < 65536; host++)
                {
                    EndPointKey key = EndPointKey.IPv4(127, (byte)(port >> 8), (byte)(host >> 8), (byte)host, port);
                    uint home = (uint)key.GetHashCode64() & mask;
                    if (((home - (uint)first) & mask) < (uint)width) keys[n++] = key;
                }
            }
            if (n < count) throw new InvalidOperationException("Only " + n + " keys found with homes " + first + ".." + (first + width - 1) + " of " + slots + ".");
            return keys;
        }

        /// <summary>
        /// <paramref name="count"/> distinct IPv4 keys spread over 127.0.0.0/8 and ports 1..65535, the same
        /// ones for the same <paramref name="seed"/>. Neighbours are included on purpose: every fourth key
        /// shares the previous key's address (another port), every fourth its port (the next address).
        /// </summary>
        public static EndPointKey[] DistinctLoopback(int count, int seed)
        {
            var random = new Random(seed);
            var seen = new HashSet<EndPointKey>();
            var keys = new EndPointKey[count];
            int n = 0;
            EndPointKey previous = default;
            byte pb = 0, pc = 0, pd = 0;
            while (n < count)
            {
                byte b, c, d;
                int port;
                int kind = n % 4;
                if (kind == 1 && n > 0)
                {
                    b = pb; c = pc; d = pd;
                    port = random.Next(1, 65536);
                }
                else if (kind == 2 && n > 0)
                {
                    b = pb; c = pc; d = (byte)(pd + 1);
                    port = previous.Port;
                }
                else
                {
                    b = (byte)random.Next(256); c = (byte)random.Next(256); d = (byte)random.Next(256);
                    port = random.Next(1, 65536);
                }
                EndPointKey key = EndPointKey.IPv4(127, b, c, d, port);
                if (!seen.Add(key)) continue;
                keys[n++] = key;
                previous = key;
                pb = b; pc = c; pd = d;
            }
            return keys;
        }

        /// <summary>A plain unseeded hash of the kind older code used: the IPv4 address as a host-order integer XOR the port.</summary>
        public static uint XorHash(in EndPointKey key)
        {
            var bytes = new byte[16];
            int n = key.CopyAddressBytes(bytes);
            uint folded = 0;
            for (int i = 0; i < n; i += 4) folded ^= (uint)(bytes[i] << 24 | bytes[i + 1] << 16 | bytes[i + 2] << 8 | bytes[i + 3]);
            return folded ^ (uint)key.Port;
        }

        /// <summary>
        /// <paramref name="count"/> distinct IPv4 keys in 127.0.0.0/8 whose <see cref="XorHash"/> agrees in its
        /// low 18 bits with every other's: under that hash they all share one bucket of any power-of-two table
        /// up to 2^18 slots. <paramref name="variant"/> (0..31) picks a different, disjoint family; at most 2^17 keys.
        /// </summary>
        public static EndPointKey[] XorCollidingIPv4(int count, int variant)
        {
            // Address bits 0..15 and 18..23 are free (2^22 choices); bits 16..17 are fixed and the port is
            // chosen so that (address ^ port) has the same low 18 bits for all.
            const uint Target = 0x2_5A5Au; // the shared low 18 bits
            if (count > 1 << 17) throw new ArgumentOutOfRangeException(nameof(count));
            if ((uint)variant > 31) throw new ArgumentOutOfRangeException(nameof(variant));
            var keys = new EndPointKey[count];
            for (int i = 0; i < count; i++)
            {
                uint low16 = (uint)i & 0xFFFF;
                uint high6 = ((uint)i >> 16) | ((uint)variant << 1); // address bits 18..23
                uint address = 0x7F00_0000u | (high6 << 18) | (Target & 0x3_0000u) | low16;
                int port = (int)((address ^ Target) & 0xFFFF);
                keys[i] = EndPointKey.IPv4((byte)(address >> 24), (byte)(address >> 16), (byte)(address >> 8), (byte)address, port);
            }
            return keys;
        }

        /// <summary>
        /// <paramref name="count"/> distinct IPv6 keys whose <see cref="XorHash"/> (the four address words
        /// XOR-folded, XOR the port) is one and the same 32-bit value for all of them.
        /// </summary>
        public static EndPointKey[] XorCollidingIPv6(int count, int variant)
        {
            const uint Target = 0xC011_1DE5u;
            var keys = new EndPointKey[count];
            var address = new byte[16];
            for (int i = 0; i < count; i++)
            {
                // fd00:: unique-local prefix in word 0, i in word 1, the variant in word 2, word 3 balancing.
                uint w0 = 0xFD00_0000u, w1 = (uint)i, w2 = (uint)variant;
                int port = 1000 + i % 50_000;
                uint w3 = Target ^ w0 ^ w1 ^ w2 ^ (uint)port;
                Put(address, 0, w0); Put(address, 4, w1); Put(address, 8, w2); Put(address, 12, w3);
                keys[i] = EndPointKey.IPv6(address, port);
            }
            return keys;
        }

        private static void Put(byte[] destination, int offset, uint word)
        {
            destination[offset] = (byte)(word >> 24);
            destination[offset + 1] = (byte)(word >> 16);
            destination[offset + 2] = (byte)(word >> 8);
            destination[offset + 3] = (byte)word;
        }
    }
}
