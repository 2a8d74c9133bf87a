using System;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The receiver's bookkeeping for one segment: verifies each datagram, checks its sender endpoint against
    /// the sending socket's, and tells intact, duplicate and out-of-order datagrams apart with a bitmap per
    /// sender (so nothing depends on the order the OS delivers in). Allocated before the segment starts;
    /// <see cref="Account"/> allocates nothing.
    /// </summary>
    internal sealed unsafe class Checker
    {
        private readonly int _segment;
        private readonly int _maxLength;
        private readonly EndPointKey[] _senderKeys;
        private readonly long[] _quota;
        private readonly ulong[][] _seen;
        private readonly uint[] _next;

        internal Checker(int segment, EndPointKey[] senderKeys, long[] quota, int maxLength)
        {
            _segment = segment;
            _senderKeys = senderKeys;
            _quota = quota;
            _maxLength = maxLength;
            _seen = new ulong[senderKeys.Length][];
            for (int i = 0; i < _seen.Length; i++) _seen[i] = new ulong[quota[i] / 64 + 1];
            _next = new uint[senderKeys.Length];
        }

        /// <summary>Every datagram the receive calls returned, whatever it held.</summary>
        internal long Taken { get; private set; }

        /// <summary>Distinct datagrams that arrived intact (with a wrong sender endpoint too: those are also in <see cref="WrongSender"/>).</summary>
        internal long Received { get; private set; }
        internal long Corrupt { get; private set; }
        internal long Duplicates { get; private set; }
        internal long WrongSender { get; private set; }
        internal long Truncated { get; private set; }

        /// <summary>Receive calls that failed with an error other than the timeout that ends a wait.</summary>
        internal long ReceiveErrors { get; set; }

        /// <summary>Intact datagrams that came after a later datagram of the same sender.</summary>
        internal long OutOfOrder { get; private set; }

        internal long Bad => Corrupt + Duplicates + WrongSender + Truncated + ReceiveErrors;

        /// <summary>
        /// Checks one datagram: <paramref name="length"/> bytes at <paramref name="p"/>, from <paramref name="from"/>.
        /// <paramref name="alsoFrom"/> is a second report of the sender where the member gives two (else the same key).
        /// </summary>
        internal void Account(byte* p, int length, in EndPointKey from, in EndPointKey alsoFrom, bool truncated)
        {
            Taken++;
            if (truncated)
            {
                Truncated++;
                return;
            }
            if (SoakDatagram.Verify(p, length, _segment, _senderKeys.Length, _maxLength, out int sender, out uint sequence) != Verdict.Intact
                || sequence >= _quota[sender])
            {
                Corrupt++;
                return;
            }
            ulong[] seen = _seen[sender];
            ulong bit = 1UL << (int)(sequence & 63);
            if ((seen[sequence >> 6] & bit) != 0)
            {
                Duplicates++;
                return;
            }
            seen[sequence >> 6] |= bit;
            Received++;
            if (from != _senderKeys[sender] || alsoFrom != _senderKeys[sender]) WrongSender++;
            // A gap (a datagram dropped or not yet come) is not disorder; an earlier one arriving after a later one is.
            if (sequence < _next[sender]) OutOfOrder++;
            else _next[sender] = sequence + 1;
        }

        /// <summary>A receive call that reported truncation by an exception (MessageSize), not by a flag.</summary>
        internal void AccountTruncatedByError()
        {
            Taken++;
            Truncated++;
        }

        internal string Describe()
            => "corrupt " + Corrupt + ", duplicate " + Duplicates + ", wrong sender " + WrongSender + ", truncated " + Truncated + ", receive errors " + ReceiveErrors;
    }
}
