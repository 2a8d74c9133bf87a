#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Sending: <see cref="TryAdd(ReadOnlySpan{byte}, in EndPointKey)"/> fills slots for <see cref="Send"/>, which sends them
    /// by <c>sendmmsg</c>, <c>sendto</c> for one, segmented runs (DatagramBatch.Segmentation.cs) or slot by slot (DatagramBatch.SingleCalls.cs).
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        // ----- filling slots -----


        /// <summary>
        /// Copies <paramref name="datagram"/> into the next free slot, to be sent to <paramref name="remoteEndPoint"/>
        /// by the next <see cref="Send"/>. Returns false, and changes nothing, when the batch is full.
        /// </summary>
        /// <exception cref="ArgumentException"><paramref name="datagram"/> is longer than <see cref="SlotSize"/>, or the key is empty.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool TryAdd(ReadOnlySpan<byte> datagram, in EndPointKey remoteEndPoint)
        {
            // The arguments first (they touch no native memory), then the slot under the count. Nothing between EnterBlock and
            // ExitBlock can throw, so no try/finally: on Mono a method with one keeps its locals in memory, about 100 instructions
            // per datagram here. (An asynchronous Thread.Abort in between would leave the count up: the block is then freed by
            // its finalizer instead of Dispose, never under a call.)
            if (datagram.Length > _slotSize || remoteEndPoint.IsEmpty) ThrowBadAdd(datagram.Length, remoteEndPoint.IsEmpty, nameof(datagram));
            EnterBlock();
            if (_count == _capacity)
            {
                ExitBlock();
                return false;
            }
            int index = _count;
            datagram.CopyTo(new Span<byte>(_buffers + (long)index * _stride, _slotSize));
            SetOutgoing(index, datagram.Length, remoteEndPoint);
            ExitBlock();
            return true;
        }

        /// <summary>
        /// Takes the next free slot for a datagram of <paramref name="length"/> bytes to <paramref name="remoteEndPoint"/>
        /// and gives its buffer, to be written in place (no copy). Returns false, and changes nothing, when the batch is full.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is not 0..<see cref="SlotSize"/>.</exception>
        /// <exception cref="ArgumentException">The key is empty.</exception>
        /// <exception cref="ObjectDisposedException">The batch has been disposed.</exception>
        public bool TryAdd(int length, in EndPointKey remoteEndPoint, out Span<byte> buffer)
        {
            // As the other TryAdd: the arguments first, then the slot under the count, with nothing in between that can throw.
            if ((uint)length > (uint)_slotSize || remoteEndPoint.IsEmpty) ThrowBadAdd(length, remoteEndPoint.IsEmpty, nameof(length));
            EnterBlock();
            if (_count == _capacity)
            {
                ExitBlock();
                buffer = default;
                return false;
            }
            int index = _count;
            // Not new Span<byte>(pointer, length): Mono inlines that constructor's checks with every local in memory.
            buffer = MemoryMarshal.CreateSpan(ref _buffers[(long)index * _stride], length);
            SetOutgoing(index, length, remoteEndPoint);
            ExitBlock();
            return true;
        }

        /// <summary>The exception for a refused add, in the order the checks always had: disposed, then the length, then the key.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ThrowBadAdd(int length, bool emptyKey, string lengthName)
        {
            ThrowIfDisposed();
            if (length < 0 || length > _slotSize)
            {
                if (lengthName == "length") throw new ArgumentOutOfRangeException(lengthName, length, "A slot holds 0.." + _slotSize + " bytes.");
                throw new ArgumentException("The datagram (" + length + " bytes) is longer than a slot (" + _slotSize + " bytes).", lengthName);
            }
            if (emptyKey) throw new ArgumentException("The recipient key is empty.", "remoteEndPoint");
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)] // per datagram: one call level less on Mono and CoreCLR
        private void SetOutgoing(int index, int length, in EndPointKey remote)
        {
            ref Libc.LinuxMMsgHdr message = ref _messages[index];
            message.Length = (uint)length;
            message.Header.Flags = 0;
            message.Header.NameLength = (uint)remote.WriteSockaddrAt(_names + index * SockaddrLayout.StorageSize, NativeDatagramIO.Format);
            _iovecs[index].Length = (nuint)length; // a receive puts the slot size back (PrepareForReceive)
            _pendingFamilies |= remote.IsIPv4 ? 1 : 2; // not AddressFamily: its two compares cost Mono about 20 instructions per datagram
            _sendErrors[index] = 0;
            _count = index + 1;
            if (_addedSince < _count) _addedSince = _count;
        }


        // ----- sending -----

        /// <summary>
        /// Sends the added datagrams that have not been tried yet, in slot order, each to its own endpoint, and
        /// returns how many went in this call.
        /// </summary>
        /// <remarks>
        /// <para>A datagram the OS refuses (an unreachable network, an IPv6 recipient on an IPv4 socket, a
        /// datagram too long for the path...) does not stop the others: its slot records the reason
        /// (<see cref="GetSendError"/>, <see cref="FailedCount"/>) and sending goes on with the next one.</para>
        /// <para>A partial send is reported, never hidden: when a non-blocking socket's send buffer is full the
        /// call returns early and <see cref="PendingCount"/> says how many are left; call <see cref="Send"/>
        /// again later to send the rest. A blocking socket waits for room instead.</para>
        /// <para>An unbound socket is bound to the any-address first, as the runtime's SendTo does.</para>
        /// </remarks>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="ObjectDisposedException">The batch or the socket has been disposed.</exception>
        public int Send(Socket socket)
        {
            if (_disposed) ThrowDisposed(); // written out: one call level less per tick on Mono
            SocketArguments.CheckSocket(socket);
            if (_nextToSend >= _count) return 0;
            if (!socket.IsBound && !socket.Connected) PathDispatch.BindAnyOnce(socket);
            // The batch counted in, and on the native path the socket's handle held, under one try/finally (each one costs a
            // method's locals their registers on Mono).
            EnterBlock();
            SafeHandle? handle = null;
            bool socketAdded = false;
            try
            {
                FitPendingToSocket(socket.AddressFamily);
                DatagramPath path = DatagramPathSettings.Active; // once per call: every slot of one call takes the same path
                if (_mode == DatagramBatchMode.SingleCalls && path != DatagramPath.Native)
                    return SendLoop(socket, path, IntPtr.Zero, null);
                handle = SocketHandles.Get(socket);
                SocketHandles.ThrowIfDisposedWhileHeld(socket); // before the reference: see there
                handle.DangerousAddRef(ref socketAdded);
                return SendOnHandle(socket, handle.DangerousGetHandle(), handle);
            }
            finally
            {
                // A wait for room (see AfterSend) stays counted among the library's waits until the handle is released.
                if (handle != null) SocketHandles.ReleaseThenExitWait(handle, ref socketAdded, _sendWaitCounted);
                _sendWaitCounted = false;
                ExitBlock();
            }
        }

        /// <summary>
        /// The native send under the socket's handle reference. Apart from <see cref="Send"/>, whose try/finally would keep
        /// this method's locals in memory on Mono.
        /// </summary>
        private int SendOnHandle(Socket socket, IntPtr raw, SafeHandle handle)
        {
            // The common case in one step: no slot refused or failed since the batch was emptied, nothing to segment, so one
            // sendmmsg of every pending slot. What it leaves (a full send buffer, an error) goes on as in the loop.
            if (_failed == 0 && _mode == DatagramBatchMode.MultiMessage && (!_segmentation || _count - _nextToSend == 1))
            {
                int pending = _count - _nextToSend;
                SocketError error;
                int went = pending == 1 ? SendOne(raw, _nextToSend, out error) : OsSocketCalls.InUse.SendMany(raw, _messages + _nextToSend, pending, out error);
                if (went == pending)
                {
                    _nextToSend = _count;
                    return went;
                }
                int sent = 0;
                if (!AfterSend(socket, raw, handle, went > 0 ? went : 0, error, ref sent)) return sent;
                return sent + SendLoop(socket, DatagramPath.Native, raw, handle);
            }
            return SendLoop(socket, DatagramPath.Native, raw, handle);
        }

        /// <summary>Sends runs of sendable slots until all are tried or the socket cannot take more now.</summary>
        private int SendLoop(Socket socket, DatagramPath path, IntPtr raw, SafeHandle? handle)
        {
            int sent = 0;
            while (_nextToSend < _count)
            {
                if (_sendErrors[_nextToSend] != 0)
                {
                    _nextToSend++; // refused before any system call (see FitPendingToSocket)
                    continue;
                }
                // The slots up to the next refused one; with no slot refused or failed since the batch was emptied, all of them.
                int end = _count;
                if (_failed != 0)
                {
                    end = _nextToSend + 1;
                    while (end < _count && _sendErrors[end] == 0) end++;
                }

                SocketError error;
                int went;
                if (handle == null) went = SendSingleCallsOnRuntimePath(socket, path, _nextToSend, end, out error);
                else if (_mode != DatagramBatchMode.MultiMessage) went = SendSingleCallsNative(raw, _nextToSend, end, out error);
                else if (_segmentation && end - _nextToSend > 1) went = SendSegmented(raw, _nextToSend, end, out error);
                else went = SendPlain(raw, _nextToSend, end, out error);
                if (!AfterSend(socket, raw, handle, went, error, ref sent)) break;
            }
            return sent;
        }

        /// <summary>
        /// Takes the result of one send call that started at the first pending slot: <paramref name="went"/> slots went, then
        /// <paramref name="error"/>. Returns false when sending must stop for now (a full send buffer on a socket that does not
        /// wait); an error of a datagram is recorded on its slot and sending goes on with the next.
        /// </summary>
        private bool AfterSend(Socket socket, IntPtr raw, SafeHandle? handle, int went, SocketError error, ref int sent)
        {
            _nextToSend += went;
            sent += went;
            if (error == SocketError.Success || error == SocketError.Interrupted) return true;
            if (error == SocketError.WouldBlock)
            {
                // The native sends never wait (where the OS can say so per call): a blocking socket waits for room here.
                // The socket's mode is asked only now, when it matters (a Send that found room never asks it).
                if (handle != null && socket.Blocking)
                {
                    SocketWaits.TryWaitUntil(socket, raw, handle, true, Timeout.Infinite, ref _sendWaitCounted);
                    return true;
                }
                return false; // PendingCount tells the caller what is left
            }
            _sendErrors[_nextToSend] = (int)error;
            _failed++;
            _nextToSend++;
            return true;
        }

        /// <summary>
        /// Gives every pending slot a sockaddr of the socket's family and its exact length; a recipient the
        /// socket cannot reach by family (IPv6 on an IPv4 socket) is marked AddressFamilyNotSupported.
        /// </summary>
        /// <remarks>
        /// A slot's sockaddr was written from its key by <see cref="SetOutgoing"/> (or here, for an earlier socket), so its family
        /// field says which family it is: a slot already of the socket's family costs one comparison, and only the others are
        /// parsed and written again.
        /// </remarks>
        private void FitPendingToSocket(AddressFamily socketFamily)
        {
            // Every slot added since the batch was emptied, or fitted last time, has the socket's family: nothing to look at.
            int family = socketFamily == AddressFamily.InterNetwork ? 1 : 2;
            if (_pendingFamilies == family) return;
            _pendingFamilies = family; // after this loop every pending slot is of the socket's family, or refused
            SockaddrFormat format = NativeDatagramIO.Format;
            int wanted = EndPointKey.SockaddrFamily(socketFamily, format);
            for (int i = _nextToSend; i < _count; i++)
            {
                byte* name = _names + i * SockaddrLayout.StorageSize;
                if (_sendErrors[i] == 0 && EndPointKey.ReadSockaddrFamily(name, format) != wanted) FitToSocket(i, name, socketFamily, format);
            }
        }

        /// <summary>Writes slot <paramref name="index"/>'s recipient again in the socket's family, or refuses it when the socket cannot reach it.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void FitToSocket(int index, byte* name, AddressFamily socketFamily, SockaddrFormat format)
        {
            ref Libc.LinuxMMsgHdr message = ref _messages[index];
            if (!EndPointKey.TryReadSockaddr(name, (int)message.Header.NameLength, format, out EndPointKey key))
            {
                Refuse(index);
                return;
            }
            if (socketFamily == AddressFamily.InterNetworkV6) key = key.MapToIPv6(); // the OS says so if the socket is not dual-mode
            else if (key.IsIPv4MappedToIPv6) key = key.MapToIPv4();
            else
            {
                Refuse(index);
                return;
            }
            message.Header.NameLength = (uint)key.WriteSockaddrAt(name, format);
        }

        private void Refuse(int index)
        {
            _sendErrors[index] = (int)SocketError.AddressFamilyNotSupported;
            _failed++;
        }

        /// <summary>
        /// One <c>sendmmsg</c> of slots <paramref name="start"/>..<paramref name="end"/>-1, each as itself; returns how many went.
        /// When a datagram fails after others went, the kernel stops there without an error, and the next call, which starts at
        /// that datagram, reports it.
        /// </summary>
        private int SendPlain(IntPtr raw, int start, int end, out SocketError error)
        {
            int sent = end - start == 1 ? SendOne(raw, start, out error) : OsSocketCalls.InUse.SendMany(raw, _messages + start, end - start, out error);
            return sent > 0 ? sent : 0;
        }

        /// <summary>
        /// Slot <paramref name="index"/> alone, by the OS's one-datagram send (<c>sendto</c>): 1 when it went, or -1 with
        /// <paramref name="error"/>, as <c>sendmmsg</c> of that one slot would answer. A batch that has one datagram to send (one
        /// per tick to one peer, or the last of a batch after a full send buffer) takes it because the kernel does less for it:
        /// no message array to copy in and no per-message loop. Measured on loopback, 64-byte datagrams, one per call, C pinned
        /// to one CPU (bench/native's wa-fanout --dests 1, sendto against sendmmsg): sendto's CPU per datagram 0.90× sendmmsg's.
        /// The same flags (never waiting), the same sockaddr and length, the same errors.
        /// </summary>
        private int SendOne(IntPtr raw, int index, out SocketError error)
        {
            long sent = OsSocketCalls.InUse.Send(raw, _buffers + (long)index * _stride, (int)_messages[index].Length, false,
                _names + index * SockaddrLayout.StorageSize, (int)_messages[index].Header.NameLength, out error);
            return sent < 0 ? -1 : 1;
        }
    }
}
