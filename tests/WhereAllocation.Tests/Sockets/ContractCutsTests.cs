using System;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>docs/CONTRACT.md, "A socket shut down for sending": every cell on every path the runtime has.</summary>
    public partial class ContractTests
    {
        /// <summary>
        /// "Send shut down": the sending socket, connected to its peer, was shut down for sending (<c>Shutdown(SocketShutdown.Send)</c>). Every send member
        /// reports <c>Shutdown</c>, as the runtime's own SendTo does; a batch's run (two datagrams that would leave as one segmented
        /// send) fails slot by slot with it and leaves <see cref="DatagramBatch.SegmentationOffload"/> as it was.
        /// </summary>
        [Theory]
        [InlineData(DatagramPath.Native, Family.IPv4)]
        [InlineData(DatagramPath.Native, Family.IPv6)]
        [InlineData(DatagramPath.Native, Family.DualMode)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv4)]
        [InlineData(DatagramPath.SocketAddress, Family.IPv6)]
        [InlineData(DatagramPath.Managed, Family.IPv4)]
        [InlineData(DatagramPath.Managed, Family.IPv6)]
        public void SendShutDown(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            var seen = new Observed(SendShutdownSection);
            foreach (string id in s_sendIds)
            {
                foreach (Variant mode in ModesFor(id))
                {
                    using var pair = new Loopback(family);
                    pair.Client.Connect(pair.ServerTarget); // a datagram socket can be shut down only once connected
                    pair.Client.Shutdown(SocketShutdown.Send);
                    string result = id == "B3" ? BatchSendShutDown(pair, mode.Batch) : SendTo(pair, id, mode, 24);
                    seen.Add(RowName(id, mode), id, "send shut down", result);
                }
            }
            seen.AssertAsDocumented();
        }

        private const string SendShutdownSection = "A socket shut down for sending";

        private static string BatchSendShutDown(Loopback pair, DatagramBatchMode mode)
        {
            using var batch = new DatagramBatch(4, 1500, mode);
            bool segmenting = batch.SegmentationOffload;
            Assert.True(batch.TryAdd(Payload(100, 1), pair.ServerKey));
            Assert.True(batch.TryAdd(Payload(100, 2), pair.ServerKey));
            int sent;
            try
            {
                sent = batch.Send(pair.Client);
            }
            catch (SocketException e)
            {
                return "threw " + e.SocketErrorCode;
            }
            if (sent != 0 || batch.FailedCount != 2) return "sent " + sent + ", failed " + batch.FailedCount;
            SocketError first = batch.GetSendError(0), second = batch.GetSendError(1);
            if (first != second) return first + ", then " + second;
            return segmenting && !batch.SegmentationOffload ? first + ", and segmentation offload turned off" : first.ToString();
        }

    }
}
