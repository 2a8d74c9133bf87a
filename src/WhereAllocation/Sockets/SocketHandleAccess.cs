#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// How the <see cref="DatagramPath.Native"/> path reaches a socket's handle; <see cref="DatagramPathSettings.HandleAccess"/>
    /// says which one this process uses. Every way but <see cref="None"/> holds a reference on the socket's
    /// <see cref="System.Runtime.InteropServices.SafeHandle"/> for the length of each call, so a concurrent Dispose
    /// cannot close the descriptor (or let the OS give its number to another file) under the call, and a disposed
    /// socket is reported as <see cref="System.ObjectDisposedException"/>. None of them allocates per call.
    /// </summary>
    public enum SocketHandleAccess
    {
        /// <summary>
        /// No allocation-free way to the socket's handle: the native path is not offered, and the first datagram
        /// call on the default path throws <see cref="System.PlatformNotSupportedException"/> once instead of
        /// allocating silently (see <see cref="DatagramPathSettings.HandleAccess"/>).
        /// </summary>
        None = 0,

        /// <summary>
        /// The socket's own <c>SafeHandle</c> property: public on .NET 8; an internal member of Mono's and Unity's
        /// class libraries, reached through a delegate made once.
        /// </summary>
        SafeHandleProperty = 1,

        /// <summary>
        /// The socket's field that holds its handle: the fallback for class libraries whose <c>SafeHandle</c> property
        /// a linker removed (Unity's managed code stripping). The field survives any stripping that keeps sockets
        /// working, because every socket method uses it. It is read by reflection the first time a thread meets a
        /// socket; the thread then remembers that socket and its handle, so later calls compare one reference. The
        /// same guarantees as the property, and no dearer per datagram on Mono 6.8 (measured under callgrind).
        /// </summary>
        SafeHandleField = 2,
    }
}
