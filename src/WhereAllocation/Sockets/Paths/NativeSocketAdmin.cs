#nullable enable
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The native path's calls made once per socket or per wait, not per datagram: options, status and questions about the
    /// socket's state, each straight to the OS (<see cref="OsSocketCalls.InUse"/>) on the socket's descriptor while holding its
    /// handle through <see cref="SocketHandles.Hold"/>. The per-datagram calls are <see cref="NativeDatagramIO"/>'s.
    /// </summary>
    internal static class NativeSocketAdmin
    {
        /// <summary>True when an IPv6 socket accepts IPv4 peers (IPV6_V6ONLY is 0). One system call.</summary>
        internal static bool IsDualMode(Socket socket)
        {
            using HeldHandle held = SocketHandles.Hold(socket);
            return OsSocketCalls.InUse.IsDualMode(held.Raw);
        }

        /// <summary>True when the socket was shut down for receiving (see <see cref="OsSocketCalls.IsReceiveShutDown"/>). One system call.</summary>
        internal static bool IsReceiveShutDown(Socket socket)
        {
            using HeldHandle held = SocketHandles.Hold(socket);
            return OsSocketCalls.InUse.IsReceiveShutDown(held.Raw);
        }

        /// <summary>See <see cref="OsSocketCalls.HasInput"/>. One system call.</summary>
        internal static bool HasInput(Socket socket, out SocketError pending)
        {
            using HeldHandle held = SocketHandles.Hold(socket);
            return OsSocketCalls.InUse.HasInput(held.Raw, out pending);
        }

        /// <summary>Address sharing off, and (Windows) reset reports off; see <see cref="DatagramSockets.Harden"/>.</summary>
        internal static void Harden(Socket socket)
        {
            SocketError error;
            using (HeldHandle held = SocketHandles.Hold(socket))
            {
                OsSocketCalls os = OsSocketCalls.InUse;
                error = os.DisableAddressSharing(held.Raw);
                // Not fatal: the receive consumes reset reports on unconnected sockets anyway.
                if (error == SocketError.Success) os.DisableResetReports(held.Raw);
            }
            if (error != SocketError.Success) throw new SocketException((int)error);
        }

        /// <summary>Makes an unbound socket a member of a balanced group (Linux: SO_REUSEPORT); see <see cref="DatagramShardGroup"/>.</summary>
        internal static void JoinBalancedGroup(Socket socket)
        {
            SocketError error;
            using (HeldHandle held = SocketHandles.Hold(socket)) error = OsSocketCalls.InUse.JoinBalancedGroup(held.Raw);
            if (error != SocketError.Success) throw new SocketException((int)error);
        }

        /// <summary>Turns coalesced receive on (Linux: UDP_GRO); see <see cref="DatagramSockets.EnableCoalescedReceive"/>.</summary>
        internal static void EnableCoalescedReceive(Socket socket)
        {
            SocketError error;
            using (HeldHandle held = SocketHandles.Hold(socket)) error = OsSocketCalls.InUse.EnableCoalescedReceive(held.Raw);
            if (error != SocketError.Success) throw new SocketException((int)error);
        }

        /// <summary>The socket's buffers and queue counters; see <see cref="DatagramSockets.GetDatagramStatus"/>.</summary>
        internal static DatagramSocketStatus Status(Socket socket)
        {
            using HeldHandle held = SocketHandles.Hold(socket);
            OsSocketCalls os = OsSocketCalls.InUse;
            System.IntPtr raw = held.Raw;
            os.QueueCounters(raw, out long dropped, out int queued);
            return new DatagramSocketStatus(os.BufferSize(raw, true), os.BufferSize(raw, false), dropped, queued);
        }
    }
}
