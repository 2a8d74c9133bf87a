#nullable enable
using System;
using System.Net;
using System.Net.Sockets;
using Mirage.SocketLayer;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// Mirage's <see cref="ISocket"/> on where-allocation: one UDP socket, a server's or a client's. Receiving a datagram
    /// and sending one allocate nothing once the peer is a connection, IPv4 and dual-mode, and a receive is one system
    /// call (no <c>Poll</c> before it). Mirage's <c>Peer</c> drives it: <see cref="ISocket.Tick"/> once per frame, then
    /// <see cref="Send"/> and <see cref="ISocket.Flush"/>.
    /// </summary>
    /// <remarks>
    /// <para><b>Receiving.</b> <see cref="ISocket.Tick"/> takes the datagrams queued with <c>TryReceiveFrom_NonAlloc</c>, up to
    /// <see cref="MaxDatagramsPerTick"/>, and hands each to Mirage with one handle per socket, its key set to the sender; Mirage copies it
    /// (<see cref="WhereAllocationConnectionHandle.CreateCopy"/>) only for a sender it accepts as a new connection.</para>
    /// <para><b>An unknown sender</b> (a server): its datagram goes to Mirage like any other, which accepts a valid
    /// connect request and ignores the rest. <b>A client</b> passes on only the server's datagrams and drops every other
    /// sender's, counted in <see cref="StrangerDatagrams"/> (warned once).</para>
    /// <para><b>A datagram longer than Mirage's packet size</b> is dropped, counted in <see cref="TruncatedDatagrams"/>
    /// (warned once); an empty one is ignored, as Mirage's own socket ignores it.</para>
    /// <para><b>A full send buffer</b>: <see cref="Send"/> drops the datagram, as a network would (Mirage resends what
    /// is reliable), counts it in <see cref="DroppedSends"/> and warns once; it never waits and never throws for it.</para>
    /// <para><b>A reset</b> (a peer's port closed: ICMP port unreachable): never an error here. The socket is not
    /// connected, which Linux never reports it to, and the library consumes Windows' report inside the receive; the
    /// next datagram is received as usual. Mirage finds the peer gone by its own timeout.</para>
    /// <para><b>Closed</b> (<see cref="ISocket.Close"/>, safe to call more than once): <see cref="ISocket.Tick"/> does
    /// nothing, and <see cref="Send"/> throws <see cref="ObjectDisposedException"/>. If Mirage closes the socket
    /// from a message handler during a tick, the tick stops after that datagram.</para>
    /// <para>Any other socket error ends the tick and reaches Mirage's <c>Peer</c>, which logs it; the next tick
    /// receives again. One thread at a time, as Mirage uses a socket.</para>
    /// <para>It uses nothing of Unity: the warnings go to the sink given to the constructor
    /// (<see cref="WhereAllocationSocketFactory"/> gives Unity's <c>Debug.LogWarning</c>).</para>
    /// </remarks>
    public sealed class WhereAllocationSocket : ISocket
    {
        private Socket? _socket;
        private byte[] _receiveBuffer = Array.Empty<byte>();
        private OnData? _onData;
        private readonly Action<string> _warning;
        // The handle every received datagram is reported with (a server), its key the datagram's sender.
        private readonly WhereAllocationConnectionHandle _received = new WhereAllocationConnectionHandle(default);
        // A client's server: the only sender whose datagrams a client passes on. Null on a server.
        private WhereAllocationConnectionHandle? _server;
        private bool _warnedTruncated, _warnedStranger, _warnedSendFull;
        private int _maxDatagramsPerTick = 10_000;

        /// <summary>A socket that reports each kind of dropped datagram once to <paramref name="warning"/>.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="warning"/> is null.</exception>
        public WhereAllocationSocket(Action<string> warning)
        {
            _warning = warning ?? throw new ArgumentNullException(nameof(warning));
        }

        /// <summary>Datagrams dropped because they were longer than Mirage's packet size.</summary>
        public long TruncatedDatagrams { get; private set; }

        /// <summary>Datagrams a client dropped because they came from another sender than its server.</summary>
        public long StrangerDatagrams { get; private set; }

        /// <summary>
        /// The most datagrams one <see cref="ISocket.Tick"/> takes (10 000 unless set; at least 1). The rest stay queued for the
        /// next tick, so that datagrams arriving faster than the game handles them never hold one frame forever (a drain
        /// without a bound would); what the kernel's buffer cannot hold meanwhile it drops, as UDP does.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException">The value is less than 1.</exception>
        public int MaxDatagramsPerTick
        {
            get => _maxDatagramsPerTick;
            set => _maxDatagramsPerTick = value >= 1 ? value : throw new ArgumentOutOfRangeException(nameof(value), value, "A tick takes at least one datagram.");
        }

        /// <summary>Ticks that stopped at <see cref="MaxDatagramsPerTick"/>, with datagrams possibly still queued.</summary>
        public long TicksAtLimit { get; private set; }

        /// <summary>Datagrams not sent because the socket's send buffer was full.</summary>
        public long DroppedSends { get; private set; }

        /// <summary>The socket's local address and port once bound or connected (for logs and tests; allocates).</summary>
        public IPEndPoint? LocalEndPoint => (IPEndPoint?)_socket?.LocalEndPoint;

        /// <summary>Binds a server's socket to the <see cref="WhereAllocationEndPoint"/> given (dual-mode if it says so).</summary>
        /// <exception cref="InvalidOperationException">The socket is already bound or connected.</exception>
        /// <exception cref="SocketException">The OS refused the bind (AddressAlreadyInUse: the port is taken).</exception>
        public void Bind(IBindEndPoint endPoint)
        {
            var at = Expect(endPoint);
            // DatagramSockets.Bind keeps the port unshared (Mono shares it by default) and turns Windows' reset reports off.
            Open(DatagramSockets.Bind(at.EndPoint, at.DualMode));
        }

        /// <summary>Opens a client's socket for the server at the <see cref="WhereAllocationEndPoint"/> given and returns
        /// the server's handle. The socket is bound to a port of the OS's choosing, on the loopback address when the server
        /// is on one, else on every address; it is not connected, so the same receive and send serve both sides.</summary>
        /// <exception cref="InvalidOperationException">The socket is already bound or connected.</exception>
        public IConnectionHandle Connect(IConnectEndPoint endPoint)
        {
            var at = Expect(endPoint);
            IPAddress server = at.EndPoint.Address.IsIPv4MappedToIPv6 ? at.EndPoint.Address.MapToIPv4() : at.EndPoint.Address;
            bool v6 = server.AddressFamily == AddressFamily.InterNetworkV6;
            IPAddress local = IPAddress.IsLoopback(server) ? (v6 ? IPAddress.IPv6Loopback : IPAddress.Loopback) : (v6 ? IPAddress.IPv6Any : IPAddress.Any);
            Open(DatagramSockets.Bind(new IPEndPoint(local, 0)));
            _server = new WhereAllocationConnectionHandle(EndPointKey.FromIPAddress(server, at.EndPoint.Port));
            return _server;
        }

        private WhereAllocationEndPoint Expect(object? endPoint)
        {
            if (_socket != null) throw new InvalidOperationException("This socket is already bound or connected.");
            return endPoint as WhereAllocationEndPoint
                ?? throw new ArgumentException("Expected a WhereAllocationEndPoint (from WhereAllocationSocketFactory), got " + (endPoint?.GetType().Name ?? "null") + ".", nameof(endPoint));
        }

        private void Open(Socket socket)
        {
            socket.Blocking = false;
            _socket = socket;
        }

        /// <summary>Closes the socket; safe to call more than once.</summary>
        public void Close()
        {
            Socket? socket = _socket;
            _socket = null;
            socket?.Dispose();
        }

        void ISocket.SetTickEvents(int maxPacketSize, OnData onData, OnDisconnect onDisconnect)
        {
            if (onData == null) throw new ArgumentNullException(nameof(onData));
            // One buffer for the socket's life: Mirage reads each datagram inside OnData and keeps no reference to it.
            _receiveBuffer = new byte[maxPacketSize];
            _onData = onData;
            // onDisconnect is for stateful sockets only (Mirage asserts it); this one is stateless.
        }

        void ISocket.Tick()
        {
            byte[] buffer = _receiveBuffer;
            OnData? onData = _onData;
            if (onData == null) return;   // SetTickEvents not called yet: Mirage's Peer calls it in its constructor
            // _socket is read again for each datagram: a message handler may close the socket.
            // At most MaxDatagramsPerTick: a flood faster than the game handles it must not hold the frame forever.
            int left = _maxDatagramsPerTick;
            while (left > 0 && _socket != null && _socket.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out ReceivedDatagram datagram))
            {
                left--;
                if (datagram.Truncated)
                {
                    TruncatedDatagrams++;
                    if (!_warnedTruncated) { _warnedTruncated = true; _warning("WhereAllocationSocket: dropped a datagram longer than Mirage's packet size (" + buffer.Length + " bytes) from " + datagram.RemoteEndPoint + "; TruncatedDatagrams counts them (warned once)."); }
                    continue;
                }
                if (datagram.Length == 0) continue;
                WhereAllocationConnectionHandle from;
                if (_server != null)
                {
                    if (datagram.RemoteEndPoint != _server.Key)
                    {
                        StrangerDatagrams++;
                        if (!_warnedStranger) { _warnedStranger = true; _warning("WhereAllocationSocket: a client dropped a datagram from " + datagram.RemoteEndPoint + ", not its server " + _server.Key + "; StrangerDatagrams counts them (warned once)."); }
                        continue;
                    }
                    from = _server;
                }
                else
                {
                    _received.Set(datagram.RemoteEndPoint);
                    from = _received;
                }
                onData(from, new ReadOnlySpan<byte>(buffer, 0, datagram.Length));
            }
            if (left == 0) TicksAtLimit++;
        }

        /// <summary>Sends <paramref name="packet"/> to the handle's address, or drops it when the send buffer is full.</summary>
        /// <exception cref="ObjectDisposedException">The socket is closed (or was never bound or connected).</exception>
        /// <exception cref="InvalidCastException"><paramref name="handle"/> is not a <see cref="WhereAllocationConnectionHandle"/>.</exception>
        /// <exception cref="SocketException">The OS refused the send for another reason than a full buffer.</exception>
        public void Send(IConnectionHandle handle, ReadOnlySpan<byte> packet)
        {
            Socket socket = _socket ?? throw new ObjectDisposedException(nameof(WhereAllocationSocket), "The socket is closed.");
            if (socket.TrySendTo_NonAlloc(packet, ((WhereAllocationConnectionHandle)handle).Key)) return;
            DroppedSends++;
            if (!_warnedSendFull) { _warnedSendFull = true; _warning("WhereAllocationSocket: the send buffer was full, a datagram to " + handle + " was dropped; DroppedSends counts them (warned once)."); }
        }

        // Each send goes out at once in Send; nothing is held back for Flush (see the sample's README).
        void ISocket.Flush()
        {
        }

        // Tick delivers every datagram; Mirage's poll loop after it finds nothing.
        bool ISocket.Poll() => false;

        int ISocket.Receive(Span<byte> outBuffer, out IConnectionHandle handle) => throw new NotSupportedException("WhereAllocationSocket delivers datagrams in Tick.");
    }
}
