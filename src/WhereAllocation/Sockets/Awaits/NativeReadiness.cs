using System;
using System.Diagnostics.CodeAnalysis;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// The native path's readiness: the OS's own mechanism (<see cref="OsPoller"/>: epoll, kqueue, WSAPoll) on the
    /// sockets' descriptors. Every call that names a descriptor holds a reference on the socket's handle for its
    /// length, so that a concurrent Dispose can never let the call reach a descriptor number the OS gave to
    /// something else meanwhile. No reference is held while an operation waits: a Dispose then closes the socket at
    /// once, the OS drops it from the set, and the poller's sweep reports ObjectDisposedException to the waiting operation.
    /// </summary>
    internal sealed class NativeReadiness : ReadinessPoller
    {
        private readonly OsPoller _os;

        internal NativeReadiness(OsPoller os)
        {
            _os = os;
        }

        internal override string Mechanism => _os.Mechanism;

        private protected override SocketError OpenCore() => _os.Open();

        private protected override void CloseCore() => _os.Close();

        private protected override SocketError ArmCore(ReadinessRegistration registration, bool read, bool write, ref bool added)
        {
            bool held = false;
            // Disposed: nothing to arm. The sweep (or the next try) reports it to the waiting operation.
            if (!TryHold(registration.Socket, out SafeHandle? handle, ref held)) return SocketError.Success;
            try
            {
                return _os.Arm(handle.DangerousGetHandle(), registration.Token, read, write, ref added);
            }
            finally
            {
                if (held) handle.DangerousRelease();
            }
        }

        private protected override void RemoveCore(ReadinessRegistration registration)
        {
            bool held = false;
            if (!TryHold(registration.Socket, out SafeHandle? handle, ref held))
            {
                _os.Forget(registration.Token); // closed: the OS's own sets dropped it; a set of the poller's own drops it here
                return;
            }
            try
            {
                _os.Remove(handle.DangerousGetHandle(), registration.Token);
            }
            finally
            {
                if (held) handle.DangerousRelease();
            }
        }

        /// <summary>
        /// Takes a reference on <paramref name="socket"/>'s handle (<paramref name="held"/> says whether it was taken, for the
        /// caller's finally); false when the socket is disposed.
        /// </summary>
        private static bool TryHold(Socket socket, [NotNullWhen(true)] out SafeHandle? handle, ref bool held)
        {
            try
            {
                handle = SocketHandles.Get(socket);
                handle.DangerousAddRef(ref held);
                return true;
            }
            catch (ObjectDisposedException)
            {
                handle = null;
                return false;
            }
        }

        private protected override int WaitCore(int timeoutMilliseconds, out SocketError error) => _os.Wait(timeoutMilliseconds, out error);

        private protected override void ReportCore(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp)
        {
            _os.Report(index, out token, out readable, out writable, out error, out hungUp);
        }

        private protected override bool ArmNeedsWake => _os.ArmNeedsWake;

        private protected override void WakeCore() => _os.Wake();
    }
}
