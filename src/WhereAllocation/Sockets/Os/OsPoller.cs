using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// One operating system's readiness mechanism, as the awaitable receive and send use it (see
    /// <see cref="ReadinessPoller"/>): a set of sockets, each armed for one readiness report at a time, and a wait
    /// for the reports. Exactly one subclass per OS (<see cref="LinuxPoller"/>: epoll, <see cref="DarwinPoller"/>:
    /// kqueue, <see cref="WindowsPoller"/>: WSAPoll), made by <see cref="OsSocketCalls.CreatePoller"/>.
    /// </summary>
    /// <remarks>
    /// <para>Arming is one-shot: a socket armed for reading (and/or writing) is reported once when it is readable
    /// (writable), has an error pending or was hung up, and is then disarmed until it is armed again. One-shot, not
    /// level- or edge-triggered, so that a socket whose receiver keeps finding datagrams queued (and so never waits)
    /// costs the waiting thread nothing: it is woken only for sockets someone waits on.</para>
    /// <para>Each socket carries a 64-bit token chosen by the caller, reported back with its events. Every member
    /// but <see cref="Arm"/>, <see cref="Remove"/> and <see cref="Wake"/> is called by the one waiting thread only;
    /// those three may be called from any thread, on a descriptor the caller holds a reference on. Nothing here
    /// allocates after <see cref="Open"/>, and nothing throws for an error the OS reports.</para>
    /// </remarks>
    internal abstract unsafe class OsPoller
    {
        /// <summary>How many reports one <see cref="Wait"/> returns at most.</summary>
        internal const int Capacity = 64;

        /// <summary>The mechanism's name, for diagnostics ("epoll", "kqueue", "WSAPoll").</summary>
        internal abstract string Mechanism { get; }

        /// <summary>Creates the OS's set (and whatever the wait needs). Called before any other member, again after <see cref="Close"/>.</summary>
        internal abstract SocketError Open();

        /// <summary>Releases the set. Called by the waiting thread when no socket is registered any more.</summary>
        internal abstract void Close();

        /// <summary>
        /// Arms <paramref name="socket"/> for one report of readability (<paramref name="read"/>) and/or writability
        /// (<paramref name="write"/>), replacing what it was armed for. <paramref name="added"/> says whether the socket
        /// is in the set already, and is set once it is.
        /// </summary>
        internal abstract SocketError Arm(IntPtr socket, long token, bool read, bool write, ref bool added);

        /// <summary>Takes <paramref name="socket"/> out of the set (it is still open: the caller holds a reference on it).</summary>
        internal abstract void Remove(IntPtr socket, long token);

        /// <summary>
        /// Forgets the socket of <paramref name="token"/>, which was closed before it could be taken out of the set: the
        /// OS's own sets (epoll, kqueue) drop a closed descriptor themselves; a set kept by this class must drop it here,
        /// or it would go on polling a handle value the OS may give to another socket.
        /// </summary>
        internal virtual void Forget(long token)
        {
        }

        /// <summary>
        /// Waits up to <paramref name="timeoutMilliseconds"/> (0: not at all) for reports. Returns how many (at most
        /// <see cref="Capacity"/> where the OS fills a block of reports; a set rebuilt per wait reports all it has), read with <see cref="Report"/>; 0 when the time passed or a signal interrupted the
        /// wait; -1 with <paramref name="error"/> when the wait failed.
        /// </summary>
        internal abstract int Wait(int timeoutMilliseconds, out SocketError error);

        /// <summary>
        /// Report <paramref name="index"/> of the last <see cref="Wait"/>: the socket's token, and whether it is readable,
        /// writable, has an error pending, or was hung up (shut down, or its handle is no longer valid). With an error
        /// or a hang-up both waiting directions should try their call: the call tells what happened.
        /// </summary>
        internal abstract void Report(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp);

        /// <summary>
        /// True when <see cref="Arm"/> from another thread takes effect only at the next <see cref="Wait"/> (the set is
        /// rebuilt per wait): the caller then calls <see cref="Wake"/>. False where the OS updates a wait in progress.
        /// </summary>
        internal virtual bool ArmNeedsWake => false;

        /// <summary>Ends a <see cref="Wait"/> in progress early (only where <see cref="ArmNeedsWake"/>).</summary>
        internal virtual void Wake()
        {
        }
    }
}
