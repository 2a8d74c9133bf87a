using System;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>What <see cref="SoakDatagram.Verify"/> found in a received datagram.</summary>
    internal enum Verdict
    {
        /// <summary>Intact: header, length, pattern and checksum as written.</summary>
        Intact,
        /// <summary>Anything else: wrong magic, segment, sender, sequence, length, pattern or checksum.</summary>
        Corrupt,
    }

    /// <summary>
    /// The self-checking datagram, little-endian:
    /// <code>
    ///  0  u32  magic "SOAK"
    ///  4  u16  segment id        (a datagram of another segment is corrupt)
    ///  6  u16  sender id         (index of the sending socket in its segment)
    ///  8  u32  sequence number   (per sender, from 0)
    /// 12  u16  length            (of the whole datagram; also a function of sender and sequence)
    /// 14  u16  zero
    /// 16  ...  pattern bytes     (a function of sender, sequence and position)
    /// L-4 u32  Fletcher-32 of bytes 0 .. L-5
    /// </code>
    /// Its length, between <see cref="MinLength"/> and the run's maximum, is derived from sender and sequence,
    /// so a datagram cut short or swapped with another is caught even if its checksum were right.
    /// </summary>
    internal static unsafe class SoakDatagram
    {
        internal const uint Magic = 0x4B414F53; // "SOAK" read as little-endian bytes
        internal const int HeaderSize = 16;
        internal const int ChecksumSize = 4;
        internal const int MinLength = HeaderSize + ChecksumSize;

        /// <summary>The length datagram <paramref name="sequence"/> of <paramref name="sender"/> has: MinLength .. maxLength.</summary>
        internal static int LengthOf(int sender, uint sequence, int maxLength)
            => MinLength + (int)(Mix(sender, sequence) % (uint)(maxLength - MinLength + 1));

        /// <summary>Writes the whole datagram into <paramref name="p"/> (at least <paramref name="length"/> bytes).</summary>
        internal static void Write(byte* p, int length, int segment, int sender, uint sequence)
        {
            *(uint*)p = Magic;
            *(ushort*)(p + 4) = (ushort)segment;
            *(ushort*)(p + 6) = (ushort)sender;
            *(uint*)(p + 8) = sequence;
            *(ushort*)(p + 12) = (ushort)length;
            *(ushort*)(p + 14) = 0;
            uint seed = Mix(sender, sequence);
            int end = length - ChecksumSize;
            for (int i = HeaderSize; i < end; i++) p[i] = PatternByte(seed, i);
            *(uint*)(p + end) = Fletcher32(p, end);
        }

        /// <summary>
        /// Checks a received datagram of <paramref name="length"/> bytes against what segment
        /// <paramref name="segment"/>'s senders (0 .. senders-1) write, and returns its sender and sequence number.
        /// </summary>
        internal static Verdict Verify(byte* p, int length, int segment, int senders, int maxLength, out int sender, out uint sequence)
        {
            sender = -1;
            sequence = 0;
            if (length < MinLength || length > maxLength) return Verdict.Corrupt;
            if (*(uint*)p != Magic || *(ushort*)(p + 4) != (ushort)segment || *(ushort*)(p + 14) != 0) return Verdict.Corrupt;
            int from = *(ushort*)(p + 6);
            uint seq = *(uint*)(p + 8);
            if (from >= senders || *(ushort*)(p + 12) != length || LengthOf(from, seq, maxLength) != length) return Verdict.Corrupt;
            int end = length - ChecksumSize;
            if (*(uint*)(p + end) != Fletcher32(p, end)) return Verdict.Corrupt;
            uint seed = Mix(from, seq);
            for (int i = HeaderSize; i < end; i++)
            {
                if (p[i] != PatternByte(seed, i)) return Verdict.Corrupt;
            }
            sender = from;
            sequence = seq;
            return Verdict.Intact;
        }

        private static byte PatternByte(uint seed, int i) => (byte)((seed >> ((i & 3) << 3)) ^ (uint)i ^ (uint)(i >> 8));

        /// <summary>A 32-bit mix of sender and sequence (multiply-xorshift), for the length and the pattern.</summary>
        private static uint Mix(int sender, uint sequence)
        {
            uint x = sequence * 0x9E3779B1u ^ (uint)(sender + 1) * 0x85EBCA77u;
            x ^= x >> 15;
            x *= 0x2C1B3C6Du;
            x ^= x >> 12;
            x *= 0x297A2D39u;
            x ^= x >> 15;
            return x;
        }

        /// <summary>Fletcher-32 over <paramref name="count"/> bytes taken as little-endian 16-bit words (an odd last byte padded with 0).</summary>
        internal static uint Fletcher32(byte* p, int count)
        {
            uint a = 0xFFFF, b = 0xFFFF;
            int words = count >> 1;
            byte* q = p;
            while (words > 0)
            {
                // 359 words is the most the 32-bit sums take before they must be folded back to 16 bits.
                int block = words < 359 ? words : 359;
                words -= block;
                for (int i = 0; i < block; i++)
                {
                    a += (uint)(q[0] | (q[1] << 8));
                    b += a;
                    q += 2;
                }
                a = (a & 0xFFFF) + (a >> 16);
                b = (b & 0xFFFF) + (b >> 16);
            }
            if ((count & 1) != 0)
            {
                a += q[0];
                b += a;
                a = (a & 0xFFFF) + (a >> 16);
                b = (b & 0xFFFF) + (b >> 16);
            }
            a = (a & 0xFFFF) + (a >> 16);
            b = (b & 0xFFFF) + (b >> 16);
            return (b << 16) | a;
        }
    }
}
