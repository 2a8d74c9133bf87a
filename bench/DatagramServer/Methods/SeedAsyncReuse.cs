using System;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The seed server's second version, exactly in its shape: the same async loop with the buffer and the chars
    /// reused, <c>await socket.ReceiveAsync(buffer, SocketFlags.None, token)</c> and <c>Encoding.UTF8.GetChars</c>.
    /// What is left is the runtime's own asynchronous receive. Measured for the whole process, as
    /// <see cref="SeedAsyncAlloc"/>.
    /// </summary>
    internal sealed class SeedAsyncReuse : ManagedMethod
    {
        public SeedAsyncReuse()
            : base("seed-async-reuse", "the seed's async loop with reused byte[] and char[]: await socket.ReceiveAsync(buffer, SocketFlags.None, token), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run) => Loop(socket, run).GetAwaiter().GetResult();

        private static async Task Loop(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            using var stopping = new CancellationTokenSource();
            CancellationToken token = stopping.Token;
            run.MeasureWholeProcess = true;
            run.Begin();
            while (true)
            {
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
                int count = utf8.GetChars(buffer, 0, length, chars, 0);
                if (run.Account(chars, count)) break;
            }
            run.End();
        }
    }
}
