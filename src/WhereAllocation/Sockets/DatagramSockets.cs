#nullable enable
using System;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// Opening datagram sockets the way a server needs them, and asking the OS how they are doing, the same on
    /// every runtime and OS: no port shared with another socket by accident, no connection-reset reports on
    /// Windows, and the drop counter and real buffer sizes where the OS keeps them.
    /// </summary>
    public static partial class DatagramSockets
    {
        /// <summary>
        /// A new UDP socket of <paramref name="family"/>, unbound, hardened with <see cref="Harden"/>. Bind it (or
        /// connect it) next.
        /// </summary>
        /// <param name="family">InterNetwork or InterNetworkV6.</param>
        /// <param name="dualMode">For an IPv6 socket: accept IPv4 peers too (as IPv4-mapped addresses). False gives an IPv6-only socket on every runtime.</param>
        /// <exception cref="ArgumentException"><paramref name="family"/> is not IPv4 or IPv6, or <paramref name="dualMode"/> is asked of an IPv4 socket.</exception>
        /// <exception cref="SocketException">The OS refused to create or set up the socket.</exception>
        public static Socket Create(AddressFamily family, bool dualMode = false)
        {
            if (family != AddressFamily.InterNetwork && family != AddressFamily.InterNetworkV6)
                throw new ArgumentException("Only IPv4 and IPv6 datagram sockets are supported, not " + family + ".", nameof(family));
            if (dualMode && family != AddressFamily.InterNetworkV6)
                throw new ArgumentException("Only an IPv6 socket can be dual-mode.", nameof(dualMode));
            var socket = new Socket(family, SocketType.Dgram, ProtocolType.Udp);
            try
            {
                // Set both ways: Mono leaves a new IPv6 socket dual-mode on Linux (the kernel's default), .NET does not.
                if (family == AddressFamily.InterNetworkV6) socket.DualMode = dualMode;
                Harden(socket);
                return socket;
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }

        /// <summary>A new UDP socket created by <see cref="Create"/> and bound to <paramref name="localEndPoint"/>.</summary>
        /// <param name="localEndPoint">The address and port to bind (port 0: one the OS chooses, never shared).</param>
        /// <param name="dualMode">For an IPv6 address: accept IPv4 peers too.</param>
        /// <exception cref="ArgumentNullException"><paramref name="localEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentException"><paramref name="dualMode"/> is asked with an IPv4 address.</exception>
        /// <exception cref="SocketException">The OS refused the socket or the bind (AddressAlreadyInUse when another socket holds the port).</exception>
        public static Socket Bind(IPEndPoint localEndPoint, bool dualMode = false)
        {
            if (localEndPoint == null) throw new ArgumentNullException(nameof(localEndPoint));
            Socket socket = Create(localEndPoint.AddressFamily, dualMode);
            try
            {
                socket.Bind(localEndPoint);
                return socket;
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        }

        /// <summary>
        /// Makes a datagram socket safe for a server; call it before <see cref="Socket.Bind"/>. It turns address sharing
        /// off (SO_REUSEADDR, which Mono sets on every socket it creates: on Linux, two such sockets bound to port 0 can
        /// then be given the same port, and each gets some of the other's datagrams), and on Windows turns off the
        /// connection-reset reports that a send to a closed port leaves for the next receive (SIO_UDP_CONNRESET and
        /// SIO_UDP_NETRESET). Allocates nothing where the native path runs (see <see cref="DatagramPathSettings"/>).
        /// </summary>
        /// <remarks>
        /// On a socket that is already bound it still keeps later sockets off its port, but it cannot undo a port it
        /// already shares. Receives on unconnected sockets consume reset reports anyway (see docs/CONTRACT.md); this
        /// only spares them the work.
        /// </remarks>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="SocketException">The OS refused to turn address sharing off.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        public static void Harden(this Socket socket)
        {
            SocketArguments.CheckSocket(socket);
            if (NativeDatagramIO.IsSupported)
            {
                NativeSocketAdmin.Harden(socket);
                return;
            }
            // No native path: the runtime's own calls, which allocate a little, once per socket.
            socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, false);
            if (OsSocketCalls.Current.HasResetReports)
            {
                try
                {
                    socket.IOControl(unchecked((int)0x9800000C), new byte[4], null); // SIO_UDP_CONNRESET, FALSE
                }
                catch (SocketException)
                {
                    // A Windows without the control has no such reports to turn off.
                }
            }
        }

        /// <summary>
        /// What the OS says about <paramref name="socket"/> now: its buffers, the datagrams it dropped, the bytes queued.
        /// One or two system calls; allocates nothing. Every figure is -1 where the native path does not run.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socket"/> is null.</exception>
        /// <exception cref="ArgumentException">The socket is not an IPv4/IPv6 datagram socket.</exception>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        public static DatagramSocketStatus GetDatagramStatus(this Socket socket)
        {
            SocketArguments.CheckSocket(socket);
            if (!NativeDatagramIO.IsSupported)
            {
                SocketWaits.ThrowIfDisposed(socket);
                return new DatagramSocketStatus(-1, -1, -1, -1);
            }
            return NativeSocketAdmin.Status(socket);
        }
    }
}
