using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using kcp2k;
using WhereAllocation;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// kcp2k's <see cref="KcpServer"/> (V1.41) with its socket calls on where-allocation: receiving a datagram and
    /// sending one allocate nothing, on IPv4 and dual-mode sockets. Use it where the stock server is made
    /// (Mirror: <c>KcpTransport.Awake</c>); the constructor takes the same callbacks and config.
    /// </summary>
    /// <remarks>
    /// Connection ids are dense (1 to <c>maxConnections</c>; Mirror reserves 0 for the host) and never collide: a
    /// <see cref="PeerTable{T}"/> maps each sender's whole address and port to its id, where the stock server uses
    /// the endpoint's 32-bit hash. A sender gets an id for good only when kcp2k accepts its handshake; until then the
    /// next free id is lent to one datagram at a time, so unknown senders hold nothing between datagrams, and a full
    /// server drops their datagrams (counted in <see cref="RefusedDatagrams"/>). What still allocates: one
    /// connection per datagram from an unknown sender (kcp2k's own object, callbacks and the endpoint it reports), and
    /// whatever kcp2k does with a message once parsed. Not thread safe, like the stock server: tick it on one thread.
    /// It compiles against both forms of kcp2k's server, with no symbol to choose between them: kcp2k V1.41 and Mirror
    /// 89.7 to 89.10 report a new connection as <c>Action&lt;int&gt;</c>, Mirror 89.11 and later as
    /// <c>Action&lt;int, IPEndPoint&gt;</c>. It takes either form of callback itself and calls it with the sender.
    /// </remarks>
    public class WhereAllocationKcpServer : KcpServer
    {
        private readonly PeerTable<int> _ids;        // sender -> connection id, 0 B per lookup
        private readonly EndPointKey[] _senders;     // connection id -> sender; empty while the id is free
        private readonly int[] _free;                // free ids; the top one is lent to an unknown sender
        private int _freeCount;
        private EndPointKey _unknownSender;          // the sender of the datagram the lent id was given to
        private readonly List<int> _disconnected = new List<int>();
        private readonly Action<int, IPEndPoint> _connected;
        private bool _warnedFull;

        /// <summary>
        /// The stock server's parameters, and the most connections it holds at once. <paramref name="OnConnected"/> is
        /// told each new connection and its sender (Mirror 89.11 and later: <c>OnServerConnectedWithAddress</c>).
        /// </summary>
        public WhereAllocationKcpServer(Action<int, IPEndPoint> OnConnected, Action<int, ArraySegment<byte>, KcpChannel> OnData,
            Action<int> OnDisconnected, Action<int, ErrorCode, string> OnError, KcpConfig config, int maxConnections = 1024)
            // Ignored is a method group with both of kcp2k's forms: the compiler picks the one this kcp2k's constructor
            // takes. kcp2k calls it only from its own CreateConnection, which this server overrides.
            : base(Ignored, OnData, OnDisconnected, OnError, config)
        {
            _connected = OnConnected;
            _ids = new PeerTable<int>(maxConnections, 1);   // a pending set is required; this server lends ids instead
            _senders = new EndPointKey[maxConnections + 1];
            _free = new int[maxConnections];
            ResetIds();
        }

        /// <summary>
        /// The same, with a callback told only the new connection's id (Mirror 89.7 to 89.10: <c>OnServerConnected</c>).
        /// </summary>
        public WhereAllocationKcpServer(Action<int> OnConnected, Action<int, ArraySegment<byte>, KcpChannel> OnData,
            Action<int> OnDisconnected, Action<int, ErrorCode, string> OnError, KcpConfig config, int maxConnections = 1024)
            : this(IdOnly(OnConnected), OnData, OnDisconnected, OnError, config, maxConnections)
        {
        }

        private static Action<int, IPEndPoint> IdOnly(Action<int> connected) => (connectionId, sender) => connected(connectionId);

        private static void Ignored(int connectionId)
        {
        }

        private static void Ignored(int connectionId, IPEndPoint sender)
        {
        }

        /// <summary>Datagrams dropped: longer than the MTU, or from a new sender while the server was full.</summary>
        public long RefusedDatagrams { get; private set; }

        private void ResetIds()
        {
            _ids.Clear();
            Array.Clear(_senders, 0, _senders.Length);
            for (int i = 0; i < _free.Length; i++) _free[i] = _free.Length - i;   // id 1 on top
            _freeCount = _free.Length;
            _disconnected.Clear();
        }

        /// <summary>Binds an IPv4 socket, or a dual-mode IPv6 one when <c>config.DualMode</c>, on <paramref name="port"/>.</summary>
        public override void Start(ushort port)
        {
            if (socket != null) { Log.Warning("[KCP] Server: already started!"); return; }
            // DatagramSockets.Bind turns address sharing off (Mono turns it on) and, on Windows, the reset reports.
            socket = config.DualMode
                ? DatagramSockets.Bind(new IPEndPoint(IPAddress.IPv6Any, port), dualMode: true)
                : DatagramSockets.Bind(new IPEndPoint(IPAddress.Any, port));
            socket.Blocking = false;
            Common.ConfigureSocketBuffers(socket, config.RecvBufferSize, config.SendBufferSize);
        }

        /// <inheritdoc />
        protected override bool RawReceiveFrom(out ArraySegment<byte> segment, out int connectionId)
        {
            segment = default;
            connectionId = 0;
            while (socket != null)
            {
                ReceivedDatagram datagram;
                try
                {
                    // False: nothing queued. The sender lands in a value (EndPointKey), not in a new EndPoint.
                    if (!socket.TryReceiveFrom_NonAlloc(rawReceiveBuffer.AsSpan(), out datagram)) return false;
                }
                catch (SocketException e)
                {
                    Log.Info($"[KCP] Server: ReceiveFrom failed: {e}");   // as the stock server: logged, the tick goes on
                    return false;
                }
                if (datagram.Truncated) { RefusedDatagrams++; continue; }   // longer than the MTU: kcp cannot use a part

                if (!_ids.TryGet(datagram.RemoteEndPoint, out connectionId))
                {
                    // Unknown sender: kcp2k makes it a connection (CreateConnection) and keeps it only if this datagram
                    // is its handshake (Accept below). Lend it the top free id; the next unknown datagram gets the same.
                    if (_freeCount == 0)
                    {
                        RefusedDatagrams++;
                        if (!_warnedFull) { _warnedFull = true; Log.Warning($"[KCP] Server: full ({_free.Length} connections), new senders are dropped"); }
                        continue;
                    }
                    connectionId = _free[_freeCount - 1];
                    _unknownSender = datagram.RemoteEndPoint;
                }
                segment = new ArraySegment<byte>(rawReceiveBuffer, 0, datagram.Length);
                return true;
            }
            return false;
        }

        /// <inheritdoc />
        protected override void RawSend(int connectionId, ArraySegment<byte> data)
        {
            // No sender until the handshake is accepted: the stock server answers no one before that either.
            EndPointKey to = (uint)connectionId < (uint)_senders.Length ? _senders[connectionId] : default;
            if (to.IsEmpty) { Log.Warning($"[KCP] Server: RawSend invalid connectionId={connectionId}"); return; }
            try
            {
                // False: the send buffer is full; the datagram is dropped, as the stock server drops it.
                socket.TrySendTo_NonAlloc(data, to);   // an ArraySegment converts to the span form as it is
            }
            catch (SocketException e)
            {
                Log.Error($"[KCP] Server: SendTo failed: {e}");
            }
        }

        /// <inheritdoc />
        protected override KcpServerConnection CreateConnection(int connectionId)
        {
            // The one allocation per new sender: kcp2k's connection, its callbacks, and the IPEndPoint it reports
            // (GetClientEndPoint, and Mirror's client address).
            EndPointKey sender = _unknownSender;
            KcpServerConnection connection = null;
            connection = new KcpServerConnection(
                accepted => Accept(connectionId, sender, accepted),
                (message, channel) => OnData(connectionId, message, channel),
                () => Disconnected(connectionId, connection),
                (error, reason) => OnError(connectionId, error, reason),
                data => RawSend(connectionId, data),
                config,
                Common.GenerateCookie(),
                sender.ToIPEndPoint());
            return connection;
        }

        // kcp2k accepted the sender's handshake: the lent id (still the top free one) becomes its own.
        private void Accept(int connectionId, EndPointKey sender, KcpServerConnection connection)
        {
            // kcp2k accepts a handshake only while handling the datagram the id was lent for; anything else is a bug.
            if (_freeCount == 0 || _free[_freeCount - 1] != connectionId) { Log.Error($"[KCP] Server: id {connectionId} was not lent"); return; }
            _freeCount--;
            _ids.TryAdd(sender, connectionId);   // cannot be Full: the table holds as many peers as there are ids
            _senders[connectionId] = sender;
            connections.Add(connectionId, connection);
            Log.Info($"[KCP] Server: OnConnected({connectionId})");
            _connected(connectionId, (IPEndPoint)connection.remoteEndPoint);
        }

        private void Disconnected(int connectionId, KcpServerConnection connection)
        {
            // Removed after the tick, as the stock server does (the connections are being iterated now). Only this
            // connection's own id: a lent one is already free, and may belong to someone else by then.
            if (connections.TryGetValue(connectionId, out KcpServerConnection current) && current == connection)
                _disconnected.Add(connectionId);
            Log.Info($"[KCP] Server: OnDisconnected({connectionId})");
            OnDisconnected(connectionId);
        }

        /// <inheritdoc />
        public override void TickIncoming()
        {
            base.TickIncoming();
            foreach (int connectionId in _disconnected)
            {
                if (!connections.Remove(connectionId)) continue;
                _ids.Remove(_senders[connectionId]);
                _senders[connectionId] = default;
                _free[_freeCount++] = connectionId;
            }
            _disconnected.Clear();
        }

        /// <inheritdoc />
        public override void Stop()
        {
            base.Stop();
            ResetIds();
            _warnedFull = false;
        }
    }
}
