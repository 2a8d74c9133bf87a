#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Linux: one epoll set the kernel keeps, each socket added once (EPOLL_CTL_ADD) and re-armed per wait with
    /// EPOLL_CTL_MOD and EPOLLONESHOT. Armed for reading, it asks for EPOLLRDHUP too: a socket shut down for receiving
    /// (readable for ever, with nothing to read) is reported at once as such, so the tries of a wrapper whose waits have
    /// received ask no more. A descriptor armed from any thread joins a wait already in progress, so no wake-up is ever
    /// needed, and one closed by its owner leaves the set by itself. The events are read from a native
    /// block laid out for the architecture: struct epoll_event is packed on x86 and x86-64 (12 bytes) and naturally
    /// aligned elsewhere (16 bytes).
    /// </summary>
    internal sealed unsafe class LinuxPoller : ReadinessPoller
    {
        private const int EpollCloExec = 0x80000;
        private const int CtlAdd = 1;
        private const int CtlDel = 2;
        private const int CtlMod = 3;
        private const uint EpollIn = 0x1;
        private const uint EpollOut = 0x4;
        private const uint EpollErr = 0x8;
        private const uint EpollHup = 0x10;
        private const uint EpollRdHup = 0x2000;
        private const uint EpollOneShot = 1u << 30;
        private const int ENoEnt = 2;
        private const int EExist = 17;

        private static readonly bool s_packed =
            RuntimeInformation.ProcessArchitecture == Architecture.X64 || RuntimeInformation.ProcessArchitecture == Architecture.X86;

        /// <summary>sizeof(struct epoll_event) in this process.</summary>
        internal static readonly int EventSize = s_packed ? 12 : 16;

        /// <summary>offsetof(struct epoll_event, data) in this process.</summary>
        internal static readonly int DataOffset = s_packed ? 4 : 8;

        private readonly PosixSocketCalls _calls;
        private int _epoll = -1;
        private IntPtr _events;

        /// <summary>A poller whose errors <paramref name="calls"/> (this OS's socket calls) map.</summary>
        internal LinuxPoller(PosixSocketCalls calls)
        {
            _calls = calls;
        }

        internal override string Mechanism => "epoll";

        internal override bool ReportsReceiveShutDown => true;

        internal override SocketError Open()
        {
            _epoll = Libc.EpollCreate1(EpollCloExec);
            if (_epoll < 0) return OpenError(_calls, Marshal.GetLastWin32Error());
            _events = Marshal.AllocHGlobal(Capacity * EventSize); // freed by Close
            return SocketError.Success;
        }

        /// <summary>
        /// What a failed epoll_create1 or kqueue reports: EMFILE and ENFILE (24, 23 on Linux and macOS alike: out of
        /// descriptors) as TooManyOpenSockets, as the runtime reports them for a socket; anything else as mapped.
        /// </summary>
        internal static SocketError OpenError(PosixSocketCalls calls, int errno) =>
            errno == 23 || errno == 24 ? SocketError.TooManyOpenSockets : calls.ErrorOf(errno);

        internal override void Close()
        {
            if (_epoll >= 0) Libc.Close(_epoll);
            _epoll = -1;
            if (_events != IntPtr.Zero) Marshal.FreeHGlobal(_events);
            _events = IntPtr.Zero;
        }

        internal override SocketError Arm(AwaitedSocket socket)
        {
            // Disposed: nothing to arm. The engine's sweep (or the next try) reports it to the waiting operation.
            if (!SocketHandles.TryHold(socket.Socket, out HeldHandle held)) return SocketError.Success;
            using (held)
            {
                int descriptor = (int)held.Raw;
                byte* ev = stackalloc byte[16];
                *(uint*)ev = (socket.ArmedRead ? EpollIn | EpollRdHup : 0) | (socket.ArmedWrite ? EpollOut : 0) | EpollOneShot;
                *(long*)(ev + DataOffset) = socket.Token;
                int op = socket.InSet ? CtlMod : CtlAdd;
                if (Libc.EpollCtl(_epoll, op, descriptor, ev) != 0)
                {
                    int errno = Marshal.GetLastWin32Error();
                    // Either way round, the set knows better than the flag: retry with the other operation.
                    if (errno == EExist) op = CtlMod;
                    else if (errno == ENoEnt) op = CtlAdd;
                    else return _calls.ErrorOf(errno);
                    if (Libc.EpollCtl(_epoll, op, descriptor, ev) != 0) return _calls.LastError();
                }
                socket.InSet = true;
                return SocketError.Success;
            }
        }

        internal override void Remove(AwaitedSocket socket)
        {
            if (!SocketHandles.TryHold(socket.Socket, out HeldHandle held)) return; // closed: it left the set by itself
            using (held)
            {
                // Linux before 2.6.9 wanted a non-null event even for EPOLL_CTL_DEL.
                byte* ev = stackalloc byte[16];
                Libc.EpollCtl(_epoll, CtlDel, (int)held.Raw, ev);
            }
        }

        internal override int Wait(WaitingSockets waiting, int timeoutMilliseconds, out SocketError error)
        {
            return _calls.WaitResult(Libc.EpollWait(_epoll, (byte*)_events, Capacity, timeoutMilliseconds), out error);
        }

        internal override void Report(int index, out long token, out Readiness events)
        {
            byte* ev = (byte*)_events + index * EventSize;
            uint flags = *(uint*)ev;
            token = *(long*)(ev + DataOffset);
            events = Readiness.None;
            if ((flags & EpollIn) != 0) events |= Readiness.Read;
            if ((flags & EpollOut) != 0) events |= Readiness.Write;
            if ((flags & EpollErr) != 0) events |= Readiness.Error;
            if ((flags & EpollHup) != 0) events |= Readiness.HangUp;
            if ((flags & EpollRdHup) != 0) events |= Readiness.ReadHangUp;
        }
    }
}
