using System;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// This library's awaitable receive, in the seed's async shape: reused buffers, <c>await
    /// receiver.ReceiveFromAsync(buffer, token)</c> on an <see cref="AsyncDatagramSocket"/> (the sender comes with
    /// each datagram), <c>GetChars</c>. With <see cref="DatagramContinuations.IoThread"/> the loop runs on the library's
    /// I/O thread once it has waited once, so that thread's bytes and CPU time between two points of the loop are the
    /// whole receiving cost, as for the synchronous rows. Before the run the loop waits once for a datagram of its own:
    /// that moves it to the I/O thread (taking the receiving thread's CPU pinning along) and registers the token, which
    /// a server does once for its lifetime.
    /// </summary>
    internal sealed class LibraryAsync : ManagedMethod
    {
        public LibraryAsync()
            : base("library-async", "reused byte[] and char[], await AsyncDatagramSocket.ReceiveFromAsync(buffer, token) (IoThread), Encoding.UTF8.GetChars") { }

        public override void Receive(Socket socket, ReceiveRun run) => Loop(socket, run).GetAwaiter().GetResult();

        private static async Task Loop(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            using var stopping = new CancellationTokenSource();
            CancellationToken token = stopping.Token;
            using var receiver = new AsyncDatagramSocket(socket, DatagramContinuations.IoThread);
            ulong cpus = Linux.CurrentAffinity();
            await FirstWait(receiver, buffer, token);
            Linux.SetCurrentAffinity(cpus);
            int thread = Environment.CurrentManagedThreadId;
            run.Begin();
            while (true)
            {
                ReceivedDatagram datagram = await receiver.ReceiveFromAsync(buffer, token);
                if (datagram.Truncated)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(datagram.Length)) break;
                int count = utf8.GetChars(buffer, 0, datagram.Length, chars, 0);
                if (run.Account(chars, count)) break;
            }
            run.End();
            if (Environment.CurrentManagedThreadId != thread)
                throw new InvalidOperationException("library-async: the loop left the I/O thread, so one thread's count is not its whole cost");
        }

        /// <summary>
        /// One wait, before the run (nothing is sent to the socket until <see cref="ReceiveRun.Begin"/>), for a datagram
        /// this method sends itself a little later: the awaiting method then goes on on the I/O thread. Sent later, not at
        /// once: a datagram that arrives before the await is there completes the call first, and the await then resumes
        /// on the thread pool.
        /// </summary>
        private static async Task FirstWait(AsyncDatagramSocket receiver, byte[] buffer, CancellationToken token)
        {
            using var from = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            from.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var to = new IPEndPoint(IPAddress.Loopback, ((IPEndPoint)receiver.Socket.LocalEndPoint!).Port);
            ValueTask<ReceivedDatagram> waiting = receiver.ReceiveFromAsync(buffer, token);
            var later = new Thread(() =>
            {
                Thread.Sleep(20);
                from.SendTo(new byte[1], to);
            }) { IsBackground = true };
            later.Start();
            await waiting;
            later.Join();
        }
    }
}
