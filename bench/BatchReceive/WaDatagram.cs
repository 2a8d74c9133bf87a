using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.BatchReceive
{
    /// <summary>
    /// The check bench/native/README.md specifies for the C programs' datagram format ("WA ", ten digits,
    /// a space, a letter run, a Fletcher-32 in hex), done the same way as the C receiver does it: letter runs
    /// compared in blocks, the checksum summed in 64 bits and reduced once per 4096 bytes. So both receivers
    /// spend the same work per datagram.
    /// </summary>
    internal static unsafe class WaDatagram
    {
        private const int MinSize = 24;
        private const int SumLength = 8;
        private const int FillerOffset = 14;

        // Two alphabets in a row: the 26 letters that start at letter k are s_alphabets[k .. k+26).
        private static readonly byte* s_alphabets = MakeAlphabets();

        private static byte* MakeAlphabets()
        {
            var p = (byte*)Marshal.AllocHGlobal(52);
            for (int i = 0; i < 52; i++) p[i] = (byte)('a' + i % 26);
            return p;
        }

        /// <summary>True when <paramref name="datagram"/> is a whole, valid datagram; gives its sequence number.</summary>
        internal static bool Check(ReadOnlySpan<byte> datagram, out ulong sequence)
        {
            sequence = 0;
            int length = datagram.Length;
            if (length < MinSize) return false;
            // Not 'fixed (byte* p = datagram)': Mono 6.8 lacks ReadOnlySpan's 'ref readonly' GetPinnableReference.
            fixed (byte* p = &MemoryMarshal.GetReference(datagram))
            {
                if (p[0] != 'W' || p[1] != 'A' || p[2] != ' ') return false;
                ulong seq = 0;
                for (int d = 0; d < 10; d++)
                {
                    uint digit = (uint)(p[3 + d] - '0');
                    if (digit > 9) return false;
                    seq = seq * 10 + digit;
                }
                if (p[13] != ' ') return false;

                int body = length - SumLength;
                byte* run = s_alphabets + (int)((seq + FillerOffset) % 26);
                for (int i = FillerOffset; i < body; i += 26)
                {
                    if (!Same(p + i, run, Math.Min(26, body - i))) return false;
                }

                uint want = 0;
                for (int i = body; i < length; i++)
                {
                    uint c = p[i];
                    uint nibble;
                    if (c - '0' <= 9) nibble = c - '0';
                    else if (c - 'a' <= 5) nibble = c - 'a' + 10;
                    else return false;
                    want = (want << 4) | nibble;
                }
                if (Fletcher32(p, body) != want) return false;
                sequence = seq;
                return true;
            }
        }

        private static bool Same(byte* a, byte* b, int n)
        {
            while (n >= 8)
            {
                if (*(ulong*)a != *(ulong*)b) return false;
                a += 8;
                b += 8;
                n -= 8;
            }
            while (n > 0)
            {
                if (*a != *b) return false;
                a++;
                b++;
                n--;
            }
            return true;
        }

        private static uint Fletcher32(byte* data, int length)
        {
            ulong sum1 = 0, sum2 = 0;
            while (length > 0)
            {
                int n = length < 4096 ? length : 4096;
                for (int i = 0; i < n; i++)
                {
                    sum1 += data[i];
                    sum2 += sum1;
                }
                sum1 %= 65535;
                sum2 %= 65535;
                data += n;
                length -= n;
            }
            return (uint)((sum2 << 16) | sum1);
        }
    }
}
