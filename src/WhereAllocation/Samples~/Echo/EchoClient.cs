using System;
using System.Net;
using System.Net.Sockets;
using UnityEngine;
using WhereAllocation;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// A client for <see cref="EchoServer"/>: each frame it sends one datagram carrying the frame number and reads the
    /// echoes that arrived, on the main thread, without allocating per datagram. Put both on one GameObject to try it.
    /// </summary>
    public sealed class EchoClient : MonoBehaviour
    {
        [SerializeField] private EchoServer server;

        private readonly byte[] _send = new byte[4];
        private readonly byte[] _receive = new byte[1500];
        private IPEndPointNonAlloc _serverEndPoint;
        private IPEndPointNonAlloc _from;
        private Socket _socket;
        private long _roundTrips;
        private int _lastFrameEchoed;
        private float _nextReport;

        private void Start()
        {
            // Start runs after every OnEnable of the scene, so the server's port is known here.
            if (server == null) server = GetComponent<EchoServer>();
            _socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            _socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _socket.Blocking = false;
            _serverEndPoint = new IPEndPointNonAlloc(IPAddress.Loopback, server.BoundPort);
            _from = new IPEndPointNonAlloc(IPAddress.Any, 0);   // overwritten by every receive
        }

        private void Update()
        {
            if (_socket == null) return;
            BitConverter.TryWriteBytes(_send.AsSpan(), Time.frameCount);
            _socket.SendTo_NonAlloc(_send, 0, _send.Length, SocketFlags.None, _serverEndPoint);

            // Read everything queued; the compatible form fills _from with the sender.
            while (_socket.TryReceiveFrom_NonAlloc(_receive, 0, _receive.Length, SocketFlags.None, _from, out ReceivedDatagram datagram))
            {
                if (datagram.Length == 4 && datagram.RemoteEndPoint == _serverEndPoint.CurrentKey)
                {
                    _lastFrameEchoed = BitConverter.ToInt32(_receive, 0);
                    _roundTrips++;
                }
            }

            if (Time.time >= _nextReport)
            {
                _nextReport = Time.time + 1f;
                Debug.Log("EchoClient: " + _roundTrips + " round trips, last echo from frame " + _lastFrameEchoed + " (now " + Time.frameCount + ")");
            }
        }

        private void OnDestroy()
        {
            _socket?.Dispose();
            _socket = null;
        }
    }
}
