using System.Net.Sockets;

namespace WhereAllocation.Interop
{
    /// <summary>Maps a C library errno to the <see cref="SocketError"/> that .NET reports for it.</summary>
    internal static class Errno
    {
        internal static SocketError ToSocketError(int errno)
        {
            switch (Platform.Os)
            {
                case OsFamily.Linux: return FromLinux(errno);
                case OsFamily.Darwin: return FromDarwin(errno);
                case OsFamily.Windows: return (SocketError)errno; // WSAGetLastError already is a SocketError.
                default: return SocketError.SocketError;
            }
        }

        internal static bool IsWouldBlock(int errno)
        {
            switch (Platform.Os)
            {
                case OsFamily.Linux: return errno == 11; // EAGAIN == EWOULDBLOCK
                case OsFamily.Darwin: return errno == 35;
                case OsFamily.Windows: return errno == (int)SocketError.WouldBlock;
                default: return false;
            }
        }

        internal static bool IsInterrupted(int errno)
        {
            return Platform.Os == OsFamily.Windows ? errno == (int)SocketError.Interrupted : errno == 4; // EINTR
        }

        internal static SocketError FromLinux(int errno)
        {
            switch (errno)
            {
                case 0: return SocketError.Success;
                case 4: return SocketError.Interrupted;
                case 9: return SocketError.OperationAborted; // EBADF: the descriptor was closed under us
                case 11: return SocketError.WouldBlock;
                case 12: return SocketError.NoBufferSpaceAvailable;
                case 13: return SocketError.AccessDenied;
                case 14: return SocketError.Fault;
                case 22: return SocketError.InvalidArgument;
                case 88: return SocketError.NotSocket;
                case 89: return SocketError.DestinationAddressRequired;
                case 90: return SocketError.MessageSize;
                case 95: return SocketError.OperationNotSupported;
                case 97: return SocketError.AddressFamilyNotSupported;
                case 99: return SocketError.AddressNotAvailable;
                case 100: return SocketError.NetworkDown;
                case 101: return SocketError.NetworkUnreachable;
                case 104: return SocketError.ConnectionReset;
                case 105: return SocketError.NoBufferSpaceAvailable;
                case 107: return SocketError.NotConnected;
                case 110: return SocketError.TimedOut;
                case 111: return SocketError.ConnectionRefused;
                case 113: return SocketError.HostUnreachable;
                default: return SocketError.SocketError;
            }
        }

        internal static SocketError FromDarwin(int errno)
        {
            switch (errno)
            {
                case 0: return SocketError.Success;
                case 4: return SocketError.Interrupted;
                case 9: return SocketError.OperationAborted;
                case 12: return SocketError.NoBufferSpaceAvailable;
                case 13: return SocketError.AccessDenied;
                case 14: return SocketError.Fault;
                case 22: return SocketError.InvalidArgument;
                case 35: return SocketError.WouldBlock;
                case 38: return SocketError.NotSocket;
                case 39: return SocketError.DestinationAddressRequired;
                case 40: return SocketError.MessageSize;
                case 45: return SocketError.OperationNotSupported;
                case 47: return SocketError.AddressFamilyNotSupported;
                case 49: return SocketError.AddressNotAvailable;
                case 50: return SocketError.NetworkDown;
                case 51: return SocketError.NetworkUnreachable;
                case 54: return SocketError.ConnectionReset;
                case 55: return SocketError.NoBufferSpaceAvailable;
                case 57: return SocketError.NotConnected;
                case 60: return SocketError.TimedOut;
                case 61: return SocketError.ConnectionRefused;
                case 65: return SocketError.HostUnreachable;
                default: return SocketError.SocketError;
            }
        }
    }
}
