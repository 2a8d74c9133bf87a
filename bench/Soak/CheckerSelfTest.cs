using System;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// Shows, before every run, that the checks can fail: a clean soak never exercises them, so crafted faults are
    /// fed to a <see cref="Checker"/> (no sockets involved) and each must land in its own counter.
    /// </summary>
    internal static unsafe class CheckerSelfTest
    {
        /// <summary>Returns null when every fault was caught as expected, else what went wrong.</summary>
        internal static string? Run()
        {
            const int segment = 7, maxLength = 512;
            EndPointKey a = EndPointKey.IPv4(127, 0, 0, 1, 40001), b = EndPointKey.IPv4(127, 0, 0, 1, 40002);
            var check = new Checker(segment, new[] { a, b }, new long[] { 16, 16 }, maxLength);
            byte* p = stackalloc byte[maxLength];

            int Write(int sender, uint sequence, int seg = segment)
            {
                int length = SoakDatagram.LengthOf(sender, sequence, maxLength);
                SoakDatagram.Write(p, length, seg, sender, sequence);
                return length;
            }

            int n = Write(0, 0);
            check.Account(p, n, a, a, false);                       // intact
            check.Account(p, n, a, a, false);                       // the same again: duplicate
            n = Write(0, 1);
            p[n / 2] ^= 0x10;
            check.Account(p, n, a, a, false);                       // a payload bit flipped: corrupt
            n = Write(0, 2);
            p[n - 1] ^= 0x01;
            check.Account(p, n, a, a, false);                       // the checksum flipped: corrupt
            n = Write(0, 3);
            check.Account(p, n - 1, a, a, false);                   // one byte short: corrupt
            n = Write(0, 4, segment + 1);
            check.Account(p, n, a, a, false);                       // another segment's: corrupt
            n = Write(1, 0);
            *(ushort*)(p + 6) = 5;
            check.Account(p, n, b, b, false);                       // a sender id out of range: corrupt
            n = Write(1, 1);
            check.Account(p, n, a, a, false);                       // reported from the other sender: wrong sender
            n = Write(1, 2);
            check.Account(p, n, b, default, false);                 // the second report disagrees: wrong sender
            n = Write(1, 3);
            check.Account(p, n, b, b, true);                        // flagged truncated
            check.AccountTruncatedByError();                        // MessageSize
            n = Write(1, 9);
            check.Account(p, n, b, b, false);                       // intact, a gap before it (not disorder)
            n = Write(1, 8);
            check.Account(p, n, b, b, false);                       // intact, after a later one: out of order

            string got = "received " + check.Received + ", corrupt " + check.Corrupt + ", duplicate " + check.Duplicates
                + ", wrong sender " + check.WrongSender + ", truncated " + check.Truncated + ", out of order " + check.OutOfOrder + ", taken " + check.Taken;
            const string expected = "received 5, corrupt 5, duplicate 1, wrong sender 2, truncated 2, out of order 1, taken 13";
            return got == expected ? null : "checker self-check: expected " + expected + ", got " + got;
        }
    }
}
