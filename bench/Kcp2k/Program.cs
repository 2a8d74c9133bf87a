using System;
using System.Diagnostics;
using System.Net;
using System.Threading;
using kcp2k;
using WhereAllocation.Samples;

// Bytes allocated on a kcp2k server's thread per datagram it receives, over loopback from N kcp2k clients on another
// thread. Each client sends a reliable and an unreliable message every millisecond tick; the server echoes each on its
// channel, so the count includes the server's sends (replies and kcp's acknowledgements). The server thread ticks,
// receiving until the socket is empty; after every client is connected and a warm-up, a window of ticks is measured
// with GC.GetAllocatedBytesForCurrentThread (CoreCLR; Mono with SGen).
// --max-connections (the sample only) below --clients checks the sample's cap: that many connect, the rest are refused.
//   Kcp2k --server stock|where-allocation [--dual] [--clients 50] [--max-connections 1024] [--warmup 2] [--seconds 5]
internal static class Program
{
    private sealed class StockServer : KcpServer
    {
        public long Datagrams;
        public StockServer(Action<int> connected, Action<int, ArraySegment<byte>, KcpChannel> data, KcpConfig config)
            : base(connected, data, _ => { }, (_, _, _) => { }, config) { }
        protected override bool RawReceiveFrom(out ArraySegment<byte> segment, out int connectionId)
        {
            bool got = base.RawReceiveFrom(out segment, out connectionId);
            if (got) Datagrams++;
            return got;
        }
    }

    private sealed class SampleServer : WhereAllocationKcpServer
    {
        public long Datagrams;
        public SampleServer(Action<int> connected, Action<int, ArraySegment<byte>, KcpChannel> data, KcpConfig config, int maxConnections)
            : base(connected, data, _ => { }, (_, _, _) => { }, config, maxConnections) { }
        protected override bool RawReceiveFrom(out ArraySegment<byte> segment, out int connectionId)
        {
            bool got = base.RawReceiveFrom(out segment, out connectionId);
            if (got) Datagrams++;
            return got;
        }
    }

    private static int Main(string[] args)
    {
        string kind = "stock";
        bool dual = false;
        int clients = 50, maxConnections = 1024;
        double warmup = 2, seconds = 5;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--server": kind = args[++i]; break;
                case "--dual": dual = true; break;
                case "--clients": clients = int.Parse(args[++i]); break;
                case "--max-connections": maxConnections = int.Parse(args[++i]); break;
                case "--warmup": warmup = double.Parse(args[++i]); break;
                case "--seconds": seconds = double.Parse(args[++i]); break;
                default: Console.Error.WriteLine("unknown option " + args[i]); return 2;
            }
        }
        if (kind != "stock" && kind != "where-allocation") { Console.Error.WriteLine("--server stock|where-allocation"); return 2; }
        Log.Info = _ => { };
        Log.Warning = text => Console.Error.WriteLine(text);

        const ushort port = 17777;
        var config = new KcpConfig(DualMode: dual, RecvBufferSize: 1 << 20, SendBufferSize: 1 << 20, NoDelay: true, Interval: 1, Timeout: 10000);
        int connected = 0;
        KcpServer server = null;
        Action<int> onConnected = _ => Interlocked.Increment(ref connected);
        Action<int, ArraySegment<byte>, KcpChannel> onData = (id, message, channel) => server.Send(id, message, channel);
        StockServer stock = null;
        SampleServer sample = null;
        if (kind == "stock") server = stock = new StockServer(onConnected, onData, config);
        else server = sample = new SampleServer(onConnected, onData, config, maxConnections);
        int expected = sample != null ? Math.Min(clients, maxConnections) : clients;
        server.Start(port);
        Func<long> datagrams = () => stock != null ? stock.Datagrams : sample.Datagrams;

        // The clients, on a thread of their own: their allocations are not the server thread's.
        bool stop = false;
        var clientThread = new Thread(() =>
        {
            var list = new KcpClient[clients];
            var payload = new byte[32];
            for (int i = 0; i < clients; i++)
            {
                list[i] = new KcpClient(() => { }, (_, _) => { }, () => { }, (_, _) => { }, new KcpConfig(DualMode: false, NoDelay: true, Interval: 1, Timeout: 10000));
                list[i].Connect("127.0.0.1", port);
            }
            while (!Volatile.Read(ref stop))
            {
                foreach (KcpClient client in list)
                {
                    client.TickIncoming();
                    if (client.connected)
                    {
                        client.Send(new ArraySegment<byte>(payload), KcpChannel.Reliable);
                        client.Send(new ArraySegment<byte>(payload), KcpChannel.Unreliable);
                    }
                    client.TickOutgoing();
                }
                Thread.Sleep(1);
            }
            foreach (KcpClient client in list) client.Disconnect();
        }) { IsBackground = true };
        clientThread.Start();

        // The server, on this thread.
        var clock = Stopwatch.StartNew();
        while (Volatile.Read(ref connected) < expected)
        {
            server.Tick();
            Thread.Sleep(1);
            if (clock.Elapsed.TotalSeconds > 30) { Console.Error.WriteLine("only " + connected + " of " + expected + " clients connected in 30 s"); return 1; }
        }
        var until = clock.Elapsed.TotalSeconds + warmup;
        while (clock.Elapsed.TotalSeconds < until) { server.Tick(); Thread.Sleep(1); }

        long bytesBefore = GC.GetAllocatedBytesForCurrentThread(), datagramsBefore = datagrams();
        until = clock.Elapsed.TotalSeconds + seconds;
        while (clock.Elapsed.TotalSeconds < until) { server.Tick(); Thread.Sleep(1); }
        long bytes = GC.GetAllocatedBytesForCurrentThread() - bytesBefore, received = datagrams() - datagramsBefore;
        int connections = server.connections.Count;
        Volatile.Write(ref stop, true);
        clientThread.Join();
        server.Stop();

        string runtime = Type.GetType("Mono.Runtime") != null ? "Mono" : ".NET " + Environment.Version;
        Console.WriteLine($"{runtime}, {kind}, {(dual ? "dual-mode" : "IPv4")}, {clients} clients: {received} datagrams received, "
            + $"{bytes} B allocated on the server thread, {(received > 0 ? (double)bytes / received : 0):F1} B per datagram"
            + $", {connections} connections" + (sample != null ? $", {sample.RefusedDatagrams} refused" : ""));
        return received > 0 && connections == expected && connected == expected ? 0 : 1;
    }
}
