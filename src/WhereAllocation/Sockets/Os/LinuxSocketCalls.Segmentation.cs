#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// Linux's UDP segmentation offload (UDP_SEGMENT, 4.18+: one send of a buffer that the kernel, or the device, cuts into
    /// datagrams of the given size) and its receive side (UDP_GRO, 5.0+: a run of equal datagrams from one sender queued as one,
    /// its segment size in a control message). Both are probed once, by asking a fresh socket for the option: a kernel without
    /// it answers ENOPROTOOPT. The probe matters for the send: an older kernel ignores a control message of a level it does not
    /// know and would send the whole run as one datagram.
    /// </summary>
    internal sealed unsafe partial class LinuxSocketCalls
    {
        internal const int SolUdp = 17;
        internal const int UdpSegment = 103;
        internal const int UdpGro = 104;

        private int _segmentationProbe;  // 0: not probed yet, 1: available, -1: not
        private int _coalescedProbe;

        internal override bool HasSegmentationOffload
        {
            get
            {
                if (_segmentationProbe == 0) _segmentationProbe = HasMultiMessage && ProbeUdpOption(UdpSegment) ? 1 : -1;
                return _segmentationProbe > 0;
            }
        }

        internal override bool HasCoalescedReceive
        {
            get
            {
                if (_coalescedProbe == 0) _coalescedProbe = Probe() == null && ProbeUdpOption(UdpGro) && ProbeRecvMsg() ? 1 : -1;
                return _coalescedProbe > 0;
            }
        }

        private static bool ProbeUdpOption(int option)
        {
            try
            {
                using (var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp))
                {
                    SafeHandle handle = SocketHandles.Get(socket);
                    int value = 0;
                    uint length = sizeof(int);
                    return Libc.GetSockOpt((int)handle.DangerousGetHandle(), SolUdp, option, &value, &length) == 0;
                }
            }
            catch (SocketException) { return false; }
        }

        private static bool ProbeRecvMsg()
        {
            try
            {
                Libc.RecvMsg(-1, null, 0); // EBADF at once; only a missing symbol throws
                return true;
            }
            catch (EntryPointNotFoundException) { return false; }
            catch (DllNotFoundException) { return false; }
        }

        internal override SocketError EnableCoalescedReceive(IntPtr socket)
        {
            if (!HasCoalescedReceive) return base.EnableCoalescedReceive(socket);
            int on = 1;
            return Libc.SetSockOpt((int)socket, SolUdp, UdpGro, &on, sizeof(int)) == 0 ? SocketError.Success : LastError();
        }

        private const int Eio = 5;

        internal override int SendSegments(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, int faultForTests, out SocketError error, out bool routeCannotSegment)
        {
            int errno = faultForTests;
            if (errno == 0)
            {
                int sent = Libc.SendMMsg((int)socket, messages, (uint)count, MsgDontWait | MsgNoSignal);
                if (sent > 0)
                {
                    error = SocketError.Success;
                    routeCannotSegment = false;
                    return sent;
                }
                errno = sent == 0 ? 11 : Marshal.GetLastWin32Error();
            }
            error = FromErrno(errno);
            // The kernel refuses a segmented send with EIO when the route's device cannot checksum the segments, or the route
            // goes through IPsec (udp_send_skb): nothing a later send changes. EINVAL is about this run (a segment longer than
            // the path allows, too many segments) and any other error about a datagram or the socket, not the segmentation.
            routeCannotSegment = errno == Eio;
            return -1;
        }

        internal override long ReceiveMessage(IntPtr socket, Libc.LinuxMsgHdr* message, bool peek, out SocketError error)
        {
            long received = Libc.RecvMsg((int)socket, message, MsgDontWait | (peek ? MsgPeek | MsgTrunc : 0));
            if (received < 0)
            {
                error = LastError();
                return -1;
            }
            error = SocketError.Success;
            return received;
        }
    }
}
