using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary><see cref="DatagramBatchMode.MultiMessage"/>: the whole batch in one <c>recvmmsg</c> or <c>sendmmsg</c> (Linux).</summary>
    public sealed unsafe partial class DatagramBatch
    {
        /// <summary>Linux, a working native path, and a C library that has both calls (glibc 2.14+, musl).</summary>
        private static bool ProbeMultiMessage()
        {
            if (Platform.Os != OsFamily.Linux || !NativeDatagramIO.IsSupported) return false;
            try
            {
                // Descriptor -1: each call fails at once with EBADF; only a missing symbol throws.
                Libc.RecvMMsg(-1, null, 0, 0, null);
                Libc.SendMMsg(-1, null, 0, 0);
                return true;
            }
            catch (EntryPointNotFoundException) { return false; }
            catch (DllNotFoundException) { return false; }
        }

        /// <summary>
        /// One non-blocking <c>recvmmsg</c> into every slot. The kernel writes each datagram's length
        /// (msg_len, cut to the slot), its sender (msg_name, msg_namelen) and MSG_TRUNC (msg_flags) when it
        /// was longer than the slot. An error after the first datagram is kept by the kernel for the next call.
        /// </summary>
        private int ReceiveMultiMessage(IntPtr raw, out SocketError error)
        {
            int received = Libc.RecvMMsg((int)raw, _messages, (uint)_capacity, OsConstants.MsgDontWait, null);
            if (received > 0)
            {
                error = SocketError.Success;
                return received;
            }
            error = received == 0 ? SocketError.WouldBlock : Errno.ToSocketError(Marshal.GetLastWin32Error());
            return 0;
        }

        /// <summary>
        /// One <c>sendmmsg</c> of slots <paramref name="start"/>..<paramref name="end"/>-1. It returns how many went;
        /// when a datagram fails after others went, the kernel stops there without an error, and the next call,
        /// which starts at that datagram, reports it.
        /// </summary>
        private int SendMultiMessage(IntPtr raw, int start, int end, int flags, out SocketError error)
        {
            int sent = Libc.SendMMsg((int)raw, _messages + start, (uint)(end - start), flags);
            if (sent > 0)
            {
                error = SocketError.Success;
                return sent;
            }
            error = sent == 0 ? SocketError.WouldBlock : Errno.ToSocketError(Marshal.GetLastWin32Error());
            return 0;
        }
    }
}
