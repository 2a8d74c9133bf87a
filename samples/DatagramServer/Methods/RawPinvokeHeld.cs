using System;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>
    /// Not a way to write a server: <see cref="RawPinvoke"/> plus the one thing a receive needs to be safe against a
    /// concurrent Dispose, a reference on the socket's <see cref="SafeHandle"/> for the length of each call
    /// (<c>DangerousAddRef</c>, then <c>DangerousRelease</c> in a <c>finally</c>), so the descriptor cannot be closed, and its
    /// number reused, under the call. Still no argument checks and no sender parsed. <c>raw-pinvoke-held</c> ÷
    /// <c>raw-pinvoke</c> is what that reference costs on the runtime at hand (Mono implements it in managed code, with a
    /// compare-exchange loop on each side); <c>library</c> ÷ <c>raw-pinvoke-held</c> is the library's cost above the least
    /// a dispose-safe receive can do.
    /// </summary>
    internal sealed unsafe class RawPinvokeHeld : ManagedMethod
    {
        private const int Eintr = 4;
        private const int Eagain = 11;
        private const short PollIn = 1;
        private const int MsgTrunc = 0x20;
        private const int SockaddrStorageSize = 128;

        [DllImport("libc", EntryPoint = "recvfrom", SetLastError = true)]
        private static extern nint RecvFrom(int socket, byte* buffer, nuint length, int flags, byte* address, uint* addressLength);

        [StructLayout(LayoutKind.Sequential)]
        private struct PollFd
        {
            public int Descriptor;
            public short Events;
            public short ReturnedEvents;
        }

        [DllImport("libc", EntryPoint = "poll", SetLastError = true)]
        private static extern int Poll(PollFd* descriptors, nuint count, int timeoutMilliseconds);

        public RawPinvokeHeld()
            : base("raw-pinvoke-held", "for scale only: raw-pinvoke with a reference held on socket's SafeHandle per call (DangerousAddRef, DangerousRelease in finally), no checks, sender not parsed") { }

#if !NET8_0_OR_GREATER
        // Mono's Socket has the property too, internal; read once per run, before the loop.
        private static readonly PropertyInfo? s_safeHandle = typeof(Socket).GetProperty("SafeHandle", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
#endif

        public override string? Unavailable
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

        private static SafeHandle HandleOf(Socket socket)
        {
#if NET8_0_OR_GREATER
            return socket.SafeHandle;
#else
            return (SafeHandle?)s_safeHandle!.GetValue(socket) ?? throw new InvalidOperationException("the socket has no handle");
#endif
        }

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            SafeHandle handle = HandleOf(socket);
            byte* sender = stackalloc byte[SockaddrStorageSize];
            run.Begin();
            fixed (byte* payload = buffer)
            {
                while (true)
                {
                    uint senderLength = SockaddrStorageSize;
                    long length;
                    int errno = 0;
                    int descriptor;
                    bool added = false;
                    try
                    {
                        handle.DangerousAddRef(ref added);
                        descriptor = (int)handle.DangerousGetHandle();
                        length = RecvFrom(descriptor, payload, (nuint)buffer.Length, MsgTrunc, sender, &senderLength);
                        if (length < 0) errno = Marshal.GetLastWin32Error();
                    }
                    finally
                    {
                        if (added) handle.DangerousRelease();
                    }
                    if (length < 0)
                    {
                        if (errno == Eintr) continue;
                        if (errno == Eagain)
                        {
                            // The runtime may have made the descriptor non-blocking: wait for a datagram.
                            var wait = new PollFd { Descriptor = descriptor, Events = PollIn };
                            Poll(&wait, 1, -1);
                            continue;
                        }
                        throw new InvalidOperationException("recvfrom failed with errno " + errno);
                    }
                    if (length > buffer.Length)
                    {
                        if (run.AccountCut()) break;
                        continue;
                    }
                    if (run.IsWakeUp((int)length)) break;
                    int count = utf8.GetChars(buffer, 0, (int)length, chars, 0);
                    if (run.Account(chars, count)) break;
                }
            }
            run.End();
        }
    }
}
