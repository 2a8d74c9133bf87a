using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
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

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            var state = new LeastSafeReceive.State();
            run.Begin();
            while (true)
            {
                long length = LeastSafeReceive.Receive(socket, buffer, 0, buffer.Length, SocketFlags.None, state, out int errno);
                if (length < 0 && RawCalls.Retry(errno, (int)socket.Handle)) continue;
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
