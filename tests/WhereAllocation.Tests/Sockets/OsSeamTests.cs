using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS seam (<see cref="OsSocketCalls.InUse"/>) that tests put a stand-in OS into: what the native path fixes for the
    /// process is the OS the process runs on, whatever stands in the seam when the path first starts.
    /// </summary>
    public class OsSeamTests
    {
        /// <summary>
        /// In a fresh process, the first touch of the native path comes while a made-up OS stands in the seam (as a test that
        /// runs first in a suite whose order varies can make it): once the seam is given back, the path is available, writes
        /// this OS's sockaddr layout, and a datagram goes and comes on it. Before, the stand-in's failed probe and layout were
        /// kept for good: every send of the process then failed (EAFNOSUPPORT), seen in CI's CoreCLR stage.
        /// </summary>
        [Fact]
        public void TheNativePathStartsFromTheOsItRunsOnWhateverStandsInTheSeam()
        {
            if (ChildProcess.Available && !ChildProcess.InChild)
            {
                ChildProcess.AssertPasses(GetType(), nameof(TheNativePathStartsFromTheOsItRunsOnWhateverStandsInTheSeam));
                return;
            }
            try
            {
                OsSocketCalls.InUse = new UnknownOsSocketCalls("an OS the tests made up");
                _ = NativeDatagramIO.IsSupported; // the path's facts are fixed here, at its first touch in a child
            }
            finally
            {
                OsSocketCalls.InUse = null!;
            }
            Assert.True(NativeDatagramIO.IsSupported, NativeDatagramIO.UnavailableReason);
            Assert.Equal(OsSocketCalls.Current.Format, NativeDatagramIO.Format);
            Assert.True(Paths.TryForce(DatagramPath.Native));
            try
            {
                using var pair = new Loopback(Family.IPv4);
                pair.Client.SendTo_NonAlloc(new byte[] { 7, 8 }, pair.ServerKey);
                var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
                Assert.Equal(2, pair.Server.ReceiveFrom_NonAlloc(new byte[16], from));
                Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
            }
            finally
            {
                DatagramPathSettings.Reset();
            }
        }
    }
}
