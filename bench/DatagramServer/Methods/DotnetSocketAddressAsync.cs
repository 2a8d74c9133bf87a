#if NET8_0_OR_GREATER
using System;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The runtime's own allocation-free asynchronous receive on .NET 8 and newer, without this library: the seed's
    /// async loop with reused buffers and one reused SocketAddress, <c>await socket.ReceiveFromAsync(buffer,
    /// SocketFlags.None, address, token)</c>. Its work runs on threads the runtime picks: measured for the whole process.
    /// </summary>
    internal sealed class DotnetSocketAddressAsync : ManagedMethod
    {
        public DotnetSocketAddressAsync()
            : base("dotnet-socketaddress-async", "reused byte[] and char[], await Socket.ReceiveFromAsync(Memory<byte>, SocketFlags, SocketAddress, token) (.NET 8+), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run) => Loop(socket, run).GetAwaiter().GetResult();

        private static async Task Loop(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            var sender = new SocketAddress(socket.AddressFamily);
            using var stopping = new CancellationTokenSource();
            CancellationToken token = stopping.Token;
            run.MeasureWholeProcess = true;
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = await socket.ReceiveFromAsync(buffer.AsMemory(), SocketFlags.None, sender, token);
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
#endif
