using System;
using System.Net.Sockets;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, where every receive meets the moment after another reader of the socket took the
    /// datagram its readiness check saw. On Windows the receive checks with WSAPoll first: here it runs as if WSAPoll had
    /// said readable (<see cref="OsSocketCalls.ReceiveAfterReadiness"/>, the receive without the check), on a socket that may
    /// hold nothing. Elsewhere the receive is one call that asks not to wait (MSG_DONTWAIT), with no moment between a check
    /// and the receive: the real one (which is what ReceiveAfterReadiness is there).
    /// </summary>
    internal sealed unsafe class TakenDatagram : RealOsCalls
    {
        private TakenDatagram()
            : base("with the datagram taken between the readiness check and the receive")
        {
        }

        public static TakenDatagram Install() => Installed(new TakenDatagram());

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            return Os.ReceiveAfterReadiness(socket, payload, size, peek, address, addressLength, out error);
        }

        // Linux's recvmmsg asks not to wait itself (MSG_DONTWAIT): the real one.
        internal override bool HasMultiMessage => Os.HasMultiMessage;

        internal override int ReceiveMany(IntPtr socket, Interop.Libc.LinuxMMsgHdr* messages, int count, out SocketError error) => Os.ReceiveMany(socket, messages, count, out error);
    }
}
