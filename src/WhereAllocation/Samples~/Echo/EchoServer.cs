using System;
using System.Net;
using System.Net.Sockets;
using UnityEngine;
using WhereAllocation;

namespace WhereAllocation.Samples
{
    /// <summary>
    /// A UDP echo server that lives in a scene. It works on Unity's main thread only: each frame, Update drains what
    /// the socket has queued, up to a bound, and answers each datagram to its sender, allocating nothing per datagram.
    /// </summary>
    /// <remarks>
    /// Frame discipline: the socket is non-blocking, so Update never waits, and at most
    /// <see cref="maxDatagramsPerFrame"/> are handled per frame, so a flood of datagrams costs frames a bounded time
    /// (the rest wait in the socket's queue for the next frame). Thread discipline: nothing here runs off the main
    /// thread, so game state and Unity's API may be used directly from the loop. A server that receives on a thread of
    /// its own (a blocking receive, or a DatagramBatch) must not touch Unity objects there: copy what it needs into
    /// buffers made once, and read them in Update.
    /// </remarks>
    public sealed class EchoServer : MonoBehaviour
    {
        [SerializeField] private int port = 7777;
        [SerializeField] private int maxDatagramsPerFrame = 256;

        private readonly byte[] _buffer = new byte[1500];   // made once: the loop allocates nothing
        private Socket _socket;
        private long _echoed;
        private long _truncated;
        private long _dropped;
        private float _nextReport;

        /// <summary>The port the server listens on, once enabled (0 in the inspector picks a free one).</summary>
        public int BoundPort { get; private set; }

        private void OnEnable()
        {
            // DatagramSockets.Bind turns address sharing off, so no other socket can be given this port by accident.
            _socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, port));
            _socket.Blocking = false;
            BoundPort = ((IPEndPoint)_socket.LocalEndPoint).Port;
            Debug.Log("EchoServer listening on 127.0.0.1:" + BoundPort + ", datagram path " + DatagramPathSettings.Active);
        }

        private void Update()
        {
            for (int i = 0; i < maxDatagramsPerFrame; i++)
            {
                // false: nothing queued now. No exception, no allocation.
                if (!_socket.TryReceiveFrom_NonAlloc(_buffer.AsSpan(), out ReceivedDatagram datagram)) break;
                if (datagram.Truncated) { _truncated++; continue; }   // longer than the buffer: drop it
                // false: the send buffer is full. No exception: this reply is dropped, the rest wait for the next frame.
                if (!_socket.TrySendTo_NonAlloc(_buffer.AsSpan(0, datagram.Length), datagram.RemoteEndPoint)) { _dropped++; break; }
                _echoed++;
            }

            // Logging builds strings, so it runs once a second, never per datagram.
            if (Time.time >= _nextReport)
            {
                _nextReport = Time.time + 1f;
                Debug.Log("EchoServer: " + _echoed + " echoed, " + _truncated + " too long, " + _dropped + " replies dropped (send buffer full)");
            }
        }

        private void OnDisable()
        {
            // Also ends a receive in flight on another thread, if one were used: it throws ObjectDisposedException.
            _socket?.Dispose();
            _socket = null;
        }
    }
}
