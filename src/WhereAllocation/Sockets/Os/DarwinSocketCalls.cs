#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// macOS (and the other Apple systems' BSD sockets): <c>recvmsg</c> with MSG_DONTWAIT, which reports a cut
    /// datagram in msg_flags (macOS has no input MSG_TRUNC, so a cut datagram's real length is unknown),
    /// <c>sendto</c> with MSG_DONTWAIT, and <c>poll</c>. Implemented from the system headers; not run by this
    /// project's CI, which has no macOS machine. The sockaddr codec is tested on byte arrays.
    /// </summary>
    internal sealed unsafe class DarwinSocketCalls : PosixSocketCalls
    {
        private const int MsgPeek = 0x2;
        private const int MsgTrunc = 0x10;     // an output flag of recvmsg
        private const int MsgDontWait = 0x80;
        private const int SolSocket = 0xffff;
        private const int SoReuseAddr = 0x4;
        private const int SoSndBuf = 0x1001;
        private const int SoRcvBuf = 0x1002;
        private const int SoRcvTimeo = 0x1006;
        private const int IPv6V6Only = 27;

        internal DarwinSocketCalls()
            : base(MsgDontWait, SolSocket, SoReuseAddr, SoSndBuf, SoRcvBuf, IPv6V6Only)
        {
        }

        protected override int SoError => 0x1007;

        internal override string Name => "macOS";

        internal override SockaddrFormat Format => SockaddrFormat.Bsd;

        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            Libc.IoVec iov;
            iov.Base = payload;
            iov.Length = (nuint)size;
            Libc.DarwinMsgHdr message = default;
            message.Name = address;
            message.NameLength = (uint)*addressLength;
            message.Iov = &iov;
            message.IovLength = 1;
            long received = Libc.RecvMsgDarwin((int)socket, &message, (peek ? MsgPeek : 0) | MsgDontWait);
            if (received < 0)
            {
                error = LastError();
                return -1;
            }
            *addressLength = (int)message.NameLength;
            error = SocketError.Success;
            return (message.Flags & MsgTrunc) != 0 ? (long)size + 1 : received;
        }

        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => ReceiveTimeout(socket, SoRcvTimeo, true);

        // macOS's SO_REUSEPORT lets sockets share a port, but a unicast datagram goes to one of them (the one bound
        // last), not spread by sender: no group would share the load, so DatagramShardGroup refuses.
        internal override string? BalancedGroupUnsupported =>
            "macOS has SO_REUSEPORT, but it does not spread unicast datagrams over the sockets sharing a port (each goes to the socket bound last), so shards would not share the load.";

        internal override string? ThreadPinningUnsupported =>
            "macOS has no call that pins a thread to a CPU (its thread affinity policy is only a hint to the scheduler).";

        internal override ReadinessPoller CreatePoller() => new DarwinPoller(this);

        /// <summary>
        /// macOS's errno as a <see cref="SocketError"/>: the same errors as Linux's table (LinuxSocketCalls.FromErrno), by
        /// macOS's numbers, with the same two deliberate differences from the runtime (EBADF, ESHUTDOWN) and the same answers
        /// where the runtime has none. EOPNOTSUPP (102) and ENOTSUP (45) are two numbers here; both are OperationNotSupported.
        /// </summary>
        protected override SocketError FromErrno(int errno)
        {
            switch (errno)
            {
                case 0: return SocketError.Success;
                case 1: return SocketError.AccessDenied;                // EPERM
                case 2: return SocketError.AddressNotAvailable;         // ENOENT
                case 3: return SocketError.InvalidArgument;             // ESRCH
                case 4: return SocketError.Interrupted;                 // EINTR
                case 5: return SocketError.NetworkDown;                 // EIO
                case 6: return SocketError.HostNotFound;                // ENXIO
                case 9: return SocketError.OperationAborted;            // EBADF
                case 12: return SocketError.NoBufferSpaceAvailable;     // ENOMEM
                case 13: return SocketError.AccessDenied;               // EACCES
                case 14: return SocketError.Fault;                      // EFAULT
                case 17: return SocketError.InvalidArgument;            // EEXIST
                case 19: return SocketError.NetworkDown;                // ENODEV
                case 22: return SocketError.InvalidArgument;            // EINVAL
                case 23: return SocketError.TooManyOpenSockets;         // ENFILE
                case 24: return SocketError.TooManyOpenSockets;         // EMFILE
                case 28: return SocketError.TooManyOpenSockets;         // ENOSPC
                case 32: return SocketError.Shutdown;                   // EPIPE: a send after Shutdown(Send)
                case 35: return SocketError.WouldBlock;                 // EAGAIN == EWOULDBLOCK
                case 36: return SocketError.InProgress;                 // EINPROGRESS
                case 37: return SocketError.AlreadyInProgress;          // EALREADY
                case 38: return SocketError.NotSocket;                  // ENOTSOCK
                case 39: return SocketError.DestinationAddressRequired; // EDESTADDRREQ
                case 40: return SocketError.MessageSize;                // EMSGSIZE
                case 41: return SocketError.ProtocolType;               // EPROTOTYPE
                case 42: return SocketError.ProtocolOption;             // ENOPROTOOPT
                case 43: return SocketError.ProtocolNotSupported;       // EPROTONOSUPPORT
                case 44: return SocketError.SocketNotSupported;         // ESOCKTNOSUPPORT
                case 45: return SocketError.OperationNotSupported;      // ENOTSUP
                case 46: return SocketError.ProtocolFamilyNotSupported; // EPFNOSUPPORT
                case 47: return SocketError.AddressFamilyNotSupported;  // EAFNOSUPPORT
                case 48: return SocketError.AddressAlreadyInUse;        // EADDRINUSE
                case 49: return SocketError.AddressNotAvailable;        // EADDRNOTAVAIL
                case 50: return SocketError.NetworkDown;                // ENETDOWN
                case 51: return SocketError.NetworkUnreachable;         // ENETUNREACH
                case 52: return SocketError.NetworkReset;               // ENETRESET
                case 53: return SocketError.ConnectionAborted;          // ECONNABORTED
                case 54: return SocketError.ConnectionReset;            // ECONNRESET
                case 55: return SocketError.NoBufferSpaceAvailable;     // ENOBUFS
                case 56: return SocketError.IsConnected;                // EISCONN
                case 57: return SocketError.NotConnected;               // ENOTCONN
                case 58: return SocketError.Shutdown;                   // ESHUTDOWN
                case 60: return SocketError.TimedOut;                   // ETIMEDOUT
                case 61: return SocketError.ConnectionRefused;          // ECONNREFUSED
                case 64: return SocketError.HostDown;                   // EHOSTDOWN
                case 65: return SocketError.HostUnreachable;            // EHOSTUNREACH
                case 89: return SocketError.OperationAborted;           // ECANCELED
                case 96: return SocketError.NoData;                     // ENODATA
                case 100: return SocketError.HostUnreachable;           // EPROTO
                case 102: return SocketError.OperationNotSupported;     // EOPNOTSUPP
                default: return SocketError.SocketError;
            }
        }
    }
}
