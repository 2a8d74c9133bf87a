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
//   --diagnostic-has <text>                          DatagramPathSettings.Diagnostic must contain the text (scripts/unity-builds.sh)
//   --closed                                         instead of the native checks: the library built for a player with no
//                                                    native path must refuse the allocating path loudly, once, then run it
//   --opt-in                                         the same with DatagramPathSettings.Force(DatagramPath.Managed) called first:
//                                                    no exception, and the allocation per datagram is printed
//   --reset-rearms                                   with --closed: after DatagramPathSettings.Reset() (what the Unity package's
//                                                    Editor assembly calls on entering Play Mode without a domain reload)
//                                                    the next call reports again, once, as at a player's start
// Every run ends with the Managed path's checks: a cut datagram is reported, and the path never asked the runtime for
// SocketFlags.Truncated (Mono refuses it, and IL2CPP's socket layer rejects it).
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
var diagnosticParts = new System.Collections.Generic.List<string>();
bool closed = false, optIn = false, resetRearms = false;
for (int i = 0; i < args.Length; i++)
{
    if (args[i] == "--closed") closed = true;
    else if (args[i] == "--opt-in") optIn = true;
    else if (args[i] == "--reset-rearms") resetRearms = true;
    else if (i + 1 < args.Length && args[i] == "--access") expectedAccess = args[++i];
    else if (i + 1 < args.Length && args[i] == "--absent") absent.Add(args[++i]);
    else if (i + 1 < args.Length && args[i] == "--diagnostic-has") diagnosticParts.Add(args[++i]);
}
if (optIn) DatagramPathSettings.Force(DatagramPath.Managed);
Console.WriteLine(DatagramPathSettings.Diagnostic);
foreach (string part in diagnosticParts)
    Check(DatagramPathSettings.Diagnostic.Contains(part), "the start-up diagnostic says \"" + part + "\"");
if (closed || optIn)
{
    ManagedOnly(optIn);
    if (resetRearms)
    {
        DatagramPathSettings.Force(DatagramPath.Managed);
        DatagramPathSettings.Reset();
        Check(DatagramPathSettings.Active == DatagramPathSettings.Default && DatagramPathSettings.Diagnostic.Contains("(default)"), "after Reset: the default path again, not forced");
        ManagedOnly(false);
    }
    ManagedFlags(false);
    Console.WriteLine($"{passed} passed, {failed} failed");
    return failed == 0 ? 0 : 1;
}

System.Reflection.Assembly classLibrary = typeof(Socket).Assembly;
Console.WriteLine("trim check on " + System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription + ": path " + DatagramPathSettings.Active
    + ", handle access " + DatagramPathSettings.HandleAccess + ", Socket from " + classLibrary.Location + ", corlib from " + typeof(object).Assembly.Location);
foreach (string name in absent)
    Check(classLibrary.GetType(name) == null && typeof(object).Assembly.GetType(name) == null, "the running class library lacks " + name + ", which the link removed");
Check(DatagramPathSettings.Active == DatagramPath.Native, "the native path is the one in use");
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
    Check(DatagramPathSettings.HandleAccess.ToString() == expectedAccess, "the socket's handle is reached through " + DatagramPathSettings.HandleAccess + " (expected " + expectedAccess + ")");

// A batch, as a server's receive loop drains its socket and answers: up to 16 datagrams per call each way.
using (var batch = new DatagramBatch(16))
{
    EndPointKey toBKey = EndPointKey.FromIPEndPoint(bEndPoint);
    long batchBytes = long.MaxValue;
    int batchCorrect = 0, batchTotal = 0;
    for (int round = -1; round < 3 && batchBytes != 0; round++)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Calls / 16; i++)
        {
            batch.Clear();
            for (int k = 0; k < 16; k++) batch.TryAdd(message, toBKey);
            int went = batch.Send(a);
            int got = batch.Receive(b, 2000);
            batchTotal += 16;
            if (went == 16 && got == 16) batchCorrect += 16;
        }
        long after = GC.GetAllocatedBytesForCurrentThread();
        if (round >= 0) batchBytes = Math.Min(batchBytes, after - before);
    }
    Check(batchCorrect == batchTotal, $"DatagramBatch: {batchCorrect} of {batchTotal} datagrams sent and received 16 per call ({batch.Mode})");
    Check(batchBytes == 0, $"DatagramBatch: {batchBytes} B allocated over {Calls / 16} sends and {Calls / 16} receives of 16 datagrams");
}

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

ManagedFlags(true);
Console.WriteLine($"{passed} passed, {failed} failed");
return failed == 0 ? 0 : 1;

// A build whose native path is unavailable: without the opt-in the first call must throw PlatformNotSupportedException
// and say how to accept the allocation; after that (or with the opt-in from the start) the Managed path must work.
void ManagedOnly(bool optedIn)
{
    Check(DatagramPathSettings.Active == DatagramPath.Managed, "the Managed path is the one in use (" + DatagramPathSettings.Active + ")");
    Check(!DatagramPathSettings.IsAvailable(DatagramPath.Native) && DatagramPathSettings.NativeUnavailableReason != null, "the native path is unavailable, with a reason: " + DatagramPathSettings.NativeUnavailableReason);
    using var x = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    using var y = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    x.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    y.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    y.ReceiveTimeout = 2000;
    var toY = EndPointKey.FromIPEndPoint((IPEndPoint)y.LocalEndPoint!);
    var data = new byte[64];
    var into = new byte[1500];
    int reports = 0;
    for (int i = 0; i < 3; i++)
    {
        try
        {
            x.SendTo_NonAlloc(data.AsSpan(), toY);
        }
        catch (PlatformNotSupportedException e)
        {
            reports++;
            Check(e.Message.Contains("DatagramPathSettings.Force(DatagramPath.Managed)") && e.Message.Contains(DatagramPathSettings.NativeUnavailableReason!),
                "the report names the reason and the opt-in: " + e.Message);
        }
    }
    Check(reports == (optedIn ? 0 : 1), optedIn ? "opted in: no call threw" : $"the first call threw, once ({reports} time(s) in 3 calls)");
    int back = 0;
    for (int i = 0; i < (optedIn ? 3 : 2); i++) if (y.ReceiveFrom_NonAlloc(into.AsSpan()).Length == data.Length) back++;
    Check(back == (optedIn ? 3 : 2), $"the Managed path then moves the datagrams ({back} came back)");
    long before = GC.GetAllocatedBytesForCurrentThread();
    for (int i = 0; i < 1000; i++)
    {
        x.SendTo_NonAlloc(data.AsSpan(), toY);
        y.ReceiveFrom_NonAlloc(into.AsSpan());
    }
    long perDatagram = (GC.GetAllocatedBytesForCurrentThread() - before) / 1000;
    Console.WriteLine($"  info the Managed path allocated {perDatagram} B per datagram sent and received on this runtime");
}

// The Managed path under this build: it must not ask for SocketFlags.Truncated (this runtime, Mono, refuses it, as
// IL2CPP's socket layer does), and must receive both datagrams. With the Linux calls (FIONREAD gives the next datagram's
// size) it must also report the longer one as cut; a build for another OS cannot tell on this Linux machine.
void ManagedFlags(bool linuxCalls)
{
    // Constant names in Type.GetType and GetProperty: a linker sees what this asks for and keeps it.
    Type? io = Type.GetType("WhereAllocation.ManagedDatagramIO, WhereAllocation");
    object? asks = io?.GetProperty("AsksTruncated", System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.NonPublic)?.GetValue(null);
    Check(asks is false, "the Managed path of this build never adds SocketFlags.Truncated (AsksTruncated " + (asks ?? "missing") + ")");
    DatagramPathSettings.Force(DatagramPath.Managed);
    using var x = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    using var y = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    x.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    y.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    y.ReceiveTimeout = 2000;
    var toY = EndPointKey.FromIPEndPoint((IPEndPoint)y.LocalEndPoint!);
    x.SendTo_NonAlloc(new byte[100].AsSpan(), toY);
    x.SendTo_NonAlloc(new byte[10].AsSpan(), toY);
    var small = new byte[10];
    ReceivedDatagram first = default, second = default;
    bool both = y.Poll(2_000_000, SelectMode.SelectRead) && y.TryReceiveFrom_NonAlloc(small.AsSpan(), out first)
        && y.Poll(2_000_000, SelectMode.SelectRead) && y.TryReceiveFrom_NonAlloc(small.AsSpan(), out second);
    Check(both && first.Length == 10 && second.Length == 10 && !second.Truncated, "the Managed path receives a 100-byte datagram into 10 bytes, then a 10-byte one whole");
    if (linuxCalls) Check(first.Truncated, "the Managed path reports the 100-byte datagram as cut");
    else Console.WriteLine("  info the Managed path " + (first.Truncated ? "reported" : "could not tell") + " that the 100-byte datagram was cut (this build's OS calls are not Linux's)");
    DatagramPathSettings.Reset();
}

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
