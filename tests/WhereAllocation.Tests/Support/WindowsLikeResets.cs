using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with one Windows behaviour added that neither Linux nor Wine shows: after a
    /// send to a closed port, the next receive on the socket fails with WSAECONNRESET, connected or not (Windows
    /// queues the ICMP port unreachable as a report; Linux gives it only to connected sockets, and Wine's sockets
    /// are Linux's). <see cref="QueueResets"/> stands for such sends; <see cref="DisableResetReports"/> turns the
    /// reports off as SIO_UDP_CONNRESET does. Installed with <see cref="Install"/> for the native path; every other
    /// call is the real OS's.
    /// </summary>
    internal sealed unsafe class WindowsLikeResets : RealOsCalls
    {
        private int _pending;
        private bool _off;

        private WindowsLikeResets()
            : base("with Windows' reset reports")
        {
        }

        public static WindowsLikeResets Install() => Installed(new WindowsLikeResets());

        /// <summary>Reports that <paramref name="count"/> earlier sends met a closed port; each fails one receive.</summary>
        public void QueueResets(int count) => Interlocked.Add(ref _pending, count);

        public int Pending => Volatile.Read(ref _pending);

        public bool ReportsTurnedOff => _off;

        internal override bool HasResetReports => true;

        internal override SocketError DisableResetReports(IntPtr socket)
        {
            _off = true;
            return SocketError.Success;
        }

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            if (!_off && Volatile.Read(ref _pending) > 0)
            {
                Interlocked.Decrement(ref _pending);
                error = SocketError.ConnectionReset;
                return -1;
            }
            return Os.Receive(socket, payload, size, peek, address, addressLength, out error);
        }

        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
        {
            // A pending report makes the socket readable, as an error does.
            if (!forWrite && !_off && Volatile.Read(ref _pending) > 0)
            {
                hungUp = false;
                error = SocketError.Success;
                return 1;
            }
            return Os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
        }
    }
}
