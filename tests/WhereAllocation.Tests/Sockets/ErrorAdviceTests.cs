using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The errors a first server meets say what to do, on every path, while staying exactly the SocketException (and the
    /// error code) that code written for the runtime's calls catches: an empty non-blocking socket points to the Try form, a
    /// datagram longer than the buffer to the span form that reports a cut. The advice is in the message of the net8.0 build
    /// only: netstandard2.1 has no SocketException constructor that takes a message (see SocketErrors), so against the
    /// netstandard2.1 build (on Mono, and on CoreCLR as Unity's CoreCLR back end runs it) the test asserts the OS's message
    /// and the exact type.
    /// </summary>
    public class ErrorAdviceTests : IDisposable
    {
        // The path is forced per case: the next class must find the default again (BatchAllocationTests, which forces none,
        // measured the Managed path's 72 B per datagram when it came after a Managed case here: the suite's order varies).
        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AnEmptyNonBlockingSocketPointsToTheTryForm(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Server.Blocking = false;
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[64], 0, 64, SocketFlags.None, from));
            Assert.Equal(SocketError.WouldBlock, e.SocketErrorCode);
            Advised(e, "TryReceiveFrom_NonAlloc returns false");
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void ADatagramLongerThanTheBufferPointsToTheSpanForm(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(Family.IPv4);
            pair.Client.SendTo(new byte[100], pair.ServerEndPoint);
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            var e = Assert.Throws<SocketException>(() => pair.Server.ReceiveFrom_NonAlloc(new byte[10], 0, 10, SocketFlags.None, from));
            Assert.Equal(SocketError.MessageSize, e.SocketErrorCode);
            Advised(e, "ReceivedDatagram.Truncated");
        }

        private static void Advised(SocketException e, string advice)
        {
            if (LibraryBuild.IsNetStandard) Assert.DoesNotContain(advice, e.Message);
            else Assert.Contains(advice, e.Message);
            Assert.StartsWith(new SocketException((int)e.SocketErrorCode).Message, e.Message);
        }
    }
}
