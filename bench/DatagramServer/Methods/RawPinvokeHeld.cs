using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Not a way to write a server: <see cref="RawPinvoke"/> plus the one thing a receive needs to be safe against a
    /// concurrent Dispose, a reference on the socket's <see cref="SafeHandle"/> for the length of each call
    /// (<c>DangerousAddRef</c>, then <c>DangerousRelease</c> in a <c>finally</c>), so the descriptor cannot be closed, and its
    /// number reused, under the call. Still no argument checks and no sender read. <c>raw-pinvoke-held</c> ÷
    /// <c>raw-pinvoke</c> is what that reference costs on the runtime at hand (Mono implements it in managed code, with a
    /// compare-exchange loop on each side).
    /// </summary>
    internal sealed unsafe class RawPinvokeHeld : ManagedMethod
    {
        public RawPinvokeHeld()
            : base("raw-pinvoke-held", "for scale only: raw-pinvoke with a reference held on socket's SafeHandle per call (DangerousAddRef, DangerousRelease in finally), no checks, sender not read") { }

        public override string? Unavailable => RawCalls.HeldRowUnavailable;

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            SafeHandle handle = RawCalls.SafeHandleOf(socket);
            byte* sender = stackalloc byte[RawCalls.SockaddrStorageSize];
            run.Begin();
            fixed (byte* payload = buffer)
            {
                while (true)
                {
                    uint senderLength = RawCalls.SockaddrStorageSize;
                    long length;
                    int errno = 0;
                    int descriptor;
                    bool added = false;
                    try
                    {
                        handle.DangerousAddRef(ref added);
                        descriptor = (int)handle.DangerousGetHandle();
                        length = RawCalls.RecvFrom(descriptor, payload, (nuint)buffer.Length, RawCalls.MsgTrunc, sender, &senderLength);
                        if (length < 0) errno = Marshal.GetLastWin32Error();
                    }
                    finally
                    {
                        if (added) handle.DangerousRelease();
                    }
                    if (length < 0 && RawCalls.Retry(errno, descriptor)) continue;
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
