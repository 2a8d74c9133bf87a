using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using WhereAllocation;

// Loopback send/receive through where-allocation's native path, as a user's program would do it: the
// compatible IPEndPointNonAlloc calls and the EndPointKey calls, each checked for content and for
// 0 bytes allocated over 10 000 calls. Prints "N passed, N failed"; exit code 0 when all pass.

const int Calls = 10_000;
int passed = 0, failed = 0;
void Check(bool ok, string what)
{
    if (ok) passed++; else failed++;
    Console.WriteLine((ok ? "  ok   " : "  FAIL ") + what);
}

Console.WriteLine($"where-allocation {typeof(EndPointKey).Assembly.GetName().Version} on {System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription}"
    + $" (dynamic code: {RuntimeFeature.IsDynamicCodeSupported}), datagram path: {DatagramPaths.Active}");
Check(DatagramPaths.Active == DatagramPath.Native, "the native path is the one in use");

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

Console.WriteLine($"{passed} passed, {failed} failed");
return failed == 0 ? 0 : 1;

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
