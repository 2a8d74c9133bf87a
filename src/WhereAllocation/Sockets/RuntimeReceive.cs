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
        // How long one Poll lasts before the wait checks again that the socket is alive (Dispose ends a wait
        // at the next slice, at the latest).
        private const int WaitSliceMicroseconds = 100_000;

        [ThreadStatic] private static byte[]? t_oneByte;

        /// <summary>A one-byte buffer that stands in for an empty one: the OS then still takes the datagram and says how long it was.</summary>
        internal static byte[] OneByte => t_oneByte ??= new byte[1];

        /// <summary>
        /// True when a receive would not wait: a datagram is queued, or an error is pending (which the receive
        /// then reports). Poll(SelectRead) alone is false when only an error is pending, on .NET.
        /// </summary>
        internal static bool IsReady(Socket socket)
        {
            return socket.Poll(0, SelectMode.SelectRead) || socket.Poll(0, SelectMode.SelectError);
        }

        /// <summary>
        /// Waits, in slices, until a receive would not wait (true), or the socket's ReceiveTimeout passes (false).
        /// Throws ObjectDisposedException when the socket is disposed meanwhile (Socket.Poll checks it).
        /// </summary>
        internal static bool WaitUntilReady(Socket socket)
        {
            // Most calls find a datagram queued: answer before reading ReceiveTimeout, which boxes on Mono (48 B).
            if (IsReady(socket)) return true;
            int timeout = socket.ReceiveTimeout;
            long start = Stopwatch.GetTimestamp();
            while (true)
            {
                int slice = WaitSliceMicroseconds;
                if (timeout > 0)
                {
                    long elapsed = (Stopwatch.GetTimestamp() - start) * 1000 / Stopwatch.Frequency;
                    if (elapsed >= timeout) return false;
                    slice = (int)Math.Min(slice, (timeout - elapsed) * 1000);
                }
                try
                {
                    if (socket.Poll(slice, SelectMode.SelectRead) || socket.Poll(0, SelectMode.SelectError)) return true;
                }
                catch (SocketException)
                {
                    // Windows ends a Poll whose socket another thread disposed with an error (OperationAborted).
                    ThrowIfDisposed(socket);
                    throw;
                }
            }
        }

        /// <summary>
        /// Decides what a SocketException from the runtime's receive means. Throws ObjectDisposedException when the
        /// socket was disposed during the call (the runtime reports that as Interrupted or OperationAborted);
        /// returns true when the error is a connection-reset report on an unconnected socket (Windows reports an
        /// earlier send to a closed port that way), which the caller consumes and receives again; else false.
        /// </summary>
        internal static bool IsResetReportToSkip(Socket socket, SocketException e)
        {
            ThrowIfDisposed(socket);
            SocketError code = e.SocketErrorCode;
            return (code == SocketError.ConnectionReset || code == SocketError.NetworkReset) && !socket.Connected;
        }

        /// <summary>Throws ObjectDisposedException when <paramref name="socket"/> is disposed: Available checks that first, on Mono and CoreCLR.</summary>
        internal static void ThrowIfDisposed(Socket socket)
        {
            try
            {
                _ = socket.Available;
            }
            catch (SocketException)
            {
                // An error of a live socket: the caller reports its own.
            }
        }
    }
}
