#if NET8_0_OR_GREATER
using System;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The runtime's own allocation-free overload on .NET 8 and newer, without this library:
    /// ReceiveFrom(Span&lt;byte&gt;, SocketFlags, SocketAddress) into one reused SocketAddress.
    /// </summary>
    internal sealed class DotnetSocketAddress : ManagedMethod
    {
        public DotnetSocketAddress()
            : base("dotnet-socketaddress", "reused byte[] and char[], Socket.ReceiveFrom(Span<byte>, SocketFlags, SocketAddress) (.NET 8+), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            var sender = new SocketAddress(socket.AddressFamily);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom(buffer.AsSpan(), SocketFlags.None, sender);
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
