using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// What one echo server counted: echoes, and from its <see cref="EchoMeter.WarmEchoes"/>th echo on (the first calls of
    /// each native function bind it, which allocates once per process) the serving thread's CPU time and bytes allocated.
    /// </summary>
    internal sealed class EchoMeter
    {
        /// <summary>Echoes before the CPU and bytes are counted.</summary>
        public const long WarmEchoes = 100;

        public long Echoes;
        public long CountedEchoes;

        /// <summary>
        /// Counts the whole process's CPU time and bytes instead of one thread's: for a loop whose continuations run on
        /// whichever pool thread takes them. The process's other threads wait meanwhile (the clients are another process).
        /// </summary>
        public bool ProcessWide { get; set; }
        public long CpuNs;
        public long Bytes;
        private long _startAt = WarmEchoes;
        private long _startEchoes = -1;
        private int _thread;
        private long _cpu0;
        private long _bytes0;

        /// <summary>Counts one echo; at the echo set to start the counts (the <see cref="WarmEchoes"/>th at first), starts them on the calling thread.</summary>
        public void Echoed()
        {
            if (++Echoes == _startAt) Start();
        }

        /// <summary>The loop moved to another thread (an await's continuation): the counts start again there, <paramref name="echoes"/> echoes from now.</summary>
        public void StartAfter(long echoes)
        {
            _startAt = Echoes + echoes;
            _startEchoes = -1;
        }

        private void Start()
        {
            _thread = Environment.CurrentManagedThreadId;
            _startEchoes = Echoes;
            _cpu0 = ProcessWide ? Linux.ProcessCpuNanoseconds() : Linux.ThreadCpuNanoseconds();
            _bytes0 = ProcessWide ? ProcessBytes() : GC.GetAllocatedBytesForCurrentThread();
        }

        // Every thread's allocations (exact: a precise count, taken twice per run, never per echo). .NET Core 3.0+ only: the
        // process-wide meter serves the runtime's awaits, which are .NET 8+ only.
        private static long ProcessBytes()
        {
#if NET8_0_OR_GREATER
            return GC.GetTotalAllocatedBytes(true);
#else
            throw new PlatformNotSupportedException("a process-wide byte count needs .NET Core 3.0 or later");
#endif
        }

        /// <summary>
        /// Ends the counts (the STOP datagram came). On another thread than the one they started on (an await's loop that moved
        /// at its last datagram) they are unknown: a thread's CPU time and bytes can only be read on that thread.
        /// </summary>
        public void Stop()
        {
            if (_startEchoes < 0 || (!ProcessWide && Environment.CurrentManagedThreadId != _thread)) return;
            Bytes = (ProcessWide ? ProcessBytes() : GC.GetAllocatedBytesForCurrentThread()) - _bytes0;
            CpuNs = (ProcessWide ? Linux.ProcessCpuNanoseconds() : Linux.ThreadCpuNanoseconds()) - _cpu0;
            CountedEchoes = Echoes - _startEchoes;
        }
    }

    /// <summary>
    /// One echo server of the ping-pong benchmark: on one thread, receive a datagram, send it back to its sender, until the
    /// 4-byte datagram "STOP" (every client datagram is longer). Each is written as a server's own code would be.
    /// </summary>
    internal abstract class EchoServer
    {
        protected EchoServer(string name, string description)
        {
            Name = name;
            Description = description;
        }

        public string Name { get; }
        public string Description { get; }

        /// <summary>Null when this runtime can run it, else why not.</summary>
        public virtual string? Unavailable => null;

        /// <summary>Serves on <paramref name="socket"/> (blocking, bound) until STOP, on the calling thread (pinned to <paramref name="cpu"/>, -1: not pinned) or the threads it moves to.</summary>
        public abstract void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu);

        /// <summary>The C# servers this build can run, in the order of the tables.</summary>
        public static List<EchoServer> All() => new List<EchoServer>
        {
            new LibraryOneCall(),
            new LibraryBatchServer(),
            new LibraryAwaitServer(),
            new RuntimeEndPointServer(),
            new RuntimeSocketAddressServer(),
            new RuntimeAwaitServer(),
        };

        /// <summary>The README's example: a blocking ReceiveFrom_NonAlloc into a reused buffer and endpoint, a SendTo_NonAlloc back.</summary>
        private sealed class LibraryOneCall : EchoServer
        {
            public LibraryOneCall()
                : base("library", "socket.ReceiveFrom_NonAlloc(buffer, 0, n, None, from), socket.SendTo_NonAlloc(buffer, 0, length, None, from); blocking socket, reused buffer and IPEndPointNonAlloc") { }

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
                while (true)
                {
                    int length = socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                    if (length == 4) break;
                    socket.SendTo_NonAlloc(buffer, 0, length, SocketFlags.None, from);
                    meter.Echoed();
                }
                meter.Stop();
            }
        }

        /// <summary>DatagramBatch: wait for at least one datagram, take every one queued (up to 64), answer them all with one send call.</summary>
        private sealed class LibraryBatchServer : EchoServer
        {
            public LibraryBatchServer()
                : base("library-batch", "DatagramBatch(64).Receive(socket, -1), every datagram added to a second batch with its sender (TryAdd), batch.Send(socket)") { }

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                using var received = new DatagramBatch(64, 2048);
                using var replies = new DatagramBatch(64, 2048);
                bool stop = false;
                while (!stop)
                {
                    int count = received.Receive(socket, Timeout.Infinite);
                    for (int i = 0; i < count; i++)
                    {
                        ReadOnlySpan<byte> datagram = received.GetDatagram(i, out EndPointKey sender);
                        if (datagram.Length == 4)
                        {
                            stop = true;
                            continue;
                        }
                        if (!replies.TryAdd(datagram, sender)) throw new InvalidOperationException("library-batch: the reply batch is full");
                    }
                    while (replies.PendingCount > 0) replies.Send(socket);
                    if (replies.FailedCount > 0) throw new InvalidOperationException("library-batch: " + replies.FailedCount + " replies failed");
                    int echoed = replies.Count;
                    replies.Clear();
                    for (int i = 0; i < echoed; i++) meter.Echoed();
                }
                meter.Stop();
            }
        }

        /// <summary>The awaits: AsyncDatagramSocket with IoThread continuations, so that the loop runs on the library's I/O thread.</summary>
        private sealed class LibraryAwaitServer : EchoServer
        {
            public LibraryAwaitServer()
                : base("library-async", "await AsyncDatagramSocket.ReceiveFromAsync(buffer, token), await SendToAsync(buffer[..length], datagram.RemoteEndPoint, token); IoThread continuations") { }

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu) => Loop(socket, buffer, meter, cpu).GetAwaiter().GetResult();

            private static async Task Loop(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                using var stopping = new CancellationTokenSource();
                CancellationToken token = stopping.Token;
                using var server = new AsyncDatagramSocket(socket, DatagramContinuations.IoThread);
                int thread = Environment.CurrentManagedThreadId;
                ulong ioThreadCpus = 0;
                int pinned = -1;
                while (true)
                {
                    ReceivedDatagram datagram = await server.ReceiveFromAsync(buffer, token);
                    if (Environment.CurrentManagedThreadId != thread)
                    {
                        // The loop runs on the library's I/O thread from its first await that waited (those that find a datagram
                        // queued go on where they are): the counts start there. That thread runs wherever the scheduler puts it
                        // (it was seen on the clients' CPU): on the server's CPU for the run, as every other server, and back after.
                        // Seen rarely: the loop moves again later; its counts then start again where it went (a thread's CPU
                        // time and bytes can only be read on that thread), one echo later.
                        thread = Environment.CurrentManagedThreadId;
                        if (ioThreadCpus == 0)
                        {
                            meter.StartAfter(EchoMeter.WarmEchoes);
                            ioThreadCpus = Linux.CurrentAffinity();
                            if (cpu >= 0 && Linux.PinCurrentThread(cpu)) pinned = thread;
                        }
                        else
                        {
                            meter.StartAfter(1);
                        }
                    }
                    if (datagram.Length == 4) break;
                    await server.SendToAsync(new ReadOnlyMemory<byte>(buffer, 0, datagram.Length), datagram.RemoteEndPoint, token);
                    meter.Echoed();
                }
                meter.Stop(); // on the thread the counts started on
                if (Environment.CurrentManagedThreadId == pinned) Linux.SetCurrentAffinity(ioThreadCpus);
            }
        }

        /// <summary>The runtime's own calls as most servers write them: ReceiveFrom(ref EndPoint), SendTo(EndPoint).</summary>
        private sealed class RuntimeEndPointServer : EchoServer
        {
            public RuntimeEndPointServer()
                : base("runtime", "socket.ReceiveFrom(buffer, ref EndPoint), socket.SendTo(buffer, 0, length, None, EndPoint); blocking socket, reused buffer") { }

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                EndPoint from = new IPEndPoint(IPAddress.Any, 0);
                while (true)
                {
                    int length = socket.ReceiveFrom(buffer, ref from);
                    if (length == 4) break;
                    socket.SendTo(buffer, 0, length, SocketFlags.None, from);
                    meter.Echoed();
                }
                meter.Stop();
            }
        }

        /// <summary>.NET 8+: the runtime's SocketAddress overloads, which reuse the sender's address.</summary>
        private sealed class RuntimeSocketAddressServer : EchoServer
        {
            public RuntimeSocketAddressServer()
                : base("runtime-socketaddress", ".NET 8+: socket.ReceiveFrom(span, None, SocketAddress), socket.SendTo(span[..length], None, SocketAddress); reused buffer and SocketAddress") { }

#if NET8_0_OR_GREATER
            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                var from = new SocketAddress(AddressFamily.InterNetwork);
                while (true)
                {
                    int length = socket.ReceiveFrom(buffer.AsSpan(), SocketFlags.None, from);
                    if (length == 4) break;
                    socket.SendTo(buffer.AsSpan(0, length), SocketFlags.None, from);
                    meter.Echoed();
                }
                meter.Stop();
            }
#else
            public override string? Unavailable => "the SocketAddress overloads are .NET 8+ only";

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu) => throw new PlatformNotSupportedException(Unavailable);
#endif
        }

        /// <summary>
        /// .NET 8+: the runtime's own awaits as a server on them writes them, with the SocketAddress overloads (no endpoint
        /// made per datagram). Their continuations run on the thread pool, on whichever worker takes them, so its CPU time and
        /// bytes are the whole process's (<see cref="EchoMeter.ProcessWide"/>): the pool's spinning workers and the runtime's
        /// epoll thread included, which is what this way of serving costs.
        /// </summary>
        private sealed class RuntimeAwaitServer : EchoServer
        {
            public RuntimeAwaitServer()
                : base("runtime-async", ".NET 8+: await socket.ReceiveFromAsync(memory, None, SocketAddress), await socket.SendToAsync(memory[..length], None, SocketAddress); reused buffer and SocketAddress; the runtime's continuations (thread pool); CPU and bytes: the whole process's") { }

#if NET8_0_OR_GREATER
            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu)
            {
                meter.ProcessWide = true;
                Loop(socket, buffer, meter).GetAwaiter().GetResult();
            }

            private static async Task Loop(Socket socket, byte[] buffer, EchoMeter meter)
            {
                var from = new SocketAddress(socket.AddressFamily);
                while (true)
                {
                    int length = await socket.ReceiveFromAsync(buffer.AsMemory(), SocketFlags.None, from);
                    if (length == 4) break;
                    await socket.SendToAsync(buffer.AsMemory(0, length), SocketFlags.None, from);
                    meter.Echoed();
                }
                meter.Stop();
            }
#else
            public override string? Unavailable => "the SocketAddress overloads of ReceiveFromAsync and SendToAsync are .NET 8+ only";

            public override void Serve(Socket socket, byte[] buffer, EchoMeter meter, int cpu) => throw new PlatformNotSupportedException(Unavailable);
#endif
        }
    }
}
