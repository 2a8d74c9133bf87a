#nullable enable
using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// What every wait of the library shares, whichever path or batch mode waits: a wait lasts in slices, so that a
    /// socket disposed by another thread (which wakes no poll blocked on it) ends it within one slice; and whether a
    /// socket was disposed, asked of the Socket itself. The native path's and the batch's own wait on a descriptor
    /// (<see cref="TryWaitUntil"/>, through <see cref="OsSocketCalls.InUse"/>'s poll) lives here too, with the exception a
    /// failed call reports (<see cref="Failure(Socket, SocketError)"/>). Allocates nothing unless it throws.
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
            // Mono: its Socket's own flag, set first by Dispose; and a Socket that DuplicateAndClose left without a handle, on
            // which Socket.Available throws NullReferenceException (Mono's check of its flag passes it by). Nothing on .NET 8+.
            if (SocketHandles.IsDisposedFlagSet(socket) || SocketHandles.IsHandleGone(socket)) return new ObjectDisposedException(typeof(Socket).FullName);
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

        /// <summary>Waits until the descriptor is ready, the socket is disposed, or the timeout (0: none) passes, which throws TimedOut. <paramref name="counted"/>: as for <see cref="TryWaitUntil"/>.</summary>
        internal static void WaitUntil(Socket socket, IntPtr raw, SafeHandle handle, bool forWrite, int timeoutMilliseconds, ref bool counted)
        {
            if (!TryWaitUntil(socket, raw, handle, forWrite, timeoutMilliseconds > 0 ? timeoutMilliseconds : -1, ref counted))
                throw new SocketException((int)SocketError.TimedOut);
        }

        /// <summary>
        /// Called when a wait said "readable" and the receive after it still found nothing, and the socket is not shut down
        /// for receiving: an error queue the user asked for (IP_RECVERR on Linux) keeps poll saying so without a datagram,
        /// or another thread took the datagram. Waiting again at once would spin; a millisecond's sleep keeps such a wait from
        /// being a busy loop (at most one receive per millisecond) while a datagram still ends it within that millisecond.
        /// Throws ObjectDisposedException once the socket is disposed, which such a wait would otherwise never ask.
        /// </summary>
        internal static void PauseAfterEmptyReadiness(Socket socket, SafeHandle handle)
        {
            ThrowIfDisposed(socket, handle);
            System.Threading.Thread.Sleep(1);
        }

        /// <summary>
        /// Polls in short slices until the descriptor is ready or has an error pending (true), the timeout passes
        /// (false; a negative timeout never passes), or the socket is disposed (ObjectDisposedException). The
        /// caller holds a reference on <paramref name="handle"/>, and counts the wait out
        /// (<see cref="SocketHandles.ExitWait"/>) when <paramref name="counted"/> is true, after it released the handle: the wait
        /// is counted in here (<see cref="SocketHandles.EnterWait(ref bool)"/>) and must stay counted for the whole hold (see
        /// <see cref="SocketHandles.ThrowIfDisposedWhileHeld"/>). Allocates nothing unless it throws.
        /// </summary>
        /// <exception cref="SocketException">Shutdown: the socket was shut down, so nothing will ever come; or the wait itself failed.</exception>
        internal static bool TryWaitUntil(Socket socket, IntPtr raw, SafeHandle handle, bool forWrite, int timeoutMilliseconds, ref bool counted)
        {
            SocketHandles.EnterWait(ref counted);
            long start = Stopwatch.GetTimestamp();
            while (true)
            {
                // In slices: a descriptor closed by another thread does not wake a poll that is blocked on it.
                int remaining = Remaining(start, timeoutMilliseconds);
                if (remaining == 0) return false;
                int ready = OsSocketCalls.InUse.Poll(raw, forWrite, Slice(remaining), out bool hungUp, out SocketError error);
                if (ready < 0 && error != SocketError.Interrupted) throw Failure(socket, error);
                if (ready > 0 && !hungUp) return true;
                ThrowIfDisposed(socket, handle);
                // CoreCLR's Dispose shuts the socket down (POLLHUP) while a call still holds its handle, and recv
                // then keeps saying EAGAIN: a hang-up must end the wait, or the caller would spin.
                if (hungUp) throw new SocketException((int)SocketError.Shutdown);
            }
        }

        /// <summary>
        /// The exception for an error the OS reported: ObjectDisposedException when the socket was disposed meanwhile
        /// (Windows fails a call whose socket another thread closed with WSA_OPERATION_ABORTED or WSAENOTSOCK, Linux
        /// with EBADF), else a SocketException with the error.
        /// </summary>
        internal static Exception Failure(Socket socket, SocketError error)
        {
            return (Exception?)DisposedError(socket) ?? new SocketException((int)error);
        }

        /// <summary>As <see cref="Failure(Socket, SocketError)"/>, from a receive or a send: the errors a first server meets say what to do (<see cref="SocketErrors"/>).</summary>
        internal static Exception Failure(Socket socket, SocketError error, bool receive)
        {
            return (Exception?)DisposedError(socket) ?? (receive ? SocketErrors.Receive(error) : SocketErrors.Send(error));
        }

        /// <summary>
        /// Throws ObjectDisposedException once <paramref name="socket"/> is disposed. SafeHandle.IsClosed alone
        /// cannot tell while the caller holds a reference (the handle closes when the last reference goes), so
        /// the Socket is asked too.
        /// </summary>
        private static void ThrowIfDisposed(Socket socket, SafeHandle handle)
        {
            if (handle.IsClosed) throw new ObjectDisposedException(typeof(Socket).FullName);
            ThrowIfDisposed(socket);
        }
    }
}
