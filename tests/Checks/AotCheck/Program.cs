using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using WhereAllocation;

// Loopback send/receive through where-allocation's native path, as a user's program would do it: the
// compatible IPEndPointNonAlloc calls, the EndPointKey calls and the awaitable calls, each checked for content
// and for 0 bytes allocated over 10 000 calls. Prints "N passed, N failed"; exit code 0 when all pass.

const int Calls = 10_000;
int passed = 0, failed = 0;
void Check(bool ok, string what)
{
    if (ok) passed++; else failed++;
    Console.WriteLine((ok ? "  ok   " : "  FAIL ") + what);
}

Console.WriteLine($"where-allocation {typeof(EndPointKey).Assembly.GetName().Version} on {System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription}"
    + $" (dynamic code: {RuntimeFeature.IsDynamicCodeSupported}), datagram path: {DatagramPathSettings.Active}");
Check(DatagramPathSettings.Active == DatagramPath.Native, "the native path is the one in use");
// The meters first: each must see a byte[1000] canary, or every 0 below would mean nothing (under Boehm the thread's
// counter says 0 whatever is allocated; under IL2CPP it throws).
object? canary = null;
long canaryBefore = GC.GetAllocatedBytesForCurrentThread(), totalBefore = GC.GetTotalAllocatedBytes(true);
canary = new byte[1000];
long canaryThread = GC.GetAllocatedBytesForCurrentThread() - canaryBefore, canaryTotal = GC.GetTotalAllocatedBytes(true) - totalBefore;
GC.KeepAlive(canary);
Check(canaryThread >= 1000, $"the thread's allocation counter sees a byte[1000] canary ({canaryThread} B)");
Check(canaryTotal >= 1000, $"the process's allocation counter sees a byte[1000] canary ({canaryTotal} B)");

using var a = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
using var b = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
a.Bind(new IPEndPoint(IPAddress.Loopback, 0));
b.Bind(new IPEndPoint(IPAddress.Loopback, 0));
a.ReceiveTimeout = 2000;
b.ReceiveTimeout = 2000;
var aEndPoint = (IPEndPoint)a.LocalEndPoint!;
var bEndPoint = (IPEndPoint)b.LocalEndPoint!;

// The compatible surface: IPEndPointNonAlloc in, IPEndPointNonAlloc out.
var toB = new IPEndPointNonAlloc(bEndPoint.Address, bEndPoint.Port);
var sender = new IPEndPointNonAlloc(IPAddress.Any, 0);
var message = new byte[64];
var received = new byte[1500];
int correct = 0, total = 0;
long allocated = Measure(() =>
{
    total++;
    message[0]++;
    a.SendTo_NonAlloc(message, 0, message.Length, SocketFlags.None, toB);
    int length = b.ReceiveFrom_NonAlloc(received, 0, received.Length, SocketFlags.None, sender);
    if (length == message.Length && received[0] == message[0] && sender.Port == aEndPoint.Port) correct++;
});
Check(correct == total, $"IPEndPointNonAlloc: {correct} of {total} datagrams came back intact from {sender}");
Check(allocated == 0, $"IPEndPointNonAlloc: {allocated} B allocated for {Calls} send+receive pairs");

// The value-key surface: EndPointKey in, ReceivedDatagram out.
EndPointKey keyOfB = EndPointKey.FromIPEndPoint(bEndPoint), keyOfA = EndPointKey.FromIPEndPoint(aEndPoint);
correct = 0; total = 0;
allocated = Measure(() =>
{
    total++;
    message[1]++;
    a.SendTo_NonAlloc(message.AsSpan(), keyOfB);
    ReceivedDatagram datagram = b.ReceiveFrom_NonAlloc(received.AsSpan());
    if (datagram.Length == message.Length && !datagram.Truncated && received[1] == message[1] && datagram.RemoteEndPoint == keyOfA) correct++;
});
Check(correct == total, $"EndPointKey: {correct} of {total} datagrams came back intact");
Check(allocated == 0, $"EndPointKey: {allocated} B allocated for {Calls} send+receive pairs");

// The awaitable calls, in both continuation modes: awaits that wait (a pacer thread sends each datagram only once the
// receiver's call has returned without one) and awaits that complete at once. The work crosses threads (the library's
// I/O thread, the thread pool), so the whole process is measured, GC.GetTotalAllocatedBytes: in this process nothing
// else runs, unlike in a test host.
foreach (DatagramContinuations mode in new[] { DatagramContinuations.ThreadPool, DatagramContinuations.IoThread })
{
    using var receiver = new AsyncDatagramSocket(b, mode);
    using var awaitedSender = new AsyncDatagramSocket(a, mode);
    var (waitedBytes, waited, waitedCorrect) = await AwaitsThatWait(receiver, a, keyOfB, keyOfA);
    Check(waited == Calls && waitedCorrect == Calls, $"AsyncDatagramSocket ({mode}): {waited} of {Calls} awaits waited, {waitedCorrect} datagrams intact");
    Check(waitedBytes == 0, $"AsyncDatagramSocket ({mode}): {waitedBytes} B allocated by the process for {Calls} awaits that waited");
    // Off the I/O thread, where the previous await may have left this code: there an IoThread loop gives way to the
    // other sockets every 256 immediate results, which is not what is counted here.
    var (atOnceBytes, atOnce) = await Task.Run(() => AwaitsAtOnce(receiver, awaitedSender, keyOfB));
    Check(atOnce == Calls, $"AsyncDatagramSocket ({mode}): {atOnce} of {Calls} send+receive awaits completed at once");
    Check(atOnceBytes == 0, $"AsyncDatagramSocket ({mode}): {atOnceBytes} B allocated by the process for {Calls} send+receive awaits that completed at once");
}

Console.WriteLine($"{passed} passed, {failed} failed");
return failed == 0 ? 0 : 1;

// Receives with awaits that wait: the smallest whole-process count of up to three rounds after warm-up (a round can
// meet the runtime's own one-off work, such as a thread the pool adds). One async method, the awaits written out in
// its loops: an async helper per await would allocate its own state machine each time it waits.
// The receiver tells the pacer through a count and an AutoResetEvent, not a lock: NativeAOT's Monitor is managed code
// that allocates a counter (136 B here) on each thread's first contended lock, and in ThreadPool mode every pool
// thread that runs the loop would meet the pacer's lock once (docs/GUIDE.md, "Measuring your own server").
static async Task<(long Bytes, int Waited, int Correct)> AwaitsThatWait(AsyncDatagramSocket receiver, Socket from, EndPointKey to, EndPointKey expectedSender)
{
    using var signal = new System.Threading.AutoResetEvent(false);
    int asked = 0;
    bool stop = false;
    var payload = new byte[64];
    var pacer = new System.Threading.Thread(() =>
    {
        int sent = 0;
        while (true)
        {
            while (System.Threading.Volatile.Read(ref asked) == sent && !System.Threading.Volatile.Read(ref stop)) signal.WaitOne(100);
            if (System.Threading.Volatile.Read(ref stop)) return;
            payload[0] = (byte)sent;
            from.SendTo_NonAlloc(payload, to);
            sent++;
        }
    }) { IsBackground = true };
    pacer.Start();
    var buffer = new byte[1500];
    using var bounded = new System.Threading.CancellationTokenSource(TimeSpan.FromSeconds(60)); // ends a lost wait rather than hang
    long smallest = long.MaxValue;
    int waited = 0, correct = 0;
    for (int round = -1; round < 3 && smallest != 0; round++)
    {
        int count = round < 0 ? 2000 : Calls;
        waited = 0;
        correct = 0;
        long before = GC.GetTotalAllocatedBytes(true);
        for (int i = 0; i < count; i++)
        {
            ValueTask<ReceivedDatagram> next = receiver.ReceiveFromAsync(buffer, bounded.Token);
            if (!next.IsCompleted) waited++;
            System.Threading.Interlocked.Increment(ref asked);
            signal.Set();
            ReceivedDatagram datagram = await next;
            if (datagram.Length == 64 && datagram.RemoteEndPoint == expectedSender) correct++;
        }
        long bytes = GC.GetTotalAllocatedBytes(true) - before;
        if (round >= 0) smallest = Math.Min(smallest, bytes);
    }
    System.Threading.Volatile.Write(ref stop, true);
    signal.Set();
    pacer.Join();
    return (smallest, waited, correct);
}

// Sends and receives with awaits that complete at once (100 queued, then 100 received: the socket's default receive
// buffer holds them), whole process as above. The token (one registration, kept) ends a receive that waits for a
// datagram that never comes, rather than hang.
static async Task<(long Bytes, int AtOnce)> AwaitsAtOnce(AsyncDatagramSocket receiver, AsyncDatagramSocket sender, EndPointKey to)
{
    const int Block = 100;
    var payload = new byte[64];
    var buffer = new byte[1500];
    using var bounded = new System.Threading.CancellationTokenSource(TimeSpan.FromSeconds(60));
    long smallest = long.MaxValue;
    int atOnce = 0;
    for (int round = -1; round < 3 && smallest != 0; round++)
    {
        atOnce = 0;
        long before = GC.GetTotalAllocatedBytes(true);
        for (int block = 0; block < Calls / Block; block++)
        {
            for (int i = 0; i < Block; i++)
            {
                ValueTask<int> send = sender.SendToAsync(payload, to, bounded.Token);
                bool sentAtOnce = send.IsCompleted;
                await send;
                if (!sentAtOnce) atOnce = int.MinValue;
            }
            for (int i = 0; i < Block; i++)
            {
                ValueTask<ReceivedDatagram> receive = receiver.ReceiveFromAsync(buffer, bounded.Token);
                if (receive.IsCompleted) atOnce++;
                await receive;
            }
        }
        long bytes = GC.GetTotalAllocatedBytes(true) - before;
        if (round >= 0) smallest = Math.Min(smallest, bytes);
    }
    return (smallest, atOnce);
}

// The bytes this thread allocates over Calls calls, after 2000 warm-up calls: the smallest of up to
// three rounds, because CoreCLR's tiered JIT allocates a few dozen bytes once when it promotes a hot
// method (at a moment set by a timer). One object per call would make every round allocate >= Calls B.
static long Measure(Action call)
{
    for (int i = 0; i < 2000; i++) call();
    long smallest = long.MaxValue;
    for (int round = 0; round < 3 && smallest != 0; round++)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Calls; i++) call();
        smallest = Math.Min(smallest, GC.GetAllocatedBytesForCurrentThread() - before);
    }
    return smallest;
}
