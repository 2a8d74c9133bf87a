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
    internal sealed unsafe class DarwinSocketCalls : OsSocketCalls
    {
        private const int MsgPeek = 0x2;
        private const int MsgDontRoute = 0x4;
        private const int MsgTrunc = 0x10;     // an output flag of recvmsg
        private const int MsgDontWait = 0x80;
        private const int SolSocket = 0xffff;
        private const int SoReuseAddr = 0x4;
        private const int SoSndBuf = 0x1001;
        private const int SoRcvBuf = 0x1002;
        private const int SoRcvTimeo = 0x1006;
        private const int IpProtoIPv6 = 41;
        private const int IPv6V6Only = 27;
        private const short PollIn = 0x1;
        private const short PollOut = 0x4;
        private const short PollHup = 0x10;
        private const short PollNval = 0x20;

        internal override string Name => "macOS";

        internal override SockaddrFormat Format => SockaddrFormat.Bsd;

        internal override bool Probe()
        {
            try
            {
                Libc.GetPid();
                return true;
            }
            catch (DllNotFoundException) { return false; }
            catch (EntryPointNotFoundException) { return false; }
        }

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
                error = FromErrno(Marshal.GetLastWin32Error());
                return -1;
            }
            *addressLength = (int)message.NameLength;
            error = SocketError.Success;
            return (message.Flags & MsgTrunc) != 0 ? (long)size + 1 : received;
        }

        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error)
        {
            long sent = Libc.SendTo((int)socket, payload, (nuint)size, (dontRoute ? MsgDontRoute : 0) | MsgDontWait, address, (uint)addressLength);
            error = sent < 0 ? FromErrno(Marshal.GetLastWin32Error()) : SocketError.Success;
            return sent;
        }

        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error)
        {
            Libc.PollFd poll;
            poll.Fd = (int)socket;
            poll.Events = forWrite ? PollOut : PollIn;
            poll.Revents = 0;
            int ready = Libc.Poll(&poll, 1, timeoutMilliseconds);
            hungUp = (poll.Revents & (PollHup | PollNval)) != 0;
            if (ready < 0)
            {
                error = FromErrno(Marshal.GetLastWin32Error());
                return -1;
            }
            error = SocketError.Success;
            return ready > 0 ? 1 : 0;
        }

        internal override int ReceiveTimeoutMilliseconds(IntPtr socket)
        {
            // struct timeval { long tv_sec; int tv_usec; } (then padding)
            long* timeval = stackalloc long[2];
            timeval[0] = 0;
            timeval[1] = 0;
            uint length = 2 * sizeof(long);
            if (Libc.GetSockOpt((int)socket, SolSocket, SoRcvTimeo, timeval, &length) != 0) return 0;
            long ms = timeval[0] * 1000 + (*(int*)(timeval + 1) + 999) / 1000;
            return ms > int.MaxValue ? int.MaxValue : (int)ms;
        }

        internal override bool IsDualMode(IntPtr socket)
        {
            int value = 1;
            uint length = sizeof(int);
            return Libc.GetSockOpt((int)socket, IpProtoIPv6, IPv6V6Only, &value, &length) == 0 && value == 0;
        }

        internal override OsPoller CreatePoller() => new DarwinPoller();

        internal override SocketError DisableAddressSharing(IntPtr socket)
        {
            int off = 0;
            return Libc.SetSockOpt((int)socket, SolSocket, SoReuseAddr, &off, sizeof(int)) == 0 ? SocketError.Success : FromErrno(Marshal.GetLastWin32Error());
        }

        internal override bool IsConnected(IntPtr socket)
        {
            byte* name = stackalloc byte[SockaddrLayout.StorageSize];
            uint length = SockaddrLayout.StorageSize;
            return Libc.GetPeerName((int)socket, name, &length) == 0;
        }

        internal override int BufferSize(IntPtr socket, bool receive)
        {
            int value = -1;
            uint length = sizeof(int);
            return Libc.GetSockOpt((int)socket, SolSocket, receive ? SoRcvBuf : SoSndBuf, &value, &length) == 0 ? value : -1;
        }

        /// <summary>macOS's errno as the <see cref="SocketError"/> that .NET reports for it.</summary>
        internal static SocketError FromErrno(int errno)
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
