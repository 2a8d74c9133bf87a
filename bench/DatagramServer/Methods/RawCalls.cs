using System;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>The bare Linux calls of the for-scale rows (raw-pinvoke, raw-pinvoke-held, raw-pinvoke-safe, raw-recvmmsg).</summary>
    internal static unsafe class RawCalls
    {
        private const int Eintr = 4;
        private const int Eagain = 11;
        public const int MsgTrunc = 0x20;
        public const int SockaddrStorageSize = 128;
        private const short PollIn = 1;

        [DllImport("libc", EntryPoint = "recvfrom", SetLastError = true)]
        public static extern nint RecvFrom(int socket, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        /// <summary>struct iovec.</summary>
        [StructLayout(LayoutKind.Sequential)]
        public struct IoVec
        {
            public byte* Base;
            public nuint Length;
        }

        /// <summary>struct mmsghdr on 64-bit Linux (x86-64, arm64): a 56-byte msghdr, then msg_len (64 bytes in all).</summary>
        [StructLayout(LayoutKind.Sequential)]
        public struct MMsgHdr
        {
            public byte* Name;
            public uint NameLength;
            public IoVec* Iov;
            public nuint IovLength;
            public void* Control;
            public nuint ControlLength;
            public int Flags;
            private int _padding; // msghdr is 56 bytes: msg_len comes at 56
            public uint Length;
        }

        [DllImport("libc", EntryPoint = "recvmmsg", SetLastError = true)]
        public static extern int RecvMMsg(int socket, MMsgHdr* messages, uint count, int flags, void* timeout);

        [StructLayout(LayoutKind.Sequential)]
        private struct PollFd
        {
            public int Descriptor;
            public short Events;
            public short ReturnedEvents;
        }

        [DllImport("libc", EntryPoint = "poll", SetLastError = true)]
        private static extern int Poll(PollFd* descriptors, nuint count, int timeoutMilliseconds);

#if !NET8_0_OR_GREATER
        // Mono's Socket has the property too, internal; read once per run, before the loop.
        private static readonly PropertyInfo? s_safeHandle = typeof(Socket).GetProperty("SafeHandle", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
#endif

        /// <summary>Why a row that holds the socket's SafeHandle cannot run here, or null.</summary>
        public static string? HeldRowUnavailable
        {
            get
            {
                if (!RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) return "it calls Linux's recvfrom directly";
#if !NET8_0_OR_GREATER
                if (s_safeHandle == null) return "this runtime's Socket has no SafeHandle property to hold";
#endif
                return null;
            }
        }

        /// <summary>The socket's SafeHandle: public on .NET 8+, internal on Mono.</summary>
        public static SafeHandle SafeHandleOf(Socket socket)
        {
#if NET8_0_OR_GREATER
            return socket.SafeHandle;
#else
            return (SafeHandle?)s_safeHandle!.GetValue(socket) ?? throw new InvalidOperationException("the socket has no handle");
#endif
        }

        /// <summary>
        /// After a failed recvfrom (or <paramref name="call"/>): true to call again (interrupted; or nothing queued, after waiting
        /// until a datagram is, since the runtime may have made the descriptor non-blocking); any other error throws.
        /// </summary>
        public static bool Retry(int errno, int descriptor, string call = "recvfrom")
        {
            if (errno == Eintr) return true;
            if (errno != Eagain) throw new InvalidOperationException(call + " failed with errno " + errno);
            var wait = new PollFd { Descriptor = descriptor, Events = PollIn };
            Poll(&wait, 1, -1);
            return true;
        }
    }
}
