#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace WhereAllocation
{
    /// <summary>
    /// The argument checks of every public datagram call, all made before any system call, so that a bad argument never
    /// costs a datagram: <see cref="SocketExtensions"/>, <see cref="DatagramBatch"/>, <see cref="AsyncDatagramSocket"/> and
    /// <see cref="DatagramSockets"/> call them. A disposed socket is reported before a bad argument (<see cref="Refused"/>),
    /// as the runtime's Socket does.
    /// </summary>
    internal static class SocketArguments
    {
        // Each check first asks, in one call that cannot throw, whether everything is surely fine (the case of every call in a
        // server's loop); only when it is not do the checks run one by one, in their documented order, and throw for the first
        // bad argument. One call instead of four or five: on Mono, which inlines no method that throws, each costs 10-20 instructions.
        // The compatible receive goes further: its endpoint remembers the socket that passed (IPEndPointNonAlloc.CheckedSocket).

        /// <summary>The compatible receive's checks one by one: throws for the first bad argument (an IPv4 endpoint on a dual-mode socket passes).</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static void CheckReceiveFromArguments(Socket socket, byte[] buffer, int offset, int size, SocketFlags flags, IPEndPointNonAlloc remoteEndPoint)
        {
            if (remoteEndPoint == null) throw Refused(socket, new ArgumentNullException(nameof(remoteEndPoint)));
            CheckBuffer(socket, buffer, offset, size);
            CheckReceiveOneByOne(socket, flags, remoteEndPoint);
            remoteEndPoint.CheckedSocket = socket;
        }

        /// <summary>
        /// True when a receive on <paramref name="socket"/> with <paramref name="flags"/> into <paramref name="into"/> is surely
        /// allowed: a bound (or connected) IPv4/IPv6 datagram socket, of <paramref name="into"/>'s family when an endpoint is given.
        /// </summary>
        // The endpoint's family read without its virtual property: a call per datagram on Mono otherwise.
        private static bool ReceiveFits(Socket socket, SocketFlags flags, IPEndPointNonAlloc? into)
        {
            if (socket == null || (flags & ~SocketFlags.Peek) != 0) return false;
            AddressFamily family = socket.AddressFamily;
            return (family == AddressFamily.InterNetwork || family == AddressFamily.InterNetworkV6) && socket.SocketType == SocketType.Dgram
                && (into == null || into.HasFamily(family)) && (socket.IsBound || socket.Connected);
        }

        internal static void CheckBuffer(Socket socket, byte[] buffer, int offset, int size)
        {
            if (buffer == null) throw Refused(socket, new ArgumentNullException(nameof(buffer)));
            if ((uint)offset > (uint)buffer.Length) throw Refused(socket, new ArgumentOutOfRangeException(nameof(offset), offset, "The offset is outside the buffer."));
            if ((uint)size > (uint)(buffer.Length - offset)) throw Refused(socket, new ArgumentOutOfRangeException(nameof(size), size, "The size runs past the end of the buffer."));
        }

        /// <summary>
        /// The exception for a bad argument: <paramref name="argumentError"/>, or ObjectDisposedException when the socket is
        /// disposed, which the runtime's Socket checks first (on .NET and Mono alike). Asked only once an argument failed its
        /// check, so the calls with good arguments pay nothing for it.
        /// </summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        internal static Exception Refused(Socket? socket, Exception argumentError)
        {
            if (socket != null)
            {
                ObjectDisposedException? disposed = SocketWaits.DisposedError(socket);
                if (disposed != null) return disposed;
            }
            return argumentError;
        }

        internal static void CheckSocket(Socket socket)
        {
            if (socket == null) throw new ArgumentNullException(nameof(socket));
            AddressFamily family = socket.AddressFamily;
            if (family != AddressFamily.InterNetwork && family != AddressFamily.InterNetworkV6)
                throw Refused(socket, new ArgumentException("Only IPv4 and IPv6 sockets are supported; this one is " + family + ".", nameof(socket)));
            if (socket.SocketType != SocketType.Dgram)
                throw Refused(socket, new ArgumentException("Only datagram sockets are supported; this one is " + socket.SocketType + ".", nameof(socket)));
        }

        internal static void CheckReceive(Socket socket, SocketFlags flags, IPEndPointNonAlloc? into)
        {
            if (!ReceiveFits(socket, flags, into)) CheckReceiveOneByOne(socket, flags, into);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void CheckReceiveOneByOne(Socket socket, SocketFlags flags, IPEndPointNonAlloc? into)
        {
            CheckSocket(socket);
            if ((flags & ~SocketFlags.Peek) != 0) throw Refused(socket, new ArgumentException("Only SocketFlags.None and Peek are supported for receiving.", nameof(flags)));
            if (into != null) CheckReceiveFamily(socket, into.AddressFamily);
            if (!socket.IsBound && !socket.Connected) throw Refused(socket, new InvalidOperationException("The socket must be bound (or connected, or have sent) before it can receive."));
        }

        private static void CheckReceiveFamily(Socket socket, AddressFamily endPointFamily)
        {
            AddressFamily socketFamily = socket.AddressFamily;
            if (endPointFamily == socketFamily) return;
            // Mono's own ReceiveFrom reads the datagram first and throws afterwards, losing it; refuse up front.
            if (socketFamily == AddressFamily.InterNetworkV6 && endPointFamily == AddressFamily.InterNetwork && IsDualMode(socket)) return;
            throw Refused(socket, new ArgumentException("The endpoint is " + endPointFamily + " but the socket is " + socketFamily + (socketFamily == AddressFamily.InterNetworkV6 ? " and not dual-mode." : "."), "remoteEndPoint"));
        }

        private static bool IsDualMode(Socket socket)
        {
            return NativeDatagramIO.IsSupported ? NativeSocketAdmin.IsDualMode(socket) : socket.DualMode;
        }

        /// <summary>
        /// A send's checks, in their documented order (the socket, the flags, the destination), and the destination fitted to the
        /// socket's family. Every bad argument goes through <see cref="Refused"/>: on a disposed socket "disposed" wins, as in the
        /// runtime's SendTo.
        /// </summary>
        internal static EndPointKey CheckSend(Socket socket, SocketFlags flags, in EndPointKey remote)
        {
            CheckSocket(socket);
            if ((flags & ~SocketFlags.DontRoute) != 0) throw Refused(socket, new ArgumentException("Only SocketFlags.None and DontRoute are supported for sending.", nameof(flags)));
            return FitToSocket(socket, remote);
        }

        internal static EndPointKey FitToSocket(Socket socket, in EndPointKey remote)
        {
            if (remote.IsEmpty) throw Refused(socket, new ArgumentException("The destination key is empty.", nameof(remote)));
            AddressFamily socketFamily = socket.AddressFamily;
            if (remote.AddressFamily == socketFamily) return remote;
            if (socketFamily == AddressFamily.InterNetworkV6) return remote.MapToIPv6(); // needs a dual-mode socket; the OS says so otherwise
            if (remote.IsIPv4MappedToIPv6) return remote.MapToIPv4();
            throw Refused(socket, new ArgumentException("An IPv6 destination cannot be reached from an IPv4 socket.", nameof(remote)));
        }
    }
}
