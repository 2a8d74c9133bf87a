using System;
using System.Net.Sockets;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with every receive answering as Windows answers on a socket shut down for receiving
    /// (WSAESHUTDOWN). Wine 8 ignores SD_RECEIVE on a datagram socket (its receives wait as on an empty socket), so under
    /// Wine this is how the native path's Windows branch meets the answer real Windows gives.
    /// </summary>
    internal sealed unsafe class ShutDownReceives : RealOsCalls
    {
        private ShutDownReceives()
            : base("with its receiving side shut down")
        {
        }

        public static ShutDownReceives Install() => Installed(new ShutDownReceives());

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            error = SocketError.Shutdown;
            return -1;
        }

        internal override bool HasMultiMessage => Os.HasMultiMessage;

        internal override int ReceiveMany(IntPtr socket, Interop.Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            error = SocketError.Shutdown;
            return -1;
        }
    }
}
