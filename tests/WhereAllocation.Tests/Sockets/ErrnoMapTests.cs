using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Linux's and macOS's error numbers as the SocketError the runtime reports for them: the ones a server meets when it
    /// runs out of descriptors (EMFILE, ENFILE) or receives on a socket shut down (ESHUTDOWN). The maps are plain tables,
    /// checked on any OS (no call is made).
    /// </summary>
    public class ErrnoMapTests
    {
        [Theory]
        [InlineData(23, SocketError.TooManyOpenSockets)] // ENFILE
        [InlineData(24, SocketError.TooManyOpenSockets)] // EMFILE
        [InlineData(108, SocketError.Shutdown)]          // ESHUTDOWN
        [InlineData(11, SocketError.WouldBlock)]         // EAGAIN: unchanged
        [InlineData(111, SocketError.ConnectionRefused)] // unchanged
        public void Linux(int errno, SocketError expected)
        {
            Assert.Equal(expected, new LinuxSocketCalls().ErrorOf(errno));
        }

        [Theory]
        [InlineData(23, SocketError.TooManyOpenSockets)] // ENFILE
        [InlineData(24, SocketError.TooManyOpenSockets)] // EMFILE
        [InlineData(58, SocketError.Shutdown)]           // ESHUTDOWN
        [InlineData(35, SocketError.WouldBlock)]         // EAGAIN: unchanged
        [InlineData(61, SocketError.ConnectionRefused)]  // unchanged
        public void Darwin(int errno, SocketError expected)
        {
            Assert.Equal(expected, new DarwinSocketCalls().ErrorOf(errno));
        }
    }
}
