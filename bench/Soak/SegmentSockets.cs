using System;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// The sockets of one segment: a receiver and several senders, each bound to its own loopback port (so each
    /// sender is told apart by its endpoint), all made with <see cref="DatagramSockets"/> and disposed together.
    /// </summary>
    internal sealed class SegmentSockets : IDisposable
    {
        private static readonly IPAddress s_mappedLoopback = IPAddress.Parse("::ffff:127.0.0.1");

        internal SegmentSockets(Family family, int senders, int receiveBufferBytes, int receiveTimeoutMs)
        {
            Senders = new Socket[senders];
            SenderKeys = new EndPointKey[senders];
            try
            {
                Receiver = family switch
                {
                    Family.IPv4 => DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0)),
                    Family.IPv6 => DatagramSockets.Bind(new IPEndPoint(IPAddress.IPv6Loopback, 0)),
                    _ => DatagramSockets.Bind(new IPEndPoint(s_mappedLoopback, 0), dualMode: true),
                };
                Receiver.ReceiveBufferSize = receiveBufferBytes;
                Receiver.ReceiveTimeout = receiveTimeoutMs; // the blocking forms then end with TimedOut instead of waiting for ever
                int port = ((IPEndPoint)Receiver.LocalEndPoint!).Port;
                // The senders of a dual-mode receiver are IPv4 sockets sending to 127.0.0.1.
                IPAddress target = family == Family.IPv6 ? IPAddress.IPv6Loopback : IPAddress.Loopback;
                Target = new IPEndPointNonAlloc(target, port);
                TargetKey = EndPointKey.FromIPAddress(target, port);
                for (int i = 0; i < senders; i++)
                {
                    Senders[i] = DatagramSockets.Bind(new IPEndPoint(target, 0));
                    Senders[i].SendTimeout = receiveTimeoutMs;
                    EndPointKey key = EndPointKey.FromIPEndPoint((IPEndPoint)Senders[i].LocalEndPoint!);
                    // What the receiver sees: a dual-mode socket reports an IPv4 peer IPv4-mapped.
                    SenderKeys[i] = family == Family.Dual ? key.MapToIPv6() : key;
                }
                ReceiveEndPoint = new IPEndPointNonAlloc(family == Family.IPv4 ? IPAddress.Any : IPAddress.IPv6Any, 0);
            }
            catch
            {
                Dispose();
                throw;
            }
        }

        internal Socket Receiver { get; } = null!;
        internal Socket[] Senders { get; }

        /// <summary>Each sender's endpoint as the receiver sees it.</summary>
        internal EndPointKey[] SenderKeys { get; }

        /// <summary>The receiver as the senders address it, for the IPEndPointNonAlloc and key send forms.</summary>
        internal IPEndPointNonAlloc Target { get; } = null!;
        internal EndPointKey TargetKey { get; }

        /// <summary>The endpoint the IPEndPointNonAlloc receive forms fill, of the receiver's family.</summary>
        internal IPEndPointNonAlloc ReceiveEndPoint { get; } = null!;

        public void Dispose()
        {
            Receiver?.Dispose();
            foreach (Socket? s in Senders) s?.Dispose();
        }
    }
}
