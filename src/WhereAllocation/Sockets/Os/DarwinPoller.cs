using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// macOS (and the other Apple systems): one kqueue, each direction a filter of its own (EVFILT_READ,
    /// EVFILT_WRITE) added with EV_ONESHOT per wait, so that the two directions of a socket never need merging.
    /// Changes from any thread join a kevent wait already in progress: no wake-up is needed. A socket closed
    /// by its owner leaves the queue by itself. Implemented from sys/event.h; not run by this project's CI,
    /// which has no Apple machine.
    /// </summary>
    internal sealed unsafe class DarwinPoller : OsPoller
    {
        private const short FilterRead = -1;
        private const short FilterWrite = -2;
        private const ushort EvAdd = 0x1;
        private const ushort EvDelete = 0x2;
        private const ushort EvOneShot = 0x10;
        private const ushort EvError = 0x4000;
        private const ushort EvEof = 0x8000;

        private readonly PosixSocketCalls _calls;
        private int _queue = -1;
        private Libc.KEvent* _events;

        /// <summary>A poller whose errors <paramref name="calls"/> (this OS's socket calls) map.</summary>
        internal DarwinPoller(PosixSocketCalls calls)
        {
            _calls = calls;
        }

        internal override string Mechanism => "kqueue";

        internal override SocketError Open()
        {
            _queue = Libc.KQueue();
            if (_queue < 0) return LinuxPoller.OpenError(_calls, Marshal.GetLastWin32Error());
            _events = (Libc.KEvent*)Marshal.AllocHGlobal(Capacity * sizeof(Libc.KEvent)); // freed by Close
            return SocketError.Success;
        }

        internal override void Close()
        {
            if (_queue >= 0) Libc.Close(_queue);
            _queue = -1;
            if (_events != null) Marshal.FreeHGlobal((IntPtr)_events);
            _events = null;
        }

        internal override SocketError Arm(IntPtr socket, long token, bool read, bool write, ref bool added)
        {
            Libc.KEvent* changes = stackalloc Libc.KEvent[2];
            int count = 0;
            if (read) Change(&changes[count++], socket, FilterRead, EvAdd | EvOneShot, token);
            if (write) Change(&changes[count++], socket, FilterWrite, EvAdd | EvOneShot, token);
            if (count == 0) return SocketError.Success;
            if (Libc.KEventCall(_queue, changes, count, null, 0, null) < 0) return _calls.LastError();
            added = true;
            return SocketError.Success;
        }

        internal override void Remove(IntPtr socket, long token)
        {
            // One call per filter: a filter that is not there (ENOENT) must not keep the other from going.
            Libc.KEvent change;
            Change(&change, socket, FilterRead, EvDelete, token);
            Libc.KEventCall(_queue, &change, 1, null, 0, null);
            Change(&change, socket, FilterWrite, EvDelete, token);
            Libc.KEventCall(_queue, &change, 1, null, 0, null);
        }

        internal override int Wait(int timeoutMilliseconds, out SocketError error)
        {
            Libc.TimeSpec timeout;
            timeout.Seconds = timeoutMilliseconds / 1000;
            timeout.Nanoseconds = (nint)(timeoutMilliseconds % 1000) * 1_000_000;
            return _calls.WaitResult(Libc.KEventCall(_queue, null, 0, _events, Capacity, timeoutMilliseconds < 0 ? null : &timeout), out error);
        }

        internal override void Report(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp)
        {
            Libc.KEvent* ev = _events + index;
            token = (long)ev->UserData;
            readable = ev->Filter == FilterRead;
            writable = ev->Filter == FilterWrite;
            error = (ev->Flags & EvError) != 0;  // the socket (or the arming) failed: the waiting call tells how
            hungUp = (ev->Flags & EvEof) != 0;   // the socket was shut down
        }

        private static void Change(Libc.KEvent* change, IntPtr socket, short filter, ushort flags, long token)
        {
            change->Ident = (nuint)(nint)socket;
            change->Filter = filter;
            change->Flags = flags;
            change->FilterFlags = 0;
            change->Data = 0;
            change->UserData = (void*)token;
        }
    }
}
