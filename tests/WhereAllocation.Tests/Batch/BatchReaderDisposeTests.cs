using System;
using System.Net.Sockets;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The documented receive loop (Receive, BeginRead, read, Receive again, without <c>using</c>) with the batch disposed by
    /// another thread while its reader is open: whichever step of the loop comes next, it throws ObjectDisposedException and
    /// the native block is freed then, not left to the finalizer. Seen through the block's own record of its free (DatagramBatch.NativeBlockFreed).
    /// </summary>
    public class BatchReaderDisposeTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        [Theory]
        [MemberData(nameof(Matrix.BatchModesOnTheirPaths), MemberType = typeof(Matrix))]
        public unsafe void TheLoopsNextStepAfterADisposeFreesTheBlock(DatagramBatchMode mode, DatagramPath path)
        {
            if (!BatchModes.TryUse(mode) || !Paths.TryForce(path)) return;
            foreach (string next in new[] { "Receive", "Receive with a timeout", "BeginRead", "Clear", "Count", "GetDatagram", "reader.GetDatagram", "reader.GetInfo", "reader.IsTruncated" })
            {
                using var pair = new Loopback(Family.IPv4);
                var batch = new DatagramBatch(8, 256, mode);
                pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
                int received = 0;
                for (int tries = 0; tries < 20 && received == 0; tries++) received = batch.Receive(pair.Server, 500);
                Assert.Equal(1, received);
                DatagramBatch.Reader reader = batch.BeginRead(); // the documented loop: no using
                Assert.Equal(3, reader.GetDatagram(0).Length);

                var disposer = new Thread(batch.Dispose) { IsBackground = true };
                disposer.Start();
                Assert.True(disposer.Join(10_000));
                Assert.True(!batch.NativeBlockFreed, "the open reader must keep the block while it is open");

                Exception? thrown = Step(next, batch, reader, pair.Server);
                Assert.True(thrown is ObjectDisposedException, next + " after the Dispose: " + (thrown == null ? "no exception" : thrown.GetType().Name));
                Assert.True(batch.NativeBlockFreed, next + " after the Dispose left the block to the finalizer");
                reader.Dispose(); // ended already: nothing more happens
                Assert.True(batch.NativeBlockFreed);
            }
        }

        private static Exception? Step(string step, DatagramBatch batch, DatagramBatch.Reader reader, Socket socket)
        {
            try
            {
                switch (step)
                {
                    case "Receive": batch.Receive(socket); break;
                    case "Receive with a timeout": batch.Receive(socket, 100); break;
                    case "BeginRead": batch.BeginRead(); break;
                    case "Clear": batch.Clear(); break;
                    case "Count": _ = batch.Count; break;
                    case "GetDatagram": _ = batch.GetDatagram(0).Length; break;
                    case "reader.GetDatagram": _ = reader.GetDatagram(0).Length; break;
                    case "reader.GetInfo": _ = reader.GetInfo(0); break;
                    default: _ = reader.IsTruncated(0); break;
                }
                return null;
            }
            catch (Exception e)
            {
                return e;
            }
        }
    }
}
