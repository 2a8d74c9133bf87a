using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A batch's slots keep the recipient's family they were added with, and every <see cref="DatagramBatch.Send"/> fits the
    /// pending ones to the socket it sends from: sends from an IPv4 socket and from a dual-mode IPv6 socket, alternating, with
    /// IPv4 and IPv4-mapped recipients added between them, all arrive (the batch skips the fitting only when every pending
    /// slot already has the socket's family).
    /// </summary>
    public class BatchRecipientFamilyTests
    {
        [Theory]
        [MemberData(nameof(Matrix.BatchModes), MemberType = typeof(Matrix))]
        public void SendsFromBothFamiliesFitEveryPendingSlot(DatagramBatchMode mode)
        {
            if (!BatchModes.TryUse(mode)) return; // asserted that this OS refuses the mode explicitly
            using var receiver = new Loopback(Family.IPv4);  // its Server receives everything
            using var dual = new Loopback(Family.DualMode);  // its Server: a dual-mode IPv6 socket; its Client: an IPv4 socket
            using var batch = new DatagramBatch(4, 64, mode);
            EndPointKey to = receiver.ServerKey;
            Socket[] from = { dual.Server, dual.Client, dual.Client, dual.Server, dual.Server };
            EndPointKey[] recipient = { to, to, to.MapToIPv6(), to, to.MapToIPv6() };
            var scratch = new byte[32];
            var buffer = new byte[64];
            for (uint k = 0; k < from.Length; k++)
            {
                int length = TestDatagram.Write(scratch, k, 4);
                Assert.True(batch.TryAdd(scratch.AsSpan(0, length), recipient[k]));
                Assert.Equal(1, batch.Send(from[k]));
                Assert.Equal(0, batch.FailedCount);
                Assert.Equal(0, batch.PendingCount);
                int got = receiver.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out EndPointKey sender);
                Assert.Equal(length, got);
                Assert.Equal(k, BitConverter.ToUInt32(buffer, 0));
                Assert.Equal(((IPEndPoint)from[k].LocalEndPoint!).Port, sender.Port); // from the socket it was sent from
                if (k % 2 == 1) batch.Clear(); // slots kept across sends, and a fresh batch, alike
            }
        }
    }
}
