using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using WhereAllocation;

// The smallest where-allocation server and client. The server waits for a datagram, looks its sender up in a
// PeerTable (a new sender is added once; the table's memory is all allocated when it is made), and echoes it back;
// the client sends numbered datagrams and checks each echo. Nothing is allocated per datagram (Allocations.cs counts).

using var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
var serverEndPoint = (IPEndPoint)server.LocalEndPoint!;
Console.WriteLine($"echo server on {serverEndPoint}, datagram path: {DatagramPathSettings.Active}");

var stop = new ManualResetEventSlim();
var clients = new PeerTable<long>(capacity: 1024);   // each client's echo count, keyed by its address and port
var serverThread = new Thread(() =>
{
    var buffer = new byte[1500];
    while (!stop.IsSet)
    {
        if (!server.Poll(100_000, SelectMode.SelectRead)) continue;
        ReceivedDatagram datagram = server.ReceiveFrom_NonAlloc(buffer.AsSpan());
        EndPointKey sender = datagram.RemoteEndPoint;
        ref long echoes = ref clients.GetValueRef(sender, out bool known);
        if (!known)
        {
            if (clients.TryAdd(sender, 0) == PeerAddResult.Full) continue;   // a hard cap: strangers past it get nothing
            Console.WriteLine($"new client {sender}");
            echoes = ref clients.GetValueRef(sender, out _);
        }
        echoes++;
        server.SendTo_NonAlloc(buffer.AsSpan(0, datagram.Length), sender);
    }
});
serverThread.Start();

using var client = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
client.Bind(new IPEndPoint(IPAddress.Loopback, 0));
client.ReceiveTimeout = 2000;   // a lost datagram ends the run, never hangs it
var to = new IPEndPointNonAlloc(serverEndPoint.Address, serverEndPoint.Port);
var from = new IPEndPointNonAlloc(IPAddress.Any, 0);   // overwritten by every receive
var message = new byte[32];
var echo = new byte[1500];
int ok = 0;

void RoundTrip(int i)
{
    BitConverter.TryWriteBytes(message, i);
    client.SendTo_NonAlloc(message, 0, message.Length, SocketFlags.None, to);
    int length = client.ReceiveFrom_NonAlloc(echo, 0, echo.Length, SocketFlags.None, from);
    if (length == message.Length && BitConverter.ToInt32(echo, 0) == i && from.CurrentKey == to.CurrentKey) ok++;
}

// The first round trips run code for the first time (JIT compilation, the library's one-time setup) and may allocate
// once; a server lives in the steady state after them, which is what the second half measures.
const int Count = 10_000;
for (int i = 0; i < Count; i++) RoundTrip(i);
string allocated = Allocations.Measure(() => { for (int i = Count; i < 2 * Count; i++) RoundTrip(i); });

stop.Set();
serverThread.Join();
foreach (var peer in clients) Console.WriteLine($"client {peer.Key}: {peer.Value} echoes");
Console.WriteLine($"{ok}/{2 * Count} echoes correct; {Count} round trips after warm-up: {allocated}");
return ok == 2 * Count ? 0 : 1;
