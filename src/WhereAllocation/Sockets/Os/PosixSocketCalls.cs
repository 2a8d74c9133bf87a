#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// What Linux and macOS do alike, through the same C library calls: <c>sendto</c> with MSG_DONTWAIT, <c>poll</c>,
    /// and the socket options. Only their numbers differ, and each OS's class gives its own (and its own receive,
    /// receive timeout layout and error numbers).
    /// </summary>
    internal abstract unsafe class PosixSocketCalls : OsSocketCalls
    {
        // poll() events: the same values on Linux and macOS.
        private const short PollIn = 0x1;
        private const short PollOut = 0x4;
        private const short PollHup = 0x10;
        private const short PollNval = 0x20;
        private const int MsgDontRoute = 0x4; // the same value on Linux and macOS
        private const int IpProtoIPv6 = 41;

        private readonly int _sendFlags;
        private readonly int _solSocket;
        private readonly int _soReuseAddr;
        private readonly int _soSndBuf;
        private readonly int _soRcvBuf;
        private readonly int _ipv6V6Only;

        /// <summary>The OS's numbers for what this class does; <paramref name="sendFlags"/>: a send's flags (never waiting, and where the OS has it no SIGPIPE).</summary>
        protected PosixSocketCalls(int sendFlags, int solSocket, int soReuseAddr, int soSndBuf, int soRcvBuf, int ipv6V6Only)
        {
            _sendFlags = sendFlags;
            _solSocket = solSocket;
            _soReuseAddr = soReuseAddr;
            _soSndBuf = soSndBuf;
            _soRcvBuf = soRcvBuf;
            _ipv6V6Only = ipv6V6Only;
        }

        /// <summary>The OS's errno as the <see cref="SocketError"/> that .NET reports for it.</summary>
        protected abstract SocketError FromErrno(int errno);

        /// <summary>The last call's errno, mapped (also for this OS's poller, right after its own calls).</summary>
        internal SocketError LastError() => FromErrno(Marshal.GetLastWin32Error());

        /// <summary>An errno as <see cref="SocketError"/>, for this OS's poller (its calls are its own, their errors the OS's).</summary>
        internal SocketError ErrorOf(int errno) => FromErrno(errno);

        /// <summary>
        /// A poller's wait (epoll_wait, kevent) as <see cref="ReadinessPoller.Wait"/> reports it, called right after the wait so that
        /// its errno is still the last error: the count; 0 when a signal interrupted the wait; -1 with the error otherwise.
        /// </summary>
        internal int WaitResult(int count, out SocketError error)
        {
            if (count >= 0)
            {
                error = SocketError.Success;
                return count;
            }
            error = LastError();
            return error == SocketError.Interrupted ? 0 : -1;
        }

        internal override string? Probe()
        {
            try
            {
                Libc.GetPid();
                return null;
            }
            catch (Exception e)
            {
                // DllNotFoundException, EntryPointNotFoundException; under IL2CPP also NotSupportedException from a stub.
                return ProbeFailed("the C library (\"" + Libc.Lib + "\")", e);
            }
        }

        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error)
        {
            long sent = Libc.SendTo((int)socket, payload, (nuint)size, (dontRoute ? MsgDontRoute : 0) | _sendFlags, address, (uint)addressLength);
            error = sent < 0 ? LastError() : SocketError.Success;
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
                error = LastError();
                return -1;
            }
            error = SocketError.Success;
            return ready > 0 ? 1 : 0; // POLLERR counts as ready: the next call reports the error
        }

        internal override bool HasInput(IntPtr socket, out SocketError pending)
        {
            const short PollErr = 0x8;
            Libc.PollFd poll;
            poll.Fd = (int)socket;
            poll.Events = PollIn;
            poll.Revents = 0;
            int ready = Libc.Poll(&poll, 1, 0);
            pending = SocketError.Success;
            if (ready > 0 && (poll.Revents & PollIn) != 0) return true;
            if (ready > 0 && (poll.Revents & PollErr) != 0)
            {
                int error = 0;
                uint length = sizeof(int);
                if (Libc.GetSockOpt((int)socket, _solSocket, SoError, &error, &length) == 0 && error != 0) pending = FromErrno(error);
            }
            return false;
        }

        /// <summary>SO_ERROR: Linux's number; macOS gives its own.</summary>
        protected virtual int SoError => 4;

        private const int GetDescriptorFlags = 1; // F_GETFD, the same on Linux and macOS

        internal override bool IsCloseOnExec(IntPtr socket)
        {
            // The runtime's own question (SafeSocketHandle.TryUnblockSocket): flags 0 is "not close-on-exec"; an error is not.
            return Libc.Fcntl((int)socket, GetDescriptorFlags) != 0;
        }

        internal override bool IsDualMode(IntPtr socket)
        {
            int value = 1;
            uint length = sizeof(int);
            return Libc.GetSockOpt((int)socket, IpProtoIPv6, _ipv6V6Only, &value, &length) == 0 && value == 0;
        }

        internal override SocketError DisableAddressSharing(IntPtr socket)
        {
            int off = 0;
            return Libc.SetSockOpt((int)socket, _solSocket, _soReuseAddr, &off, sizeof(int)) == 0 ? SocketError.Success : LastError();
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
            return Libc.GetSockOpt((int)socket, _solSocket, receive ? _soRcvBuf : _soSndBuf, &value, &length) == 0 ? value : -1;
        }

        /// <summary>SO_RCVTIMEO (struct timeval: long seconds, then microseconds as an int on macOS, a long on Linux) in milliseconds, 0 for none.</summary>
        protected int ReceiveTimeout(IntPtr socket, int soRcvTimeo, bool microsecondsAsInt)
        {
            long* timeval = stackalloc long[2];
            timeval[0] = 0;
            timeval[1] = 0;
            uint length = 2 * sizeof(long);
            if (Libc.GetSockOpt((int)socket, _solSocket, soRcvTimeo, timeval, &length) != 0) return 0;
            long micros = microsecondsAsInt ? *(int*)(timeval + 1) : timeval[1];
            long ms = timeval[0] * 1000 + (micros + 999) / 1000;
            return ms > int.MaxValue ? int.MaxValue : (int)ms;
        }
    }
}
