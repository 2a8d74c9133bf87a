using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.BatchReceive
{
    /// <summary>The one-datagram-per-call send forms the harness times against a bare P/Invoke <c>sendto</c>.</summary>
    internal enum SendForm
    {
        /// <summary>A bare [DllImport] sendto on the descriptor, with a sockaddr written once: the least a C# send can do.</summary>
        RawPinvoke,
        /// <summary>The drop-in call: SendTo_NonAlloc(byte[], offset, size, flags, IPEndPointNonAlloc).</summary>
        Compat,
        /// <summary>SendTo_NonAlloc(ReadOnlySpan&lt;byte&gt;, EndPointKey).</summary>
        Key,
        /// <summary>The runtime's Socket.SendTo(byte[], offset, size, flags, EndPoint).</summary>
        Runtime,
#if NET8_0_OR_GREATER
        /// <summary>The runtime's Socket.SendTo(ReadOnlySpan&lt;byte&gt;, SocketFlags, SocketAddress) (.NET 8+).</summary>
        RuntimeSocketAddress,
#endif
    }

    /// <summary>Send loops, one per form, each sending <c>count</c> copies of one datagram to one destination.</summary>
    internal static unsafe class SendForms
    {
        private const int Eintr = 4;
        private const int SockaddrInSize = 16;

        [DllImport("libc", EntryPoint = "sendto", SetLastError = true)]
        private static extern nint SendTo(int socket, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        private static IPEndPoint s_target = new IPEndPoint(IPAddress.Loopback, 0);
        private static IPEndPointNonAlloc s_endPoint = new IPEndPointNonAlloc(IPAddress.Loopback, 0);
        private static EndPointKey s_key;
        private static readonly byte[] s_sockaddr = new byte[SockaddrInSize];
#if NET8_0_OR_GREATER
        private static SocketAddress s_socketAddress = new SocketAddress(AddressFamily.InterNetwork);
#endif

        /// <summary>Builds every form's destination once, before anything is timed.</summary>
        internal static void Prepare(IPEndPoint target)
        {
            s_target = target;
            s_endPoint = new IPEndPointNonAlloc(target.Address, target.Port);
            s_key = EndPointKey.FromIPEndPoint(target);
            s_key.WriteSockaddr(s_sockaddr, SockaddrFormat.Linux);
#if NET8_0_OR_GREATER
            s_socketAddress = target.Serialize();
#endif
        }

        internal static string Describe(SendForm form)
        {
            switch (form)
            {
                case SendForm.RawPinvoke: return "raw P/Invoke sendto";
                case SendForm.Compat: return "SendTo_NonAlloc(IPEndPointNonAlloc)";
                case SendForm.Key: return "SendTo_NonAlloc(EndPointKey)";
                case SendForm.Runtime: return "Socket.SendTo(EndPoint)";
                default: return "Socket.SendTo(SocketAddress)";
            }
        }

        /// <summary>Sends <paramref name="count"/> copies of <paramref name="payload"/> to the prepared (IPv4) target; returns how many sends were short.</summary>
        internal static int Run(SendForm form, Socket socket, int count, byte[] payload)
        {
            switch (form)
            {
                case SendForm.RawPinvoke: return RunRaw(socket, count, payload);
                case SendForm.Compat: return RunCompat(socket, s_endPoint, count, payload);
                case SendForm.Key: return RunKey(socket, s_key, count, payload);
                case SendForm.Runtime: return RunRuntime(socket, s_target, count, payload);
                default: return RunSocketAddress(socket, count, payload);
            }
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunRaw(Socket socket, int count, byte[] payload)
        {
            int descriptor = (int)socket.Handle, bad = 0;
            fixed (byte* address = s_sockaddr)
            fixed (byte* data = payload)
            {
                for (int i = 0; i < count; i++)
                {
                    long sent = SendTo(descriptor, data, (nuint)payload.Length, 0, address, SockaddrInSize);
                    if (sent < 0 && Marshal.GetLastWin32Error() == Eintr)
                    {
                        i--;
                        continue;
                    }
                    if (sent != payload.Length) bad++;
                }
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunCompat(Socket socket, IPEndPointNonAlloc to, int count, byte[] payload)
        {
            int bad = 0;
            for (int i = 0; i < count; i++)
                if (socket.SendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, to) != payload.Length) bad++;
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunKey(Socket socket, EndPointKey to, int count, byte[] payload)
        {
            ReadOnlySpan<byte> data = payload;
            int bad = 0;
            for (int i = 0; i < count; i++)
                if (socket.SendTo_NonAlloc(data, to) != data.Length) bad++;
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunRuntime(Socket socket, EndPoint to, int count, byte[] payload)
        {
            int bad = 0;
            for (int i = 0; i < count; i++)
                if (socket.SendTo(payload, 0, payload.Length, SocketFlags.None, to) != payload.Length) bad++;
            return bad;
        }

#if NET8_0_OR_GREATER
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        private static int RunSocketAddress(Socket socket, int count, byte[] payload)
        {
            SocketAddress to = s_socketAddress;
            ReadOnlySpan<byte> data = payload;
            int bad = 0;
            for (int i = 0; i < count; i++)
                if (socket.SendTo(data, SocketFlags.None, to) != data.Length) bad++;
            return bad;
        }
#else
        private static int RunSocketAddress(Socket socket, int count, byte[] payload) => throw new PlatformNotSupportedException("needs .NET 8");
#endif
    }
}
