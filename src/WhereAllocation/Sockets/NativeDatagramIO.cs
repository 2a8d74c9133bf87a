using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// <see cref="DatagramPath.Native"/>: one datagram per system call, straight to the OS on the socket's
    /// descriptor. The sender's sockaddr lands in a stack buffer and is parsed into an <see cref="EndPointKey"/>;
    /// the payload is pinned with <c>fixed</c>. Nothing is allocated unless an error is thrown.
    /// </summary>
    internal static unsafe class NativeDatagramIO
    {
        // How long one poll() waits before checking whether the socket was disposed meanwhile: a
        // descriptor closed by another thread does not wake a poll or recv that is blocked on it.
        private const int WaitSliceMilliseconds = 100;

        internal static bool IsSupported => s_supported;

        private static readonly bool s_supported = Probe();

        private static bool Probe()
        {
            if (!SocketHandles.Available) return false;
            switch (Platform.Os)
            {
                case OsFamily.Linux:
                case OsFamily.Darwin:
                    try
                    {
                        Libc.GetPid();
                        return true;
                    }
                    catch (DllNotFoundException) { return false; }
                    catch (EntryPointNotFoundException) { return false; }
                case OsFamily.Windows:
                    return true;
                default:
                    return false;
            }
        }

        internal static SockaddrFormat Format => Platform.Os == OsFamily.Darwin ? SockaddrFormat.Bsd : Platform.Os == OsFamily.Windows ? SockaddrFormat.Windows : SockaddrFormat.Linux;

        /// <summary>
        /// Receives one datagram. With <paramref name="wait"/> false, returns false at once when none is
        /// queued. With <paramref name="wait"/> true it blocks (honouring the socket's receive timeout)
        /// when the socket is blocking, and throws WouldBlock when it is not, as the runtime does.
        /// <paramref name="knownEmpty"/>: the caller has just found the queue empty (and waits), so the
        /// first system call is the wait, not another receive.
        /// </summary>
        internal static bool Receive(Socket socket, Span<byte> buffer, SocketFlags flags, bool wait, bool knownEmpty, out ReceivedDatagram datagram)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                IntPtr raw = handle.DangerousGetHandle();
                byte* address = stackalloc byte[SockaddrLayout.StorageSize];
                fixed (byte* payload = buffer)
                {
                    bool receiveFirst = !(knownEmpty && wait);
                    while (true)
                    {
                        if (receiveFirst)
                        {
                            if (TryReceiveOnce(raw, payload, buffer.Length, flags, address, out datagram, out int errno))
                                return true;
                            if (Errno.IsInterrupted(errno)) continue;
                            if (!Errno.IsWouldBlock(errno)) throw new SocketException((int)Errno.ToSocketError(errno));
                            if (!wait) return false;
                        }
                        receiveFirst = true;
                        if (!socket.Blocking) throw new SocketException((int)SocketError.WouldBlock);
                        WaitUntilReadable(socket, raw, handle);
                    }
                }
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        // What the fast receive and send return instead of a length when nothing was done.
        internal const long NothingQueued = -1; // the queue was empty (for a send: the send buffer was full)
        internal const long Interrupted = -2;   // a signal interrupted the call

        // The receive path of Linux, flattened into one frame for the common case, a datagram already queued:
        // one non-blocking recvfrom. It returns the datagram's full length (more than the buffer when it was
        // cut), NothingQueued or Interrupted, and throws for other errors. The caller then takes the general
        // path, which waits and retries. Mono pays for every call, struct copy and cache line on the way, and
        // this is what a server's receive loop runs per datagram.

        /// <summary>Into <paramref name="array"/> from <paramref name="offset"/>; the sender goes to <paramref name="into"/> as raw bytes, and a repeated sender is recognised without parsing.</summary>
        internal static long TryReceiveLinux(Socket socket, byte[] array, int offset, int size, SocketFlags flags, IPEndPointNonAlloc into)
        {
            fixed (byte* start = array) return TryReceiveLinux(socket, start + offset, size, flags, into, out _);
        }

        /// <summary>Into <paramref name="buffer"/>; the sender goes to <paramref name="into"/> when given (<paramref name="sender"/> then stays empty), else it is parsed into <paramref name="sender"/>.</summary>
        internal static long TryReceiveLinux(Socket socket, Span<byte> buffer, SocketFlags flags, IPEndPointNonAlloc? into, out EndPointKey sender)
        {
            fixed (byte* start = buffer) return TryReceiveLinux(socket, start, buffer.Length, flags, into, out sender);
        }

        private static long TryReceiveLinux(Socket socket, byte* payload, int size, SocketFlags flags, IPEndPointNonAlloc? into, out EndPointKey sender)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            long received;
            int errno = 0;
            sender = default;
            try
            {
                handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                byte* address = stackalloc byte[SockaddrLayout.StorageSize];
                uint addressLength = SockaddrLayout.StorageSize;
                int nativeFlags = ((flags & SocketFlags.Peek) != 0 ? OsConstants.MsgPeek : 0) | OsConstants.MsgDontWait | OsConstants.MsgTrunc;
                received = Libc.RecvFrom((int)handle.DangerousGetHandle(), payload, (nuint)size, nativeFlags, address, &addressLength);
                if (received < 0)
                {
                    errno = Marshal.GetLastWin32Error();
                }
                else
                {
                    int length = addressLength < SockaddrLayout.StorageSize ? (int)addressLength : SockaddrLayout.StorageSize;
                    if (into != null) into.SetCurrentFromSockaddr(new ReadOnlySpan<byte>(address, length), SockaddrFormat.Linux);
                    else EndPointKey.TryReadSockaddr(new ReadOnlySpan<byte>(address, length), SockaddrFormat.Linux, out sender);
                }
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
            if (received >= 0) return received;
            if (Errno.IsWouldBlock(errno)) return NothingQueued;
            if (Errno.IsInterrupted(errno)) return Interrupted;
            throw new SocketException((int)Errno.ToSocketError(errno));
        }

        /// <summary>
        /// One non-blocking receive on a descriptor the caller holds a reference on; the sender's sockaddr
        /// (OS layout) is left at <paramref name="address"/>, which must hold <see cref="SockaddrLayout.StorageSize"/> bytes.
        /// False with the errno (Winsock error on Windows) when nothing was received.
        /// </summary>
        internal static bool TryReceiveOnce(IntPtr raw, byte* payload, int length, SocketFlags flags, byte* address, out ReceivedDatagram datagram, out int errno)
        {
            int nativeFlags = (flags & SocketFlags.Peek) != 0 ? OsConstants.MsgPeek : 0;
            long received;
            bool truncated;
            int addressLength;
            switch (Platform.Os)
            {
                case OsFamily.Linux:
                {
                    // MSG_TRUNC makes Linux return the datagram's real length, which tells truncation apart.
                    uint len = SockaddrLayout.StorageSize;
                    received = Libc.RecvFrom((int)raw, payload, (nuint)length, nativeFlags | OsConstants.MsgDontWait | OsConstants.MsgTrunc, address, &len);
                    truncated = received > length;
                    addressLength = (int)len;
                    break;
                }
                case OsFamily.Darwin:
                {
                    // macOS has no input MSG_TRUNC; recvmsg reports truncation in msg_flags instead.
                    Libc.IoVec iov;
                    iov.Base = payload;
                    iov.Length = (nuint)length;
                    Libc.DarwinMsgHdr message = default;
                    message.Name = address;
                    message.NameLength = SockaddrLayout.StorageSize;
                    message.Iov = &iov;
                    message.IovLength = 1;
                    received = Libc.RecvMsgDarwin((int)raw, &message, nativeFlags | OsConstants.MsgDontWait);
                    truncated = (message.Flags & OsConstants.MsgTrunc) != 0;
                    addressLength = (int)message.NameLength;
                    break;
                }
                default:
                {
                    // Winsock has no per-call non-blocking flag: ask WSAPoll first, then receive.
                    Ws2_32.WsaPollFd poll;
                    poll.Fd = raw;
                    poll.Events = Ws2_32.PollRdNorm;
                    poll.Revents = 0;
                    if (Ws2_32.WsaPoll(&poll, 1, 0) == 0)
                    {
                        datagram = default;
                        errno = (int)SocketError.WouldBlock;
                        return false;
                    }
                    int len = SockaddrLayout.StorageSize;
                    received = Ws2_32.RecvFrom(raw, payload, length, nativeFlags, address, &len);
                    truncated = false;
                    if (received < 0 && Marshal.GetLastWin32Error() == (int)SocketError.MessageSize)
                    {
                        received = length;
                        truncated = true;
                    }
                    addressLength = len;
                    break;
                }
            }

            if (received < 0)
            {
                datagram = default;
                errno = Marshal.GetLastWin32Error();
                return false;
            }

            EndPointKey.TryReadSockaddr(new ReadOnlySpan<byte>(address, Math.Min(addressLength, SockaddrLayout.StorageSize)), Format, out EndPointKey sender);
            datagram = new ReceivedDatagram((int)Math.Min(received, length), truncated, sender);
            errno = 0;
            return true;
        }

        /// <summary>Sends one datagram to <paramref name="remote"/> and returns the bytes sent.</summary>
        internal static int Send(Socket socket, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey remote)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                IntPtr raw = handle.DangerousGetHandle();
                byte* address = stackalloc byte[SockaddrLayout.StorageSize];
                int addressLength = remote.WriteSockaddr(new Span<byte>(address, SockaddrLayout.StorageSize), Format);
                int nativeFlags = (flags & SocketFlags.DontRoute) != 0 ? OsConstants.MsgDontRoute : 0;
                bool blocking = socket.Blocking;
                if (!blocking && Platform.Os != OsFamily.Windows) nativeFlags |= OsConstants.MsgDontWait;
                // Not 'fixed (byte* p = buffer)': Mono 6.8 lacks ReadOnlySpan.GetPinnableReference's
                // 'ref readonly' signature and throws MissingMethodException; GetReference is safe everywhere.
                fixed (byte* payload = &MemoryMarshal.GetReference(buffer))
                {
                    while (true)
                    {
                        long sent = SendOnce(raw, payload, buffer.Length, nativeFlags, address, addressLength);
                        if (sent >= 0) return (int)sent;
                        int errno = Marshal.GetLastWin32Error();
                        if (Errno.IsInterrupted(errno)) continue;
                        // The runtime may have made the descriptor non-blocking under a blocking Socket.
                        if (blocking && Errno.IsWouldBlock(errno) && Platform.Os != OsFamily.Windows)
                        {
                            WaitUntil(socket, raw, handle, WaitFor.Write, 0);
                            continue;
                        }
                        throw new SocketException((int)Errno.ToSocketError(errno));
                    }
                }
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        /// <summary>
        /// The send path of Linux, flattened for the common case, room in the socket's send buffer: one
        /// <c>sendto</c> with MSG_DONTWAIT to <paramref name="to"/> (a key of the socket's family, not empty). Returns the bytes sent, or <see cref="NothingQueued"/> when the send
        /// buffer is full and <see cref="Interrupted"/> for EINTR, so that the caller takes the general path,
        /// which waits on a blocking socket and throws WouldBlock on a non-blocking one. Other errors throw.
        /// </summary>
        internal static long TrySendLinux(Socket socket, ReadOnlySpan<byte> buffer, SocketFlags flags, in EndPointKey to)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            long sent;
            int errno = 0;
            try
            {
                handle.DangerousAddRef(ref added);
                byte* address = stackalloc byte[SockaddrLayout.StorageSize];
                int addressLength = to.WriteSockaddr(new Span<byte>(address, SockaddrLayout.StorageSize), SockaddrFormat.Linux);
                int nativeFlags = ((flags & SocketFlags.DontRoute) != 0 ? OsConstants.MsgDontRoute : 0) | OsConstants.MsgDontWait;
                // Not 'fixed (byte* p = buffer)': Mono 6.8 lacks ReadOnlySpan's 'ref readonly' GetPinnableReference.
                fixed (byte* payload = &MemoryMarshal.GetReference(buffer))
                {
                    sent = (long)Libc.SendTo((int)handle.DangerousGetHandle(), payload, (nuint)buffer.Length, nativeFlags, address, (uint)addressLength);
                }
                if (sent < 0) errno = Marshal.GetLastWin32Error();
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
            if (sent >= 0) return sent;
            if (Errno.IsWouldBlock(errno)) return NothingQueued;
            if (Errno.IsInterrupted(errno)) return Interrupted;
            throw new SocketException((int)Errno.ToSocketError(errno));
        }

        /// <summary>
        /// One sendto on a descriptor the caller holds a reference on, with OS flags and an OS sockaddr.
        /// Returns the bytes sent, or a negative value with the error in <see cref="Marshal.GetLastWin32Error"/>.
        /// </summary>
        internal static long SendOnce(IntPtr raw, byte* payload, int length, int nativeFlags, byte* address, int addressLength)
        {
            return Platform.Os == OsFamily.Windows
                ? Ws2_32.SendTo(raw, payload, length, nativeFlags, address, addressLength)
                : (long)Libc.SendTo((int)raw, payload, (nuint)length, nativeFlags, address, (uint)addressLength);
        }

        /// <summary>True when an IPv6 socket accepts IPv4 peers (IPV6_V6ONLY is 0). One system call.</summary>
        internal static bool IsDualMode(Socket socket)
        {
            SafeHandle handle = SocketHandles.Get(socket);
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                int value = 1;
                if (Platform.Os == OsFamily.Windows)
                {
                    int len = sizeof(int);
                    if (Ws2_32.GetSockOpt(handle.DangerousGetHandle(), OsConstants.IpProtoIPv6, OsConstants.IPv6V6Only, (byte*)&value, &len) != 0) return false;
                }
                else
                {
                    uint len = sizeof(int);
                    if (Libc.GetSockOpt((int)handle.DangerousGetHandle(), OsConstants.IpProtoIPv6, OsConstants.IPv6V6Only, &value, &len) != 0) return false;
                }
                return value == 0;
            }
            finally
            {
                if (added) handle.DangerousRelease();
            }
        }

        private static void WaitUntilReadable(Socket socket, IntPtr raw, SafeHandle handle)
        {
            // SO_RCVTIMEO is read natively (the managed getter boxes); Winsock's layout differs, so there the
            // wait has no timeout, as before.
            WaitUntil(socket, raw, handle, WaitFor.Read, Platform.Os == OsFamily.Windows ? 0 : ReceiveTimeoutMilliseconds(raw));
        }

        /// <summary>Polls in short slices until the descriptor is ready, the socket is disposed, or the timeout (0: none) passes, which throws TimedOut.</summary>
        private static void WaitUntil(Socket socket, IntPtr raw, SafeHandle handle, WaitFor what, int timeoutMilliseconds)
        {
            if (!TryWaitUntil(socket, raw, handle, what, timeoutMilliseconds > 0 ? timeoutMilliseconds : -1))
                throw new SocketException((int)SocketError.TimedOut);
        }

        internal enum WaitFor
        {
            Read,
            Write,
        }

        /// <summary>
        /// Polls (WSAPoll on Windows) in short slices until the descriptor is ready (true), the timeout
        /// passes (false; a negative timeout never passes), or the socket is disposed (ObjectDisposedException).
        /// Allocates nothing unless it throws.
        /// </summary>
        /// <exception cref="SocketException">Shutdown: the socket was shut down, so nothing will ever come.</exception>
        internal static bool TryWaitUntil(Socket socket, IntPtr raw, SafeHandle handle, WaitFor what, int timeoutMilliseconds)
        {
            long start = Stopwatch.GetTimestamp();
            while (true)
            {
                int slice = WaitSliceMilliseconds;
                if (timeoutMilliseconds >= 0)
                {
                    long elapsed = (Stopwatch.GetTimestamp() - start) * 1000 / Stopwatch.Frequency;
                    if (elapsed >= timeoutMilliseconds) return false;
                    slice = (int)Math.Min(slice, timeoutMilliseconds - elapsed);
                }
                int r;
                bool hungUp;
                if (Platform.Os == OsFamily.Windows)
                {
                    Ws2_32.WsaPollFd wsaPoll;
                    wsaPoll.Fd = raw;
                    wsaPoll.Events = what == WaitFor.Read ? Ws2_32.PollRdNorm : Ws2_32.PollWrNorm;
                    wsaPoll.Revents = 0;
                    r = Ws2_32.WsaPoll(&wsaPoll, 1, slice);
                    hungUp = (wsaPoll.Revents & (Ws2_32.PollHup | Ws2_32.PollNval)) != 0;
                }
                else
                {
                    Libc.PollFd poll;
                    poll.Fd = (int)raw;
                    poll.Events = what == WaitFor.Read ? OsConstants.PollIn : OsConstants.PollOut;
                    poll.Revents = 0;
                    r = Libc.Poll(&poll, 1, slice);
                    hungUp = (poll.Revents & (OsConstants.PollHup | OsConstants.PollNval)) != 0;
                }
                if (r < 0)
                {
                    int errno = Marshal.GetLastWin32Error();
                    if (!Errno.IsInterrupted(errno)) throw new SocketException((int)Errno.ToSocketError(errno));
                }
                if (r > 0 && !hungUp) return true; // ready, or an error the next call will report
                ThrowIfDisposed(socket, handle);
                // CoreCLR's Dispose shuts the socket down (POLLHUP) while a call still holds its handle, and recv
                // then keeps saying EAGAIN: a hang-up must end the wait, or the caller would spin.
                if (hungUp) throw new SocketException((int)SocketError.Shutdown);
            }
        }

        /// <summary>
        /// Throws ObjectDisposedException once <paramref name="socket"/> is disposed. SafeHandle.IsClosed alone
        /// cannot tell while the caller holds a reference (the handle closes when the last reference goes), so
        /// the Socket's own disposed flag is read through Available, which checks it first on Mono and CoreCLR.
        /// </summary>
        private static void ThrowIfDisposed(Socket socket, SafeHandle handle)
        {
            if (handle.IsClosed) throw new ObjectDisposedException(typeof(Socket).FullName);
            try
            {
                _ = socket.Available;
            }
            catch (SocketException)
            {
                // An error of a live socket: the next receive or send reports it.
            }
        }

        /// <summary>SO_RCVTIMEO in milliseconds, 0 for none. Read natively: the managed getter boxes.</summary>
        private static int ReceiveTimeoutMilliseconds(IntPtr raw)
        {
            long* timeval = stackalloc long[2];
            timeval[0] = 0;
            timeval[1] = 0;
            uint len = 2 * sizeof(long);
            if (Libc.GetSockOpt((int)raw, OsConstants.SolSocket, OsConstants.SoRcvTimeo, timeval, &len) != 0) return 0;
            long seconds = timeval[0];
            // struct timeval: long tv_usec on Linux, int tv_usec (then padding) on macOS.
            long micros = Platform.Os == OsFamily.Darwin ? *(int*)(timeval + 1) : timeval[1];
            long ms = seconds * 1000 + (micros + 999) / 1000;
            return ms > int.MaxValue ? int.MaxValue : (int)ms;
        }
    }
}
