using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// This library, one datagram per call: <c>ReceiveFrom_NonAlloc</c> with an <see cref="IPEndPointNonAlloc"/>
    /// that is overwritten with each sender, the same call existing code makes. It takes
    /// <see cref="DatagramPathSettings.Default"/>, the fastest allocation-free path on this runtime.
    /// </summary>
    internal sealed class LibrarySingle : ManagedMethod
    {
        public LibrarySingle()
            : base("library", "reused byte[] and char[], socket.ReceiveFrom_NonAlloc(..., IPEndPointNonAlloc), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            var sender = new IPEndPointNonAlloc(IPAddress.Any, 0);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, sender);
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
