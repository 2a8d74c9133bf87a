using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Not a way to write a server: the least any C# receiver can do per datagram on this runtime, shown so
    /// that the library's own cost can be read off one run. A bare <c>[DllImport] recvfrom</c> on the
    /// descriptor number, with no reference held on the socket's handle (a concurrent Dispose could close the
    /// descriptor and the OS could reuse its number under the call), no argument checks, and the sender left
    /// as raw bytes that nothing reads. It decodes and checks exactly as the other methods do, so
    /// <c>library</c> / <c>raw-pinvoke</c> is the library's share and <c>raw-pinvoke</c> / <c>c-recvfrom</c>
    /// the runtime's (its P/Invoke transition, and the decode and check in JIT-compiled code).
    /// </summary>
    internal sealed unsafe class RawPinvoke : ManagedMethod
    {
        public RawPinvoke()
            : base("raw-pinvoke", "for scale only: [DllImport] recvfrom on socket.Handle, no handle reference or checks, sender not parsed, Encoding.UTF8.GetChars") { }

        public override string? Unavailable =>
            RuntimeInformation.IsOSPlatform(OSPlatform.Linux) ? null : "it calls Linux's recvfrom directly";

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            int descriptor = (int)socket.Handle;
            byte* sender = stackalloc byte[RawCalls.SockaddrStorageSize];
            run.Begin();
            fixed (byte* payload = buffer)
            {
                while (true)
                {
                    uint senderLength = RawCalls.SockaddrStorageSize;
                    // A blocking descriptor: the call waits, as Socket.ReceiveFrom does. MSG_TRUNC returns the
                    // real length of a datagram longer than the buffer, which is then counted as cut.
                    long length = RawCalls.RecvFrom(descriptor, payload, (nuint)buffer.Length, RawCalls.MsgTrunc, sender, &senderLength);
                    if (length < 0 && RawCalls.Retry(Marshal.GetLastWin32Error(), descriptor)) continue;
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
