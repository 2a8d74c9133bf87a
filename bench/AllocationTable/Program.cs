using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation;

namespace WhereAllocation.AllocationTable
{
    /// <summary>Measures bytes allocated per call for every path and operation this runtime has, with the runtime's own calls as the baseline.</summary>
    public static class Program
    {
        private const int Calls = 20_000;

        public static int Main()
        {
            string runtime = Type.GetType("Mono.Runtime") != null ? "Mono" : "CoreCLR";
            Console.WriteLine($"# bytes allocated per call, {runtime} ({RuntimeInformation.FrameworkDescription}), {RuntimeInformation.OSDescription}");
            // The counter must first see a known allocation: under Mono's Boehm collector it says 0 for everything.
            long seen = CanarySeen();
            if (seen < 1000)
            {
                Console.WriteLine($"no allocation counter on this runtime: GC.GetAllocatedBytesForCurrentThread saw {seen} B of a byte[1000] canary; no table (it would say 0 everywhere)");
                return 3;
            }
            Console.WriteLine("| runtime | path | family | operation | bytes/call |");
            Console.WriteLine("|---|---|---|---|---|");
            foreach (string family in new[] { "IPv4", "IPv6", "dual-mode" })
            {
                Row(runtime, "runtime (baseline)", family, "Socket.ReceiveFrom(ref EndPoint)", Baseline(family, receive: true));
                Row(runtime, "runtime (baseline)", family, "Socket.SendTo(EndPoint)", Baseline(family, receive: false));
                foreach (DatagramPath path in new[] { DatagramPath.Native, DatagramPath.SocketAddress, DatagramPath.Managed })
                {
                    if (!DatagramPathSettings.IsAvailable(path))
                    {
                        Row(runtime, path.ToString(), family, "(not available on this runtime)", double.NaN);
                        continue;
                    }
                    DatagramPathSettings.Force(path);
                    Row(runtime, path.ToString(), family, "ReceiveFrom_NonAlloc(IPEndPointNonAlloc)", Library(family, receive: true));
                    Row(runtime, path.ToString(), family, "SendTo_NonAlloc(IPEndPointNonAlloc)", Library(family, receive: false));
                }
                DatagramPathSettings.Reset();
            }
            return 0;
        }

        private static object? _canary;

        private static long CanarySeen()
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            _canary = new byte[1000];
            long seen = GC.GetAllocatedBytesForCurrentThread() - before;
            _canary = null;
            return seen;
        }

        private static void Row(string runtime, string path, string family, string operation, double bytes)
        {
            Console.WriteLine($"| {runtime} | {path} | {family} | {operation} | {(double.IsNaN(bytes) ? "-" : bytes.ToString("0.##"))} |");
        }

        private static (Socket server, Socket client, IPEndPoint target) Pair(string family)
        {
            bool v6 = family == "IPv6";
            var server = new Socket(v6 || family == "dual-mode" ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            if (family == "dual-mode") server.DualMode = true;
            server.ReceiveBufferSize = 4 << 20;
            server.Bind(new IPEndPoint(family == "IPv4" ? IPAddress.Loopback : v6 ? IPAddress.IPv6Loopback : IPAddress.Parse("::ffff:127.0.0.1"), 0));
            var client = new Socket(v6 ? AddressFamily.InterNetworkV6 : AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            client.Bind(new IPEndPoint(v6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, 0));
            int port = ((IPEndPoint)server.LocalEndPoint!).Port;
            server.ReceiveTimeout = 5000;
            return (server, client, new IPEndPoint(v6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, port));
        }

        /// <summary>Bytes per call of one side (receive or send) of a send+receive loop; the other side is excluded from the count.</summary>
        private static double Measure(Action send, Action receive, bool measureReceive)
        {
            for (int i = 0; i < 2000; i++) { send(); receive(); }
            long total = 0;
            for (int i = 0; i < Calls; i++)
            {
                long a = GC.GetAllocatedBytesForCurrentThread();
                send();
                long b = GC.GetAllocatedBytesForCurrentThread();
                receive();
                long c = GC.GetAllocatedBytesForCurrentThread();
                total += measureReceive ? c - b : b - a;
            }
            return (double)total / Calls;
        }

        private static double Baseline(string family, bool receive)
        {
            var (server, client, target) = Pair(family);
            using (server)
            using (client)
            {
                var payload = new byte[64];
                var buffer = new byte[1500];
                EndPoint any = new IPEndPoint(server.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
                return Measure(() => client.SendTo(payload, target), () => server.ReceiveFrom(buffer, ref any), receive);
            }
        }

        private static double Library(string family, bool receive)
        {
            var (server, client, target) = Pair(family);
            using (server)
            using (client)
            {
                var payload = new byte[64];
                var buffer = new byte[1500];
                var to = new IPEndPointNonAlloc(target.Address, target.Port);
                var from = new IPEndPointNonAlloc(server.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
                return Measure(() => client.SendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, to),
                               () => server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from), receive);
            }
        }
    }
}
