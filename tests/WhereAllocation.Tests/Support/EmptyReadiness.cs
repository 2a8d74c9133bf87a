using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with a socket that always polls readable while its receive always finds nothing: what
    /// a Linux socket with an error queue (IP_RECVERR) does, or one whose datagram another thread takes, on any OS. Counts
    /// the receive calls, so a test can tell a wait from a busy loop by the number of calls, not by time.
    /// </summary>
    internal sealed unsafe class EmptyReadiness : RealOsCalls
    {
        private int _receives;

        private EmptyReadiness()
            : base("with readiness that yields no datagram")
        {
        }

        public static EmptyReadiness Install() => Installed(new EmptyReadiness());

        /// <summary>Receive calls so far (single and many).</summary>
        public int Receives => Volatile.Read(ref _receives);

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            Interlocked.Increment(ref _receives);
            error = SocketError.WouldBlock;
            return -1;
        }

        internal override bool HasMultiMessage => Os.HasMultiMessage;

        internal override int ReceiveMany(IntPtr socket, Interop.Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            Interlocked.Increment(ref _receives);
            error = SocketError.WouldBlock;
            return -1;
        }

        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
        {
            hungUp = false;
            error = SocketError.Success;
            return 1;
        }
    }
}
