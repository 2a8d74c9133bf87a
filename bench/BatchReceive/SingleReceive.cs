using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.BatchReceive
{
    /// <summary>The one-datagram-per-call receive forms the harness times against C's one recvmsg per datagram.</summary>
    internal enum SingleForm
    {
        /// <summary>A bare [DllImport] recvfrom on the descriptor: the least a C# receive can do.</summary>
        RawPinvoke,
        /// <summary>The drop-in call: ReceiveFrom_NonAlloc(byte[], offset, size, flags, IPEndPointNonAlloc).</summary>
        Compat,
        /// <summary>ReceiveFrom_NonAlloc(byte[], offset, size, flags, out EndPointKey).</summary>
        Key,
        /// <summary>ReceiveFrom_NonAlloc(Span&lt;byte&gt;), returning a ReceivedDatagram.</summary>
        Span,
        /// <summary>TryReceiveFrom_NonAlloc(Span&lt;byte&gt;, out ReceivedDatagram): never blocks.</summary>
        TrySpan,
        /// <summary>The runtime's Socket.ReceiveFrom(byte[], ref EndPoint), which allocates per datagram.</summary>
        Runtime,
#if NET8_0_OR_GREATER
        /// <summary>The runtime's Socket.ReceiveFrom(Span&lt;byte&gt;, SocketFlags, SocketAddress) (.NET 8+).</summary>
        RuntimeSocketAddress,
#endif
    }

    /// <summary>
    /// Receive loops, one per form, each the way an application writes it and each taking exactly
    /// <c>count</c> datagrams (the queue holds that many). Count only: every datagram's length and, where the
    /// form gives one, its sender are compared with what was sent; nothing is decoded.
    /// </summary>
    internal static unsafe class SingleForms
    {
        private const int Eintr = 4;

        [DllImport("libc", EntryPoint = "recvfrom", SetLastError = true)]
        private static extern nint RecvFrom(int socket, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        private static readonly byte[] s_buffer = new byte[1500];
        private static readonly IPEndPointNonAlloc s_endPoint = new IPEndPointNonAlloc(IPAddress.Any, 0);
        private static EndPoint s_runtimeEndPoint = new IPEndPoint(IPAddress.Any, 0);
#if NET8_0_OR_GREATER
        private static readonly SocketAddress s_socketAddress = new SocketAddress(AddressFamily.InterNetwork);
#endif

        internal static string Describe(SingleForm form)
        {
            switch (form)
            {
                case SingleForm.RawPinvoke: return "raw P/Invoke recvfrom, count";
                case SingleForm.Compat: return "ReceiveFrom_NonAlloc(IPEndPointNonAlloc)";
                case SingleForm.Key: return "ReceiveFrom_NonAlloc(out EndPointKey)";
                case SingleForm.Span: return "ReceiveFrom_NonAlloc(Span)";
                case SingleForm.TrySpan: return "TryReceiveFrom_NonAlloc(Span)";
                case SingleForm.Runtime: return "Socket.ReceiveFrom(ref EndPoint)";
                default: return "Socket.ReceiveFrom(SocketAddress)";
            }
        }

        /// <summary>Takes <paramref name="count"/> datagrams of <paramref name="size"/> bytes, all from the sender of the first; returns how many were wrong.</summary>
        internal static int Run(SingleForm form, Socket socket, int count, int size)
        {
            switch (form)
            {
                case SingleForm.RawPinvoke: return RunRaw(socket, count, size);
                case SingleForm.Compat: return RunCompat(socket, count, size);
                case SingleForm.Key: return RunKey(socket, count, size);
                case SingleForm.Span: return RunSpan(socket, count, size);
                case SingleForm.TrySpan: return RunTrySpan(socket, count, size);
                case SingleForm.Runtime: return RunRuntime(socket, count, size);
                default: return RunSocketAddress(socket, count, size);
            }
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunRaw(Socket socket, int count, int size)
        {
            int descriptor = (int)socket.Handle, bad = 0;
            byte* address = stackalloc byte[128];
            fixed (byte* buffer = s_buffer)
            {
                for (int i = 0; i < count; i++)
                {
                    uint addressLength = 128;
                    long length = RecvFrom(descriptor, buffer, (nuint)s_buffer.Length, 0, address, &addressLength);
                    if (length < 0 && Marshal.GetLastWin32Error() == Eintr)
                    {
                        i--;
                        continue;
                    }
                    if (length != size) bad++;
                    if (length < 0) break; // SO_RCVTIMEO passed: a datagram is missing
                }
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunCompat(Socket socket, int count, int size)
        {
            byte[] buffer = s_buffer;
            IPEndPointNonAlloc from = s_endPoint;
            int bad = 0;
            EndPointKey sender = default;
            for (int i = 0; i < count; i++)
            {
                int length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                if (i == 0) sender = from.CurrentKey;
                if (length != size || !from.CurrentKey.Equals(sender)) bad++;
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunKey(Socket socket, int count, int size)
        {
            byte[] buffer = s_buffer;
            int bad = 0;
            EndPointKey sender = default;
            for (int i = 0; i < count; i++)
            {
                int length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out EndPointKey from);
                if (i == 0) sender = from;
                if (length != size || !from.Equals(sender)) bad++;
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunSpan(Socket socket, int count, int size)
        {
            Span<byte> buffer = s_buffer;
            int bad = 0;
            EndPointKey sender = default;
            for (int i = 0; i < count; i++)
            {
                ReceivedDatagram datagram = socket.ReceiveFrom_NonAlloc(buffer);
                if (i == 0) sender = datagram.RemoteEndPoint;
                if (datagram.Length != size || datagram.Truncated || !datagram.RemoteEndPoint.Equals(sender)) bad++;
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunTrySpan(Socket socket, int count, int size)
        {
            Span<byte> buffer = s_buffer;
            int bad = 0;
            EndPointKey sender = default;
            for (int i = 0; i < count; i++)
            {
                if (!socket.TryReceiveFrom_NonAlloc(buffer, out ReceivedDatagram datagram)) return bad + count - i; // the queue ran dry early
                if (i == 0) sender = datagram.RemoteEndPoint;
                if (datagram.Length != size || datagram.Truncated || !datagram.RemoteEndPoint.Equals(sender)) bad++;
            }
            return bad;
        }

#if NETCOREAPP
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
#endif
        private static int RunRuntime(Socket socket, int count, int size)
        {
            byte[] buffer = s_buffer;
            int bad = 0;
            for (int i = 0; i < count; i++)
            {
                int length = socket.ReceiveFrom(buffer, 0, buffer.Length, SocketFlags.None, ref s_runtimeEndPoint);
                if (length != size) bad++;
            }
            return bad;
        }

#if NET8_0_OR_GREATER
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        private static int RunSocketAddress(Socket socket, int count, int size)
        {
            Span<byte> buffer = s_buffer;
            SocketAddress address = s_socketAddress;
            int bad = 0;
            for (int i = 0; i < count; i++)
            {
                int length = socket.ReceiveFrom(buffer, SocketFlags.None, address);
                if (length != size) bad++;
            }
            return bad;
        }
#else
        private static int RunSocketAddress(Socket socket, int count, int size) => throw new PlatformNotSupportedException("needs .NET 8");
#endif
    }
}
