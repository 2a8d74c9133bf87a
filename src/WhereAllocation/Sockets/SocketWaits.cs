using System;
using System.Diagnostics;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// What every wait of the library shares, whichever path or batch mode waits: a wait lasts in slices, so that a
    /// socket disposed by another thread (which wakes no poll blocked on it) ends it within one slice; and whether a
    /// socket was disposed, asked of the Socket itself. Allocates nothing unless it throws.
    /// </summary>
    internal static class SocketWaits
    {
        /// <summary>How long one slice of a wait lasts before the waiter checks that the socket is still alive.</summary>
        internal const int SliceMilliseconds = 100;

        /// <summary>Milliseconds left of a timeout that started at <paramref name="start"/> (a Stopwatch timestamp): negative for none, 0 when it has passed.</summary>
        internal static int Remaining(long start, int timeoutMilliseconds)
        {
            if (timeoutMilliseconds <= 0) return timeoutMilliseconds;
            long elapsed = (Stopwatch.GetTimestamp() - start) * 1000 / Stopwatch.Frequency;
            return elapsed >= timeoutMilliseconds ? 0 : (int)(timeoutMilliseconds - elapsed);
        }

        /// <summary>The next slice of a wait with <paramref name="remaining"/> milliseconds left (negative: no limit; not 0).</summary>
        internal static int Slice(int remaining) => remaining < 0 ? SliceMilliseconds : Math.Min(remaining, SliceMilliseconds);

        /// <summary>
        /// The runtime's own ObjectDisposedException when <paramref name="socket"/> is disposed, else null. Read through
        /// <see cref="Socket.Available"/>, which checks the Socket's disposed flag first on Mono and CoreCLR (a SafeHandle
        /// alone cannot tell while someone holds a reference on it).
        /// </summary>
        internal static ObjectDisposedException? DisposedError(Socket socket)
        {
            try
            {
                _ = socket.Available;
            }
            catch (ObjectDisposedException e)
            {
                return e;
            }
            catch (SocketException)
            {
                // An error of a live socket: the caller reports its own.
            }
            return null;
        }

        /// <summary>Throws ObjectDisposedException when <paramref name="socket"/> is disposed.</summary>
        internal static void ThrowIfDisposed(Socket socket)
        {
            ObjectDisposedException? disposed = DisposedError(socket);
            if (disposed != null) throw disposed;
        }
    }
}
