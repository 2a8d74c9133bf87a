using System;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The seed server's receive loop, exactly in its shape: an async loop that makes a new buffer per datagram,
    /// awaits <c>socket.ReceiveAsync(buffer, SocketFlags.None, token)</c> and decodes a new string. The runtime's own
    /// asynchronous socket machinery, so its work runs on threads the runtime picks: bytes and CPU time are the whole
    /// process's (<see cref="ReceiveRun.MeasureWholeProcess"/>).
    /// </summary>
    internal sealed class SeedAsyncAlloc : ManagedMethod
    {
        public SeedAsyncAlloc()
            : base("seed-async-alloc", "the seed's async loop: new byte[] per datagram, await socket.ReceiveAsync(buffer, SocketFlags.None, token), Encoding.UTF8.GetString") { }

        public override void Receive(Socket socket, ReceiveRun run) => Loop(socket, run).GetAwaiter().GetResult();

        private static async Task Loop(Socket socket, ReceiveRun run)
        {
            using var stopping = new CancellationTokenSource();
            CancellationToken token = stopping.Token;
            run.MeasureWholeProcess = true;
            run.Begin();
            while (true)
            {
                byte[] buffer = new byte[run.BufferSize];
                int length;
                try
                {
                    // Mono 6.8's ReceiveAsync(Memory<byte>, SocketFlags, CancellationToken) returns the length but leaves the
                    // caller's buffer untouched (see README): there the seed takes the ArraySegment overload, Mono's same
                    // asynchronous machinery, which delivers the bytes (and has no token).
                    length = Machine.IsMono
                        ? await socket.ReceiveAsync(new ArraySegment<byte>(buffer), SocketFlags.None)
                        : await socket.ReceiveAsync(buffer, SocketFlags.None, token);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(length)) break;
                string text = Encoding.UTF8.GetString(buffer, 0, length);
                if (run.Account(text)) break;
            }
            run.End();
        }
    }
}
