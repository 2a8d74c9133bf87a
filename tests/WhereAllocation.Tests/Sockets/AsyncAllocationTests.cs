using System;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The awaitable calls' promise, measured: after warm-up, 10 000 awaits allocate exactly 0 bytes, both awaits that
    /// complete at once (a datagram queued) and awaits that really wait (the sender sends only once the receiver waits).
    /// </summary>
    /// <remarks>
    /// <para>Awaits that wait cross threads, so the bytes of one thread are not the whole cost. With
    /// <see cref="DatagramContinuations.IoThread"/> everything after the first wait runs on the library's I/O thread (the
    /// poller's work and the awaiting loop alike), so the bytes that thread allocates between two points of the loop are
    /// the whole cost on the receiving side: measured so here, on CoreCLR and Mono.</para>
    /// <para>With <see cref="DatagramContinuations.ThreadPool"/> the loop moves between pool threads, so only the whole
    /// process can be measured (GC.GetTotalAllocatedBytes; Mono 6.8 has no such counter). Inside the test host that count
    /// is never still: the host's own pool work allocates 80 to 600 bytes per 300 ms while a test sleeps (measured), so
    /// the ThreadPool measurement runs in a process of its own: tests/Checks/AotCheck, on CoreCLR and as NativeAOT
    /// (scripts/no-jit.sh). On Mono the runtime's pool allocates 48 B per hand-over, which is why IoThread is the
    /// netstandard2.1 build's default; that the ThreadPool mode resumes on the pool is checked by AsyncDatagramSocketTests.</para>
    /// </remarks>
    public class AsyncAllocationTests : IDisposable
    {
        private const int Awaits = 10_000;

        public void Dispose() => DatagramPathSettings.Reset();

        /// <summary>The allocation-free paths on IPv4 and IPv6; Native also in dual mode.</summary>
        public static TheoryData<DatagramPath, Family> WaitingAwaitCases => Matrix.PathsWithFamiliesWhere((p, f) => p != DatagramPath.Managed && (f != Family.DualMode || p == DatagramPath.Native));

        [Theory]
        [MemberData(nameof(WaitingAwaitCases))]
        public void AwaitsThatWaitAllocateNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            using var server = new AsyncDatagramSocket(pair.Server, DatagramContinuations.IoThread);
            using var pacer = new Pacer(pair.Client, pair.ServerKey, 64);
            AwaitEngine poller = PathDispatch.Engine(path);
            long bytes = long.MaxValue;
            int waited = 0, measured = Awaits;
            long lateAwaiters = -1;
            WhereAllocation.Tests.Awaits.Run(async () =>
            {
                // One async method, the awaits written out in its loops: an async helper called per await would
                // allocate its own state machine each time it waits (168 B on .NET 10), which is the caller's cost.
                var buffer = new byte[1500];
                for (int i = 0; i < 2000; i++)
                {
                    ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
                    pacer.Waiting();
                    await next;
                }
                using AllocationWindow window = AllocationWindow.Open(Awaits);
                measured = window.Calls;
                long lateBefore = AwaitTestSeam.IoThreadLateAwaiters;
                for (int round = 0; round < 3 && bytes != 0; round++)
                {
                    // Every await of the loop resumes on the I/O thread, so start and end are on it.
                    Assert.True(poller.IsIoThread, "the loop is not on the I/O thread");
                    int thread = Environment.CurrentManagedThreadId;
                    waited = 0;
                    long before = window.Read();
                    for (int i = 0; i < measured; i++)
                    {
                        ValueTask<ReceivedDatagram> next = server.ReceiveFromAsync(buffer);
                        if (!next.IsCompleted) waited++;
                        pacer.Waiting();
                        ReceivedDatagram datagram = await next;
                        if (datagram.Length != 64) throw new InvalidOperationException("wrong length " + datagram.Length);
                    }
                    long after = window.Read();
                    Assert.Equal(thread, Environment.CurrentManagedThreadId);
                    bytes = Math.Min(bytes, after - before);
                }
                lateAwaiters = AwaitTestSeam.IoThreadLateAwaiters - lateBefore;
            }, 180_000);
            // A loop that resumes on the I/O thread never registers after its operation completed (the thread completes
            // nothing while it runs the loop): no resumption through the pool, whose work item costs 48 B on Mono.
            Assert.Equal(0, lateAwaiters);
            Assert.True(waited == measured, "only " + waited + " of " + measured + " awaits waited: the test did not measure waiting awaits");
            // The runtime's own cost of resuming an await, without the library: 0 but under Wine (docs/testing-under-wine.md).
            long runtime = AwaitResumeCost.Measure(Awaits);
            if (!Runtime.IsWine) Assert.Equal(0, runtime);
            Allocations.AssertSameCost(runtime, bytes);
        }

        /// <summary>The allocation-free paths on IPv4 and in dual mode; Native also on IPv6.</summary>
        public static TheoryData<DatagramPath, Family> ImmediateAwaitCases => Matrix.PathsWithFamiliesWhere((p, f) => p != DatagramPath.Managed && (f != Family.IPv6 || p == DatagramPath.Native));

        [Theory]
        [MemberData(nameof(ImmediateAwaitCases))]
        public void AwaitsThatCompleteAtOnceAllocateNothing(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var pair = new Loopback(family);
            using var server = new AsyncDatagramSocket(pair.Server);
            using var client = new AsyncDatagramSocket(pair.Client);
            var buffer = new byte[1500];
            var payload = new byte[64];
            const int Round = 500;
            long receiveBytes = long.MaxValue, sendBytes = long.MaxValue;
            using var cancel = new CancellationTokenSource();
            WhereAllocation.Tests.Awaits.Run(async () =>
            {
                using AllocationWindow window = AllocationWindow.Open(Awaits);
                for (int pass = 0; pass < 4 && (receiveBytes != 0 || sendBytes != 0); pass++)
                {
                    long received = 0, sent = 0;
                    for (int round = 0; round < (window.Calls + Round - 1) / Round; round++)
                    {
                        // Every await completes at once: all on this thread, so its own count is the whole cost.
                        long before = window.Read();
                        for (int i = 0; i < Round; i++)
                        {
                            ValueTask<int> send = client.SendToAsync(payload, pair.ServerKey, cancel.Token);
                            if (!send.IsCompleted) throw new InvalidOperationException("a send waited");
                            await send;
                        }
                        long middle = window.Read();
                        for (int i = 0; i < Round; i++)
                        {
                            ValueTask<ReceivedDatagram> receive = server.ReceiveFromAsync(buffer, cancel.Token);
                            if (!receive.IsCompleted) throw new InvalidOperationException("a receive waited: the datagram was not queued yet");
                            await receive;
                        }
                        long after = window.Read();
                        sent += middle - before;
                        received += after - middle;
                    }
                    // The first pass is the warm-up.
                    if (pass == 0) continue;
                    sendBytes = Math.Min(sendBytes, sent);
                    receiveBytes = Math.Min(receiveBytes, received);
                }
            }, 180_000);
            Assert.Equal(0, sendBytes);
            Assert.Equal(0, receiveBytes);
        }
    }
}
