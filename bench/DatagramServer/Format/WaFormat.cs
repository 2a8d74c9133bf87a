using System;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>Why a datagram failed <see cref="WaFormat.Check(string, out long)"/>; the same codes, in the same order, as the C receiver's check.</summary>
    internal enum WaCheckResult
    {
        Ok = 0,
        Short = 1,
        Prefix = 2,
        Digits = 3,
        Filler = 4,
        SumText = 5,
        Sum = 6,
    }

    /// <summary>
    /// The benchmark's datagram, as bench/native/README.md defines it: S bytes of ASCII text
    /// "WA &lt;10-digit sequence&gt; &lt;filler letters&gt;&lt;8 lowercase hex digits&gt;", where byte i of the filler is
    /// 'a' + (seq + i) % 26 and the hex digits are a Fletcher-32 (one byte per step) of everything before them.
    /// </summary>
    /// <remarks>
    /// The one C# copy of the format: the DatagramServer's receivers check the text after UTF-8 decoding (chars; for a
    /// valid datagram every char is ASCII and has the value of its byte, so the result equals the C receiver's check of
    /// the bytes), the sweep's rows (--mode sweep) check the bytes as received, and <see cref="Fill"/> writes them with the
    /// same checksum. The core works on a pointer to either element, byte or char (<see cref="At{T}"/>; each is compiled on
    /// its own, so the test of the element's size is a constant there): one code path for all three, without bounds
    /// checks in the inner loops, as the C code has none.
    /// </remarks>
    internal static unsafe class WaFormat
    {
        public const int MinSize = 24;
        public const int MaxSize = 1400;
        public const long MaxSequence = 9_999_999_999;
        private const int DigitsOffset = 3;
        private const int DigitCount = 10;
        private const int SpaceOffset = 13;
        private const int FillerOffset = 14;
        private const int SumLength = 8;

        // 'a'..'z' twice, as chars and as bytes, in native memory made once for the process (no pinning per check): the 26
        // filler letters that start at letter k are s_chars[k .. k + 26), or s_bytes[k .. k + 26).
        private static readonly char* s_chars = DoubledAlphabet<char>();
        private static readonly byte* s_bytes = DoubledAlphabet<byte>();

        private static T* DoubledAlphabet<T>() where T : unmanaged
        {
            var p = (T*)System.Runtime.InteropServices.Marshal.AllocHGlobal(52 * sizeof(T));
            for (int i = 0; i < 52; i++)
            {
                if (sizeof(T) == 1) ((byte*)p)[i] = (byte)('a' + i % 26);
                else ((char*)p)[i] = (char)('a' + i % 26);
            }
            return p;
        }

        /// <summary>Checks a decoded datagram held in a string.</summary>
        public static WaCheckResult Check(string text, out long sequence)
        {
            fixed (char* p = text) return Check(p, text.Length, out sequence);
        }

        /// <summary>Checks the first <paramref name="length"/> chars of <paramref name="chars"/>.</summary>
        public static WaCheckResult Check(char[] chars, int length, out long sequence)
        {
            if ((uint)length > (uint)chars.Length) throw new ArgumentOutOfRangeException(nameof(length));
            fixed (char* p = chars) return Check(p, length, out sequence);
        }

        /// <summary>Checks a datagram's bytes as received, without decoding them.</summary>
        public static WaCheckResult Check(ReadOnlySpan<byte> datagram, out long sequence)
        {
            // Not 'fixed (byte* p = datagram)': Mono 6.8 lacks ReadOnlySpan's 'ref readonly' GetPinnableReference.
            fixed (byte* p = &System.Runtime.InteropServices.MemoryMarshal.GetReference(datagram)) return Check(p, datagram.Length, out sequence);
        }

        /// <summary>Element <paramref name="i"/> of a datagram held as bytes or as chars.</summary>
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
        private static int At<T>(T* p, int i) where T : unmanaged => sizeof(T) == 1 ? ((byte*)p)[i] : ((char*)p)[i];

        private static WaCheckResult Check<T>(T* p, int length, out long sequence) where T : unmanaged
        {
            sequence = 0;
            if (length < MinSize) return WaCheckResult.Short;
            if (At(p, 0) != 'W' || At(p, 1) != 'A' || At(p, 2) != ' ') return WaCheckResult.Prefix;

            // The ten digits as two five-digit halves in int arithmetic: Mono's JIT divides a long by a
            // constant with a real division, and the filler's starting letter needs the sequence mod 26.
            int high = 0, low = 0;
            for (int i = DigitsOffset; i < DigitsOffset + 5; i++)
            {
                int digit = At(p, i) - '0';
                if ((uint)digit > 9) return WaCheckResult.Digits;
                high = high * 10 + digit;
            }
            for (int i = DigitsOffset + 5; i < DigitsOffset + DigitCount; i++)
            {
                int digit = At(p, i) - '0';
                if ((uint)digit > 9) return WaCheckResult.Digits;
                low = low * 10 + digit;
            }
            if (At(p, SpaceOffset) != ' ') return WaCheckResult.Digits;

            // The filler repeats every 26 chars, so each stretch of up to 26 is compared with the same
            // run of the doubled alphabet, 4 chars at a time. (seq + 14) mod 26, with 100000 mod 26 = 4.
            int body = length - SumLength;
            int start = ((high % 26) * 4 + low % 26 + FillerOffset) % 26;
            T* alphabet = sizeof(T) == 1 ? (T*)s_bytes : (T*)s_chars;
            for (int i = FillerOffset; i < body; i += 26)
            {
                if (!Same(p + i, alphabet + start, Math.Min(26, body - i))) return WaCheckResult.Filler;
            }

            uint want = 0;
            for (int i = body; i < length; i++)
            {
                int c = At(p, i);
                int nibble;
                if (c >= '0' && c <= '9') nibble = c - '0';
                else if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
                else return WaCheckResult.SumText;
                want = (want << 4) | (uint)nibble;
            }
            if (Fletcher32(p, body) != want) return WaCheckResult.Sum;

            sequence = high * 100_000L + low;
            return WaCheckResult.Ok;
        }

        /// <summary>
        /// Fletcher-32 with one element (byte or char) per step: sum1 = (sum1 + c) % 65535, sum2 = (sum2 + sum1) % 65535.
        /// The sums are reduced once per block of 256 elements, which gives the same result; see <see cref="Reduce"/>.
        /// </summary>
        /// <remarks>
        /// Both sums start a block below 65535 and an element is at most 65535, so after 256 steps sum1 is below
        /// 257 * 65535 and sum2 below 65535 * (1 + 256 + 256 * 257 / 2) &lt; 2.2e9: a uint holds both.
        /// </remarks>
        public static uint Fletcher32<T>(T* p, int length) where T : unmanaged
        {
            uint sum1 = 0, sum2 = 0;
            while (length > 0)
            {
                int n = length < 256 ? length : 256;
                int i = 0;
                // Four steps at once: sum2 gains 4*sum1 + 4*c0 + 3*c1 + 2*c2 + c3, sum1 gains c0+c1+c2+c3.
                for (; i + 4 <= n; i += 4)
                {
                    uint c0 = (uint)At(p, i), c1 = (uint)At(p, i + 1), c2 = (uint)At(p, i + 2), c3 = (uint)At(p, i + 3);
                    sum2 += 4 * sum1 + 4 * c0 + 3 * c1 + 2 * c2 + c3;
                    sum1 += c0 + c1 + c2 + c3;
                }
                for (; i < n; i++)
                {
                    sum1 += (uint)At(p, i);
                    sum2 += sum1;
                }
                sum1 = Reduce(sum1);
                sum2 = Reduce(sum2);
                p += n;
                length -= n;
            }
            return (sum2 << 16) | sum1;
        }

        /// <summary>
        /// x mod 65535 without a division: 65536 is 1 mod 65535, so adding the high half to the low half keeps
        /// the value mod 65535; twice brings any uint to at most 65535, which is 0.
        /// </summary>
        private static uint Reduce(uint x)
        {
            x = (x & 0xffff) + (x >> 16);
            x = (x & 0xffff) + (x >> 16);
            return x == 65535 ? 0 : x;
        }

        /// <summary>Whether <paramref name="count"/> elements at <paramref name="a"/> and <paramref name="b"/> are equal: 8 bytes at a time.</summary>
        private static bool Same<T>(T* a, T* b, int count) where T : unmanaged
        {
            byte* x = (byte*)a, y = (byte*)b;
            int bytes = count * sizeof(T), i = 0;
            for (; i + 8 <= bytes; i += 8)
            {
                if (*(ulong*)(x + i) != *(ulong*)(y + i)) return false;
            }
            for (; i < bytes; i++)
            {
                if (x[i] != y[i]) return false;
            }
            return true;
        }

        /// <summary>Writes the datagram of <paramref name="sequence"/> into the first <paramref name="size"/> bytes of <paramref name="destination"/>. Allocates nothing.</summary>
        public static void Fill(byte[] destination, int offset, int size, long sequence)
        {
            if (size < MinSize || size > destination.Length - offset) throw new ArgumentOutOfRangeException(nameof(size));
            if (sequence < 0 || sequence > MaxSequence) throw new ArgumentOutOfRangeException(nameof(sequence));
            destination[offset] = (byte)'W';
            destination[offset + 1] = (byte)'A';
            destination[offset + 2] = (byte)' ';
            long v = sequence;
            for (int d = DigitCount - 1; d >= 0; d--)
            {
                destination[offset + DigitsOffset + d] = (byte)('0' + (int)(v % 10));
                v /= 10;
            }
            destination[offset + SpaceOffset] = (byte)' ';
            int body = size - SumLength;
            int letter = (int)((sequence + FillerOffset) % 26);
            for (int i = FillerOffset; i < body; i++)
            {
                destination[offset + i] = (byte)('a' + letter);
                if (++letter == 26) letter = 0;
            }
            uint sum;
            fixed (byte* p = &destination[offset]) sum = Fletcher32(p, body);
            for (int d = SumLength - 1; d >= 0; d--)
            {
                int nibble = (int)(sum & 0xf);
                destination[offset + body + d] = (byte)(nibble < 10 ? '0' + nibble : 'a' + nibble - 10);
                sum >>= 4;
            }
        }
    }
}
