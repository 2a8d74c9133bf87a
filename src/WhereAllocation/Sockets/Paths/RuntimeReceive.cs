#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// What the runtime's own paths (<see cref="DatagramPath.SocketAddress"/>, <see cref="DatagramPath.Managed"/>)
    /// share around the runtime's ReceiveFrom, so that they keep the contract the native path keeps: a pending
    /// error is reported, not hidden; a wait can be ended by Dispose with ObjectDisposedException; a receive
    /// into an empty buffer takes the datagram and says it was cut; a connection-reset report on an
    /// unconnected socket does not end the receive.
    /// </summary>
    internal static class RuntimeReceive
    {
        [ThreadStatic] private static byte[]? t_oneByte;

        /// <summary>A one-byte buffer that stands in for an empty one: the OS then still takes the datagram and says how long it was.</summary>
        internal static byte[] OneByte => t_oneByte ??= new byte[1];

        /// <summary>
        /// True when a receive would not wait: a datagram is queued, or an error is pending (which the receive
        /// then reports). Poll(SelectRead) alone is false when only an error is pending, on .NET.
        /// </summary>
        internal static bool IsReady(Socket socket)
        {
            if (s_receiveReportsErrors || !NativeDatagramIO.OsCallsWork || !SocketHandles.Available)
                return socket.Poll(0, SelectMode.SelectRead) || socket.Poll(0, SelectMode.SelectError);
            // Linux, macOS: asked of the OS itself, which tells "something to read" from "in error" (Mono's Poll says
            // readable for both, and a receive would then wait on a socket in error with nothing queued).
            if (NativeSocketAdmin.HasInput(socket, out SocketError pending)) return true;
            // The error the socket was flagged with, taken (as the receive would) and reported once; or none, when only an
            // error queue the user asked for (IP_RECVERR) keeps it flagged, which no receive reads: then nothing is queued.
            if (pending != SocketError.Success) throw new SocketException((int)pending);
            return false;
        }

        // Windows reports a pending error (a reset report) through the receive: the runtime's receive is asked for it there.
        private static readonly bool s_receiveReportsErrors = OsSocketCalls.Current.HasResetReports;

        /// <summary>
        /// Waits, in slices, until a receive would not wait (true), or the socket's ReceiveTimeout passes (false).
        /// Throws ObjectDisposedException when the socket is disposed meanwhile (Socket.Poll checks it).
        /// </summary>
        internal static bool WaitUntilReady(Socket socket)
        {
            // Most calls find a datagram queued: answer before reading ReceiveTimeout, which boxes on Mono (48 B).
            if (IsReady(socket)) return true;
            int timeout = socket.ReceiveTimeout; // 0: none
            long start = Stopwatch.GetTimestamp();
            while (true)
            {
                // In slices: Dispose ends the wait at the next one, at the latest.
                int remaining = SocketWaits.Remaining(start, timeout > 0 ? timeout : -1);
                if (remaining == 0) return false;
                // Asked before each slice too: Mono's Poll on a Socket that DuplicateAndClose left without a handle throws
                // NullReferenceException (its own disposed check passes such a socket by), and a Dispose after it sets only the flag.
                SocketWaits.ThrowIfDisposed(socket);
                SocketHandles.EnterWait(); // the runtime's Poll holds the handle while it waits
                try
                {
                    if (socket.Poll(SocketWaits.Slice(remaining) * 1000, SelectMode.SelectRead) || socket.Poll(0, SelectMode.SelectError)) return true;
                }
                catch (SocketException)
                {
                    // Windows ends a Poll whose socket another thread disposed with an error (OperationAborted).
                    SocketWaits.ThrowIfDisposed(socket);
                    throw;
                }
                catch (NullReferenceException) when (SocketHandles.IsHandleGone(socket))
                {
                    // Mono: DuplicateAndClose took the handle between the two polls.
                    throw new ObjectDisposedException(typeof(Socket).FullName);
                }
                finally
                {
                    SocketHandles.ExitWait();
                }
            }
        }

        /// <summary>The exception for a receive that met a socket shut down for receiving (ObjectDisposedException once it was disposed).</summary>
        internal static Exception ShutDown(Socket socket) => SocketWaits.Failure(socket, SocketError.Shutdown);

        /// <summary>
        /// Decides what a SocketException from the runtime's receive means. Throws ObjectDisposedException when the
        /// socket was disposed during the call (the runtime reports that as Interrupted or OperationAborted);
        /// returns true when the error is a connection-reset report on an unconnected socket (Windows reports an
        /// earlier send to a closed port that way), which the caller consumes and receives again; else false.
        /// </summary>
        internal static bool IsResetReportToSkip(Socket socket, SocketException e)
        {
            SocketWaits.ThrowIfDisposed(socket);
            SocketError code = e.SocketErrorCode;
            return (code == SocketError.ConnectionReset || code == SocketError.NetworkReset) && !socket.Connected;
        }
    }
}
