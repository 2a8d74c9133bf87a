#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Windows: WSAPoll over a set rebuilt for every wait (<see cref="RebuiltSetPoller"/>), entry 0 the wake-up socket.
    /// The native path's readiness on Windows, for the awaitable calls.
    /// </summary>
    /// <remarks>
    /// Why WSAPoll and not an I/O completion port: a completion port completes overlapped calls, so every waiting
    /// receive would keep its buffer and a sockaddr pinned in the OS until it completes, and the synchronous fast
    /// path (a datagram already queued costs one call, no wait) would be a second way beside it. WSAPoll reports
    /// readiness, as epoll and kqueue do, so the same receive runs on every OS. Each entry's handle is read when the set
    /// is built (a socket closed by then is not polled; see the base class). Run by this project's CI under Wine.
    /// </remarks>
    internal sealed unsafe class WindowsPoller : RebuiltSetPoller
    {
        private const short PollRdNorm = 0x0100;
        private const short PollWrNorm = 0x0010;
        private const short PollErr = 0x0001;
        private const short PollHup = 0x0002;
        private const short PollNval = 0x0004;

        private readonly WindowsSocketCalls _calls;

        // The set of one wait: entry 0 the wake-up socket, then the sockets added, and where each of this wait's entries
        // went in it (a closed socket is not added). The engine thread's own.
        private Ws2_32.WsaPollFd* _set;
        private int _setCapacity;
        private int _setCount;
        private int[] _positions = new int[16];

        // The wake-up socket's handle, with a reference held while the poller is open (used bare by every wait).
        private SafeHandle? _wakeHandle;
        private readonly byte[] _wakeAddress = new byte[SockaddrLayout.StorageSize];
        private int _wakeAddressLength;

        /// <summary>A poller that waits with <paramref name="calls"/>' WSAPoll.</summary>
        internal WindowsPoller(WindowsSocketCalls calls)
        {
            _calls = calls;
        }

        internal override string Mechanism => "WSAPoll";

        private protected override SocketError OpenSet()
        {
            SafeHandle handle = SocketHandles.Get(WakeSocket!);
            bool added = false;
            handle.DangerousAddRef(ref added); // released by CloseSet
            _wakeHandle = handle;
            _wakeAddressLength = EndPointKey.FromIPEndPoint(WakeTarget!).WriteSockaddr(_wakeAddress, SockaddrFormat.Windows);
            _setCapacity = 16;
            _set = (Ws2_32.WsaPollFd*)Marshal.AllocHGlobal(_setCapacity * sizeof(Ws2_32.WsaPollFd)); // freed by CloseSet
            return SocketError.Success;
        }

        private protected override void CloseSet()
        {
            _wakeHandle?.DangerousRelease();
            _wakeHandle = null;
            if (_set != null) Marshal.FreeHGlobal((IntPtr)_set);
            _set = null;
        }

        internal override void Wake()
        {
            // A reference on the wake-up socket's handle for the send: the engine's thread may close the poller meanwhile.
            SafeHandle? handle = _wakeHandle;
            if (handle == null) return;
            bool held = false;
            try
            {
                handle.DangerousAddRef(ref held);
                byte one = 1;
                fixed (byte* address = _wakeAddress)
                    Ws2_32.SendTo(handle.DangerousGetHandle(), &one, 1, 0, address, _wakeAddressLength); // a full queue of wake-ups wakes as well
            }
            catch (ObjectDisposedException)
            {
                // Closed meanwhile: nothing waits to be woken.
            }
            finally
            {
                if (held) handle.DangerousRelease();
            }
        }

        private protected override void BeginSet(int capacity)
        {
            if (capacity + 1 > _setCapacity)
            {
                // Only when more sockets wait at once than ever before in this process.
                int grown = _setCapacity;
                while (grown < capacity + 1) grown *= 2;
                Marshal.FreeHGlobal((IntPtr)_set);
                _set = (Ws2_32.WsaPollFd*)Marshal.AllocHGlobal(grown * sizeof(Ws2_32.WsaPollFd)); // freed by CloseSet
                _setCapacity = grown;
            }
            if (_positions.Length < capacity) _positions = new int[capacity * 2];
            _set[0].Fd = _wakeHandle!.DangerousGetHandle();
            _set[0].Events = PollRdNorm;
            _set[0].Revents = 0;
            _setCount = 1;
        }

        private protected override void AddToSet(int index, Socket socket, bool read, bool write)
        {
            Ws2_32.WsaPollFd* entry = _set + _setCount;
            entry->Fd = SocketHandles.Get(socket).DangerousGetHandle(); // open when the set was built: see the remarks
            entry->Events = (short)((read ? PollRdNorm : 0) | (write ? PollWrNorm : 0));
            entry->Revents = 0;
            _positions[index] = _setCount++;
        }

        private protected override int PollSet(int timeoutMilliseconds, out SocketError error)
        {
            // A socket of the set closed under the wait comes back as POLLNVAL in its own entry; the call as a whole
            // fails only for a fault of the set itself.
            int ready = _calls.PollSet(_set, _setCount, timeoutMilliseconds, out error);
            if (ready < 0 && error == SocketError.Interrupted) return 0;
            if (ready > 0 && (_set[0].Revents & PollRdNorm) != 0) DrainWake();
            return ready;
        }

        private protected override Readiness ResultOf(int index)
        {
            short revents = _set[_positions[index]].Revents;
            Readiness events = Readiness.None;
            if ((revents & PollRdNorm) != 0) events |= Readiness.Read;
            if ((revents & PollWrNorm) != 0) events |= Readiness.Write;
            if ((revents & PollErr) != 0) events |= Readiness.Error;
            if ((revents & (PollHup | PollNval)) != 0) events |= Readiness.HangUp;
            return events;
        }

        private protected override void EndSet()
        {
            _setCount = 0;
        }

        private void DrainWake()
        {
            byte* one = stackalloc byte[1];
            byte* from = stackalloc byte[SockaddrLayout.StorageSize];
            IntPtr wake = _wakeHandle!.DangerousGetHandle();
            while (true)
            {
                int length = SockaddrLayout.StorageSize;
                // A non-blocking socket: recvfrom fails (WSAEWOULDBLOCK) once the wake-ups are all read.
                if (Ws2_32.RecvFrom(wake, one, 1, 0, from, &length) < 0) return;
            }
        }
    }
}
