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

        // True once a wait of this operation was ended by a datagram the engine's try received: the socket was receiving then
        // (see ReceiveShutdown.ForAwaitTry). Written by the engine's thread, read by callers.
        private bool _receivedAfterReport;

        private protected override bool TryNow(bool afterReport, out ReceivedDatagram result)
        {
            ReceiveWaitKind kind = ReceiveShutdown.ForAwaitTry(afterReport, Volatile.Read(ref _receivedAfterReport), Owner.Engine.ReportsReceiveShutDown);
            bool done = PathDispatch.Receive(Owner.Path, Owner.Socket, null, 0, _buffer.Span, SocketFlags.None, kind, null, out result);
            if (done && afterReport && !Volatile.Read(ref _receivedAfterReport)) Volatile.Write(ref _receivedAfterReport, true);
            return done;
        }

        private protected override bool NothingWillCome(int emptyReports) => ReceiveShutdown.AwaitAsksAfter(emptyReports, Owner.Socket);

        private protected override void Clear() => _buffer = default;
    }
}
