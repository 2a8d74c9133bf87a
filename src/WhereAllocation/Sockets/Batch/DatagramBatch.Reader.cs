#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Reading slots: one call per datagram (<see cref="GetDatagram(int)"/> and the others), or a received batch read with the
    /// batch counted in once for the whole loop (<see cref="BeginRead"/>).
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        // ----- reading slots -----

        /// <summary>The bytes of datagram <paramref name="index"/> (at most <see cref="SlotSize"/>), and its endpoint.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReadOnlySpan<byte> GetDatagram(int index, out EndPointKey remoteEndPoint)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                remoteEndPoint = ReadEndPoint(index);
                return new ReadOnlySpan<byte>(_buffers + (long)index * _stride, (int)_messages[index].Length);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>The bytes of datagram <paramref name="index"/> (at most <see cref="SlotSize"/>).</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReadOnlySpan<byte> GetDatagram(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return new ReadOnlySpan<byte>(_buffers + (long)index * _stride, (int)_messages[index].Length);
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>Length, truncation flag and endpoint of datagram <paramref name="index"/>.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public ReceivedDatagram GetInfo(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return new ReceivedDatagram((int)_messages[index].Length, (_messages[index].Header.Flags & TruncatedFlag) != 0, ReadEndPoint(index));
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>True when datagram <paramref name="index"/> was longer than <see cref="SlotSize"/> and only its first <see cref="SlotSize"/> bytes were kept.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool IsTruncated(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return (_messages[index].Header.Flags & TruncatedFlag) != 0;
            }
            finally
            {
                ExitBlock();
            }
        }

        /// <summary>
        /// <see cref="SocketError.Success"/> unless <see cref="Send"/> tried datagram <paramref name="index"/> and
        /// could not send it; then the reason (for example AddressFamilyNotSupported for an IPv6 recipient on
        /// an IPv4 socket, NetworkUnreachable, MessageSize).
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public SocketError GetSendError(int index)
        {
            EnterBlock();
            try
            {
                CheckIndex(index);
                return (SocketError)_sendErrors[index];
            }
            finally
            {
                ExitBlock();
            }
        }

        private EndPointKey ReadEndPoint(int index)
        {
            uint length = _messages[index].Header.NameLength;
            if (length > SockaddrLayout.StorageSize) length = SockaddrLayout.StorageSize;
            byte* name = _names + index * SockaddrLayout.StorageSize;
            // One-entry cache: datagrams in a row often come from one peer (always, on a client talking to its
            // server), and parsing a sockaddr costs 40-60 ns on Mono. The key depends only on the length and on
            // bytes 0..15 (IPv4) or 0..27 (IPv6), which are compared here; 8-byte aligned, as every slot's name is.
            ulong head = *(ulong*)name, middle = *(ulong*)(name + 8);
            bool wide = length > 16;
            ulong tail = wide ? *(ulong*)(name + 16) : 0;
            uint last = wide ? *(uint*)(name + 24) : 0;
            if (length == _cachedLength && head == _cachedHead && middle == _cachedMiddle && tail == _cachedTail && last == _cachedLast)
                return _cachedKey;
            return ParseEndPoint(name, length, head, middle, tail, last);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private EndPointKey ParseEndPoint(byte* name, uint length, ulong head, ulong middle, ulong tail, uint last)
        {
            EndPointKey.TryReadSockaddr(name, (int)length, NativeDatagramIO.Format, out EndPointKey key);
            _cachedLength = length;
            _cachedHead = head;
            _cachedMiddle = middle;
            _cachedTail = tail;
            _cachedLast = last;
            _cachedKey = key;
            return key;
        }

        // Per datagram: small enough to inline, with the throwing moved out of line (Mono's JIT inlines
        // no method that throws).
        private void CheckIndex(int index)
        {
            if (_disposed || (uint)index >= (uint)_count) ThrowBadIndex(index);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowBadIndex(int index)
        {
            ThrowIfDisposed();
            throw new ArgumentOutOfRangeException(nameof(index), index, "The batch holds " + _count + " datagrams.");
        }

        // ----- a reader -----

        // The open reader's token (0: none). Only the thread using the batch touches it (see the class remarks).
        private int _readerToken;
        private int _lastReaderToken;

        /// <summary>
        /// Begins reading the datagrams in the batch: the reader counts the batch in once (a Dispose from another thread then
        /// frees the native memory only after the reader ends), so reading each datagram through it costs no interlocked
        /// operation, where each of the batch's own <see cref="GetDatagram(int)"/> and <see cref="IsTruncated"/> calls costs two.
        /// </summary>
        /// <remarks>
        /// <para>The reader ends at its <see cref="Reader.Dispose"/>, or at the batch's next <see cref="Receive(System.Net.Sockets.Socket, int)"/>,
        /// <see cref="Clear"/> or <see cref="BeginRead"/>, whichever comes first; after that its members throw
        /// <see cref="InvalidOperationException"/>. So a loop that receives, reads and receives again never leaves one open,
        /// even without <c>using</c>.</para>
        /// <para>The spans it hands out point into the batch's native memory and stay valid while the reader is open, even if
        /// another thread disposes the batch meanwhile (the memory is freed when the reader ends). After such a Dispose the
        /// reader's members throw <see cref="ObjectDisposedException"/> and the first that does ends the reader (as does any
        /// member of the batch that throws it), so the memory goes as soon as the loop notices. Allocates nothing.</para>
        /// </remarks>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public Reader BeginRead()
        {
            EndReader();
            EnterBlock();
            int token = unchecked(++_lastReaderToken);
            if (token == 0) token = ++_lastReaderToken; // 0 means "no reader"
            _readerToken = token;
            return new Reader(this, token, _count);
        }

        /// <summary>Ends the open reader, if any: its count on the block goes (and frees the block if the batch was disposed meanwhile).</summary>
        private void EndReader()
        {
            if (_readerToken == 0) return;
            _readerToken = 0;
            ExitBlock();
        }

        /// <summary>
        /// A received batch's datagrams, read without counting the batch in and out per datagram (see <see cref="BeginRead"/>).
        /// Made by <see cref="BeginRead"/>; end it with <see cref="Dispose"/> (<c>using</c>). A stack-only value: it cannot be
        /// stored in a field or captured, so it cannot outlive the loop that reads the batch.
        /// </summary>
        public readonly ref struct Reader
        {
            private readonly DatagramBatch? _batch;
            private readonly int _token;
            private readonly int _count;

            internal Reader(DatagramBatch batch, int token, int count)
            {
                _batch = batch;
                _token = token;
                _count = count;
            }

            /// <summary>The datagrams in the batch when the reader began: slots 0 to <c>Count - 1</c>.</summary>
            public int Count => _count;

            /// <summary>The bytes of datagram <paramref name="index"/> (at most <see cref="SlotSize"/>), valid while the reader is open.</summary>
            /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
            /// <exception cref="InvalidOperationException">The reader has ended (or is a default value).</exception>
            /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
            public ReadOnlySpan<byte> GetDatagram(int index)
            {
                DatagramBatch batch = Checked(index);
                return new ReadOnlySpan<byte>(batch._buffers + (long)index * batch._stride, (int)batch._messages[index].Length);
            }

            /// <summary>The bytes of datagram <paramref name="index"/>, and its endpoint (the sender, after a receive).</summary>
            /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
            /// <exception cref="InvalidOperationException">The reader has ended (or is a default value).</exception>
            /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
            public ReadOnlySpan<byte> GetDatagram(int index, out EndPointKey remoteEndPoint)
            {
                DatagramBatch batch = Checked(index);
                remoteEndPoint = batch.ReadEndPoint(index);
                return new ReadOnlySpan<byte>(batch._buffers + (long)index * batch._stride, (int)batch._messages[index].Length);
            }

            /// <summary>
            /// The bytes of datagram <paramref name="index"/>, and whether it was longer than <see cref="SlotSize"/> and was cut:
            /// what a receive loop asks of every datagram, in one call.
            /// </summary>
            /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
            /// <exception cref="InvalidOperationException">The reader has ended (or is a default value).</exception>
            /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
            public ReadOnlySpan<byte> GetDatagram(int index, out bool truncated)
            {
                DatagramBatch batch = Checked(index);
                ref Interop.Libc.LinuxMMsgHdr message = ref batch._messages[index];
                truncated = (message.Header.Flags & TruncatedFlag) != 0;
                return new ReadOnlySpan<byte>(batch._buffers + (long)index * batch._stride, (int)message.Length);
            }

            /// <summary>True when datagram <paramref name="index"/> was longer than <see cref="SlotSize"/> and was cut.</summary>
            /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
            /// <exception cref="InvalidOperationException">The reader has ended (or is a default value).</exception>
            /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
            public bool IsTruncated(int index)
            {
                DatagramBatch batch = Checked(index);
                return (batch._messages[index].Header.Flags & TruncatedFlag) != 0;
            }

            /// <summary>Length, truncation flag and endpoint of datagram <paramref name="index"/>.</summary>
            /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
            /// <exception cref="InvalidOperationException">The reader has ended (or is a default value).</exception>
            /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
            public ReceivedDatagram GetInfo(int index)
            {
                DatagramBatch batch = Checked(index);
                ref Interop.Libc.LinuxMMsgHdr message = ref batch._messages[index];
                return new ReceivedDatagram((int)message.Length, (message.Header.Flags & TruncatedFlag) != 0, batch.ReadEndPoint(index));
            }

            /// <summary>Ends the reader (a second call, or one after the batch ended it, does nothing). Allocates nothing.</summary>
            public void Dispose()
            {
                DatagramBatch? batch = _batch;
                if (batch != null && batch._readerToken == _token) batch.EndReader();
            }

            // Per datagram: three loads and compares, the throwing kept out of line (Mono's JIT inlines no method that throws).
            private DatagramBatch Checked(int index)
            {
                DatagramBatch? batch = _batch;
                if (batch == null || batch._readerToken != _token || (uint)index >= (uint)_count || batch._disposed) ThrowBad(batch, index);
                return batch!;
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            private void ThrowBad(DatagramBatch? batch, int index)
            {
                if (batch == null || batch._readerToken != _token)
                    throw new InvalidOperationException("This reader has ended: the batch received, was cleared or began another read since (or the reader is a default value).");
                if (batch._disposed)
                {
                    batch.EndReader(); // the loop reads no further: the last count out frees the block now, not the finalizer
                    throw new ObjectDisposedException(nameof(DatagramBatch));
                }
                throw new ArgumentOutOfRangeException(nameof(index), index, "The reader holds " + _count + " datagrams.");
            }
        }
    }
}
