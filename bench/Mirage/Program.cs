using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Threading;
using Mirage.SocketLayer;
using Mirage.Sockets.Udp;
using WhereAllocation;
using WhereAllocation.Samples;
using WhereAllocation.Tests;

// One Mirage server Peer on loopback, its socket Mirage's stock UdpSocket or the Unity package's WhereAllocationSocket,
// and N client Peers (each on a WhereAllocationSocket, whose port is known) on a thread of their own, each sending a
// reliable, a notify and an unreliable 32-byte message every tick. The server thread ticks (UpdateReceive: the socket's
// Tick; UpdateSent: Mirage's batches, acks and keep-alives). After every client is connected and a warm-up, a window of
// ticks is measured with GC.GetAllocatedBytesForCurrentThread on the server thread (the oracle is first seen to count
// a 1000-element byte[]), split by MeteredSocket into the socket's bytes and Mirage's. Each datagram's sender is checked
// (a client's port, on loopback) and each message's connection (a client writes its index into every message; one
// connection per index, one index per connection).
//   Mirage --socket stock|where-allocation [--dual] [--clients 50] [--tick-ms 5] [--warmup 2] [--seconds 5]
internal static class Program
{
    private static readonly IPAddress MappedLoopback = IPAddress.Parse("::ffff:127.0.0.1");

    private sealed class ServerHandler : IDataHandler
    {
        public readonly Dictionary<IConnection, int> Owner = new Dictionary<IConnection, int>();
        public long Messages, Mismatched;

        public void ReceiveMessage(IConnection connection, ArraySegment<byte> message)
        {
            Messages++;
            int index = message.Array[message.Offset] | message.Array[message.Offset + 1] << 8;
            if (Owner.TryGetValue(connection, out int owner)) { if (owner != index) Mismatched++; }
            else Owner.Add(connection, index);
        }
    }

    private sealed class Ignore : IDataHandler
    {
        public void ReceiveMessage(IConnection connection, ArraySegment<byte> message) { }
    }

    private static int Main(string[] args)
    {
        string kind = "stock";
        bool dual = false;
        int clients = 50, tickMs = 5;
        double warmup = 2, seconds = 5;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--socket": kind = args[++i]; break;
                case "--dual": dual = true; break;
                case "--clients": clients = int.Parse(args[++i]); break;
                case "--tick-ms": tickMs = int.Parse(args[++i]); break;
                case "--warmup": warmup = double.Parse(args[++i]); break;
                case "--seconds": seconds = double.Parse(args[++i]); break;
                default: Console.Error.WriteLine("unknown option " + args[i]); return 2;
            }
        }
        if (kind != "stock" && kind != "where-allocation" && kind != "where-allocation-batch") { Console.Error.WriteLine("--socket stock|where-allocation|where-allocation-batch"); return 2; }
        // Mirage's UdpSocket.Bind sets DualMode on whatever it binds, which an IPv4 socket refuses: it is dual-mode only.
        if (kind == "stock" && !dual) { Console.Error.WriteLine("Mirage's UdpSocket binds dual-mode sockets only: give --dual"); return 2; }
        if (AllocationOracle.Kind != OracleKind.ThreadBytes)
        {
            Console.Error.WriteLine("no per-thread allocation counter here: " + AllocationOracle.Describe());
            return 1;
        }

        var logger = new UnityEngine.StandInLogger();
        var config = new Config { MaxConnections = clients + 10 };
        const int packetSize = 1280 - 48;   // Mirage's UdpMTU.MaxPacketSize, as both factories give it

        // The clients' sockets first: their ports are the senders the server may see.
        var clientSockets = new WhereAllocationSocket[clients];
        var clientPorts = new HashSet<int>();
        var handler = new ServerHandler();
        ISocket inner;
        IBindEndPoint bindTo;
        Func<IConnectionHandle, (bool, int)> sender;
        if (kind == "stock")
        {
            inner = new UdpSocket();
            bindTo = new UdpConnectionHandle(new IPEndPoint(MappedLoopback, 0));
            sender = handle =>
            {
                var from = (IPEndPoint)((UdpConnectionHandle)handle).inner;
                return (from.Address.Equals(MappedLoopback) || from.Address.Equals(IPAddress.Loopback), from.Port);
            };
        }
        else
        {
            var sample = new WhereAllocationSocket(text => Console.Error.WriteLine(text));
            // where-allocation-batch: the sample's socket with its sends held in a DatagramBatch until Flush (BatchedSendSocket.cs).
            inner = kind == "where-allocation-batch" ? new BatchedSendSocket(sample, 256, packetSize) : sample;
            bindTo = dual ? new WhereAllocationEndPoint(new IPEndPoint(MappedLoopback, 0), dualMode: true) : new WhereAllocationEndPoint(new IPEndPoint(IPAddress.Loopback, 0));
            sender = handle =>
            {
                EndPointKey key = ((WhereAllocationConnectionHandle)handle).Key;
                EndPointKey v4 = key.IsIPv4MappedToIPv6 ? key.MapToIPv4() : key;
                return (v4 == EndPointKey.IPv4(127, 0, 0, 1, v4.Port), v4.Port);
            };
        }
        var metered = new MeteredSocket(inner, sender, clientPorts);
        var server = new Peer(metered, packetSize, handler, config, logger);
        int connected = 0;
        server.OnConnected += _ => Interlocked.Increment(ref connected);
        server.Bind(bindTo);
        int port = kind == "stock"
            ? ((IPEndPoint)((Socket)typeof(UdpSocket).GetField("socket", BindingFlags.NonPublic | BindingFlags.Instance).GetValue(inner)).LocalEndPoint).Port
            : (inner is BatchedSendSocket batched ? batched.Inner : (WhereAllocationSocket)inner).LocalEndPoint.Port;

        var peers = new Peer[clients];
        var connections = new IConnection[clients];
        for (int i = 0; i < clients; i++)
        {
            clientSockets[i] = new WhereAllocationSocket(text => Console.Error.WriteLine(text));
            peers[i] = new Peer(clientSockets[i], packetSize, new Ignore(), new Config(), logger);
            connections[i] = peers[i].Connect(new WhereAllocationEndPoint(new IPEndPoint(IPAddress.Loopback, port)));
            clientPorts.Add(clientSockets[i].LocalEndPoint.Port);
        }

        // The clients, on a thread of their own: their allocations are not the server thread's.
        bool stop = false;
        var clientThread = new Thread(() =>
        {
            var payloads = new byte[clients][];
            for (int i = 0; i < clients; i++) { payloads[i] = new byte[32]; payloads[i][0] = (byte)i; payloads[i][1] = (byte)(i >> 8); }
            while (!Volatile.Read(ref stop))
            {
                for (int i = 0; i < clients; i++)
                {
                    peers[i].UpdateReceive();
                    if (connections[i].State == ConnectionState.Connected)
                    {
                        connections[i].SendReliable(payloads[i], 0, 32);
                        connections[i].SendNotify(payloads[i], 0, 32);
                        connections[i].SendUnreliable(payloads[i], 0, 32);
                    }
                    peers[i].UpdateSent();
                }
                Thread.Sleep(tickMs);
            }
        }) { IsBackground = true };
        clientThread.Start();

        // The server, on this thread.
        var clock = Stopwatch.StartNew();
        while (Volatile.Read(ref connected) < clients)
        {
            server.UpdateReceive(); server.UpdateSent(); Thread.Sleep(tickMs);
            if (clock.Elapsed.TotalSeconds > 30) { Console.Error.WriteLine("only " + connected + " of " + clients + " clients connected in 30 s"); return 1; }
        }
        double until = clock.Elapsed.TotalSeconds + warmup;
        while (clock.Elapsed.TotalSeconds < until) { server.UpdateReceive(); server.UpdateSent(); Thread.Sleep(tickMs); }

        ServerThreadCalls.Mark();
        long datagrams0 = metered.Datagrams, tick0 = metered.TickBytes, mirage0 = metered.MirageBytes, send0 = metered.SendBytes, sends0 = metered.Sends, sendInTick0 = metered.SendBytesInsideTick;
        long wrong0 = metered.WrongSenders, messages0 = handler.Messages;
        long bytes0 = GC.GetAllocatedBytesForCurrentThread();
        until = clock.Elapsed.TotalSeconds + seconds;
        long ticks = 0, sentCpu = 0, cpu0 = ThreadCpu.Nanoseconds();
        while (clock.Elapsed.TotalSeconds < until)
        {
            server.UpdateReceive();
            long beforeSent = ThreadCpu.Nanoseconds();
            server.UpdateSent();
            sentCpu += ThreadCpu.Nanoseconds() - beforeSent;
            ticks++;
            Thread.Sleep(tickMs);
        }
        long cpu = ThreadCpu.Nanoseconds() - cpu0;
        long bytes = GC.GetAllocatedBytesForCurrentThread() - bytes0;
        long received = metered.Datagrams - datagrams0, sends = metered.Sends - sends0, messages = handler.Messages - messages0;
        long socketSend = metered.SendBytes - send0, mirage = metered.MirageBytes - mirage0;
        // Tick's bytes less Mirage's and less the sends Mirage made from inside OnData (counted as sends).
        long socketReceive = (metered.TickBytes - tick0) - mirage - (metered.SendBytesInsideTick - sendInTick0);
        long wrong = metered.WrongSenders - wrong0;
        ServerThreadCalls.Mark();
        Volatile.Write(ref stop, true);
        clientThread.Join();

        var owners = new HashSet<int>(handler.Owner.Values);
        bool ownersOk = handler.Owner.Count == clients && owners.Count == clients && handler.Mismatched == 0;
        string runtime = Runtime.IsMono ? "Mono " + MonoVersion() : ".NET " + Environment.Version;
        Console.WriteLine($"{runtime}, {kind}, {(dual ? "dual-mode" : "IPv4")}, {clients} clients, tick {tickMs} ms: {ticks} ticks, {received} datagrams received, {sends} sent, {messages} messages"
            + $" | server thread {Per(bytes, received)} B/datagram"
            + $" | socket: receive {Per(socketReceive, received)} B/datagram, send {Per(socketSend, sends)} B/datagram, both {Per(socketReceive + socketSend, received)} B per received datagram"
            + $" | Mirage (inside OnData) {Per(mirage, received)} B/datagram"
            + $" | senders wrong {wrong}, messages on the wrong connection {handler.Mismatched}, connections {handler.Owner.Count}/{clients} one index each: {ownersOk}");
        Console.WriteLine($"  server thread CPU: {cpu / 1000.0 / ticks:F1} us per tick, {(double)cpu / received:F0} ns per received datagram; UpdateSent (Mirage's sends and the socket's Flush) {sentCpu / 1000.0 / ticks:F1} us per tick, {(double)sentCpu / Math.Max(1, sends):F0} ns per datagram sent"
            + (inner is BatchedSendSocket b ? $"; {b.BatchSends} batch sends, {b.Dropped} dropped" : ""));
        Console.WriteLine("  oracle: " + AllocationOracle.Describe() + "; window markers: " + ServerThreadCalls.MarkerSize + "-byte sendto on the server thread");
        server.Close();
        foreach (Peer peer in peers) peer.Close();
        return received > 0 && wrong == 0 && ownersOk ? 0 : 1;
    }

    private static string Per(long bytes, long count) => count > 0 ? ((double)bytes / count).ToString("F1") : "-";

    private static string MonoVersion()
    {
        MethodInfo display = Type.GetType("Mono.Runtime")?.GetMethod("GetDisplayName", BindingFlags.NonPublic | BindingFlags.Static);
        return display?.Invoke(null, null) as string ?? "";
    }
}

// The calling thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID), Linux): what the server thread itself spent, the
// clients' thread and the sleeps left out.
internal static class ThreadCpu
{
    private struct Timespec { public long Seconds, Nanoseconds; }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "clock_gettime")]
    private static extern int ClockGetTime(int clock, out Timespec time);

    public static long Nanoseconds()
    {
        ClockGetTime(3, out Timespec t);   // CLOCK_THREAD_CPUTIME_ID
        return t.Seconds * 1_000_000_000 + t.Nanoseconds;
    }
}

namespace WhereAllocation.Tests
{
    public static partial class Runtime
    {
        private static partial string LibraryUnderTest() => "bench/Mirage";
    }
}
