using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, with a send buffer that says it is full: while <see cref="Refusing"/> is set, or for the
    /// next <see cref="RefuseNext"/> sends, a send fails with WouldBlock. A UDP send on loopback never waits on Linux (the
    /// loopback device hands the datagram's memory back at once), so this is how a send that waits is made here.
    /// Installed with <see cref="Install"/> for the native path; every other call is the real OS's.
    /// </summary>
    internal sealed unsafe class FullSendBuffer : RealOsCalls
    {
        private int _refuseNext;
        private int _refusing;
        private int _refused;

        private FullSendBuffer()
            : base("with a full send buffer")
        {
        }

        public static FullSendBuffer Install() => Installed(new FullSendBuffer());

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
            return Os.Send(socket, payload, size, dontRoute, address, addressLength, out error);
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

        // The real OS's answer here too, not the default the base keeps for optional calls.
        internal override bool SendNeverWaits => Os.SendNeverWaits;
    }
}
