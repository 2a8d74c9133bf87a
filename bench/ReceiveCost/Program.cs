using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation;
using WhereAllocation.Bench.DatagramServer;

namespace WhereAllocation.Bench.ReceiveCost
{
    /// <summary>
    /// Sends N datagrams to itself over loopback, then receives them in one form, twice (the first round compiles
    /// everything). Under callgrind, two runs with different N give the instructions one datagram costs in that form:
    /// the difference of the totals over the difference of the datagrams, both the send and the receive counted (the
    /// send is the same bare sendto in every form, so differences between forms are the receives').
    /// Forms: raw (a bare recvfrom P/Invoke), held (the same with the reference on the socket's SafeHandle that makes a
    /// concurrent Dispose safe), compat (ReceiveFrom_NonAlloc(buffer, endpoint)), compat5 (ReceiveFrom_NonAlloc(buffer,
    /// 0, length, None, endpoint), the form the DatagramServer's library row calls), safe (the least a receive with the
    /// library's safety can be, in one method: the DatagramServer's LeastSafeReceive, compiled in), field (compat5 with the
    /// library reaching the socket's handle through the field that holds it, as where a linker removed the SafeHandle
    /// getter: Unity's IL2CPP players without the package's link.xml). Linux only.
    /// </summary>
    internal static unsafe class Program
    {
        [DllImport("libc", EntryPoint = "sendto", SetLastError = true)]
        private static extern nint SendTo(int socket, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        private static int Main(string[] args)
        {
            if (args.Length != 2 || !int.TryParse(args[0], out int count) || count <= 0 || count > 100000)
            {
                Console.Error.WriteLine("usage: ReceiveCost <datagrams, 1..100000> <raw|held|compat|compat5|safe|field>");
                return 2;
            }
            string form = args[1];
            int kind = Array.IndexOf(new[] { "raw", "held", "compat", "compat5", "safe", "field" }, form);
            if (kind < 0)
            {
                Console.Error.WriteLine("unknown form " + form);
                return 2;
            }

            if (kind == 5)
            {
                // The library's test hook (internal): take the field route, as a process whose getter was stripped does.
                System.Reflection.MethodInfo force = typeof(DatagramPathSettings).Assembly.GetType("WhereAllocation.SocketHandles", true)!
                    .GetMethod("Force", System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.NonPublic)!;
                force.Invoke(null, new object?[] { SocketHandleAccess.SafeHandleField });
                if (DatagramPathSettings.HandleAccess != SocketHandleAccess.SafeHandleField) return Fail("the field route could not be forced");
            }

            using var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            server.ReceiveBufferSize = 8 << 20;
            server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            using var client = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            client.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            int port = ((IPEndPoint)server.LocalEndPoint!).Port;

            byte* to = stackalloc byte[16];
            for (int i = 0; i < 16; i++) to[i] = 0;
            to[0] = 2; // AF_INET, little-endian sa_family
            to[2] = (byte)(port >> 8);
            to[3] = (byte)port;
            to[4] = 127;
            to[7] = 1;
            byte* sender = stackalloc byte[RawCalls.SockaddrStorageSize];
            var payload = new byte[64];
            var buffer = new byte[1500];
            var endPoint = new IPEndPointNonAlloc(IPAddress.Any, 0);
            SafeHandle handle = RawCalls.SafeHandleOf(server);
            int clientDescriptor = (int)client.Handle;
            int serverDescriptor = (int)server.Handle;
            long received = 0;
            var state = new LeastSafeReceive.State();

            // Two rounds of `count` datagrams, each sent and then received in chunks of at most 1000: a chunk fits the socket's
            // receive buffer wherever the kernel caps its size (net.core.rmem_max), so no datagram is dropped and no receive
            // waits, however large `count` is.
            for (int round = 0; round < 2; round++)
            for (int done = 0; done < count; done += Chunk)
            {
                int chunk = Math.Min(Chunk, count - done);
                fixed (byte* p = payload)
                    for (int i = 0; i < chunk; i++)
                        if (SendTo(clientDescriptor, p, (nuint)payload.Length, 0, to, 16) != payload.Length) return Fail("sendto failed");
                fixed (byte* b = buffer)
                {
                    for (int i = 0; i < chunk; i++)
                    {
                        long length;
                        if (kind == 0)
                        {
                            uint senderLength = RawCalls.SockaddrStorageSize;
                            length = RawCalls.RecvFrom(serverDescriptor, b, (nuint)buffer.Length, RawCalls.MsgTrunc, sender, &senderLength);
                        }
                        else if (kind == 1)
                        {
                            uint senderLength = RawCalls.SockaddrStorageSize;
                            bool added = false;
                            try
                            {
                                handle.DangerousAddRef(ref added);
                                length = RawCalls.RecvFrom((int)handle.DangerousGetHandle(), b, (nuint)buffer.Length, RawCalls.MsgTrunc, sender, &senderLength);
                            }
                            finally
                            {
                                if (added) handle.DangerousRelease();
                            }
                        }
                        else if (kind == 2)
                        {
                            length = server.ReceiveFrom_NonAlloc(buffer, endPoint);
                        }
                        else if (kind == 4)
                        {
                            length = LeastSafeReceive.Receive(server, buffer, 0, buffer.Length, SocketFlags.None, state, out _);
                        }
                        else
                        {
                            length = server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, endPoint);
                        }
                        if (length != payload.Length) return Fail("received " + length + " bytes");
                        received++;
                    }
                }
            }
            Console.WriteLine(form + ": " + received + " datagrams");
            return 0;
        }

        private const int Chunk = 1000;

        private static int Fail(string what)
        {
            Console.Error.WriteLine(what);
            return 1;
        }
    }
}
