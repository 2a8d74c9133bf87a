using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using WhereAllocation;

// The smallest where-allocation server and client: the server polls, remembers each new client once
// (one allocation per client, none per datagram), and echoes; the client sends and checks the echo.

using var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
var serverEndPoint = (IPEndPoint)server.LocalEndPoint!;
Console.WriteLine($"echo server on {serverEndPoint}, datagram path: {DatagramPaths.Active}");

var stop = new ManualResetEventSlim();
var serverThread = new Thread(() =>
{
    var buffer = new byte[1500];
    var sender = new IPEndPointNonAlloc(IPAddress.Any, 0); // overwritten by every receive
    var clients = new Dictionary<EndPointKey, IPEndPoint>();
    while (!stop.IsSet)
    {
        if (!server.Poll(100_000, SelectMode.SelectRead)) continue;
        int length = server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, sender);
        if (!clients.ContainsKey(sender.CurrentKey))
        {
            clients.Add(sender.CurrentKey, sender.DeepCopyIPEndPoint()); // a copy: 'sender' changes on the next receive
            Console.WriteLine($"new client {sender}");
        }
        server.SendTo_NonAlloc(buffer, 0, length, SocketFlags.None, sender);
    }
});
serverThread.Start();

using var client = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
client.Bind(new IPEndPoint(IPAddress.Loopback, 0));
client.ReceiveTimeout = 2000;
var to = new IPEndPointNonAlloc(serverEndPoint.Address, serverEndPoint.Port);
var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
var message = new byte[32];
var echo = new byte[1500];
int ok = 0;
const int Count = 10_000;
// The counter must first see a known allocation: under Mono's Boehm collector (Unity's) it says 0 for everything.
long canaryBefore = GC.GetAllocatedBytesForCurrentThread();
object canary = new byte[1000];
bool counted = GC.GetAllocatedBytesForCurrentThread() - canaryBefore >= 1000;
GC.KeepAlive(canary);
// The first round trips run code for the first time (JIT compilation, the library's one-time setup on each path,
// the runtime's first socket calls) and may allocate once; steady state is what a server lives in, so the
// allocations are counted over the second half only.
long before = 0;
for (int i = 0; i < 2 * Count; i++)
{
    if (i == Count) before = GC.GetAllocatedBytesForCurrentThread();
    BitConverter.TryWriteBytes(message, i);
    client.SendTo_NonAlloc(message, 0, message.Length, SocketFlags.None, to);
    int length = client.ReceiveFrom_NonAlloc(echo, 0, echo.Length, SocketFlags.None, from);
    if (length == message.Length && BitConverter.ToInt32(echo, 0) == i && from.CurrentKey == to.CurrentKey) ok++;
}
long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
stop.Set();
serverThread.Join();
Console.WriteLine($"{ok}/{2 * Count} echoes correct; " + (counted
    ? $"after {Count} warm-up round trips the client allocated {allocated} bytes for {Count} more send+receive pairs"
    : "no allocation counter on this runtime (it did not see a byte[1000] canary), so no byte count"));
return ok == 2 * Count ? 0 : 1;
