#nullable enable
using System;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation
{
    /// <summary>The send of one <see cref="AsyncDatagramSocket"/>: one datagram, without waiting for room, on the path the socket's wrapper was made on.</summary>
    internal sealed class SendOperation : DatagramOperation<int>
    {
        private ReadOnlyMemory<byte> _buffer;
        private EndPointKey _to;

        internal SendOperation(AwaitedSocket owner)
            : base(owner)
        {
        }

        private protected override string BusyMessage =>
            "A send is already outstanding on this AsyncDatagramSocket: await it before the next (one send at a time per socket).";

        /// <summary>Sends to <paramref name="to"/>, already fitted to the socket's family.</summary>
        internal ValueTask<int> Start(ReadOnlyMemory<byte> buffer, in EndPointKey to, CancellationToken token, object anchor)
        {
            if (!TryBegin(token, out ValueTask<int> refused)) return refused;
            _buffer = buffer;
            _to = to;
            return Run(token, anchor);
        }

        private protected override bool TryNow(bool afterReport, out int result)
        {
            result = PathDispatch.Send(Owner.Path, Owner.Socket, null, 0, _buffer.Span, SocketFlags.None, _to, false);
            return result >= 0;
        }

        private protected override void Clear() => _buffer = default;
    }
}
