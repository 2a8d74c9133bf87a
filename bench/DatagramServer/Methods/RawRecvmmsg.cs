using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Not a way to write a server: the batch counterpart of raw-pinvoke, the least any C# receiver that takes many
    /// datagrams per call can do on this runtime. A bare <c>[DllImport] recvmmsg</c> of up to 64 datagrams on the descriptor
    /// number, into slots in native memory set up once, with no reference held on the socket's handle and no checks; the
    /// kernel writes each sender's address, as for the library (a server needs it), but nothing reads it, and only each
    /// used slot's room for it is restored after a call. It decodes and checks exactly as
    /// library-batch does, so <c>library-batch</c> / <c>raw-recvmmsg</c> is the library's share in batches and
    /// <c>raw-recvmmsg</c> / <c>c-recvmmsg</c> the runtime's.
    /// </summary>
    internal sealed unsafe class RawRecvmmsg : ManagedMethod
    {
        private const int Batch = 64;
        private const int MsgWaitForOne = 0x10000;
        private const int NameSize = 32; // a sockaddr_in6 (28 bytes), rounded up

        public RawRecvmmsg()
            : base("raw-recvmmsg", "for scale only: [DllImport] recvmmsg of 64 on socket.Handle, no handle reference or checks, senders not asked for, Encoding.UTF8.GetChars") { }

        public override string? Unavailable =>
            RuntimeInformation.IsOSPlatform(OSPlatform.Linux) && sizeof(RawCalls.MMsgHdr) == 64 ? null : "it calls Linux's recvmmsg directly (x86-64 or arm64 layout)";

        public override void Receive(Socket socket, ReceiveRun run)
        {
            var chars = new char[run.BufferSize];
            Encoding utf8 = Encoding.UTF8;
            int descriptor = (int)socket.Handle;
            int slot = run.BufferSize;
            int bytes = Batch * (sizeof(RawCalls.MMsgHdr) + sizeof(RawCalls.IoVec) + NameSize + slot);
            IntPtr memory = Marshal.AllocHGlobal(bytes);
            try
            {
                var messages = (RawCalls.MMsgHdr*)memory;
                var iovecs = (RawCalls.IoVec*)(messages + Batch);
                byte* names = (byte*)(iovecs + Batch);
                byte* buffers = names + Batch * NameSize;
                new Span<byte>((void*)memory, bytes).Clear();
                for (int i = 0; i < Batch; i++)
                {
                    iovecs[i].Base = buffers + i * slot;
                    iovecs[i].Length = (nuint)slot;
                    messages[i].Iov = iovecs + i;
                    messages[i].IovLength = 1;
                    messages[i].Name = names + i * NameSize;
                    messages[i].NameLength = NameSize;
                }
                run.Begin();
                bool done = false;
                while (!done)
                {
                    // Blocks for the first datagram, then takes what else is queued, as wa-recv's recvmmsg does.
                    int received = RawCalls.RecvMMsg(descriptor, messages, Batch, MsgWaitForOne, null);
                    if (received < 0 && RawCalls.Retry(Marshal.GetLastWin32Error(), descriptor, "recvmmsg")) continue;
                    if (received > 0 && !run.IsWakeUp((int)messages[0].Length)) run.StampCall();
                    for (int i = 0; i < received && !done; i++)
                    {
                        int length = (int)messages[i].Length;
                        if ((messages[i].Flags & RawCalls.MsgTrunc) != 0)
                        {
                            done = run.AccountCutOfBatch();
                            continue;
                        }
                        if (run.IsWakeUp(length))
                        {
                            done = true;
                            break;
                        }
                        int count = utf8.GetChars(new ReadOnlySpan<byte>(buffers + i * slot, length), chars);
                        done = run.AccountOfBatch(chars, count);
                    }
                    for (int i = 0; i < received; i++) messages[i].NameLength = NameSize;
                }
                run.End();
            }
            finally
            {
                Marshal.FreeHGlobal(memory);
            }
        }
    }
}
