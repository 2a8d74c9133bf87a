#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The one owner of the question "was this socket shut down for receiving?": how the OS's answer is read, and when a
    /// receive asks it. A socket shut down for receiving (Shutdown(Receive), or CoreCLR's Dispose, or the watchdog's wake-up
    /// of a disposed one) never brings a datagram again, and each receive must end at once with Shutdown (or
    /// ObjectDisposedException) instead of waiting or spinning; docs/CONTRACT.md, "A receive on a socket shut down for
    /// receiving".
    /// </summary>
    /// <remarks>
    /// <para>How it shows: a receive that waits in the kernel ends with 0 bytes and no sender (<see cref="IsReport"/>), which
    /// a real datagram, even an empty one, never does: it always carries its sender. A receive that does not wait only says
    /// "nothing queued" on Linux while <c>poll</c> keeps saying "readable": then the OS is asked (<see cref="IsShutDown(IntPtr)"/>,
    /// a <c>poll</c> for POLLRDHUP). Windows and macOS report it through the receive itself.</para>
    /// <para>When it is asked, so that the question costs a call only where the answer can be yes: by a synchronous receive
    /// that found nothing after a wait said readable, or that does not wait at all (<see cref="AsksAfterNothing"/>; a wait's
    /// first poll on such a socket answers at once, so asking before every wait would cost each waiting datagram a call for
    /// nothing); by an await's try as <see cref="ForAwaitTry"/> says, since the awaits' poller may report it with the
    /// readiness; and by an await whose reports keep finding nothing (<see cref="AwaitAsksAfter"/>).</para>
    /// </remarks>
    internal static class ReceiveShutdown
    {
        /// <summary>True when a receive's answer, <paramref name="received"/> bytes with a sender of <paramref name="senderLength"/> bytes, is the shutdown and no datagram: 0 bytes without a sender.</summary>
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)] // the loop's forms ask it per datagram (the one-call fast path writes it out: Mono 6.8 keeps the call there)
        internal static bool IsReport(long received, int senderLength) => received == 0 && senderLength == 0;

        /// <summary>What a receive reports on a socket shut down for receiving: -1 with Shutdown.</summary>
        internal static long Reported(out SocketError error)
        {
            error = SocketError.Shutdown;
            return -1;
        }

        /// <summary>
        /// True when a synchronous receive (of <paramref name="kind"/>) whose receive found nothing queued asks the OS: when a
        /// wait of its own said readable (<paramref name="readied"/>), or when it does not wait (<paramref name="waits"/> false);
        /// never when the caller learns the shutdown otherwise (<see cref="ReceiveWaitKind.ShutdownReported"/>).
        /// </summary>
        internal static bool AsksAfterNothing(ReceiveWaitKind kind, bool readied, bool waits) =>
            (kind & ReceiveWaitKind.ShutdownReported) == 0 && (readied || !waits);

        /// <summary>True when the socket of descriptor <paramref name="raw"/> (its handle held) was shut down for receiving: one system call.</summary>
        internal static bool IsShutDown(IntPtr raw) => OsSocketCalls.InUse.IsReceiveShutDown(raw);

        /// <summary>
        /// True when <paramref name="socket"/> was shut down for receiving, asked of the OS wherever the library's own calls reach
        /// it (the runtime's paths ask this after their receive found nothing although the socket was reported readable); false
        /// where they do not (where the runtime reports it itself).
        /// </summary>
        /// <exception cref="ObjectDisposedException">The socket has been disposed.</exception>
        internal static bool IsShutDown(Socket socket)
        {
            if (!NativeDatagramIO.OsCallsWork || !SocketHandles.Available) return false;
            return NativeSocketAdmin.IsReceiveShutDown(socket);
        }

        // ----- the awaits -----

        /// <summary>
        /// The kind of an await's try (a receive that never waits): at the call (<paramref name="afterReport"/> false) or after
        /// its poller reported the socket readable. Where the poller reports a shutdown for receiving with the readiness
        /// (<paramref name="pollerReportsShutdown"/>: epoll's EPOLLRDHUP, kqueue's EV_EOF), a try after a report never asks,
        /// and neither does a try at the call once a wait of the wrapper has received a datagram after a report
        /// (<paramref name="receivedAfterReport"/>: the socket was receiving then, and a later shutdown ends the next wait through
        /// the report). Before that the try at the call asks, so that an await on a socket shut down before it ends at once on
        /// the caller's thread, as the synchronous receive does. Where the poller does not, every try asks.
        /// </summary>
        internal static ReceiveWaitKind ForAwaitTry(bool afterReport, bool receivedAfterReport, bool pollerReportsShutdown)
        {
            ReceiveWaitKind kind = afterReport ? ReceiveWaitKind.Readied : ReceiveWaitKind.Tries;
            if (pollerReportsShutdown && (afterReport || receivedAfterReport)) kind |= ReceiveWaitKind.ShutdownReported;
            return kind;
        }

        /// <summary>
        /// How many reports in a row may find nothing for one waiting await before it asks whether its socket was shut down for
        /// receiving: a poller that does not report the shutdown (WSAPoll, Socket.Select) keeps saying "readable" (or nothing).
        /// </summary>
        internal const int EmptyReportsBeforeAsking = 2;

        /// <summary>
        /// True when an await whose <paramref name="emptyReports"/> reports in a row found nothing is over because
        /// <paramref name="socket"/> was shut down for receiving (asked of the OS once <see cref="EmptyReportsBeforeAsking"/> came;
        /// false where it cannot tell, or the socket is disposed: the next try says so).
        /// </summary>
        internal static bool AwaitAsksAfter(int emptyReports, Socket socket)
        {
            if (emptyReports < EmptyReportsBeforeAsking) return false;
            try
            {
                return IsShutDown(socket);
            }
            catch (ObjectDisposedException)
            {
                return false;
            }
        }
    }
}
