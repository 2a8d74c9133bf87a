#nullable enable
using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation
{
    /// <summary>The receive of one <see cref="AsyncDatagramSocket"/>: one datagram, without waiting, on the path the socket's wrapper was made on.</summary>
    internal sealed class ReceiveOperation : DatagramOperation<ReceivedDatagram>
    {
        private Memory<byte> _buffer;

        internal ReceiveOperation(AwaitedSocket owner)
            : base(owner)
        {
        }

        private protected override string BusyMessage =>
            "A receive is already outstanding on this AsyncDatagramSocket: await it before the next (one receive at a time per socket).";

        internal ValueTask<ReceivedDatagram> Start(Memory<byte> buffer, CancellationToken token, object anchor)
        {
            if (!TryBegin(token, out ValueTask<ReceivedDatagram> refused)) return refused;
            _buffer = buffer;
            return Run(token, anchor);
        }

        private protected override bool TryNow(bool askShutdown, out ReceivedDatagram result)
        {
            return PathDispatch.Receive(Owner.Path, Owner.Socket, null, 0, _buffer.Span, SocketFlags.None, false, null, out result, askShutdown);
        }

        private protected override bool IsReceive => true;

        private protected override void Clear() => _buffer = default;
    }
}
