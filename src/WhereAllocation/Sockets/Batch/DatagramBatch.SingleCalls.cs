#nullable enable
using System;
using System.Net.Sockets;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// <see cref="DatagramBatchMode.SingleCalls"/>: a loop of one-datagram calls with the same results as
    /// <see cref="DatagramBatchMode.MultiMessage"/>. On the native path the loop calls the OS directly on the
    /// slots' memory; on the runtime's paths it goes through <see cref="PathDispatch"/>, as <see cref="SocketExtensions"/> does.
    /// </summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>
        /// <c>recvfrom</c> into slot after slot until the queue is empty or every slot is full, none of them waiting but the
        /// first when <paramref name="first"/> says so (<see cref="ReceiveStep.InKernel"/>: the kernel's wait for the first
        /// datagram; <see cref="ReceiveStep.AfterReadiness"/>: right after a wait said readable).
        /// </summary>
        private int ReceiveSingleCallsNative(IntPtr raw, ReceiveStep first, out SocketError error)
        {
            int received = 0;
            error = SocketError.Success;
            OsSocketCalls os = OsSocketCalls.InUse;
            ReceiveStep step = first;
            while (received < _capacity)
            {
                byte* buffer = _buffers + (long)received * _stride;
                byte* name = _names + received * SockaddrLayout.StorageSize;
                int nameLength = SockaddrLayout.StorageSize;
                long length = step == ReceiveStep.Try ? os.Receive(raw, buffer, _slotSize, false, name, &nameLength, out SocketError failure)
                    : step == ReceiveStep.InKernel ? os.ReceiveWaiting(raw, buffer, _slotSize, false, name, &nameLength, out failure)
                    : os.ReceiveAfterReadiness(raw, buffer, _slotSize, false, name, &nameLength, out failure);
                step = ReceiveStep.Try;
                if (ReceiveShutdown.IsReport(length, nameLength)) length = ReceiveShutdown.Reported(out failure);
                if (length >= 0)
                {
                    Store(received, (int)Math.Min(length, _slotSize), length > _slotSize, nameLength);
                    received++;
                    continue;
                }
                if (failure == SocketError.Interrupted || os.IsResetReportToSkip(raw, failure)) continue;
                if (received == 0)
                {
                    error = failure;
                    return 0;
                }
                // As recvmmsg does: keep the datagrams, report the error on the next receive.
                if (failure != SocketError.WouldBlock) _deferredError = failure;
                break;
            }
            return received;
        }

        /// <summary>The slot's sockaddr is already in place (written by the OS, or from the key); record its length, the datagram's length and truncation.</summary>
        private void Store(int index, int length, bool truncated, int nameLength)
        {
            ref Libc.LinuxMMsgHdr message = ref _messages[index];
            message.Length = (uint)length;
            message.Header.Flags = truncated ? TruncatedFlag : 0;
            message.Header.NameLength = (uint)nameLength;
        }

        /// <summary><c>sendto</c> slot after slot; stops at the first that fails, with its error.</summary>
        private int SendSingleCallsNative(IntPtr raw, int start, int end, out SocketError error)
        {
            for (int i = start; i < end; i++)
            {
                if (SendOne(raw, i, out error) < 0) return i - start;
            }
            error = SocketError.Success;
            return end - start;
        }

        /// <summary>
        /// The runtime's own receive (the .NET 8 SocketAddress overloads, or the managed fallback) into slot after
        /// slot, waiting with <c>Socket.Poll</c> in short slices when a timeout is given.
        /// </summary>
        private int ReceiveOnRuntimePath(Socket socket, DatagramPath path, int timeoutMilliseconds)
        {
            long start = timeoutMilliseconds > 0 ? System.Diagnostics.Stopwatch.GetTimestamp() : 0;
            while (true)
            {
                int received = 0;
                while (received < _capacity)
                {
                    var buffer = new Span<byte>(_buffers + (long)received * _stride, _slotSize);
                    ReceivedDatagram datagram;
                    try
                    {
                        if (!PathDispatch.Receive(path, socket, null, 0, buffer, SocketFlags.None, ReceiveWaitKind.Tries, null, out datagram)) break;
                    }
                    catch (SocketException e) when (received > 0)
                    {
                        _deferredError = e.SocketErrorCode; // keep what was taken; report this next time
                        break;
                    }
                    int nameLength = datagram.RemoteEndPoint.WriteSockaddr(new Span<byte>(_names + received * SockaddrLayout.StorageSize, SockaddrLayout.StorageSize), NativeDatagramIO.Format);
                    Store(received, datagram.Length, datagram.Truncated, nameLength);
                    received++;
                }
                if (received > 0) return received;
                int remaining = SocketWaits.Remaining(start, timeoutMilliseconds);
                if (remaining == 0) return 0;
                SocketHandles.EnterWait(); // the runtime's Poll holds the handle while it waits
                try
                {
                    socket.Poll(SocketWaits.Slice(remaining) * 1000, SelectMode.SelectRead); // throws ObjectDisposedException once the socket is disposed
                }
                catch (SocketException)
                {
                    SocketWaits.ThrowIfDisposed(socket); // Windows ends the Poll of a socket disposed meanwhile with an error
                    throw;
                }
                finally
                {
                    SocketHandles.ExitWait();
                }
            }
        }

        /// <summary>The runtime's own send, slot after slot; stops at the first that fails, with its error.</summary>
        private int SendSingleCallsOnRuntimePath(Socket socket, DatagramPath path, int start, int end, out SocketError error)
        {
            for (int i = start; i < end; i++)
            {
                var payload = new ReadOnlySpan<byte>(_buffers + (long)i * _stride, (int)_messages[i].Length);
                EndPointKey remote = ReadEndPoint(i);
                try
                {
                    PathDispatch.Send(path, socket, null, 0, payload, SocketFlags.None, remote, true);
                }
                catch (SocketException e)
                {
                    error = e.SocketErrorCode;
                    return i - start;
                }
            }
            error = SocketError.Success;
            return end - start;
        }
    }
}
