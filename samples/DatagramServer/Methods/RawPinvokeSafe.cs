using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>
    /// Not a way to write a server: the least a receive can be that keeps what the library's receive keeps, written as one
    /// method called per datagram, with no OS layer and nothing shared with other calls. Before the system call it checks
    /// its arguments (buffer, range, flags; the socket's own checks are remembered, as the library remembers them per
    /// endpoint); it holds a reference on the socket's <see cref="SafeHandle"/> for the length of the call; and it names the
    /// sender, comparing the sockaddr bytes with the last sender's and keeping them when they differ. <c>library</c> ÷
    /// <c>raw-pinvoke-safe</c> is what the library's structure costs (its call levels, its OS layer, its general paths) above
    /// that least; <c>raw-pinvoke-safe</c> ÷ <c>raw-pinvoke</c> is what the safety and the sender cost at the least.
    /// </summary>
    internal sealed unsafe class RawPinvokeSafe : ManagedMethod
    {
        public RawPinvokeSafe()
            : base("raw-pinvoke-safe", "for scale only: one method per datagram with the library's safety at its least: argument checks, SafeHandle reference, sender compared with the last") { }

        public override string? Unavailable => RawCalls.HeldRowUnavailable;

        /// <summary>What the receive keeps between calls: the socket that passed its checks, its handle, the last sender.</summary>
        private sealed class ReceiveState
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
        private struct Sockaddr
        {
            public ulong A;
            public ulong B;
            public ulong C;
            public ulong D;
        }

        /// <summary>One datagram: its length (more than <paramref name="size"/> when cut), or -1 with <paramref name="errno"/>.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long Receive(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, ReceiveState state, out int errno)
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

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            var state = new ReceiveState();
            run.Begin();
            while (true)
            {
                long length = Receive(socket, buffer, 0, buffer.Length, SocketFlags.None, state, out int errno);
                if (length < 0)
                {
                    if (errno == RawCalls.Eintr) continue;
                    if (errno == RawCalls.Eagain)
                    {
                        RawCalls.WaitReadable((int)socket.Handle);
                        continue;
                    }
                    throw new InvalidOperationException("recvfrom failed with errno " + errno);
                }
                if (length > buffer.Length)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp((int)length)) break;
                int count = utf8.GetChars(buffer, 0, (int)length, chars, 0);
                if (run.Account(chars, count)) break;
            }
            run.End();
        }
    }
}
