using System;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using WhereAllocation;

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
    /// library's safety can be, in one method: the DatagramServer's raw-pinvoke-safe row). Linux only.
    /// </summary>
    internal static unsafe class Program
    {
        private const int MsgTrunc = 0x20;
        private const int SockaddrSize = 128;

        [DllImport("libc", EntryPoint = "recvfrom", SetLastError = true)]
        private static extern nint RecvFrom(int socket, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        [DllImport("libc", EntryPoint = "sendto", SetLastError = true)]
        private static extern nint SendTo(int socket, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        private static int Main(string[] args)
        {
            if (args.Length != 2 || !int.TryParse(args[0], out int count) || count <= 0 || count > 20000)
            {
                Console.Error.WriteLine("usage: ReceiveCost <datagrams, 1..20000> <raw|held|compat|compat5|safe>");
                return 2;
            }
            string form = args[1];
            int kind = Array.IndexOf(new[] { "raw", "held", "compat", "compat5", "safe" }, form);
            if (kind < 0)
            {
                Console.Error.WriteLine("unknown form " + form);
                return 2;
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
            byte* sender = stackalloc byte[SockaddrSize];
            var payload = new byte[64];
            var buffer = new byte[1500];
            var endPoint = new IPEndPointNonAlloc(IPAddress.Any, 0);
            SafeHandle handle = HandleOf(server);
            int clientDescriptor = (int)client.Handle;
            int serverDescriptor = (int)server.Handle;
            long received = 0;
            var state = new SafeState();

            for (int round = 0; round < 2; round++)
            {
                fixed (byte* p = payload)
                    for (int i = 0; i < count; i++)
                        if (SendTo(clientDescriptor, p, (nuint)payload.Length, 0, to, 16) != payload.Length) return Fail("sendto failed");
                fixed (byte* b = buffer)
                {
                    for (int i = 0; i < count; i++)
                    {
                        long length;
                        if (kind == 0)
                        {
                            uint senderLength = SockaddrSize;
                            length = RecvFrom(serverDescriptor, b, (nuint)buffer.Length, MsgTrunc, sender, &senderLength);
                        }
                        else if (kind == 1)
                        {
                            uint senderLength = SockaddrSize;
                            bool added = false;
                            try
                            {
                                handle.DangerousAddRef(ref added);
                                length = RecvFrom((int)handle.DangerousGetHandle(), b, (nuint)buffer.Length, MsgTrunc, sender, &senderLength);
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
                            length = SafeReceive(server, buffer, 0, buffer.Length, SocketFlags.None, state);
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

        /// <summary>What <see cref="SafeReceive"/> keeps between calls: the socket that passed its checks, its handle, the last sender.</summary>
        private sealed class SafeState
        {
            public Socket? Checked;
            public SafeHandle? Handle;
            public uint LastLength;
            public ulong Last0, Last1, Last2, Last3;

            [MethodImpl(MethodImplOptions.NoInlining)]
            public void Check(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags)
            {
                if (socket == null || buffer == null) throw new ArgumentNullException(socket == null ? nameof(socket) : nameof(buffer));
                if ((uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset)) throw new ArgumentOutOfRangeException(nameof(size));
                if ((flags & ~SocketFlags.Peek) != 0 || socket.SocketType != SocketType.Dgram || !socket.IsBound) throw new ArgumentException("bad flags or socket");
                Handle = HandleOf(socket);
                Checked = socket;
            }

            [MethodImpl(MethodImplOptions.NoInlining)]
            public void Keep(ulong* sender, uint length)
            {
                LastLength = length;
                Last0 = sender[0];
                Last1 = sender[1];
                Last2 = sender[2];
                Last3 = sender[3];
            }
        }

        private struct Sockaddr
        {
            public ulong A, B, C, D;
        }

        /// <summary>
        /// The least a receive can be that keeps what the library's keeps, in one method: argument checks before the call
        /// (the socket's remembered), the SafeHandle reference, the sender compared with the last. The DatagramServer's
        /// raw-pinvoke-safe row is the same receive.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static long SafeReceive(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, SafeState state)
        {
            if (buffer == null || (uint)offset > (uint)buffer.Length || (uint)size > (uint)(buffer.Length - offset) || (flags & ~SocketFlags.Peek) != 0
                || socket == null || !ReferenceEquals(state.Checked, socket))
                state.Check(socket!, buffer!, offset, size, flags);
            Sockaddr sender;
            uint senderLength = (uint)sizeof(Sockaddr);
            long length;
            SafeHandle handle = state.Handle!;
            bool added = false;
            fixed (byte* payload = buffer)
            {
                try
                {
                    handle.DangerousAddRef(ref added);
                    length = RecvFrom((int)handle.DangerousGetHandle(), payload + offset, (nuint)size, MsgTrunc | ((flags & SocketFlags.Peek) != 0 ? 2 : 0), (byte*)&sender, &senderLength);
                }
                finally
                {
                    if (added) handle.DangerousRelease();
                }
            }
            if (length >= 0 && (senderLength != state.LastLength || sender.A != state.Last0 || sender.B != state.Last1
                || (senderLength > 16 && (sender.C != state.Last2 || sender.D != state.Last3))))
                state.Keep((ulong*)&sender, senderLength);
            return length;
        }

        private static SafeHandle HandleOf(Socket socket)
        {
            PropertyInfo property = typeof(Socket).GetProperty("SafeHandle", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic)
                ?? throw new PlatformNotSupportedException("this runtime's Socket has no SafeHandle property");
            return (SafeHandle?)property.GetValue(socket) ?? throw new InvalidOperationException("the socket has no handle");
        }

        private static int Fail(string what)
        {
            Console.Error.WriteLine(what);
            return 1;
        }
    }
}
