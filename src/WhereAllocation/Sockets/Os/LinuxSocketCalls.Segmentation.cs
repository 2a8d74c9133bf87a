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
        private const int SolUdp = 17;
        private const int UdpSegment = 103;
        private const int UdpGro = 104;

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

        /// <summary>struct cmsghdr {size_t len; int level; int type;} rounded up to size_t: 16 bytes on 64-bit, 12 on 32-bit.</summary>
        private static int CmsgHeaderSize => AlignUp(sizeof(nuint) + 8, sizeof(nuint));

        private static int AlignUp(int value, int alignment) => (value + alignment - 1) & ~(alignment - 1);

        internal override int WriteSegmentSize(byte* control, int room, int segmentSize)
        {
            int header = CmsgHeaderSize;
            int space = header + AlignUp(sizeof(ushort), sizeof(nuint)); // CMSG_SPACE(2)
            if (space > room) throw new ArgumentOutOfRangeException(nameof(room), room, "less room than one control message takes");
            *(nuint*)control = (nuint)(header + sizeof(ushort)); // cmsg_len: CMSG_LEN(2)
            *(int*)(control + sizeof(nuint)) = SolUdp;            // cmsg_level
            *(int*)(control + sizeof(nuint) + 4) = UdpSegment;    // cmsg_type
            *(ushort*)(control + header) = (ushort)segmentSize;
            return space;
        }

        internal override int SendSegments(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error, out bool routeCannotSegment)
        {
            int sent = Libc.SendMMsg((int)socket, messages, (uint)count, MsgDontWait | MsgNoSignal);
            if (sent > 0)
            {
                error = SocketError.Success;
                routeCannotSegment = false;
                return sent;
            }
            return SegmentedSendFailed(sent == 0 ? 11 : Marshal.GetLastWin32Error(), out error, out routeCannotSegment);
        }

        /// <summary>
        /// What <see cref="SendSegments"/> reports for a segmented send the kernel refused with <paramref name="errno"/>: -1, the
        /// error, and whether the error says that the route cannot segment at all.
        /// </summary>
        internal int SegmentedSendFailed(int errno, out SocketError error, out bool routeCannotSegment)
        {
            error = FromErrno(errno);
            // The kernel refuses a segmented send with EIO when the route's device cannot checksum the segments, or the route
            // goes through IPsec (udp_send_skb): nothing a later send changes. EINVAL is about this run (a segment longer than
            // the path allows, too many segments) and any other error about a datagram or the socket, not the segmentation.
            routeCannotSegment = errno == Eio;
            return -1;
        }

        /// <summary>
        /// Room for the control messages of one receive. The kernel adds one per receive option the socket has on, in order: the
        /// socket level's (SO_TIMESTAMP or SO_TIMESTAMPNS 32 B each, SO_TIMESTAMPING's three timestamps 64 B and its packet
        /// information 32 B, SO_RXQ_OVFL, SO_RCVMARK and SO_RCVPRIORITY 24 B each), then UDP_GRO's segment size (24 B), then the
        /// IP level's (IPv4: packet information, TTL, TOS, options twice, original destination, checksum, fragment size and a
        /// security context of up to a page, about 4.5 KiB; IPv6: packet information, hop limit, traffic class, flow label, path
        /// MTU, original destination, fragment size, and hop-by-hop, destination (twice) and routing headers of up to 2 KiB each,
        /// in both the RFC 3542 and the RFC 2292 forms, about 21 KiB; a dual-mode socket may get both). CMSG_SPACE on 64-bit;
        /// rounded up to 32 KiB, taken once per batch that turns coalesced receive on. Since the socket level's come before the
        /// segment size, too little room would cut the segment size first.
        /// </summary>
        internal override int CoalescedReceiveControlRoom => 32768;

        private const int MsgCTrunc = 0x8; // msg_flags: the control data was cut

        internal override long ReceiveCoalesced(IntPtr socket, Libc.LinuxMsgHdr* message, bool wait, out int segmentSize, out bool cut, out bool unsplittable, out SocketError error)
        {
            long received = Libc.RecvMsg((int)socket, message, wait ? 0 : MsgDontWait);
            if (received < 0)
            {
                error = LastError();
                segmentSize = 0;
                cut = unsplittable = false;
                return -1;
            }
            error = SocketError.Success;
            cut = (message->Flags & MsgTrunc) != 0;
            segmentSize = SegmentSize(message, out unsplittable);
            return received;
        }

        /// <summary>
        /// The segment size of a coalesced datagram (UDP_GRO's control message), or 0 for a datagram as sent.
        /// <paramref name="unsplittable"/>: the kernel cut the control data (MSG_CTRUNC) and no whole segment size came before
        /// the cut, so whether the datagram is a run, and of which size, is not known.
        /// </summary>
        private static int SegmentSize(Libc.LinuxMsgHdr* message, out bool unsplittable)
        {
            byte* control = (byte*)message->Control;
            long used = (long)message->ControlLength;
            int head = CmsgHeaderSize;
            long at = 0;
            unsplittable = false;
            while (at + head <= used)
            {
                byte* entry = control + at;
                long length = (long)*(nuint*)entry;
                if (length < head) break;
                if (*(int*)(entry + sizeof(nuint)) == SolUdp && *(int*)(entry + sizeof(nuint) + 4) == UdpGro && length >= head + sizeof(int))
                    return *(int*)(entry + head);
                at += AlignUp((int)length, sizeof(nuint));
            }
            unsplittable = (message->Flags & MsgCTrunc) != 0;
            return 0;
        }
    }
}
