#nullable enable
using System;

namespace WhereAllocation
{
    // The key's text written into a caller's span: the same characters as ToString, without a string.
    public readonly partial struct EndPointKey
    {
        /// <summary>The longest text <see cref="TryFormat"/> writes: <c>[</c>, 45 address characters, <c>%</c> and a 10-digit scope id, <c>]:65535</c>.</summary>
        public const int MaxFormattedLength = 64;

        /// <summary>
        /// Writes the text of <see cref="ToString"/> into <paramref name="destination"/>: <c>a.b.c.d:port</c> for IPv4,
        /// <c>[address%scope]:port</c> for IPv6 (the address as the runtime's <see cref="System.Net.IPAddress"/> writes it:
        /// lowercase hexadecimal, the longest run of two or more zero groups as <c>::</c>, IPv4-mapped and similar addresses
        /// ending in dotted IPv4, <c>%scope</c> only when the scope id is not 0), and "(none)" for the default key.
        /// Does not allocate: a server can log its peers into a reused buffer.
        /// </summary>
        /// <param name="destination">Where the text goes; <see cref="MaxFormattedLength"/> characters always suffice.</param>
        /// <param name="charsWritten">The characters written; 0 when the text did not fit.</param>
        /// <returns>False, with nothing counted as written, when <paramref name="destination"/> is too short.</returns>
        public bool TryFormat(Span<char> destination, out int charsWritten)
        {
            charsWritten = 0;
            Span<char> text = stackalloc char[MaxFormattedLength];
            int n;
            if (_family == FamilyNone)
            {
                n = Append(text, 0, "(none)");
            }
            else if (_family == FamilyV4)
            {
                Span<byte> a = stackalloc byte[4];
                Store(a, (uint)_a0);
                n = AppendIPv4(text, 0, a[0], a[1], a[2], a[3]);
                text[n++] = ':';
                n = AppendDecimal(text, n, _port);
            }
            else
            {
                text[0] = '[';
                n = AppendIPv6(text, 1);
                if (_scopeId != 0)
                {
                    text[n++] = '%';
                    n = AppendDecimal(text, n, _scopeId);
                }
                text[n++] = ']';
                text[n++] = ':';
                n = AppendDecimal(text, n, _port);
            }
            if (n > destination.Length) return false;
            text.Slice(0, n).CopyTo(destination);
            charsWritten = n;
            return true;
        }

        /// <summary>The IPv6 address as the runtime formats it (RFC 5952's compression, and its rule for an embedded IPv4 tail).</summary>
        private int AppendIPv6(Span<char> text, int at)
        {
            Span<byte> bytes = stackalloc byte[16];
            ulong a0 = _a0, a1 = _a1;
            Store(bytes, a0);
            Store(bytes.Slice(8), a1);
            Span<int> groups = stackalloc int[8];
            for (int i = 0; i < 8; i++) groups[i] = (bytes[2 * i] << 8) | bytes[2 * i + 1];

            bool ipv4Tail = HasIPv4Tail(groups);
            int hexGroups = ipv4Tail ? 6 : 8;

            // The longest run of zero groups among the hexadecimal ones, the first of equal runs; a single zero stays.
            int runStart = -1, runLength = 0, current = 0;
            for (int i = 0; i < hexGroups; i++)
            {
                if (groups[i] != 0)
                {
                    current = 0;
                    continue;
                }
                current++;
                if (current > runLength)
                {
                    runLength = current;
                    runStart = i - current + 1;
                }
            }
            if (runLength < 2) runStart = -1;

            bool colon = false;
            for (int i = 0; i < hexGroups; i++)
            {
                if (i == runStart)
                {
                    text[at++] = ':';
                    text[at++] = ':';
                    colon = false;
                    i += runLength - 1;
                    continue;
                }
                if (colon) text[at++] = ':';
                at = AppendHex(text, at, groups[i]);
                colon = true;
            }
            if (ipv4Tail)
            {
                if (colon) text[at++] = ':';
                at = AppendIPv4(text, at, bytes[12], bytes[13], bytes[14], bytes[15]);
            }
            return at;
        }

        /// <summary>
        /// True when the runtime writes the last 32 bits as dotted IPv4: <c>::a.b.c.d</c>, <c>::ffff:a.b.c.d</c> and
        /// <c>::ffff:0:a.b.c.d</c> (with the seventh group not 0), and any address whose fifth and sixth groups are
        /// <c>0:5efe</c> (ISATAP).
        /// </summary>
        private static bool HasIPv4Tail(Span<int> groups)
        {
            if (groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[6] != 0)
            {
                if (groups[4] == 0 && (groups[5] == 0 || groups[5] == 0xffff)) return true;
                if (groups[4] == 0xffff && groups[5] == 0) return true;
            }
            return groups[4] == 0 && groups[5] == 0x5efe;
        }

        private static int AppendIPv4(Span<char> text, int at, byte a, byte b, byte c, byte d)
        {
            at = AppendDecimal(text, at, a);
            text[at++] = '.';
            at = AppendDecimal(text, at, b);
            text[at++] = '.';
            at = AppendDecimal(text, at, c);
            text[at++] = '.';
            return AppendDecimal(text, at, d);
        }

        private static int AppendDecimal(Span<char> text, int at, uint value)
        {
            int digits = 1;
            for (uint rest = value / 10; rest != 0; rest /= 10) digits++;
            for (int i = digits - 1; i >= 0; i--)
            {
                text[at + i] = (char)('0' + (int)(value % 10));
                value /= 10;
            }
            return at + digits;
        }

        private static int AppendHex(Span<char> text, int at, int group)
        {
            bool started = false;
            for (int shift = 12; shift >= 0; shift -= 4)
            {
                int digit = (group >> shift) & 0xf;
                if (digit == 0 && !started && shift != 0) continue;
                started = true;
                text[at++] = (char)(digit < 10 ? '0' + digit : 'a' + digit - 10);
            }
            return at;
        }

        private static int Append(Span<char> text, int at, string value)
        {
            for (int i = 0; i < value.Length; i++) text[at++] = value[i];
            return at;
        }
    }
}
