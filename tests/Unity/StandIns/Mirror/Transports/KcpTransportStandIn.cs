// A stand-in of Mirror's KcpTransport (assembly "Mirror.Transports", Assets/Mirror/Transports/KCP/KcpTransport.cs,
// namespace kcp2k): the protected fields and the static translations a derived transport uses, with the signatures of
// MirrorNetworking/Mirror at v89.7.0 and v90.0.0 (the same in both). Awake is where the real one makes its config,
// client and server; here it only exists to be overridden. Never imported by Unity: it lives outside the package folders.
using System;
using Mirror;

namespace kcp2k
{
    public class KcpTransport : Transport
    {
        public ushort port = 7777;
        protected KcpConfig config;
        protected KcpServer server;

        public static int FromKcpChannel(KcpChannel channel) => throw new NotImplementedException();
        public static TransportError ToTransportError(ErrorCode error) => throw new NotImplementedException();

        protected virtual void Awake()
        {
        }
    }
}
