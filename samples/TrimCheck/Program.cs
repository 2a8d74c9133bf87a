using System;
using System.Net;
using System.Net.Sockets;
using WhereAllocation;

// What a Unity game server's receive loop does with the compatible API (IPEndPointNonAlloc, ReceiveFrom_NonAlloc,
// SendTo_NonAlloc) and an async server's loop does with AsyncDatagramSocket, run after linking: the native path must be
// the one in use, receive, send and an await that waits must each allocate 0 B over 10 000 calls, and a disposed socket
// must say ObjectDisposedException, also to an await in progress. Arguments:
//   --access <SafeHandleProperty|SafeHandleField>   the way to the socket's handle expected after the calls
//   --absent <type name>                             a type of the class library that the link removed: proof that
//                                                    the linked class library, not the installed one, is running
// Prints "N passed, N failed"; exit code 0 when all pass.

const int Calls = 10_000;
int passed = 0, failed = 0;
void Check(bool ok, string what)
{
    if (ok) passed++; else failed++;
    Console.WriteLine((ok ? "  ok   " : "  FAIL ") + what);
}

string? expectedAccess = null;
var absent = new System.Collections.Generic.List<string>();
for (int i = 0; i + 1 < args.Length; i += 2)
{
    if (args[i] == "--access") expectedAccess = args[i + 1];
    else if (args[i] == "--absent") absent.Add(args[i + 1]);
}

System.Reflection.Assembly classLibrary = typeof(Socket).Assembly;
Console.WriteLine("trim check on " + System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription + ": path " + DatagramPaths.Active
    + ", handle access " + DatagramPaths.HandleAccess + ", Socket from " + classLibrary.Location + ", corlib from " + typeof(object).Assembly.Location);
foreach (string name in absent)
    Check(classLibrary.GetType(name) == null && typeof(object).Assembly.GetType(name) == null, "the running class library lacks " + name + ", which the link removed");
Check(DatagramPaths.Active == DatagramPath.Native, "the native path is the one in use");
// The meter first: it must see a byte[1000] canary, or every 0 below would mean nothing (under Mono's Boehm collector,
// Unity's, the thread's counter says 0 whatever is allocated).
object? canary;
long canaryBefore = GC.GetAllocatedBytesForCurrentThread();
canary = new byte[1000];
long canarySeen = GC.GetAllocatedBytesForCurrentThread() - canaryBefore;
GC.KeepAlive(canary);
Check(canarySeen >= 1000, canarySeen >= 1000 ? $"the thread's allocation counter sees a byte[1000] canary ({canarySeen} B)"
    : $"no allocation counter on this runtime: the thread's counter saw {canarySeen} B of a byte[1000] canary");

using var a = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
var b = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
a.Bind(new IPEndPoint(IPAddress.Loopback, 0));
b.Bind(new IPEndPoint(IPAddress.Loopback, 0));
a.ReceiveTimeout = 2000;
b.ReceiveTimeout = 2000;
var aEndPoint = (IPEndPoint)a.LocalEndPoint!;
var bEndPoint = (IPEndPoint)b.LocalEndPoint!;
var toB = new IPEndPointNonAlloc(bEndPoint.Address, bEndPoint.Port);
var sender = new IPEndPointNonAlloc(IPAddress.Any, 0);
var message = new byte[64];
var received = new byte[1500];

// Each send and each receive is measured on its own (the counter itself allocates nothing); warm-up first,
// then up to three rounds, keeping the smallest, as a JIT may allocate once when it recompiles a hot method.
int correct = 0, total = 0;
long sendBytes = 0, receiveBytes = 0;
void Round(int calls)
{
    sendBytes = 0; receiveBytes = 0;
    for (int i = 0; i < calls; i++)
    {
        total++;
        message[0]++;
        long before = GC.GetAllocatedBytesForCurrentThread();
        a.SendTo_NonAlloc(message, 0, message.Length, SocketFlags.None, toB);
        long between = GC.GetAllocatedBytesForCurrentThread();
        int length = b.ReceiveFrom_NonAlloc(received, 0, received.Length, SocketFlags.None, sender);
        long after = GC.GetAllocatedBytesForCurrentThread();
        sendBytes += between - before;
        receiveBytes += after - between;
        if (length == message.Length && received[0] == message[0] && sender.Port == aEndPoint.Port) correct++;
    }
}
Round(2000);
long bestSend = long.MaxValue, bestReceive = long.MaxValue;
for (int round = 0; round < 3 && (bestSend != 0 || bestReceive != 0); round++)
{
    Round(Calls);
    bestSend = Math.Min(bestSend, sendBytes);
    bestReceive = Math.Min(bestReceive, receiveBytes);
}
Check(correct == total, $"{correct} of {total} datagrams came back intact from {sender}");
Check(bestReceive == 0, $"ReceiveFrom_NonAlloc: {bestReceive} B allocated over {Calls} calls");
Check(bestSend == 0, $"SendTo_NonAlloc: {bestSend} B allocated over {Calls} calls");
if (expectedAccess != null)
    Check(DatagramPaths.HandleAccess.ToString() == expectedAccess, "the socket's handle is reached through " + DatagramPaths.HandleAccess + " (expected " + expectedAccess + ")");

// The awaitable receive, as an async server loop writes it: awaits that wait (the other socket sends each datagram only
// once the call has returned without one), with the netstandard2.1 default, IoThread: after the first wait the loop runs
// on the library's I/O thread, so that thread's count between two points of the loop is the whole receiving cost.
var receiver = new AsyncDatagramSocket(b);
var gate = new object();
int asked = 0;
bool stop = false;
EndPointKey keyOfB = EndPointKey.FromIPEndPoint(bEndPoint);
var pacer = new System.Threading.Thread(() =>
{
    int sent = 0;
    while (true)
    {
        lock (gate)
        {
            while (asked == sent && !stop) System.Threading.Monitor.Wait(gate, 100);
            if (stop) return;
        }
        a.SendTo_NonAlloc(message, keyOfB);
        sent++;
    }
}) { IsBackground = true };
pacer.Start();
long awaitBytes = long.MaxValue;
int waited = 0, sameThread = 0;
for (int round = -1; round < 3 && awaitBytes != 0; round++)
{
    int count = round < 0 ? 2000 : Calls;
    waited = 0;
    int thread = Environment.CurrentManagedThreadId;
    long before = GC.GetAllocatedBytesForCurrentThread();
    for (int i = 0; i < count; i++)
    {
        System.Threading.Tasks.ValueTask<ReceivedDatagram> next = receiver.ReceiveFromAsync(received);
        if (!next.IsCompleted) waited++;
        lock (gate)
        {
            asked++;
            System.Threading.Monitor.Pulse(gate);
        }
        await next;
    }
    long after = GC.GetAllocatedBytesForCurrentThread();
    if (round >= 0 && thread == Environment.CurrentManagedThreadId)
    {
        sameThread++;
        awaitBytes = Math.Min(awaitBytes, after - before);
    }
}
lock (gate)
{
    stop = true;
    System.Threading.Monitor.Pulse(gate);
}
pacer.Join();
Check(waited == Calls && sameThread > 0, $"AsyncDatagramSocket: {waited} of {Calls} awaits waited, and resumed on the one I/O thread");
Check(awaitBytes == 0, $"AsyncDatagramSocket: {awaitBytes} B allocated over {Calls} awaits that waited");
System.Threading.Tasks.ValueTask<ReceivedDatagram> pending = receiver.ReceiveFromAsync(received);
b.Dispose();
Check(await Ends<ObjectDisposedException>(pending), "a socket disposed during an await ends it with ObjectDisposedException");
receiver.Dispose();

Check(Throws<ObjectDisposedException>(() => b.ReceiveFrom_NonAlloc(received, 0, received.Length, SocketFlags.None, sender)), "receiving on a disposed socket throws ObjectDisposedException");
Check(Throws<ObjectDisposedException>(() => b.SendTo_NonAlloc(message, 0, message.Length, SocketFlags.None, toB)), "sending on a disposed socket throws ObjectDisposedException");

Console.WriteLine($"{passed} passed, {failed} failed");
return failed == 0 ? 0 : 1;

static async System.Threading.Tasks.Task<bool> Ends<T>(System.Threading.Tasks.ValueTask<ReceivedDatagram> pending) where T : Exception
{
    try
    {
        await pending;
        return false;
    }
    catch (T)
    {
        return true;
    }
}

static bool Throws<T>(Action action) where T : Exception
{
    try
    {
        action();
        return false;
    }
    catch (T)
    {
        return true;
    }
}
