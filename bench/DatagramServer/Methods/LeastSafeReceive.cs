using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The least a receive can be that keeps what the library's receive keeps, as one method called per datagram with no
    /// OS layer: argument checks before the system call (the socket's own checks remembered, as the library remembers them
    /// per endpoint), a reference on the socket's <see cref="SafeHandle"/> for the length of the call, and the sender named
    /// (its sockaddr bytes compared with the last sender's, kept when they differ). The DatagramServer's
    /// <c>raw-pinvoke-safe</c> row times it; bench/ReceiveCost counts its instructions (it compiles this file in).
    /// </summary>
    internal static unsafe class LeastSafeReceive
    {
        /// <summary>What the receive keeps between calls: the socket that passed its checks, its handle, the last sender.</summary>
        public sealed class State
        {
            public Socket? Checked;
            public SafeHandle? Handle;
            public uint LastLength;
            public ulong Last0;
            public ulong Last1;
            public ulong Last2;
            public ulong Last3;

            [MethodImpl(MethodImplOptions.NoInlining)]
            public void Check(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags)
            {
                if (socket == null) throw new ArgumentNullException(nameof(socket));
                if (buffer == null) throw new ArgumentNullException(nameof(buffer));
                if ((uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset)) throw new ArgumentOutOfRangeException(nameof(size));
                if ((flags & ~SocketFlags.Peek) != 0) throw new ArgumentException("only Peek", nameof(flags));
                if (socket.SocketType != SocketType.Dgram || !socket.IsBound) throw new ArgumentException("a bound datagram socket", nameof(socket));
                Handle = RawCalls.SafeHandleOf(socket);
                Checked = socket;
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            public void Keep(Sockaddr* sender, uint length)
            {
                LastLength = length;
                Last0 = sender->A;
                Last1 = sender->B;
                Last2 = sender->C;
                Last3 = sender->D;
            }
        }

        /// <summary>A sockaddr_in or sockaddr_in6 (28 bytes), as four words.</summary>
        public struct Sockaddr
        {
            public ulong A;
            public ulong B;
            public ulong C;
            public ulong D;
        }

        /// <summary>One datagram: its length (more than <paramref name="size"/> when cut), or -1 with <paramref name="errno"/>.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Receive(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, State state, out int errno)
        {
            if (buffer == null || (uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset) || (flags & ~SocketFlags.Peek) != 0
                || socket == null || !ReferenceEquals(state.Checked, socket))
                state.Check(socket!, buffer!, offset, size, flags);
            Sockaddr sender;
            uint senderLength = (uint)sizeof(Sockaddr);
            long length;
            errno = 0;
            SafeHandle handle = state.Handle!;
            bool added = false;
            fixed (byte* payload = buffer)
            {
                try
                {
                    handle.DangerousAddRef(ref added);
                    length = RawCalls.RecvFrom((int)handle.DangerousGetHandle(), payload + offset, (nuint)size, RawCalls.MsgTrunc | ((flags & SocketFlags.Peek) != 0 ? 2 : 0), (byte*)&sender, &senderLength);
                    if (length < 0) errno = Marshal.GetLastWin32Error();
                }
                finally
                {
                    if (added) handle.DangerousRelease();
                }
            }
            if (length >= 0 && (senderLength != state.LastLength || sender.A != state.Last0 || sender.B != state.Last1
                || (senderLength > 16 && (sender.C != state.Last2 || sender.D != state.Last3))))
                state.Keep(&sender, senderLength);
            return length;
        }
    }
}
