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
    /// reports off as SIO_UDP_CONNRESET does. Installed with <see cref="Install"/> for the native path.
    /// </summary>
    internal sealed unsafe class WindowsLikeResets : OsSocketCalls, IDisposable
    {
        private readonly OsSocketCalls _os = OsSocketCalls.Current;
        private int _pending;
        private bool _off;

        private WindowsLikeResets()
        {
        }

        public static WindowsLikeResets Install()
        {
            var resets = new WindowsLikeResets();
            NativeDatagramIO.Os = resets;
            return resets;
        }

        public void Dispose() => NativeDatagramIO.Os = null!;

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
            return _os.Receive(socket, payload, size, peek, address, addressLength, out error);
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
            return _os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
        }

        // Everything else is the real OS's.
        internal override string Name => _os.Name + " with Windows' reset reports";
        internal override SockaddrFormat Format => _os.Format;
        internal override bool Probe() => _os.Probe();
        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error) => _os.Send(socket, payload, size, dontRoute, address, addressLength, out error);
        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => _os.ReceiveTimeoutMilliseconds(socket);
        internal override bool IsDualMode(IntPtr socket) => _os.IsDualMode(socket);
        internal override SocketError DisableAddressSharing(IntPtr socket) => _os.DisableAddressSharing(socket);
        internal override int BufferSize(IntPtr socket, bool receive) => _os.BufferSize(socket, receive);
        internal override bool IsConnected(IntPtr socket) => _os.IsConnected(socket);
    }
}
