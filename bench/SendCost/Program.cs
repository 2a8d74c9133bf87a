using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation;

namespace WhereAllocation.Bench.SendCost
{
    /// <summary>
    /// Sends N datagrams of 64 bytes over loopback in one form, twice (the first round compiles everything and binds the
    /// native functions). Under callgrind, two runs with different N give the user-mode instructions one send costs in that
    /// form: the difference of the totals over the difference of the datagrams. The kernel's work is not counted, so the forms
    /// differ by what runs in the process only. Forms: sendto (a bare sendto P/Invoke on the descriptor), key
    /// (SendTo_NonAlloc(buffer, 0, n, None, EndPointKey)), endpoint (the same with an IPEndPointNonAlloc), sendmmsg1 (a bare
    /// sendmmsg P/Invoke of one message), batch1 (a DatagramBatch of one slot: TryAdd in place, Send, Clear: one datagram per
    /// tick), sendmmsg64 and batch64 (64 datagrams a call, per datagram), gso8 (a bare sendmsg P/Invoke of a burst of 8
    /// datagrams of 1472 bytes with UDP_SEGMENT, one iovec each, per datagram) and batchgso8 (the same burst through a batch
    /// with segmentation offload: 8 TryAdd, Send, Clear). Nothing receives: the datagrams the receiving socket cannot queue
    /// are dropped by the kernel, which the user-mode count does not see. Linux only.
    /// </summary>
    internal static unsafe class Program
    {
        private static readonly string[] Forms = { "sendto", "key", "endpoint", "sendmmsg1", "batch1", "sendmmsg64", "batch64", "gso8", "batchgso8" };

        [DllImport("libc", EntryPoint = "sendto", SetLastError = true)]
        private static extern nint SendTo(int socket, byte* buffer, nuint length, int flags, byte* address, uint addressLength);

        // The measure's marks: cost.sh has callgrind dump (and zero) its counts each time this is entered, so the part between the
        // two marks is exactly the measured round. A C library call nothing else in the process makes.
        [DllImport("libc", EntryPoint = "getpgrp")]
        private static extern int Mark();

        [DllImport("libc", EntryPoint = "sendmsg", SetLastError = true)]
        private static extern nint SendMsg(int socket, MMsgHdr* message, int flags);

        [DllImport("libc", EntryPoint = "sendmmsg", SetLastError = true)]
        private static extern int SendMMsg(int socket, MMsgHdr* messages, uint count, int flags);

        [StructLayout(LayoutKind.Sequential)]
        private struct IoVec
        {
            public byte* Base;
            public nuint Length;
        }

        /// <summary>struct mmsghdr on 64-bit Linux: msghdr (56 bytes) and msg_len.</summary>
        [StructLayout(LayoutKind.Sequential)]
        private struct MMsgHdr
        {
            public byte* Name;
            public uint NameLength;
            public IoVec* Iov;
            public nuint IovLength;
            public void* Control;
            public nuint ControlLength;
            public int Flags;
            private int _padding;
            public uint Length;
        }

        private static int Main(string[] args)
        {
            if (args.Length != 2 || !int.TryParse(args[0], out int count) || count <= 0 || count > 100_000 || count % 64 != 0 || Array.IndexOf(Forms, args[1]) < 0)
            {
                Console.Error.WriteLine("usage: SendCost <datagrams, a multiple of 64 up to 100000> <" + string.Join("|", Forms) + ">");
                return 2;
            }
            string form = args[1];
            const int Size = 64;

            using var receiver = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            receiver.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            sender.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var to = (IPEndPoint)receiver.LocalEndPoint!;
            EndPointKey key = EndPointKey.FromIPEndPoint(to);
            var endPoint = new IPEndPointNonAlloc(to.Address, to.Port);
            int descriptor = (int)sender.Handle;
            var payload = new byte[Size];
            using var batch = new DatagramBatch(64, Size);
            batch.SegmentationOffload = false; // batch64 compares with sendmmsg64: 64 messages, not one segmented send

            byte* name = stackalloc byte[16];
            for (int i = 0; i < 16; i++) name[i] = 0;
            name[0] = 2; // AF_INET, little-endian sa_family
            name[2] = (byte)(to.Port >> 8);
            name[3] = (byte)to.Port;
            name[4] = 127;
            name[7] = 1;
            byte* data = stackalloc byte[64 * Size];
            IoVec* iovecs = stackalloc IoVec[64];
            MMsgHdr* messages = stackalloc MMsgHdr[64];
            for (int i = 0; i < 64; i++)
            {
                iovecs[i].Base = data + i * Size;
                iovecs[i].Length = Size;
                messages[i] = default;
                messages[i].Name = name;
                messages[i].NameLength = 16;
                messages[i].Iov = iovecs + i;
                messages[i].IovLength = 1;
            }

            // The bursts: 8 datagrams of 1472 bytes, one iovec each, with a UDP_SEGMENT control message (SOL_UDP 17, type 103).
            const int Mtu = 1472, Burst = 8;
            byte* burstData = stackalloc byte[Burst * Mtu];
            IoVec* burstIovecs = stackalloc IoVec[Burst];
            for (int i = 0; i < Burst; i++)
            {
                burstIovecs[i].Base = burstData + i * Mtu;
                burstIovecs[i].Length = Mtu;
            }
            byte* control = stackalloc byte[24];
            for (int i = 0; i < 24; i++) control[i] = 0;
            *(ulong*)control = 18;          // cmsg_len: CMSG_LEN(2)
            *(int*)(control + 8) = 17;      // SOL_UDP
            *(int*)(control + 12) = 103;    // UDP_SEGMENT
            *(ushort*)(control + 16) = Mtu;
            MMsgHdr burst = default;
            burst.Name = name;
            burst.NameLength = 16;
            burst.Iov = burstIovecs;
            burst.IovLength = Burst;
            burst.Control = control;
            burst.ControlLength = 24;       // CMSG_SPACE(2)
            using var bursts = new DatagramBatch(64, Mtu);

            long sent = 0;
            for (int round = 0; round < 2; round++)
            {
                if (round == 1) Mark(); // round 0 compiled and bound everything; round 1 is measured
                fixed (byte* p = payload)
                {
                    switch (form)
                    {
                        case "sendto":
                            for (int i = 0; i < count; i++)
                            {
                                payload[0] = (byte)i;
                                if (SendTo(descriptor, p, Size, 0, name, 16) != Size) return Fail("sendto failed: errno " + Marshal.GetLastWin32Error());
                            }
                            break;
                        case "key":
                            for (int i = 0; i < count; i++)
                            {
                                payload[0] = (byte)i;
                                if (sender.SendTo_NonAlloc(payload, 0, Size, SocketFlags.None, key) != Size) return Fail("short send");
                            }
                            break;
                        case "endpoint":
                            for (int i = 0; i < count; i++)
                            {
                                payload[0] = (byte)i;
                                if (sender.SendTo_NonAlloc(payload, 0, Size, SocketFlags.None, endPoint) != Size) return Fail("short send");
                            }
                            break;
                        case "sendmmsg1":
                            for (int i = 0; i < count; i++)
                            {
                                data[0] = (byte)i;
                                if (SendMMsg(descriptor, messages, 1, 0) != 1) return Fail("sendmmsg failed: errno " + Marshal.GetLastWin32Error());
                            }
                            break;
                        case "batch1":
                            for (int i = 0; i < count; i++)
                            {
                                batch.TryAdd(Size, key, out Span<byte> slot);
                                slot[0] = (byte)i;
                                if (batch.Send(sender) != 1) return Fail("the batch did not send");
                                batch.Clear();
                            }
                            break;
                        case "sendmmsg64":
                            for (int i = 0; i < count; i += 64)
                            {
                                for (int k = 0; k < 64; k++) data[k * Size] = (byte)k;
                                if (SendMMsg(descriptor, messages, 64, 0) != 64) return Fail("sendmmsg failed: errno " + Marshal.GetLastWin32Error());
                            }
                            break;
                        case "gso8":
                            for (int i = 0; i < count; i += Burst)
                            {
                                for (int k = 0; k < Burst; k++) burstData[k * Mtu] = (byte)k;
                                if (SendMsg(descriptor, &burst, 0) != Burst * Mtu) return Fail("sendmsg failed: errno " + Marshal.GetLastWin32Error());
                            }
                            break;
                        case "batchgso8":
                            for (int i = 0; i < count; i += Burst)
                            {
                                for (int k = 0; k < Burst; k++)
                                {
                                    bursts.TryAdd(Mtu, key, out Span<byte> slot);
                                    slot[0] = (byte)k;
                                }
                                if (bursts.Send(sender) != Burst) return Fail("the batch did not send the burst");
                                bursts.Clear();
                            }
                            break;
                        case "batch64":
                            for (int i = 0; i < count; i += 64)
                            {
                                for (int k = 0; k < 64; k++)
                                {
                                    batch.TryAdd(Size, key, out Span<byte> slot);
                                    slot[0] = (byte)k;
                                }
                                if (batch.Send(sender) != 64) return Fail("the batch did not send 64");
                                batch.Clear();
                            }
                            break;
                    }
                }
                sent += count;
            }
            Mark();
            Console.WriteLine(form + ": " + sent + " datagrams");
            return 0;
        }

        private static int Fail(string what)
        {
            Console.Error.WriteLine(what);
            return 1;
        }
    }
}
