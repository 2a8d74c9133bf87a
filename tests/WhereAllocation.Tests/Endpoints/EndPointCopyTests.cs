using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The contract between a live <see cref="IPEndPointNonAlloc"/> and the endpoints its
    /// <see cref="IPEndPointNonAlloc.DeepCopyIPEndPoint"/> returns: equal both ways exactly when they name the
    /// same endpoint, and then with the same hash, so a table keyed by copies is found with the live endpoint.
    /// A plain <see cref="IPEndPoint"/> is equal too, but keeps the runtime's hash (documented below as it is).
    /// </summary>
    public class EndPointCopyTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        // Which client sends each datagram: first sights, repeats, returns.
        private static readonly int[] Order = { 0, 1, 1, 2, 0, 2, 1, 0, 0, 2 };

        [Theory]
        [MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]
        public void ATableKeyedByCopiesIsFoundWithTheLiveEndpoint(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var senders = new Senders(family);
            IPEndPointNonAlloc from = senders.NewServerEndPoint();
            var buffer = new byte[64];
            var clientByCopy = new Dictionary<IPEndPoint, int>();
            var firstCopies = new IPEndPoint?[3];
            foreach (int client in Order)
            {
                senders.Send(client, (byte)client);
                Assert.Equal(1, senders.Server.ReceiveFrom_NonAlloc(buffer, from));
                Assert.Equal(senders.Keys[client], from.CurrentKey);

                // Seen before: the copy stored then is found with the live endpoint, and names this client.
                IPEndPoint? first = firstCopies[client];
                Assert.Equal(first != null, clientByCopy.TryGetValue(from, out int found));
                if (first == null)
                {
                    first = firstCopies[client] = from.DeepCopyIPEndPoint();
                    clientByCopy.Add(first, client);
                }
                Assert.Equal(client, clientByCopy[from]);

                // A copy taken now equals the live endpoint and the copy taken at the first sight, with one hash.
                IPEndPoint now = from.DeepCopyIPEndPoint();
                AssertSame(from, now);
                AssertSame(first, now);
                AssertSame(from, first);
                Assert.Equal(from.CurrentKey.GetHashCode(), now.GetHashCode());

                // The other clients' copies stay theirs: the live endpoint has moved on from them.
                for (int other = 0; other < firstCopies.Length; other++)
                {
                    IPEndPoint? copy = firstCopies[other];
                    if (other == client || copy == null) continue;
                    Assert.False(copy.Equals(from));
                    Assert.False(from.Equals(copy));
                    Assert.Equal(senders.Keys[other], EndPointKey.FromIPEndPoint(copy));
                    Assert.Equal(senders.Keys[other].GetHashCode(), copy.GetHashCode());
                }
            }
            Assert.Equal(3, clientByCopy.Count);
        }

        [Theory]
        [InlineData("192.0.2.1", 0L, 7)]
        [InlineData("2001:db8::1", 0L, 8)]
        [InlineData("fe80::1", 3L, 9)]
        [InlineData("fe80::1", 4L, 9)]
        [InlineData("::ffff:192.0.2.1", 0L, 10)]
        public void TheLiveEndpointAndItsCopyAgreeForEveryKindOfAddress(string text, long scopeId, int port)
        {
            EndPointKey key = KeyOf(text, scopeId, port);
            var live = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            live.Set(key);
            IPEndPoint copy = live.DeepCopyIPEndPoint();
            AssertSame(live, copy);
            Assert.Equal(key, EndPointKey.FromIPEndPoint(copy));
            Assert.Equal(key.GetHashCode(), copy.GetHashCode());
            Assert.Equal(scopeId, key.AddressFamily == AddressFamily.InterNetworkV6 ? copy.Address.ScopeId : 0);
            var table = new Dictionary<IPEndPoint, string> { [copy] = text };
            Assert.True(table.TryGetValue(live, out string? found));
            Assert.Equal(text, found);
            var set = new HashSet<IPEndPoint> { live.DeepCopyIPEndPoint() };
            Assert.Contains(copy, set);

            // The live endpoint moves on (same address, other scope or port; then another family): the copy stays.
            var elsewhere = new[]
            {
                KeyOf(text, scopeId, port + 1),
                key.AddressFamily == AddressFamily.InterNetworkV6 ? KeyOf(text, scopeId + 1, port) : KeyOf("::ffff:" + text, 0, port),
                key.AddressFamily == AddressFamily.InterNetwork ? KeyOf("2001:db8::1", 0, port) : KeyOf("192.0.2.1", 0, port),
            };
            foreach (EndPointKey other in elsewhere)
            {
                live.Set(other);
                Assert.False(copy.Equals(live));
                Assert.False(live.Equals(copy));
                Assert.False(table.ContainsKey(live));
                Assert.Equal(key, EndPointKey.FromIPEndPoint(copy));
                Assert.Equal(key.GetHashCode(), copy.GetHashCode());
            }

            // Back to the first endpoint: a copy taken now equals the old one.
            live.Set(key);
            AssertSame(copy, live.DeepCopyIPEndPoint());
            Assert.True(table.ContainsKey(live));
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void ToTheRuntimeACopyIsAPlainIPEndPoint(Family family)
        {
            using var pair = new Loopback(family);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            var buffer = new byte[16];
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            Assert.Equal(1, pair.Server.ReceiveFrom_NonAlloc(buffer, from));
            IPEndPoint copy = from.DeepCopyIPEndPoint();
            IPEndPoint plain = pair.ClientAsSeenByServer.ToIPEndPoint();
            Assert.Equal(plain.Address, copy.Address);
            Assert.Equal(plain.Port, copy.Port);
            Assert.Equal(plain.AddressFamily, copy.AddressFamily);
            Assert.Equal(plain.ToString(), copy.ToString());
            Assert.Equal(plain.Serialize(), copy.Serialize());

            // The runtime's own SendTo and ReceiveFrom take it like any IPEndPoint.
            Assert.Equal(2, pair.Server.SendTo(new byte[] { 2, 3 }, copy));
            EndPoint sender = new IPEndPoint(family == Family.IPv6 ? IPAddress.IPv6Any : IPAddress.Any, 0);
            Assert.Equal(2, pair.Client.ReceiveFrom(buffer, ref sender));
            Assert.Equal(3, buffer[1]);
            Assert.Equal(pair.ServerTarget, sender);
            pair.Client.SendTo(new byte[] { 4 }, pair.ServerTarget);
            EndPoint into = from.DeepCopyIPEndPoint();
            Assert.Equal(1, pair.Server.ReceiveFrom(buffer, ref into));
            Assert.Equal(copy, into);
            Assert.Equal(pair.ClientAsSeenByServer, EndPointKey.FromIPEndPoint(copy));
        }

        [Theory]
        [InlineData("192.0.2.1", "198.51.100.2")]
        [InlineData("2001:db8::1", "2001:db8::2")]
        public void ACopyWhoseAddressOrPortIsChangedHashesAndComparesAsItsNewValue(string text, string otherText)
        {
            var live = new IPEndPointNonAlloc(IPAddress.Parse(text), 1000);
            IPEndPoint copy = live.DeepCopyIPEndPoint();
            AssertSame(live, copy);

            copy.Port = 1001; // IPEndPoint.Port's setter is not virtual: the copy reads its key from its fields each time
            Assert.False(copy.Equals(live));
            live.Set(KeyOf(text, 0, 1001));
            AssertSame(live, copy);

            copy.Address = IPAddress.Parse(otherText);
            Assert.False(copy.Equals(live));
            live.Set(KeyOf(otherText, 0, 1001));
            AssertSame(live, copy);

            if (copy.AddressFamily != AddressFamily.InterNetworkV6) return;
            copy.Address.ScopeId = 5; // IPAddress itself is mutable
            Assert.False(copy.Equals(live));
            live.Set(KeyOf(otherText, 5, 1001));
            AssertSame(live, copy);
        }

        /// <summary>
        /// As it is, so that a change is noticed: a plain IPEndPoint is equal to this library's endpoints (both
        /// ways for copies, one way for the live endpoint, whose base Address field is not kept current), but hashes
        /// with the runtime's function, so the two kinds must not be keys of one hash table.
        /// </summary>
        [Fact]
        public void APlainIPEndPointIsEqualButKeepsTheRuntimesHash()
        {
            string[] addresses = { "192.0.2.1", "192.0.2.2", "198.51.100.7", "10.1.2.3", "2001:db8::1", "2001:db8::2", "fe80::5", "::ffff:192.0.2.1" };
            var live = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            int sameHash = 0;
            foreach (string text in addresses)
            {
                var plain = new IPEndPoint(IPAddress.Parse(text), 4000);
                live.Set(EndPointKey.FromIPEndPoint(plain));
                IPEndPoint copy = live.DeepCopyIPEndPoint();
                Assert.True(plain.Equals(copy));
                Assert.True(copy.Equals(plain));
                Assert.True(live.Equals(plain));
                Assert.Equal(live.GetHashCode(), copy.GetHashCode());
                if (plain.GetHashCode() == copy.GetHashCode()) sameHash++;
            }
            // Each pair matches by chance with odds of 2^-32: all eight would mean the copy took the runtime's hash.
            Assert.True(sameHash < addresses.Length, "the copies hash like plain IPEndPoints");
        }

        [Theory]
        [InlineData("192.0.2.1", 0L)]
        [InlineData("fe80::1", 3L)]
        [InlineData("::ffff:192.0.2.1", 0L)]
        public void HashAndEqualsAllocateNothing(string text, long scopeId)
        {
            var live = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            live.Set(KeyOf(text, scopeId, 6000));
            IPEndPoint copy = live.DeepCopyIPEndPoint();
            IPEndPoint laterCopy = live.DeepCopyIPEndPoint();
            IPEndPoint plain = live.CurrentKey.ToIPEndPoint();
            var table = new Dictionary<IPEndPoint, int> { [copy] = 1 };
            int sink = 0;
            Assert.Equal(0, Allocations.Measure(() => sink ^= live.GetHashCode()));
            Assert.Equal(0, Allocations.Measure(() => sink ^= copy.GetHashCode()));
            Assert.Equal(0, Allocations.Measure(() => sink ^= live.Equals(copy) ? 1 : 0));
            Assert.Equal(0, Allocations.Measure(() => sink ^= copy.Equals(live) ? 1 : 0));
            Assert.Equal(0, Allocations.Measure(() => sink ^= copy.Equals(laterCopy) ? 1 : 0));
            Assert.Equal(0, Allocations.Measure(() => sink ^= live.Equals(plain) ? 1 : 0));
            Assert.Equal(0, Allocations.Measure(() => sink ^= copy.Equals(plain) ? 1 : 0));
            Assert.Equal(0, Allocations.Measure(() => sink ^= table.TryGetValue(live, out int value) ? value : 0));
            Assert.NotEqual(-1, sink);
        }

        [Theory]
        [InlineData("2001:db8::1", 0L)]
        [InlineData("fe80::1", 3L)]
        [InlineData("::ffff:192.0.2.1", 0L)]
        public void ADeepCopyOfAnIPv6EndpointAllocatesOnlyTheEndpointAndItsAddress(string text, long scopeId)
        {
            var live = new IPEndPointNonAlloc(IPAddress.IPv6Any, 0);
            live.Set(KeyOf(text, scopeId, 6000));
            byte[] bytes = IPAddress.Parse(text).GetAddressBytes();
            // Exactly what building one IPEndPoint with its own IPv6 IPAddress costs on this runtime.
            long reference = Allocations.Measure(() => new IPEndPoint(new IPAddress(new ReadOnlySpan<byte>(bytes), scopeId), 6000), 1000, 100);
            long deepCopy = Allocations.Measure(() => live.DeepCopyIPEndPoint(), 1000, 100);
            Assert.True(reference > 0);
            Allocations.AssertSameCost(reference, deepCopy);
        }

        private static EndPointKey KeyOf(string text, long scopeId, int port)
        {
            IPAddress address = IPAddress.Parse(text);
            if (address.AddressFamily == AddressFamily.InterNetworkV6) address.ScopeId = scopeId;
            return EndPointKey.FromIPAddress(address, port);
        }

        /// <summary>Equal both ways, with equal hashes.</summary>
        private static void AssertSame(IPEndPoint a, IPEndPoint b)
        {
            Assert.True(a.Equals(b), a + " should equal " + b);
            Assert.True(b.Equals(a), b + " should equal " + a);
            Assert.Equal(a.GetHashCode(), b.GetHashCode());
        }
    }
}
