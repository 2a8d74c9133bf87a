using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The sweep's batch rows (--mode sweep): a <see cref="DatagramBatch"/> of <c>capacity</c> slots in the given mode,
    /// <c>Receive(socket, -1)</c>, read through <see cref="DatagramBatch.BeginRead"/>: per datagram its bytes and sender
    /// (<c>GetDatagram(i, out EndPointKey)</c>) and its truncation flag, then either the check of the bytes as received (as
    /// the C receiver checks them: no decode) or, count only, its length; the sender compared with the fill's either way.
    /// </summary>
    internal sealed class SweepBatch : ManagedMethod
    {
        private readonly int _capacity;
        private readonly DatagramBatchMode _mode;
        private readonly bool _check;

        public SweepBatch(int capacity, DatagramBatchMode mode, bool check)
            : base(NameOf(capacity, mode, check),
                "DatagramBatch(" + capacity + ", " + mode + ").Receive(socket, -1), BeginRead(): GetDatagram(i, out EndPointKey), IsTruncated(i), "
                + (check ? "the check of the bytes" : "count only (length and sender)"))
        {
            _capacity = capacity;
            _mode = mode;
            _check = check;
        }

        /// <summary>library-batch-N, with -single-calls for the loop of single calls and -count for count only.</summary>
        public static string NameOf(int capacity, DatagramBatchMode mode, bool check) =>
            "library-batch-" + capacity + (mode == DatagramBatchMode.SingleCalls ? "-single-calls" : "") + (check ? "" : "-count");

        public override string? Unavailable => DatagramBatch.IsModeAvailable(_mode) ? null : "DatagramBatchMode." + _mode + " is not available here";

        public override bool ChecksContent => _check;

        public override void Receive(Socket socket, ReceiveRun run)
        {
            using var batch = new DatagramBatch(_capacity, run.BufferSize, _mode);
            bool check = _check;
            run.Begin();
            bool done = false;
            while (!done)
            {
                batch.Receive(socket, -1); // waits for at least one datagram
                using DatagramBatch.Reader reader = batch.BeginRead();
                int received = reader.Count;
                // The clock is read once per receive call, as the C recvmmsg receiver does (not for the wake-up datagram).
                if (received > 0 && !run.IsWakeUp(reader.GetDatagram(0).Length)) run.StampCall();
                for (int i = 0; i < received && !done; i++)
                {
                    ReadOnlySpan<byte> datagram = reader.GetDatagram(i, out EndPointKey from);
                    if (reader.IsTruncated(i))
                    {
                        done = run.AccountCutOfBatch();
                        continue;
                    }
                    if (run.IsWakeUp(datagram.Length))
                    {
                        done = true;
                        break;
                    }
                    done = check ? run.AccountOfBatch(datagram, from) : run.AccountLengthOfBatch(datagram.Length, from);
                }
            }
            run.End();
        }
    }

    /// <summary>The one-datagram-per-call receive forms of the sweep, each timed against wa-recv --method recvfrom --no-check.</summary>
    internal enum OneCallForm
    {
        /// <summary>raw-pinvoke-count: a bare [DllImport] recvfrom on the descriptor, the sender not parsed: the least a C# receive can do.</summary>
        RawPinvoke,
        /// <summary>library-count: the drop-in call, ReceiveFrom_NonAlloc(byte[], offset, size, flags, IPEndPointNonAlloc).</summary>
        Compat,
        /// <summary>library-key-count: ReceiveFrom_NonAlloc(byte[], offset, size, flags, out EndPointKey).</summary>
        Key,
        /// <summary>library-span-count: ReceiveFrom_NonAlloc(Span&lt;byte&gt;), returning a ReceivedDatagram.</summary>
        Span,
        /// <summary>library-try-span-count: TryReceiveFrom_NonAlloc(Span&lt;byte&gt;, out ReceivedDatagram), which never waits.</summary>
        TrySpan,
        /// <summary>managed-nonalloc-count: the runtime's Socket.ReceiveFrom(byte[], ..., ref EndPoint), which allocates per datagram.</summary>
        Runtime,
        /// <summary>dotnet-socketaddress-count: the runtime's Socket.ReceiveFrom(Span&lt;byte&gt;, SocketFlags, SocketAddress) (.NET 8+).</summary>
        RuntimeSocketAddress,
    }

    /// <summary>
    /// The sweep's one-datagram-per-call rows, count only: each form's loop as an application writes it, each datagram's
    /// length (and, where the form gives one, its sender) compared with what was sent; nothing decoded or checked.
    /// </summary>
    internal sealed unsafe class OneCallCount : ManagedMethod
    {
        private readonly OneCallForm _form;

        public OneCallCount(OneCallForm form) : base(NameOf(form), SummaryOf(form))
        {
            _form = form;
        }

        public override bool ChecksContent => false;

        public override string? Unavailable
        {
            get
            {
                if (_form == OneCallForm.RawPinvoke && !RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) return "it calls Linux's recvfrom directly";
#if !NET8_0_OR_GREATER
                if (_form == OneCallForm.RuntimeSocketAddress)
                    return Machine.IsMono ? "the overload exists on .NET 8 and newer only, not on Mono" : "this is the netstandard2.1 build; the overload needs the .NET 8+ build";
#endif
                return null;
            }
        }

        private static string NameOf(OneCallForm form)
        {
            switch (form)
            {
                case OneCallForm.RawPinvoke: return "raw-pinvoke-count";
                case OneCallForm.Compat: return "library-count";
                case OneCallForm.Key: return "library-key-count";
                case OneCallForm.Span: return "library-span-count";
                case OneCallForm.TrySpan: return "library-try-span-count";
                case OneCallForm.Runtime: return "managed-nonalloc-count";
                default: return "dotnet-socketaddress-count";
            }
        }

        private static string SummaryOf(OneCallForm form)
        {
            switch (form)
            {
                case OneCallForm.RawPinvoke: return "for scale only: [DllImport] recvfrom on socket.Handle, no handle reference or checks, sender not parsed; count only";
                case OneCallForm.Compat: return "ReceiveFrom_NonAlloc(byte[], 0, n, None, IPEndPointNonAlloc), its CurrentKey compared; count only";
                case OneCallForm.Key: return "ReceiveFrom_NonAlloc(byte[], 0, n, None, out EndPointKey), the key compared; count only";
                case OneCallForm.Span: return "ReceiveFrom_NonAlloc(Span<byte>) -> ReceivedDatagram, its sender compared; count only";
                case OneCallForm.TrySpan: return "TryReceiveFrom_NonAlloc(Span<byte>, out ReceivedDatagram), its sender compared; count only";
                case OneCallForm.Runtime: return "Socket.ReceiveFrom(byte[], 0, n, None, ref EndPoint), one EndPoint variable; count only";
                default: return "Socket.ReceiveFrom(Span<byte>, SocketFlags, SocketAddress) (.NET 8+), one SocketAddress; count only";
            }
        }

        /// <summary>Each form's loop makes what it needs before <see cref="ReceiveRun.Begin"/>, so that only the loop's own bytes are counted.</summary>
        public override void Receive(Socket socket, ReceiveRun run)
        {
            var buffer = new byte[run.BufferSize];
            switch (_form)
            {
                case OneCallForm.RawPinvoke: RunRaw(socket, run, buffer); break;
                case OneCallForm.Compat: RunCompat(socket, run, buffer); break;
                case OneCallForm.Key: RunKey(socket, run, buffer); break;
                case OneCallForm.Span: RunSpan(socket, run, buffer); break;
                case OneCallForm.TrySpan: RunTrySpan(socket, run, buffer); break;
                case OneCallForm.Runtime: RunRuntime(socket, run, buffer); break;
                default: RunSocketAddress(socket, run, buffer); break;
            }
        }

        private static void RunRaw(Socket socket, ReceiveRun run, byte[] buffer)
        {
            int descriptor = (int)socket.Handle;
            byte* sender = stackalloc byte[RawCalls.SockaddrStorageSize];
            run.Begin();
            fixed (byte* payload = buffer)
            {
                while (true)
                {
                    uint senderLength = RawCalls.SockaddrStorageSize;
                    // MSG_TRUNC: a datagram longer than the buffer returns its real length, which then counts as wrong.
                    long length = RawCalls.RecvFrom(descriptor, payload, (nuint)buffer.Length, RawCalls.MsgTrunc, sender, &senderLength);
                    if (length < 0 && RawCalls.Retry(Marshal.GetLastWin32Error(), descriptor)) continue;
                    if (run.IsWakeUp((int)length)) break;
                    if (run.AccountLength((int)length)) break;
                }
            }
            run.End();
        }

        private static void RunCompat(Socket socket, ReceiveRun run, byte[] buffer)
        {
            var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(length)) break;
                if (run.AccountLength(length, from.CurrentKey)) break;
            }
            run.End();
        }

        private static void RunKey(Socket socket, ReceiveRun run, byte[] buffer)
        {
            run.Begin();
            while (true)
            {
                int length;
                EndPointKey from;
                try
                {
                    length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out from);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(length)) break;
                if (run.AccountLength(length, from)) break;
            }
            run.End();
        }

        private static void RunSpan(Socket socket, ReceiveRun run, byte[] buffer)
        {
            Span<byte> span = buffer;
            run.Begin();
            while (true)
            {
                ReceivedDatagram datagram = socket.ReceiveFrom_NonAlloc(span);
                if (datagram.Truncated)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(datagram.Length)) break;
                if (run.AccountLength(datagram.Length, datagram.RemoteEndPoint)) break;
            }
            run.End();
        }

        private static void RunTrySpan(Socket socket, ReceiveRun run, byte[] buffer)
        {
            Span<byte> span = buffer;
            run.Begin();
            while (true)
            {
                // Each fill is queued before the run lets the loop at it, so nothing to take means a datagram is missing: the
                // loop then spins until the controller, seeing no progress, sends its wake-up datagram.
                if (!socket.TryReceiveFrom_NonAlloc(span, out ReceivedDatagram datagram)) continue;
                if (datagram.Truncated)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(datagram.Length)) break;
                if (run.AccountLength(datagram.Length, datagram.RemoteEndPoint)) break;
            }
            run.End();
        }

        private static void RunRuntime(Socket socket, ReceiveRun run, byte[] buffer)
        {
            EndPoint remote = new IPEndPoint(IPAddress.Any, 0);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom(buffer, 0, buffer.Length, SocketFlags.None, ref remote);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(length)) break;
                if (run.AccountLength(length)) break;
            }
            run.End();
        }

#if NET8_0_OR_GREATER
        private static void RunSocketAddress(Socket socket, ReceiveRun run, byte[] buffer)
        {
            var address = new SocketAddress(socket.AddressFamily);
            run.Begin();
            while (true)
            {
                int length;
                try
                {
                    length = socket.ReceiveFrom(buffer.AsSpan(), SocketFlags.None, address);
                }
                catch (SocketException e) when (e.SocketErrorCode == SocketError.MessageSize)
                {
                    if (run.AccountCut()) break;
                    continue;
                }
                if (run.IsWakeUp(length)) break;
                if (run.AccountLength(length)) break;
            }
            run.End();
        }
#else
        private static void RunSocketAddress(Socket socket, ReceiveRun run, byte[] buffer) => throw new PlatformNotSupportedException("needs .NET 8");
#endif
    }
}
