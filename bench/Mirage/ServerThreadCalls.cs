using System.Net;
using System.Net.Sockets;

// Marks the measured window in a system-call trace: the server thread sends one datagram of MarkerSize bytes to a
// loopback port nobody holds at the window's start and one at its end (run.sh --syscalls traces with strace -f and
// counts, on the thread that sent the markers and between them, the receive and poll calls). Outside the window, so
// the markers' own allocations and calls are not counted.
internal static class ServerThreadCalls
{
    public const int MarkerSize = 997;
    private static readonly Socket Marker = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
    private static readonly IPEndPoint Nowhere = new IPEndPoint(IPAddress.Loopback, 9);   // discard; nobody listens here

    public static void Mark() => Marker.SendTo(new byte[MarkerSize], Nowhere);
}
