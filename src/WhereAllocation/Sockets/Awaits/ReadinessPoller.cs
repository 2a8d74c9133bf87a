#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>What a readiness report says about one socket. With an error or a hang-up, both waiting directions try their call: the call tells what happened.</summary>
    [Flags]
    internal enum Readiness : byte
    {
        None = 0,
        Read = 1,
        Write = 2,
        Error = 4,
        HangUp = 8,

        /// <summary>Shut down for receiving (epoll's EPOLLRDHUP, kqueue's EV_EOF on its read filter): ends a waiting receive that finds nothing queued, never a send.</summary>
        ReadHangUp = 16,
    }

    /// <summary>
    /// The small surface through which <see cref="AwaitEngine"/> waits for many sockets at once: one mechanism per kind.
    /// Two kinds of set stand behind it. A set the OS keeps (<see cref="LinuxPoller"/>: epoll, <see cref="DarwinPoller"/>:
    /// kqueue) is told of each arming as it happens and reports tokens. A set rebuilt for every wait
    /// (<see cref="RebuiltSetPoller"/>: WSAPoll in <see cref="WindowsPoller"/>, <c>Socket.Select</c> in
    /// <see cref="SelectPoller"/>) reads the engine's list of waiting sockets at each wait.
    /// </summary>
    /// <remarks>
    /// <para>Arming is one-shot: a socket armed for reading (and/or writing) is reported once when it is readable
    /// (writable), has an error pending or was hung up, and is then disarmed until the engine arms it again. One-shot,
    /// not level-triggered, so that a socket whose receiver keeps finding datagrams queued (and so never waits) costs the
    /// waiting thread nothing, and a report is tried by exactly one party.</para>
    /// <para>What each socket is armed for is the engine's state, kept on the <see cref="AwaitedSocket"/> under the lock of
    /// the engine's <see cref="WaitingSockets"/>: <see cref="Arm"/> and <see cref="Remove"/> are called under that lock
    /// (from any thread), <see cref="Open"/>, <see cref="Close"/>, <see cref="Wait"/> and <see cref="Report"/> by the
    /// engine's thread. Nothing here allocates after <see cref="Open"/> (but Socket.Select on Mono), and nothing throws
    /// for an error the OS reports.</para>
    /// </remarks>
    internal abstract class ReadinessPoller
    {
        /// <summary>How many reports one wait of a set the OS keeps returns at most.</summary>
        internal const int Capacity = 64;

        /// <summary>The mechanism's name, for diagnostics ("epoll", "kqueue", "WSAPoll", "Socket.Select").</summary>
        internal abstract string Mechanism { get; }

        /// <summary>Creates the set (and whatever the wait needs). Called before any other member, and again after <see cref="Close"/>.</summary>
        internal abstract SocketError Open();

        /// <summary>Releases the set. Called by the engine's thread as it ends.</summary>
        internal abstract void Close();

        /// <summary>
        /// Makes the set watch what <paramref name="socket"/> was just armed for (<see cref="AwaitedSocket.ArmedRead"/>,
        /// <see cref="AwaitedSocket.ArmedWrite"/>), replacing what it watched. Under the list's lock, from any thread.
        /// </summary>
        internal abstract SocketError Arm(AwaitedSocket socket);

        /// <summary>The socket leaves the set for good (its wrapper was disposed). Under the list's lock, from any thread.</summary>
        internal abstract void Remove(AwaitedSocket socket);

        /// <summary>
        /// True when a socket armed for reading that was shut down for receiving is reported at once as hung up
        /// (<see cref="Readiness.ReadHangUp"/> or <see cref="Readiness.HangUp"/>): the engine's try then never asks the OS
        /// whether it was, nor does the try at the call once a wait of the wrapper has received a datagram. False where the
        /// report says only "readable" (or nothing): every try asks.
        /// </summary>
        internal virtual bool ReportsReceiveShutDown => false;

        /// <summary>True when an arming from another thread takes effect only at the next wait: the engine then calls <see cref="Wake"/>.</summary>
        internal virtual bool ArmNeedsWake => false;

        /// <summary>Ends a wait in progress early (only where <see cref="ArmNeedsWake"/>). Any thread, outside the list's lock.</summary>
        internal virtual void Wake()
        {
        }

        /// <summary>
        /// Waits up to <paramref name="timeoutMilliseconds"/> (0: not at all) for reports on the armed sockets of
        /// <paramref name="waiting"/>. Returns how many, read with <see cref="Report"/>; 0 when the time passed or a signal
        /// interrupted the wait; -1 with <paramref name="error"/> when the wait itself failed.
        /// </summary>
        internal abstract int Wait(WaitingSockets waiting, int timeoutMilliseconds, out SocketError error);

        /// <summary>Report <paramref name="index"/> of the last <see cref="Wait"/>: the socket's token and what happened.</summary>
        internal abstract void Report(int index, out long token, out Readiness events);
    }
}
