using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary><see cref="DatagramBatchMode.MultiMessage"/>: the whole batch in one <c>recvmmsg</c> or <c>sendmmsg</c> (Linux).</summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>
        /// One <c>sendmmsg</c> of slots <paramref name="start"/>..<paramref name="end"/>-1. It returns how many went;
        /// when a datagram fails after others went, the kernel stops there without an error, and the next call,
        /// which starts at that datagram, reports it.
        /// </summary>
        private int SendMultiMessage(IntPtr raw, int start, int end, out SocketError error)
        {
            if (_segmentation && end - start > 1) return SendSegmented(raw, start, end, out error);
            int sent = NativeDatagramIO.Os.SendMany(raw, _messages + start, end - start, out error);
            return sent > 0 ? sent : 0;
        }
    }
}
