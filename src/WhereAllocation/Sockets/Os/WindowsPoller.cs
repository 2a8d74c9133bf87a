using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Windows: WSAPoll over the sockets armed now, rebuilt for every wait, plus a loopback socket of the poller's
    /// own that a one-byte datagram wakes when another thread arms a socket. One-shot arming is kept here: a socket
    /// that is reported leaves the set until it is armed again.
    /// </summary>
    /// <remarks>
    /// Why WSAPoll and not an I/O completion port: a completion port completes overlapped calls, so every waiting
    /// receive would keep its buffer and a sockaddr pinned in the OS until it completes, and the synchronous fast
    /// path (a datagram already queued costs one call, no wait) would be a second way beside it. WSAPoll reports
    /// readiness, as epoll and kqueue do, so the same receive runs on every OS. Its cost grows with the number of
    /// sockets waiting at once (the set is passed per wait); a server waits on few. Run by this project's CI under Wine.
    /// </remarks>
    internal sealed unsafe class WindowsPoller : OsPoller
    {
        private const short PollRdNorm = 0x0100;
        private const short PollWrNorm = 0x0010;
        private const short PollErr = 0x0001;
        private const short PollHup = 0x0002;
        private const short PollNval = 0x0004;

        private readonly object _lock = new object();

        // The armed sockets, under _lock: handle, token, the directions armed, and a count of arms so that a report
        // disarms only the arming it answers (a socket armed again meanwhile stays armed).
        private IntPtr[] _sockets = new IntPtr[8];
        private long[] _tokens = new long[8];
        private short[] _wanted = new short[8];
        private int[] _armings = new int[8];
        private int _count;
        private int _lastArming;

        // The set of one wait (slot 0: the wake socket), and its reports: the waiting thread's own.
        private Ws2_32.WsaPollFd* _set;
        private int _setCapacity;
        private long[] _setTokens = new long[Capacity];
        private int[] _setArmings = new int[Capacity];
        private long[] _reportTokens = new long[Capacity];
        private short[] _reportEvents = new short[Capacity];

        private Socket? _wake;
        private SafeHandle? _wakeHandle;
        private IntPtr _wakeRaw;
        private readonly byte[] _wakeAddress = new byte[SockaddrLayout.StorageSize];
        private int _wakeAddressLength;

        internal override string Mechanism => "WSAPoll";

        internal override bool ArmNeedsWake => true;

        internal override SocketError Open()
        {
            try
            {
                var wake = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                wake.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                wake.Blocking = false;
                SafeHandle handle = SocketHandles.Get(wake);
                bool added = false;
                handle.DangerousAddRef(ref added); // held until Close: the wake socket's handle is used bare by every wait
                _wake = wake;
                _wakeHandle = handle;
                _wakeRaw = handle.DangerousGetHandle();
                _wakeAddressLength = EndPointKey.FromIPEndPoint((IPEndPoint)wake.LocalEndPoint!).WriteSockaddr(_wakeAddress, SockaddrFormat.Windows);
            }
            catch (SocketException e)
            {
                return e.SocketErrorCode;
            }
            _setCapacity = Capacity + 1;
            _set = (Ws2_32.WsaPollFd*)Marshal.AllocHGlobal(_setCapacity * sizeof(Ws2_32.WsaPollFd)); // freed by Close
            return SocketError.Success;
        }

        internal override void Close()
        {
            if (_wakeHandle != null) _wakeHandle.DangerousRelease();
            _wake?.Dispose();
            _wake = null;
            _wakeHandle = null;
            _wakeRaw = IntPtr.Zero;
            if (_set != null) Marshal.FreeHGlobal((IntPtr)_set);
            _set = null;
            lock (_lock) _count = 0;
        }

        internal override SocketError Arm(IntPtr socket, long token, bool read, bool write, ref bool added)
        {
            short wanted = (short)((read ? PollRdNorm : 0) | (write ? PollWrNorm : 0));
            lock (_lock)
            {
                int i = IndexOf(token);
                if (i < 0)
                {
                    if (_count == _sockets.Length) Grow();
                    i = _count++;
                    _tokens[i] = token;
                }
                _sockets[i] = socket;
                _wanted[i] = wanted;
                _armings[i] = ++_lastArming;
            }
            added = true;
            return SocketError.Success;
        }

        internal override void Remove(IntPtr socket, long token)
        {
            lock (_lock)
            {
                int i = IndexOf(token);
                if (i >= 0) RemoveAt(i);
            }
        }

        internal override void Wake()
        {
            byte one = 1;
            fixed (byte* address = _wakeAddress)
                Ws2_32.SendTo(_wakeRaw, &one, 1, 0, address, _wakeAddressLength);
        }

        internal override int Wait(int timeoutMilliseconds, out SocketError error)
        {
            // The set: the wake socket, then every armed socket, however many (WSAPoll takes any number; the set grows,
            // on this thread, only when more sockets wait at once than ever before). Every wait polls all of them:
            // none is left behind another, whatever its place in the list.
            int polled = 1;
            lock (_lock)
            {
                if (_count + 1 > _setCapacity) GrowSet(_count + 1);
                _set[0].Fd = _wakeRaw;
                _set[0].Events = PollRdNorm;
                _set[0].Revents = 0;
                for (int i = 0; i < _count; i++)
                {
                    _set[polled].Fd = _sockets[i];
                    _set[polled].Events = _wanted[i];
                    _set[polled].Revents = 0;
                    _setTokens[polled - 1] = _tokens[i];
                    _setArmings[polled - 1] = _armings[i];
                    polled++;
                }
            }
            // A socket of the set closed under the wait comes back as POLLNVAL in its own entry; the call as a
            // whole fails only for a fault of the set itself.
            int ready = Ws2_32.WsaPoll(_set, (uint)polled, timeoutMilliseconds);
            if (ready < 0)
            {
                error = (SocketError)Marshal.GetLastWin32Error();
                return error == SocketError.Interrupted ? 0 : -1;
            }
            error = SocketError.Success;
            if ((_set[0].Revents & PollRdNorm) != 0) DrainWake();
            int reports = 0;
            lock (_lock)
            {
                for (int k = 1; k < polled; k++)
                {
                    short revents = _set[k].Revents;
                    if (revents == 0) continue;
                    long token = _setTokens[k - 1];
                    _reportTokens[reports] = token;
                    _reportEvents[reports] = revents;
                    reports++;
                    int i = IndexOf(token);
                    if (i >= 0 && _armings[i] == _setArmings[k - 1]) RemoveAt(i); // one-shot: reported, so disarmed
                }
            }
            return reports;
        }

        internal override void Report(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp)
        {
            token = _reportTokens[index];
            short events = _reportEvents[index];
            readable = (events & PollRdNorm) != 0;
            writable = (events & PollWrNorm) != 0;
            error = (events & PollErr) != 0;
            hungUp = (events & (PollHup | PollNval)) != 0;
        }

        private void GrowSet(int needed)
        {
            int capacity = _setCapacity;
            while (capacity < needed) capacity *= 2;
            Marshal.FreeHGlobal((IntPtr)_set);
            _set = (Ws2_32.WsaPollFd*)Marshal.AllocHGlobal(capacity * sizeof(Ws2_32.WsaPollFd)); // freed by Close
            _setCapacity = capacity;
            _setTokens = new long[capacity];
            _setArmings = new int[capacity];
            _reportTokens = new long[capacity];
            _reportEvents = new short[capacity];
        }

        internal override void Forget(long token) => Remove(IntPtr.Zero, token);

        private void DrainWake()
        {
            byte* one = stackalloc byte[1];
            byte* from = stackalloc byte[SockaddrLayout.StorageSize];
            while (true)
            {
                int length = SockaddrLayout.StorageSize;
                // A non-blocking socket: recvfrom fails (WSAEWOULDBLOCK) once the wake-ups are all read.
                if (Ws2_32.RecvFrom(_wakeRaw, one, 1, 0, from, &length) < 0) return;
            }
        }

        private int IndexOf(long token)
        {
            for (int i = 0; i < _count; i++)
                if (_tokens[i] == token) return i;
            return -1;
        }

        private void RemoveAt(int i)
        {
            int last = --_count;
            _sockets[i] = _sockets[last];
            _tokens[i] = _tokens[last];
            _wanted[i] = _wanted[last];
            _armings[i] = _armings[last];
        }

        private void Grow()
        {
            // Only when more sockets wait at once than ever before in this process.
            Array.Resize(ref _sockets, _sockets.Length * 2);
            Array.Resize(ref _tokens, _tokens.Length * 2);
            Array.Resize(ref _wanted, _wanted.Length * 2);
            Array.Resize(ref _armings, _armings.Length * 2);
        }
    }
}
