using System;
using System.Net.Sockets;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// This library's batched receive: a <see cref="DatagramBatch"/> of 64 slots in native memory, filled by
    /// one <c>recvmmsg</c> per call on Linux (a loop of single calls elsewhere); each datagram is then
    /// decoded and checked exactly as the other methods do.
    /// </summary>
    internal sealed class LibraryBatch : ManagedMethod
    {
        private const int BatchSize = 64;

        public LibraryBatch()
            : base("library-batch", "DatagramBatch(64).Receive(socket, -1): up to 64 datagrams per system call, read through BeginRead(), Encoding.UTF8.GetChars per datagram") { }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            using var batch = new DatagramBatch(BatchSize, run.BufferSize);
            run.Begin();
            bool done = false;
            while (!done)
            {
                batch.Receive(socket, -1); // waits for at least one datagram
                // One reader per receive: the batch is counted in once for the loop, not twice per datagram.
                using DatagramBatch.Reader reader = batch.BeginRead();
                int received = reader.Count;
                // The clock is read once per system call, as the C recvmmsg receiver does (not for the
                // controller's empty wake-up datagram, which is not data).
                if (received > 0 && !run.IsWakeUp(reader.GetDatagram(0).Length)) run.StampCall();
                for (int i = 0; i < received && !done; i++)
                {
                    ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out bool truncated);
                    if (truncated)
                    {
                        done = run.AccountCutOfBatch();
                        continue;
                    }
                    if (run.IsWakeUp(datagram.Length))
                    {
                        done = true;
                        break;
                    }
                    int count = utf8.GetChars(datagram, chars);
                    done = run.AccountOfBatch(chars, count);
                }
            }
            run.End();
        }
    }
}
