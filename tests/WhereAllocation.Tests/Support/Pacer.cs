using System;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A sender thread that sends one datagram each time the receiver says it is waiting (<see cref="Waiting"/>), so that
    /// every receive finds the socket empty and really waits. It sleeps between datagrams (Monitor, 0 B): a spinning
    /// sender would take a core that the I/O thread or the pool thread needs, on a 2-core machine. Sends with the
    /// library (0 B on the native and SocketAddress paths).
    /// </summary>
    public sealed class Pacer : IDisposable
    {
        private readonly object _gate = new object();
        private readonly Thread _thread;
        private readonly Socket _from;
        private readonly EndPointKey _to;
        private readonly byte[] _payload;
        private int _asked;
        private bool _stop;

        public Pacer(Socket from, EndPointKey to, int length)
        {
            _from = from;
            _to = to;
            _payload = new byte[length];
            _thread = new Thread(Run) { IsBackground = true, Name = "pacer" };
            _thread.Start();
        }

        /// <summary>The receiver's call returned without a datagram: send the next one.</summary>
        public void Waiting()
        {
            lock (_gate)
            {
                _asked++;
                Monitor.Pulse(_gate);
            }
        }

        private void Run()
        {
            int sent = 0;
            while (true)
            {
                lock (_gate)
                {
                    while (_asked == sent && !_stop) Monitor.Wait(_gate, 100);
                    if (_stop) return;
                }
                _payload[0] = (byte)sent;
                _from.SendTo_NonAlloc(_payload, _to);
                sent++;
            }
        }

        public void Dispose()
        {
            lock (_gate)
            {
                _stop = true;
                Monitor.Pulse(_gate);
            }
            _thread.Join(10_000);
        }
    }
}
