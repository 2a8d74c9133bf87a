using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with a send buffer that says it is full: while <see cref="Refusing"/> is set, or for the
    /// next <see cref="RefuseNext"/> sends, a send fails with WouldBlock. A UDP send on loopback never waits on Linux (the
    /// loopback device hands the datagram's memory back at once), so this is how a send that waits is made here.
    /// Installed with <see cref="Install"/> for the native path.
    /// </summary>
    internal sealed unsafe class FullSendBuffer : OsSocketCalls, IDisposable
    {
        private readonly OsSocketCalls _os = OsSocketCalls.Current;
        private int _refuseNext;
        private int _refusing;
        private int _refused;

        private FullSendBuffer()
        {
        }

        public static FullSendBuffer Install()
        {
            var full = new FullSendBuffer();
            NativeDatagramIO.Os = full;
            return full;
        }

        public void Dispose() => NativeDatagramIO.Os = null!;

        /// <summary>Refuses every send while true.</summary>
        public bool Refusing
        {
            get => Volatile.Read(ref _refusing) != 0;
            set => Volatile.Write(ref _refusing, value ? 1 : 0);
        }

        /// <summary>Refuses the next <paramref name="count"/> sends.</summary>
        public void RefuseNext(int count) => Interlocked.Add(ref _refuseNext, count);

        /// <summary>Sends refused so far.</summary>
        public int Refused => Volatile.Read(ref _refused);

        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error)
        {
            if (Refusing || TryTakeOne())
            {
                Interlocked.Increment(ref _refused);
                error = SocketError.WouldBlock;
                return -1;
            }
            return _os.Send(socket, payload, size, dontRoute, address, addressLength, out error);
        }

        private bool TryTakeOne()
        {
            while (true)
            {
                int left = Volatile.Read(ref _refuseNext);
                if (left == 0) return false;
                if (Interlocked.CompareExchange(ref _refuseNext, left - 1, left) == left) return true;
            }
        }

        // Everything else is the real OS's.
        internal override string Name => _os.Name + " with a full send buffer";
        internal override SockaddrFormat Format => _os.Format;
        internal override bool Probe() => _os.Probe();
        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error) => _os.Receive(socket, payload, size, peek, address, addressLength, out error);
        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error) => _os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => _os.ReceiveTimeoutMilliseconds(socket);
        internal override bool IsDualMode(IntPtr socket) => _os.IsDualMode(socket);
        internal override SocketError DisableAddressSharing(IntPtr socket) => _os.DisableAddressSharing(socket);
        internal override int BufferSize(IntPtr socket, bool receive) => _os.BufferSize(socket, receive);
        internal override bool IsConnected(IntPtr socket) => _os.IsConnected(socket);
        internal override bool SendNeverWaits => _os.SendNeverWaits;
    }
}
