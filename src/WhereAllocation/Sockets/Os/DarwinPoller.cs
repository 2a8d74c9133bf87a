#nullable enable
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
    internal sealed unsafe class DarwinPoller : ReadinessPoller
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

        // EVFILT_READ reports a socket shut down for receiving at once, with EV_EOF (and its receive then returns 0 bytes
        // without a sender, which the library reads as that shutdown anyway).
        internal override bool ReportsReceiveShutDown => true;

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

        internal override SocketError Arm(AwaitedSocket socket)
        {
            // Disposed: nothing to arm. The engine's sweep (or the next try) reports it to the waiting operation.
            if (!SocketHandles.TryHold(socket.Socket, out HeldHandle held)) return SocketError.Success;
            using (held)
            {
                IntPtr descriptor = held.Raw;
                Libc.KEvent* changes = stackalloc Libc.KEvent[2];
                int count = 0;
                if (socket.ArmedRead) Change(&changes[count++], descriptor, FilterRead, EvAdd | EvOneShot, socket.Token);
                if (socket.ArmedWrite) Change(&changes[count++], descriptor, FilterWrite, EvAdd | EvOneShot, socket.Token);
                if (count == 0) return SocketError.Success;
                if (Libc.KEventCall(_queue, changes, count, null, 0, null) < 0) return _calls.LastError();
                socket.InSet = true;
                return SocketError.Success;
            }
        }

        internal override void Remove(AwaitedSocket socket)
        {
            if (!SocketHandles.TryHold(socket.Socket, out HeldHandle held)) return; // closed: it left the queue by itself
            using (held)
            {
                // One call per filter: a filter that is not there (ENOENT) must not keep the other from going.
                Libc.KEvent change;
                Change(&change, held.Raw, FilterRead, EvDelete, socket.Token);
                Libc.KEventCall(_queue, &change, 1, null, 0, null);
                Change(&change, held.Raw, FilterWrite, EvDelete, socket.Token);
                Libc.KEventCall(_queue, &change, 1, null, 0, null);
            }
        }

        internal override int Wait(WaitingSockets waiting, int timeoutMilliseconds, out SocketError error)
        {
            Libc.TimeSpec timeout;
            timeout.Seconds = timeoutMilliseconds / 1000;
            timeout.Nanoseconds = (nint)(timeoutMilliseconds % 1000) * 1_000_000;
            return _calls.WaitResult(Libc.KEventCall(_queue, null, 0, _events, Capacity, timeoutMilliseconds < 0 ? null : &timeout), out error);
        }

        internal override void Report(int index, out long token, out Readiness events)
        {
            Libc.KEvent* ev = _events + index;
            token = (long)ev->UserData;
            events = ev->Filter == FilterRead ? Readiness.Read : ev->Filter == FilterWrite ? Readiness.Write : Readiness.None;
            if ((ev->Flags & EvError) != 0) events |= Readiness.Error;  // the socket (or the arming) failed: the waiting call tells how
            // The socket was shut down: EVFILT_READ says EV_EOF once it cannot receive, EVFILT_WRITE once it cannot send (XNU's
            // filt_soread and filt_sowrite). A receive-only shutdown ends the waiting receive, not a send, as EPOLLRDHUP on Linux.
            if ((ev->Flags & EvEof) != 0) events |= ev->Filter == FilterRead ? Readiness.ReadHangUp : Readiness.HangUp;
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
