using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>Helpers of the batch tests: numbered, checksummed datagrams sent and accounted for through batches.</summary>
    public static class BatchTraffic
    {
        /// <summary>Payload bytes of datagram <paramref name="sequence"/>: varied, at most 250, sometimes 0.</summary>
        public static int PayloadLength(uint sequence) => (int)(sequence * 37 % 251);

        /// <summary>
        /// Sends datagrams <paramref name="first"/>..<paramref name="first"/>+<paramref name="count"/>-1 from
        /// <paramref name="from"/> to <paramref name="to"/> through <paramref name="batch"/>, a full batch per call,
        /// and asserts that every call sent all of it.
        /// </summary>
        public static void SendNumbered(DatagramBatch batch, Socket from, EndPointKey to, uint first, int count)
        {
            var scratch = new byte[TestDatagram.Overhead + 256];
            uint next = first, end = first + (uint)count;
            while (next < end)
            {
                batch.Clear();
                while (next < end && !batch.IsFull)
                {
                    int length = TestDatagram.Write(scratch, next, PayloadLength(next));
                    Assert.True(batch.TryAdd(scratch.AsSpan(0, length), to));
                    next++;
                }
                int filled = batch.Count;
                Assert.Equal(filled, batch.Send(from));
                Assert.Equal(0, batch.PendingCount);
                Assert.Equal(0, batch.FailedCount);
            }
        }

        /// <summary>
        /// Receives through <paramref name="batch"/> until <paramref name="expected"/> datagrams came or none came
        /// for 2 s; checks each one (intact, from <paramref name="sender"/>, not truncated) and counts it in
        /// <paramref name="seen"/> by sequence number minus <paramref name="first"/>. Returns how many came.
        /// </summary>
        public static int ReceiveNumbered(DatagramBatch batch, Socket socket, EndPointKey sender, uint first, int[] seen, int expected)
        {
            int received = 0;
            while (received < expected)
            {
                int n = batch.Receive(socket, 2000);
                if (n == 0) break;
                Assert.Equal(n, batch.Count);
                Assert.True(n <= batch.Capacity);
                for (int i = 0; i < n; i++)
                {
                    ReadOnlySpan<byte> datagram = batch.GetDatagram(i, out EndPointKey from);
                    ReceivedDatagram info = batch.GetInfo(i);
                    Assert.True(TestDatagram.Check(datagram, out uint sequence), "datagram " + i + " of " + n + " is damaged (" + datagram.Length + " bytes)");
                    Assert.Equal(sender, from);
                    Assert.Equal(sender, info.RemoteEndPoint);
                    Assert.Equal(datagram.Length, info.Length);
                    Assert.False(info.Truncated);
                    Assert.InRange(sequence - first, 0u, (uint)seen.Length - 1);
                    seen[sequence - first]++;
                }
                received += n;
            }
            return received;
        }

        /// <summary>Asserts that every datagram came exactly once and nothing else is queued.</summary>
        public static void AssertExactlyOnce(int[] seen, DatagramBatch batch, Socket socket)
        {
            for (int i = 0; i < seen.Length; i++) Assert.True(seen[i] == 1, "datagram " + i + " arrived " + seen[i] + " times");
            Assert.Equal(0, batch.Receive(socket));
        }

        /// <summary>A socket bound to loopback of the given kind (IPv4, IPv6, or dual mode on ::ffff:127.0.0.1).</summary>
        public static Socket Bound(Family family)
        {
            Socket socket;
            switch (family)
            {
                case Family.IPv4: socket = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false); break;
                case Family.IPv6: socket = Loopback.Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false); break;
                default: socket = Loopback.Bound(AddressFamily.InterNetworkV6, Loopback.MappedLoopback, true); break;
            }
            socket.ReceiveTimeout = 5000;
            return socket;
        }

        /// <summary>The key a peer sends to, to reach <paramref name="socket"/> (IPv4 for a dual-mode socket).</summary>
        public static EndPointKey KeyOf(Socket socket)
        {
            EndPointKey key = EndPointKey.FromIPEndPoint((IPEndPoint)socket.LocalEndPoint!);
            return key.IsIPv4MappedToIPv6 ? key.MapToIPv4() : key;
        }
    }
}
