using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The best a plain <see cref="Socket"/> offers on every runtime: byte and char buffers made once and
    /// reused, one EndPoint variable passed by ref. The runtime's ReceiveFrom still builds the sender's
    /// endpoint anew for every datagram; that is what is left.
    /// </summary>
    internal sealed class ManagedNonAlloc : ManagedMethod
    {
        public ManagedNonAlloc()
            : base("managed-nonalloc", "reused byte[] and char[], Socket.ReceiveFrom(ref EndPoint), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            EndPoint remote = new IPEndPoint(IPAddress.Any, 0);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom(buffer, 0, buffer.Length, SocketFlags.None, ref remote);
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
