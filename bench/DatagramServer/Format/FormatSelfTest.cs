using System;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// --check-format: proves <see cref="WaFormat"/> against bench/native/README.md on the runtime at hand:
    /// the published test vectors, every single-char change and every truncation of them rejected, the
    /// faster Fletcher-32 equal to the one-step definition over chars and bytes, the check of bytes agreeing with the
    /// check of chars, and Fill/Check round trips.
    /// </summary>
    internal static unsafe class FormatSelfTest
    {
        private static readonly string[] Vectors =
        {
            "WA 0000000000 opqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcd0f9114d7",
            "WA 0000012345 jklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy0fd214fe",
            "WA 0000000000 op1c9d0397",
        };

        private static readonly long[] Sequences = { 0, 12345, 0 };

        // The reason the C check gives for one changed char, where it does not depend on the new value's
        // effect on the sequence number (a changed digit moves the expected filler instead).
        private static WaCheckResult? ExpectedResult(int position, char c, int length)
        {
            if (position < 3) return WaCheckResult.Prefix;
            if (position < 13) return c >= '0' && c <= '9' ? (WaCheckResult?)null : WaCheckResult.Digits;
            if (position == 13) return WaCheckResult.Digits;
            if (position < length - 8) return WaCheckResult.Filler;
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ? WaCheckResult.Sum : WaCheckResult.SumText;
        }

        /// <summary>Runs every check, prints one line per failure and a summary; returns the number of failures.</summary>
        public static int Run()
        {
            int checks = 0, failures = 0;
            void Expect(bool condition, string what)
            {
                checks++;
                if (condition) return;
                failures++;
                if (failures <= 20) Console.WriteLine("  format FAIL: " + what);
            }

            for (int v = 0; v < Vectors.Length; v++)
            {
                string vector = Vectors[v];
                var bytes = new byte[vector.Length];
                WaFormat.Fill(bytes, 0, bytes.Length, Sequences[v]);
                Expect(Encoding.ASCII.GetString(bytes) == vector, "Fill(" + Sequences[v] + ", " + vector.Length + ") gives the test vector");
                Expect(WaFormat.Check(vector, out long sequence) == WaCheckResult.Ok && sequence == Sequences[v], "test vector " + v + " is valid with its sequence");

                char[] chars = vector.ToCharArray();
                for (int i = 0; i < chars.Length; i++)
                {
                    char original = chars[i];
                    for (int c = 0; c < 256; c++)
                    {
                        if (c == original) continue;
                        chars[i] = (char)c;
                        WaCheckResult result = WaFormat.Check(chars, chars.Length, out _);
                        Expect(result != WaCheckResult.Ok, "vector " + v + " with char " + i + " set to " + c + " is rejected");
                        bytes[i] = (byte)c;
                        Expect(WaFormat.Check(bytes, out _) == result, "vector " + v + " with byte " + i + " set to " + c + " fails as the chars do (" + result + ")");
                        WaCheckResult? expected = ExpectedResult(i, (char)c, chars.Length);
                        if (expected != null) Expect(result == expected, "vector " + v + " with char " + i + " set to " + c + " fails as " + expected + ", not " + result);
                    }
                    chars[i] = original;
                    bytes[i] = (byte)original;
                }
                Expect(WaFormat.Check(bytes, out long byteSequence) == WaCheckResult.Ok && byteSequence == Sequences[v], "test vector " + v + " is valid as bytes with its sequence");
                for (int length = 0; length < chars.Length; length++)
                {
                    Expect(WaFormat.Check(chars, length, out _) != WaCheckResult.Ok, "vector " + v + " cut to " + length + " chars is rejected");
                    Expect(WaFormat.Check(bytes.AsSpan(0, length), out _) != WaCheckResult.Ok, "vector " + v + " cut to " + length + " bytes is rejected");
                }
            }

            var random = new Random(7);
            for (int length = 0; length < 9000; length += random.Next(1, 40))
            {
                var data = new char[length];
                for (int i = 0; i < length; i++) data[i] = (char)random.Next(0, 65536);
                ulong sum1 = 0, sum2 = 0;
                for (int i = 0; i < length; i++)
                {
                    sum1 = (sum1 + data[i]) % 65535;
                    sum2 = (sum2 + sum1) % 65535;
                }
                uint actual;
                fixed (char* p = data) actual = WaFormat.Fletcher32(p, length);
                Expect(actual == (uint)((sum2 << 16) | sum1), "Fletcher-32 of " + length + " random chars equals the one-step definition");
                var low = new byte[length];
                sum1 = sum2 = 0;
                for (int i = 0; i < length; i++)
                {
                    low[i] = (byte)data[i];
                    sum1 = (sum1 + low[i]) % 65535;
                    sum2 = (sum2 + sum1) % 65535;
                }
                fixed (byte* p = low) actual = WaFormat.Fletcher32(p, length);
                Expect(actual == (uint)((sum2 << 16) | sum1), "Fletcher-32 of " + length + " random bytes equals the one-step definition");
            }

            for (long sequence = 0; sequence < 2000; sequence += 13)
            {
                for (int size = WaFormat.MinSize; size <= WaFormat.MaxSize; size += 91)
                {
                    var bytes = new byte[size];
                    WaFormat.Fill(bytes, 0, size, sequence);
                    char[] chars = Encoding.UTF8.GetChars(bytes);
                    Expect(WaFormat.Check(chars, chars.Length, out long back) == WaCheckResult.Ok && back == sequence, "round trip of " + sequence + " at " + size + " bytes");
                    Expect(WaFormat.Check(bytes, out back) == WaCheckResult.Ok && back == sequence, "round trip of " + sequence + " at " + size + " bytes, checked as bytes");
                }
            }

            Console.WriteLine("format: " + checks + " checks, " + failures + " failed (" + Machine.RuntimeDescription + ")");
            return failures;
        }
    }
}
