using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// EndPointKey's allocation-free readers: TryFormat writes what ToString and the runtime's IPEndPoint write, and
    /// TryWriteAddressBytes what IPAddress.GetAddressBytes gives; both at 0 B.
    /// </summary>
    public class EndPointKeyFormatTests
    {
        [Theory]
        [InlineData("127.0.0.1", 5000, 0u)]
        [InlineData("0.0.0.0", 0, 0u)]
        [InlineData("255.255.255.255", 65535, 0u)]
        [InlineData("10.0.200.7", 9, 0u)]
        [InlineData("::", 1, 0u)]
        [InlineData("::1", 7777, 0u)]
        [InlineData("::ffff:127.0.0.1", 40000, 0u)]
        [InlineData("::ffff:0.0.0.0", 2, 0u)]
        [InlineData("::ffff:0.1.0.0", 2, 0u)]
        [InlineData("::1.2.3.4", 3, 0u)]
        [InlineData("::0.0.0.1", 3, 0u)]
        [InlineData("::0.1.0.0", 3, 0u)]
        [InlineData("::ffff:0:1.2.3.4", 4, 0u)]
        [InlineData("::5efe:1.2.3.4", 5, 0u)]
        [InlineData("fe80::5efe:1.2.3.4", 5, 0u)]
        [InlineData("1:0:0:1:0:0:0:1", 6, 0u)]
        [InlineData("1:0:0:0:1:0:0:1", 6, 0u)]
        [InlineData("1:0:1:0:1:0:1:0", 6, 0u)]
        [InlineData("1::", 8, 0u)]
        [InlineData("0:0:1::", 8, 0u)]
        [InlineData("0:0:0:0:ffff::", 8, 0u)]
        [InlineData("1:2:3:4:5:6:7:8", 9, 0u)]
        [InlineData("2001:db8::ff00:42:8329", 443, 0u)]
        [InlineData("abcd:ef01:2345:6789:abcd:ef01:2345:6789", 65535, 0u)]
        [InlineData("fe80::1", 5, 3u)]
        [InlineData("fe80::1", 5, 4294967295u)]
        [InlineData("::ffff:1.2.3.4", 5, 7u)]
        [InlineData("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, 4294967295u)]
        public void TryFormatWritesWhatToStringAndTheRuntimeWrite(string address, int port, uint scopeId)
        {
            IPAddress parsed = IPAddress.Parse(address);
            IPAddress ip = scopeId == 0 ? parsed : new IPAddress(parsed.GetAddressBytes(), scopeId);
            EndPointKey key = EndPointKey.FromIPAddress(ip, port);
            string expected = new IPEndPoint(ip, port).ToString();
            Assert.Equal(expected, key.ToString());
            Assert.Equal(expected, Format(key));
        }

        [Fact]
        public void TryFormatMatchesTheRuntimeForManyAddresses()
        {
            // Groups that are mostly 0 or 0xffff, so that every compression and IPv4-tail case comes up.
            var random = new Random(22);
            var bytes = new byte[16];
            int ipv4Tails = 0, compressed = 0;
            for (int i = 0; i < 3000; i++)
            {
                for (int g = 0; g < 8; g++)
                {
                    int choice = random.Next(8);
                    int value = choice < 4 ? 0 : choice == 4 ? 0xffff : choice == 5 ? 0x5efe : random.Next(0x10000);
                    bytes[2 * g] = (byte)(value >> 8);
                    bytes[2 * g + 1] = (byte)value;
                }
                uint scope = random.Next(4) == 0 ? (uint)random.Next(1, int.MaxValue) : 0;
                int port = random.Next(65536);
                var ip = new IPAddress(bytes, scope);
                EndPointKey key = EndPointKey.FromIPAddress(ip, port);
                string expected = new IPEndPoint(ip, port).ToString();
                Assert.Equal(expected, Format(key));
                Assert.Equal(expected, key.ToString());
                if (expected.IndexOf('.') >= 0) ipv4Tails++;
                if (expected.IndexOf("::", StringComparison.Ordinal) >= 0) compressed++;

                var v4 = new IPAddress(new[] { bytes[0], bytes[1], bytes[2], bytes[3] });
                Assert.Equal(new IPEndPoint(v4, port).ToString(), Format(EndPointKey.FromIPAddress(v4, port)));
            }
            Assert.True(ipv4Tails > 50 && compressed > 1000, "too few special cases drawn: " + ipv4Tails + " IPv4 tails, " + compressed + " compressed");
        }

        [Fact]
        public void TheDefaultKeyIsNone()
        {
            Assert.Equal("(none)", default(EndPointKey).ToString());
            Assert.Equal("(none)", Format(default));
        }

        [Theory]
        [InlineData("127.0.0.1", 5000, 0u)]
        [InlineData("::ffff:127.0.0.1", 5000, 0u)]
        [InlineData("fe80::1", 5, 12u)]
        public void TryFormatIntoTooShortASpanWritesNothing(string address, int port, uint scopeId)
        {
            IPAddress parsed = IPAddress.Parse(address);
            EndPointKey key = EndPointKey.FromIPAddress(scopeId == 0 ? parsed : new IPAddress(parsed.GetAddressBytes(), scopeId), port);
            string text = key.ToString();
            var buffer = new char[text.Length];
            for (int length = 0; length < text.Length; length++)
            {
                buffer.AsSpan().Fill('#');
                Assert.False(key.TryFormat(buffer.AsSpan(0, length), out int written));
                Assert.Equal(0, written);
                Assert.Equal(new string('#', text.Length), new string(buffer));
            }
            Assert.True(key.TryFormat(buffer, out int all));
            Assert.Equal(text, new string(buffer, 0, all));
        }

        [Fact]
        public void TheLongestTextFitsMaxFormattedLength()
        {
            var ip = new IPAddress(IPAddress.Parse("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255").GetAddressBytes(), uint.MaxValue);
            string text = EndPointKey.FromIPAddress(ip, 65535).ToString();
            Assert.True(text.Length <= EndPointKey.MaxFormattedLength, text);
        }

        [Theory]
        [InlineData("127.0.0.1")]
        [InlineData("::1")]
        [InlineData("::ffff:10.1.2.3")]
        [InlineData("2001:db8::ff00:42:8329")]
        public void TryWriteAddressBytesGivesTheAddressBytes(string address)
        {
            IPAddress ip = IPAddress.Parse(address);
            EndPointKey key = EndPointKey.FromIPAddress(ip, 9);
            byte[] expected = ip.GetAddressBytes();
            var buffer = new byte[16];
            Assert.True(key.TryWriteAddressBytes(buffer, out int written));
            Assert.Equal(expected, buffer.AsSpan(0, written).ToArray());
            Assert.Equal(ip.AddressFamily, key.AddressFamily);
            Assert.Equal(9, key.Port);
            Assert.False(key.TryWriteAddressBytes(buffer.AsSpan(0, expected.Length - 1), out written));
            Assert.Equal(0, written);
            Assert.False(default(EndPointKey).TryWriteAddressBytes(buffer, out written));
            Assert.Equal(0, written);
        }

        [Fact]
        public void TheReadersAllocateNothing()
        {
            EndPointKey v4 = EndPointKey.IPv4(192, 168, 100, 200, 65000);
            EndPointKey v6 = EndPointKey.FromIPAddress(new IPAddress(IPAddress.Parse("2001:db8::ff00:42:8329").GetAddressBytes(), 42), 443);
            EndPointKey mapped = v4.MapToIPv6();
            var text = new char[EndPointKey.MaxFormattedLength];
            var address = new byte[16];
            long sum = 0;
            long bytes = Allocations.Measure(() =>
            {
                v4.TryFormat(text, out int a);
                v6.TryFormat(text, out int b);
                mapped.TryFormat(text, out int c);
                v6.TryWriteAddressBytes(address, out int d);
                sum += a + b + c + d + v4.Port + (int)v6.AddressFamily;
            });
            Assert.Equal(0, bytes);
            Assert.True(sum > 0);
        }

        [Fact]
        public void ReceivedSenderIsReadableWithoutAllocating()
        {
            using var pair = new Loopback(Family.DualMode);
            pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
            var buffer = new byte[64];
            ReceivedDatagram datagram = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
            EndPointKey sender = datagram.RemoteEndPoint;
            IPEndPoint runtime = sender.ToIPEndPoint();
            var text = new char[EndPointKey.MaxFormattedLength];
            Assert.True(sender.TryFormat(text, out int n));
            Assert.Equal(runtime.ToString(), new string(text, 0, n));
            Assert.Equal(runtime.Port, sender.Port);
            Assert.Equal(runtime.AddressFamily, sender.AddressFamily);
            var address = new byte[16];
            Assert.True(sender.TryWriteAddressBytes(address, out int length));
            Assert.Equal(runtime.Address.GetAddressBytes(), address.AsSpan(0, length).ToArray());
        }

        private static string Format(EndPointKey key)
        {
            var buffer = new char[EndPointKey.MaxFormattedLength];
            Assert.True(key.TryFormat(buffer, out int written));
            return new string(buffer, 0, written);
        }
    }
}
