using System;
using System.Net;
using System.Net.Sockets;
using WhereAllocation.Interop;
using Xunit;

namespace WhereAllocation.Tests
{
    public class EndPointKeyTests
    {
        private static readonly byte[] V6Bytes = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34 };

        [Fact]
        public void LinuxSockaddrInRoundTrips()
        {
            byte[] expected = { 2, 0, 0x1f, 0x90, 192, 168, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0 };
            Assert.True(EndPointKey.TryReadSockaddr(expected, SockaddrFormat.Linux, out EndPointKey key));
            Assert.Equal(EndPointKey.IPv4(192, 168, 0, 1, 8080), key);
            var written = new byte[32];
            Assert.Equal(16, key.WriteSockaddr(written, SockaddrFormat.Linux));
            Assert.Equal(expected, written.AsSpan(0, 16).ToArray());
        }

        [Fact]
        public void LinuxSockaddrIn6RoundTrips()
        {
            byte[] expected = new byte[28];
            expected[0] = 10; // AF_INET6, host order
            expected[2] = 0x1f; expected[3] = 0x90;
            V6Bytes.CopyTo(expected, 8);
            expected[24] = 7; // scope id 7, host order
            Assert.True(EndPointKey.TryReadSockaddr(expected, SockaddrFormat.Linux, out EndPointKey key));
            Assert.Equal(EndPointKey.IPv6(V6Bytes, 8080, 7), key);
            Assert.Equal(7u, key.ScopeId);
            var written = new byte[28];
            Assert.Equal(28, key.WriteSockaddr(written, SockaddrFormat.Linux));
            Assert.Equal(expected, written);
        }

        [Fact]
        public void BsdSockaddrsCarryALengthByteAndFamily30()
        {
            byte[] v4 = { 16, 2, 0x1f, 0x90, 10, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0 };
            Assert.True(EndPointKey.TryReadSockaddr(v4, SockaddrFormat.Bsd, out EndPointKey k4));
            Assert.Equal(EndPointKey.IPv4(10, 0, 0, 9, 8080), k4);
            var w4 = new byte[16];
            k4.WriteSockaddr(w4, SockaddrFormat.Bsd);
            Assert.Equal(v4, w4);

            byte[] v6 = new byte[28];
            v6[0] = 28; v6[1] = 30; v6[2] = 0x1f; v6[3] = 0x90;
            V6Bytes.CopyTo(v6, 8);
            Assert.True(EndPointKey.TryReadSockaddr(v6, SockaddrFormat.Bsd, out EndPointKey k6));
            Assert.Equal(EndPointKey.IPv6(V6Bytes, 8080), k6);
            var w6 = new byte[28];
            k6.WriteSockaddr(w6, SockaddrFormat.Bsd);
            Assert.Equal(v6, w6);
            // Linux's AF_INET6 (10) is not an IPv6 family in the BSD layout.
            v6[1] = 10;
            Assert.False(EndPointKey.TryReadSockaddr(v6, SockaddrFormat.Bsd, out _));
        }

        [Fact]
        public void WindowsSockaddrsUseFamily23()
        {
            byte[] v6 = new byte[28];
            v6[0] = 23; v6[2] = 0x1f; v6[3] = 0x90;
            V6Bytes.CopyTo(v6, 8);
            Assert.True(EndPointKey.TryReadSockaddr(v6, SockaddrFormat.Windows, out EndPointKey k6));
            Assert.Equal(EndPointKey.IPv6(V6Bytes, 8080), k6);
            var w6 = new byte[28];
            k6.WriteSockaddr(w6, SockaddrFormat.Windows);
            Assert.Equal(v6, w6);
            byte[] v4 = { 2, 0, 0, 53, 8, 8, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0 };
            Assert.True(EndPointKey.TryReadSockaddr(v4, SockaddrFormat.Windows, out EndPointKey k4));
            Assert.Equal(EndPointKey.IPv4(8, 8, 4, 4, 53), k4);
        }

        [Fact]
        public void ShortOrForeignSockaddrsAreRefused()
        {
            Assert.False(EndPointKey.TryReadSockaddr(new byte[] { 2, 0, 0, 1 }, SockaddrFormat.Linux, out _));
            Assert.False(EndPointKey.TryReadSockaddr(new byte[16] { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, SockaddrFormat.Linux, out _)); // AF_UNIX
            Assert.False(EndPointKey.TryReadSockaddr(new byte[20] { 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, SockaddrFormat.Linux, out _));
            Assert.Throws<ArgumentException>(() => EndPointKey.IPv4(1, 2, 3, 4, 5).WriteSockaddr(new byte[15], SockaddrFormat.Linux));
            Assert.Throws<InvalidOperationException>(() => default(EndPointKey).WriteSockaddr(new byte[32], SockaddrFormat.Linux));
        }

        [Theory]
        [InlineData(SockaddrFormat.Linux)]
        [InlineData(SockaddrFormat.Bsd)]
        [InlineData(SockaddrFormat.Windows)]
        public unsafe void ThePointerReadGivesTheSpanReadsAnswers(SockaddrFormat format)
        {
            // Whole sockaddrs of both families in this format, then the same with every family byte pattern that is not it.
            var inputs = new System.Collections.Generic.List<byte[]>();
            EndPointKey[] keys =
            {
                EndPointKey.IPv4(192, 168, 0, 1, 8080), EndPointKey.IPv4(255, 255, 255, 255, 65535), EndPointKey.IPv4(0, 0, 0, 0, 0),
                EndPointKey.IPv6(V6Bytes, 8080, 7), EndPointKey.IPv6(new byte[16], 1, 0), EndPointKey.IPv6(V6Bytes, 65535, uint.MaxValue),
            };
            foreach (EndPointKey k in keys)
            {
                var whole = new byte[SockaddrLayout.StorageSize];
                k.WriteSockaddr(whole, format);
                inputs.Add(whole);
                foreach (int family in new[] { 0, 1, 2, 10, 23, 30, 0x0200, 0x0a00, 0xffff })
                {
                    var other = (byte[])whole.Clone();
                    other[0] = (byte)family;
                    other[1] = (byte)(family >> 8);
                    inputs.Add(other);
                }
            }

            var memory = new byte[SockaddrLayout.StorageSize + 8];
            int compared = 0, accepted = 0;
            fixed (byte* start = memory)
            {
                byte* aligned = (byte*)(((ulong)start + 7) & ~7UL);
                foreach (byte[] input in inputs)
                {
                    for (int length = 0; length <= SockaddrLayout.StorageSize; length++)
                    {
                        bool expected = EndPointKey.TryReadSockaddr(new ReadOnlySpan<byte>(input, 0, length), format, out EndPointKey expectedKey);
                        // Bytes past the length differ between the two reads: an answer that depends on them shows as a mismatch.
                        foreach (byte filler in new byte[] { 0x00, 0xff })
                        {
                            new Span<byte>(aligned, SockaddrLayout.StorageSize).Fill(filler);
                            input.AsSpan(0, length).CopyTo(new Span<byte>(aligned, SockaddrLayout.StorageSize));
                            bool actual = EndPointKey.TryReadSockaddr(aligned, length, format, out EndPointKey actualKey);
                            Assert.Equal(expected, actual);
                            Assert.Equal(expectedKey, actualKey);
                            compared++;
                        }
                        if (expected) accepted++;
                    }
                }
                Assert.Throws<ArgumentOutOfRangeException>(() => EndPointKey.TryReadSockaddr(new byte[16], (SockaddrFormat)99, out _));
                var bad = (IntPtr)aligned;
                Assert.Throws<ArgumentOutOfRangeException>(() => EndPointKey.TryReadSockaddr((byte*)bad, 16, (SockaddrFormat)99, out _));
            }
            Assert.Equal(inputs.Count * (SockaddrLayout.StorageSize + 1) * 2, compared);
            // Each whole sockaddr is read at every length from its size up: 17 lengths for sockaddr_in, 5 for sockaddr_in6.
            Assert.True(accepted >= 3 * 17 + 3 * 5);
        }

        [Fact]
        public void SocketAddressRoundTripsOnThisRuntime()
        {
            var v4 = new IPEndPoint(IPAddress.Parse("192.0.2.33"), 4242);
            var v6 = new IPEndPoint(IPAddress.Parse("fe80::1234%3"), 4243);
            foreach (IPEndPoint endPoint in new[] { v4, v6 })
            {
                SocketAddress runtime = endPoint.Serialize();
                EndPointKey key = EndPointKey.FromSocketAddress(runtime);
                Assert.Equal(EndPointKey.FromIPEndPoint(endPoint), key);
                Assert.Equal(endPoint, key.ToIPEndPoint());
                SocketAddress back = key.ToSocketAddress();
                Assert.Equal(runtime.Family, back.Family);
                Assert.Equal(key, EndPointKey.FromSocketAddress(back));
                // CopyTo overwrites a reused address of the same family in place.
                SocketAddress reused = new IPEndPoint(endPoint.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0).Serialize();
                key.CopyTo(reused);
                Assert.Equal(runtime, reused);
            }
            Assert.Throws<ArgumentException>(() => EndPointKey.FromIPEndPoint(v4).CopyTo(v6.Serialize()));
        }

        [Fact]
        public void IPv4MappedAddressesAreRecognisedAndConverted()
        {
            EndPointKey v4 = EndPointKey.IPv4(127, 0, 0, 1, 9000);
            EndPointKey mapped = v4.MapToIPv6();
            Assert.Equal(AddressFamily.InterNetworkV6, mapped.AddressFamily);
            Assert.True(mapped.IsIPv4MappedToIPv6);
            Assert.False(v4.IsIPv4MappedToIPv6);
            Assert.Equal(EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.Parse("::ffff:127.0.0.1"), 9000)), mapped);
            Assert.Equal(v4, mapped.MapToIPv4());
            Assert.Equal(v4, mapped.Canonical());
            Assert.NotEqual(v4, mapped);
            EndPointKey real6 = EndPointKey.IPv6(V6Bytes, 1);
            Assert.False(real6.IsIPv4MappedToIPv6);
            Assert.Equal(real6, real6.Canonical());
            Assert.Throws<InvalidOperationException>(() => real6.MapToIPv4());
        }

        [Fact]
        public void EqualityIsByEveryField()
        {
            EndPointKey a = EndPointKey.IPv4(10, 1, 2, 3, 80);
            Assert.Equal(a, EndPointKey.IPv4(new byte[] { 10, 1, 2, 3 }, 80));
            Assert.NotEqual(a, EndPointKey.IPv4(10, 1, 2, 3, 81));
            Assert.NotEqual(a, EndPointKey.IPv4(10, 1, 2, 4, 80));
            Assert.NotEqual(EndPointKey.IPv6(V6Bytes, 80, 1), EndPointKey.IPv6(V6Bytes, 80, 2));
            Assert.True(a == EndPointKey.IPv4(10, 1, 2, 3, 80));
            Assert.True(a != default);
            Assert.Equal(a.GetHashCode(), EndPointKey.IPv4(10, 1, 2, 3, 80).GetHashCode());
        }

        /// <summary>The pair that a plain XOR hash folds together stays apart (and the seeded hash differs).</summary>
        [Fact]
        public void TheClassicXorCollisionPairIsTwoKeys()
        {
            EndPointKey a = EndPointKey.IPv4(192, 168, 0, 1, 8080);
            EndPointKey b = EndPointKey.IPv4(192, 168, 0, 2, 8083);
            Assert.Equal(0x01 ^ 8080, 0x02 ^ 8083); // the collision under addr ^ port
            Assert.NotEqual(a, b);
            Assert.NotEqual(a.GetHashCode64(), b.GetHashCode64());
        }

        [Fact]
        public void TheHashDependsOnTheProcessSeed()
        {
            // Same message, two keys: SipHash output must change with the key.
            ulong h1 = SeededHash.Hash(1, 2, 3, 0, 0);
            ulong h2 = SeededHash.Hash(1, 2, 3, 1, 0);
            ulong h3 = SeededHash.Hash(1, 2, 4, 0, 0);
            Assert.NotEqual(h1, h2);
            Assert.NotEqual(h1, h3);
            Assert.Equal(h1, SeededHash.Hash(1, 2, 3, 0, 0));
        }

        /// <summary>The hash with its rounds written out is SipHash-1-3 as the algorithm is stated: compared with a plain form here.</summary>
        [Fact]
        public void TheWrittenOutHashIsSipHash13()
        {
            var random = new Random(13);
            var bytes = new byte[40];
            for (int i = 0; i < 2000; i++)
            {
                random.NextBytes(bytes);
                ulong m0 = BitConverter.ToUInt64(bytes, 0), m1 = BitConverter.ToUInt64(bytes, 8), m2 = BitConverter.ToUInt64(bytes, 16);
                ulong k0 = BitConverter.ToUInt64(bytes, 24), k1 = BitConverter.ToUInt64(bytes, 32);
                Assert.Equal(PlainSipHash13(m0, m1, m2, k0, k1), SeededHash.Hash(m0, m1, m2, k0, k1));
            }
        }

        // SipHash-c-d with c = 1 compression round per 8-byte block and d = 3 finalisation rounds, one SipRound per call.
        private static ulong PlainSipHash13(ulong m0, ulong m1, ulong m2, ulong k0, ulong k1)
        {
            ulong[] v = { k0 ^ 0x736f6d6570736575UL, k1 ^ 0x646f72616e646f6dUL, k0 ^ 0x6c7967656e657261UL, k1 ^ 0x7465646279746573UL };
            foreach (ulong m in new[] { m0, m1, m2, 24UL << 56 })
            {
                v[3] ^= m;
                SipRound(v);
                v[0] ^= m;
            }
            v[2] ^= 0xff;
            for (int r = 0; r < 3; r++) SipRound(v);
            return v[0] ^ v[1] ^ v[2] ^ v[3];
        }

        private static void SipRound(ulong[] v)
        {
            v[0] += v[1]; v[1] = Rotate(v[1], 13); v[1] ^= v[0]; v[0] = Rotate(v[0], 32);
            v[2] += v[3]; v[3] = Rotate(v[3], 16); v[3] ^= v[2];
            v[0] += v[3]; v[3] = Rotate(v[3], 21); v[3] ^= v[0];
            v[2] += v[1]; v[1] = Rotate(v[1], 17); v[1] ^= v[2]; v[2] = Rotate(v[2], 32);
        }

        private static ulong Rotate(ulong x, int bits) => (x << bits) | (x >> (64 - bits));

        [Fact]
        public void BadArgumentsAreRefused()
        {
            Assert.Throws<ArgumentException>(() => EndPointKey.IPv4(new byte[3], 1));
            Assert.Throws<ArgumentException>(() => EndPointKey.IPv6(new byte[4], 1));
            Assert.Throws<ArgumentOutOfRangeException>(() => EndPointKey.IPv4(1, 2, 3, 4, 65536));
            Assert.Throws<ArgumentOutOfRangeException>(() => EndPointKey.IPv4(1, 2, 3, 4, -1));
            Assert.Throws<ArgumentNullException>(() => EndPointKey.FromIPEndPoint(null!));
            Assert.Throws<ArgumentNullException>(() => EndPointKey.FromSocketAddress(null!));
            Assert.Throws<InvalidOperationException>(() => default(EndPointKey).ToIPEndPoint());
        }

        [Fact]
        public void TextIsReadable()
        {
            Assert.Equal("127.0.0.1:7777", EndPointKey.IPv4(127, 0, 0, 1, 7777).ToString());
            Assert.Equal("[::1]:7777", EndPointKey.FromIPEndPoint(new IPEndPoint(IPAddress.IPv6Loopback, 7777)).ToString());
            Assert.Equal("(none)", default(EndPointKey).ToString());
        }

        [Fact]
        public void KeyOperationsAllocateNothing()
        {
            var sockaddr = new byte[32];
            EndPointKey key = EndPointKey.IPv6(V6Bytes, 5000, 2);
            var socketAddress = new IPEndPoint(IPAddress.IPv6Any, 0).Serialize();
            long hash = 0;
            long bytes = Allocations.Measure(() =>
            {
                key.WriteSockaddr(sockaddr, SockaddrFormat.Linux);
                EndPointKey.TryReadSockaddr(sockaddr, SockaddrFormat.Linux, out EndPointKey back);
                hash += back.GetHashCode();
                key.CopyTo(socketAddress);
                hash += EndPointKey.FromSocketAddress(socketAddress).Port;
                hash += key.MapToIPv6().Canonical().Port;
            });
            Assert.Equal(0, bytes);
            Assert.NotEqual(0, hash);
        }
    }
}
