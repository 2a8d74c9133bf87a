// The stand-in of Mirage's SocketFactory (Assets/Mirage/Runtime/SocketLayer/SocketFactory.cs at v158.3.5; unchanged since
// v156.1.0 added IsSupported) and the two interfaces beside it: signatures only. See ISocketStandIn.cs.
#nullable disable
namespace Mirage.SocketLayer
{
    public interface IHasAddress
    {
        string Address { get; set; }
    }

    public interface IHasPort
    {
        int Port { get; set; }
    }

    public abstract class SocketFactory : UnityEngine.MonoBehaviour
    {
        public abstract int MaxPacketSize { get; }
        public abstract bool IsSupported { get; }
        public abstract ISocket CreateServerSocket();
        public abstract IBindEndPoint GetBindEndPoint();
        public abstract ISocket CreateClientSocket();
        public abstract IConnectEndPoint GetConnectEndPoint(string address = null, ushort? port = null);
    }
}
