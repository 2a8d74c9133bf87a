using System.Net;
using System.Net.Sockets;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The allocating way, as most servers start: a new buffer per datagram, the runtime's
    /// ReceiveFrom(ref EndPoint) (which builds a new endpoint for every datagram), and a new string.
    /// </summary>
    internal sealed class AllocBaseline : ManagedMethod
    {
        public AllocBaseline()
            : base("alloc-baseline", "new byte[] per datagram, Socket.ReceiveFrom(ref EndPoint), Encoding.UTF8.GetString") { }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            EndPoint remote = new IPEndPoint(IPAddress.Any, 0);
            run.Begin();
            while (true)
            {
                byte[] buffer = new byte[run.BufferSize];
                int length;
                try
                {
                    length = socket.ReceiveFrom(buffer, ref remote);
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
