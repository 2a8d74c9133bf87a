#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// An OS whose socket ABI the library does not know, or a Unity player with no socket calls P/Invoke can reach: the
    /// native path is not offered, and the runtime's paths run instead (on netstandard2.1, the allocating Managed path,
    /// which DatagramPathSettings reports once unless chosen).
    /// </summary>
    internal sealed unsafe class UnknownOsSocketCalls : OsSocketCalls
    {
        private readonly string _why;

        internal UnknownOsSocketCalls(string why) => _why = why;

        internal override string Name => "This operating system";

        internal override SockaddrFormat Format => SockaddrFormat.Linux;

        internal override string? Probe() => _why;

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error) => throw Unsupported();

        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error) => throw Unsupported();

        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error) => throw Unsupported();

        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => throw Unsupported();

        internal override bool IsDualMode(IntPtr socket) => throw Unsupported();

        internal override SocketError DisableAddressSharing(IntPtr socket) => throw Unsupported();

        internal override int BufferSize(IntPtr socket, bool receive) => throw Unsupported();

        internal override bool IsConnected(IntPtr socket) => throw Unsupported();

        internal override string? BalancedGroupUnsupported => "This operating system is one the library does not know: it cannot tell whether it spreads one port's datagrams over several sockets.";

        internal override string? ThreadPinningUnsupported => "This operating system is one the library does not know: it has no call that pins a thread to a CPU here.";

        private static PlatformNotSupportedException Unsupported() => new PlatformNotSupportedException("The native datagram path does not know this operating system's socket calls.");
    }
}
