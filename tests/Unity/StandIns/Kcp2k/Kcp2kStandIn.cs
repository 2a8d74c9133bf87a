// A stand-in of kcp2k's server-side public and protected surface at V1.41: signatures only, every body throws. It lets
// the Unity package's Kcp2kServer sample compile here without kcp2k's code. The signatures were read from kcp2k
// (github.com/MirrorNetworking/kcp2k) at commit 57823e06ac7c6a7812c18814c3c2b9107f216616 ("V1.41"), files
// kcp2k/kcp2k/highlevel/{KcpServer,KcpServerConnection,KcpPeer,KcpConfig,Common,Log,KcpChannel,ErrorCode,KcpState}.cs;
// the constants' values from kcp2k/kcp2k/kcp/Kcp.cs there. With STANDIN_MIRROR_90 defined it is the copy Mirror 90 and
// later ship (Assets/Mirror/Transports/KCP/kcp2k, still "V1.41"), whose server reports a new connection with its
// address: Action<int, IPEndPoint> (Mirror commit 2d2e27086, first in Mirror 89.11.0). The symbol is the stand-in's own,
// set where the stand-in is installed (a csc.rsp beside kcp2k.asmdef in scripts/unity-builds.sh's projects,
// -p:Mirror90=true in Kcp2kStandIn.csproj), because the real form is fixed by the Mirror version installed, not by the
// project's define symbols (Mirror's own MIRROR_90_OR_NEWER is in some build targets' lists and not in others). Left
// out: KcpClient, the kcp algorithm (Kcp, Segment, Pool) and KcpPeer's statistics, which the sample does not touch.
using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;

namespace kcp2k
{
    public enum KcpChannel : byte { Reliable = 1, Unreliable = 2 }

    public enum ErrorCode : byte { DnsResolve, Timeout, Congestion, InvalidReceive, InvalidSend, ConnectionClosed, Unexpected }

    public enum KcpState { Connected, Authenticated, Disconnected }

    public static class Log
    {
        public static Action<string> Info = _ => { };
        public static Action<string> Warning = _ => { };
        public static Action<string> Error = _ => { };
    }

    public static class Common
    {
        public static bool ResolveHostname(string hostname, out IPAddress[] addresses) => throw new NotImplementedException();
        public static void ConfigureSocketBuffers(Socket socket, int recvBufferSize, int sendBufferSize) => throw new NotImplementedException();
        public static int ConnectionHash(EndPoint endPoint) => throw new NotImplementedException();
        public static uint GenerateCookie() => throw new NotImplementedException();
    }

    public class KcpConfig
    {
        public bool DualMode;
        public int RecvBufferSize;
        public int SendBufferSize;
        public int Mtu;
        public bool NoDelay;
        public uint Interval;
        public int FastResend;
        public bool CongestionWindow;
        public uint SendWindowSize;
        public uint ReceiveWindowSize;
        public int Timeout;
        public uint MaxRetransmits;

        public KcpConfig(bool DualMode = true, int RecvBufferSize = 1024 * 1024 * 7, int SendBufferSize = 1024 * 1024 * 7,
            int Mtu = 1200, bool NoDelay = true, uint Interval = 10, int FastResend = 0, bool CongestionWindow = false,
            uint SendWindowSize = 32, uint ReceiveWindowSize = 128, int Timeout = KcpPeer.DEFAULT_TIMEOUT, uint MaxRetransmits = 20)
            => throw new NotImplementedException();
    }

    public abstract class KcpPeer
    {
        protected KcpState state = KcpState.Connected;
        public const int DEFAULT_TIMEOUT = 10000;
        public int timeout;
        public const int PING_INTERVAL = 1000;
        public const int CHANNEL_HEADER_SIZE = 1;
        public const int COOKIE_HEADER_SIZE = 4;
        public const int METADATA_SIZE = CHANNEL_HEADER_SIZE + COOKIE_HEADER_SIZE;
        public readonly int unreliableMax;
        public readonly int reliableMax;

        protected KcpPeer(KcpConfig config, uint cookie) => throw new NotImplementedException();
        protected void Reset(KcpConfig config) => throw new NotImplementedException();
        protected abstract void OnAuthenticated();
        protected abstract void OnData(ArraySegment<byte> message, KcpChannel channel);
        protected abstract void OnDisconnected();
        protected abstract void OnError(ErrorCode error, string message);
        protected abstract void RawSend(ArraySegment<byte> data);
        public static int ReliableMaxMessageSize(int mtu, uint rcv_wnd) => throw new NotImplementedException();
        public static int UnreliableMaxMessageSize(int mtu) => throw new NotImplementedException();
        public virtual void TickIncoming() => throw new NotImplementedException();
        public virtual void TickOutgoing() => throw new NotImplementedException();
        protected void OnRawInputReliable(ArraySegment<byte> message) => throw new NotImplementedException();
        protected void OnRawInputUnreliable(ArraySegment<byte> message) => throw new NotImplementedException();
        public void SendHello() => throw new NotImplementedException();
        public void SendData(ArraySegment<byte> data, KcpChannel channel) => throw new NotImplementedException();
        public virtual void Disconnect() => throw new NotImplementedException();
    }

    public class KcpServerConnection : KcpPeer
    {
        public readonly EndPoint remoteEndPoint;
        protected readonly Action<KcpServerConnection> OnConnectedCallback;
        protected readonly Action<ArraySegment<byte>, KcpChannel> OnDataCallback;
        protected readonly Action OnDisconnectedCallback;
        protected readonly Action<ErrorCode, string> OnErrorCallback;
        protected readonly Action<ArraySegment<byte>> RawSendCallback;

        public KcpServerConnection(Action<KcpServerConnection> OnConnected, Action<ArraySegment<byte>, KcpChannel> OnData,
            Action OnDisconnected, Action<ErrorCode, string> OnError, Action<ArraySegment<byte>> OnRawSend,
            KcpConfig config, uint cookie, EndPoint remoteEndPoint)
            : base(config, cookie) => throw new NotImplementedException();

        protected override void OnAuthenticated() => throw new NotImplementedException();
        protected override void OnData(ArraySegment<byte> message, KcpChannel channel) => throw new NotImplementedException();
        protected override void OnDisconnected() => throw new NotImplementedException();
        protected override void OnError(ErrorCode error, string message) => throw new NotImplementedException();
        protected override void RawSend(ArraySegment<byte> data) => throw new NotImplementedException();
        public void RawInput(ArraySegment<byte> segment) => throw new NotImplementedException();
    }

    public class KcpServer
    {
#if STANDIN_MIRROR_90
        protected readonly Action<int, IPEndPoint> OnConnected;
#else
        protected readonly Action<int> OnConnected;
#endif
        protected readonly Action<int, ArraySegment<byte>, KcpChannel> OnData;
        protected readonly Action<int> OnDisconnected;
        protected readonly Action<int, ErrorCode, string> OnError;
        protected readonly KcpConfig config;
        protected Socket socket;
        protected readonly byte[] rawReceiveBuffer;
        public Dictionary<int, KcpServerConnection> connections = new Dictionary<int, KcpServerConnection>();

#if STANDIN_MIRROR_90
        public KcpServer(Action<int, IPEndPoint> OnConnected,
#else
        public KcpServer(Action<int> OnConnected,
#endif
            Action<int, ArraySegment<byte>, KcpChannel> OnData, Action<int> OnDisconnected,
            Action<int, ErrorCode, string> OnError, KcpConfig config) => throw new NotImplementedException();

        public EndPoint LocalEndPoint => throw new NotImplementedException();
        public virtual bool IsActive() => throw new NotImplementedException();
        public virtual void Start(ushort port) => throw new NotImplementedException();
        public void Send(int connectionId, ArraySegment<byte> segment, KcpChannel channel) => throw new NotImplementedException();
        public void Disconnect(int connectionId) => throw new NotImplementedException();
        public IPEndPoint GetClientEndPoint(int connectionId) => throw new NotImplementedException();
        protected virtual bool RawReceiveFrom(out ArraySegment<byte> segment, out int connectionId) => throw new NotImplementedException();
        protected virtual void RawSend(int connectionId, ArraySegment<byte> data) => throw new NotImplementedException();
        protected virtual KcpServerConnection CreateConnection(int connectionId) => throw new NotImplementedException();
        public virtual void TickIncoming() => throw new NotImplementedException();
        public virtual void TickOutgoing() => throw new NotImplementedException();
        public virtual void Tick() => throw new NotImplementedException();
        public virtual void Stop() => throw new NotImplementedException();
    }
}
