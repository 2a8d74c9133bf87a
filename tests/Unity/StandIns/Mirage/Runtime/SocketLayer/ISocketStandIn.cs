// A stand-in of Mirage's socket surface (assembly Mirage.SocketLayer) at 158.3.5: the types the Unity package's
// MirageSocket sample implements or extends, signatures only, no behaviour. This file: ISocket and what it names, which
// need no Unity (the sockets suite compiles it with the sample's socket: MirageSocketTests); SocketFactoryStandIn.cs: the
// factory, a MonoBehaviour. Mirage's code is nullable-oblivious, so is this. Written from Mirage's public API as
// MirageNet/Mirage declares it at tag v158.3.5 (commit 85f612e7f), Assets/Mirage/Runtime/SocketLayer/ISocket.cs and
// SocketFactory.cs; both files are unchanged from v156.2.0 (ISocket.Flush, the last member added) to v158.3.5. Its
// package.json and the GUID in Mirage.SocketLayer.asmdef.meta are Mirage's, so that scripts/unity-builds.sh can install
// it where Mirage is installed (Packages/com.miragenet.mirage) and the sample's versionDefines see Mirage's version.
// Left out: Peer and the rest of the SocketLayer (the sample does not touch them), Mirage's other assemblies, and
// SocketFactory's HelpURL attribute.
#nullable disable
using System;

namespace Mirage.SocketLayer
{
    public delegate void OnData(IConnectionHandle handle, ReadOnlySpan<byte> data);

    public delegate void OnDisconnect(IConnectionHandle handle, ReadOnlySpan<byte> data, string reason);

    public interface ISocket
    {
        void Bind(IBindEndPoint endPoint);
        IConnectionHandle Connect(IConnectEndPoint endPoint);
        void Close();
        void SetTickEvents(int maxPacketSize, OnData onData, OnDisconnect onDisconnect);
        void Tick();
        void Flush();
        bool Poll();
        int Receive(Span<byte> outBuffer, out IConnectionHandle handle);
        void Send(IConnectionHandle handle, ReadOnlySpan<byte> packet);
    }

    public interface IBindEndPoint
    {
    }

    public interface IConnectEndPoint
    {
    }

    public interface IConnectionHandle
    {
        bool IsStateful { get; }
        ISocketLayerConnection SocketLayerConnection { get; set; }
        bool SupportsGracefulDisconnect { get; }
        void Disconnect(string gracefulDisconnectReason);
        IConnectionHandle CreateCopy();
        int GetHashCode();
        bool Equals(object obj);
    }

    public interface ISocketLayerConnection
    {
    }
}
