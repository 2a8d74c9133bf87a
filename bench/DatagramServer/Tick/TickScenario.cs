using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// A game server's frame: the server socket sends one update per entity (the benchmark's datagram,
    /// its sequence = frame * entities + entity) to each of K client sockets, and the clients, in the
    /// same process and on the same thread, receive and check every update. Done the allocating way
    /// and this library's way; reported as bytes allocated per frame and GCs.
    /// </summary>
    internal static class TickScenario
    {
        private const int WarmUpFrames = 5;

        public static List<TickRow> Run(Options options, Progress progress)
        {
            var rows = new List<TickRow>();
            foreach (TickWay way in new TickWay[] { new AllocatingWay(), new LibraryWay() })
            {
                TickRow? row = null;
                Exception? failure = null;
                // On its own thread, pinned like the stream receivers, so that its allocation count is its own.
                var thread = new Thread(() =>
                {
                    Linux.PinCurrentThread(options.ReceiverCpu);
                    try { row = RunWay(way, options); }
                    catch (Exception e) { failure = e; }
                }, 1024 * 1024) { IsBackground = true, Name = "tick " + way.Name };
                thread.Start();
                while (!thread.Join(200)) progress.Show("tick " + way.Name, "running");
                if (failure != null) throw new InvalidOperationException("tick " + way.Name + " failed: " + failure.Message, failure);
                rows.Add(row!);
                progress.Done("tick " + way.Name, (row!.BytesPerFrame == null ? AllocationCanary.NoCounter : Progress.Count((long)row.BytesPerFrame.Value) + " B/frame") + ", " + row.Gen0 + " gen0, lost " + row.Lost);
            }
            return rows;
        }

        private static TickRow RunWay(TickWay way, Options options)
        {
            int clients = options.TickClients, entities = options.TickEntities;
            using var server = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var sockets = new Socket[clients];
            var endPoints = new IPEndPoint[clients];
            try
            {
                for (int c = 0; c < clients; c++)
                {
                    sockets[c] = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                    sockets[c].Bind(new IPEndPoint(IPAddress.Loopback, 0));
                    Linux.SetReceiveBuffer(sockets[c], options.ReceiveBuffer);
                    sockets[c].ReceiveTimeout = 2000; // only a lost update would wait this long
                    endPoints[c] = (IPEndPoint)sockets[c].LocalEndPoint!;
                }
                var frame = new TickFrame(server, sockets, endPoints, entities, options.Size, options.BufferSize);
                way.Prepare(frame);
                for (int f = 0; f < Math.Min(WarmUpFrames, options.TickFrames); f++) way.Run(frame, f);

                GC.Collect();
                GC.WaitForPendingFinalizers();
                GC.Collect();
                int gen0 = GC.CollectionCount(0), gen1 = GC.CollectionCount(1), gen2 = GC.CollectionCount(2);
                long lost = 0;
                long before = GC.GetAllocatedBytesForCurrentThread();
                long start = Stopwatch.GetTimestamp();
                for (int f = 0; f < options.TickFrames; f++) lost += way.Run(frame, WarmUpFrames + f);
                long end = Stopwatch.GetTimestamp();
                long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
                return new TickRow(options.RuntimeLabel, way.Name, clients, entities, options.TickFrames, lost, (end - start) / (double)Stopwatch.Frequency,
                    allocated, GC.CollectionCount(0) - gen0, GC.CollectionCount(1) - gen1, GC.CollectionCount(2) - gen2);
            }
            finally
            {
                foreach (Socket? s in sockets) s?.Dispose();
            }
        }
    }

    /// <summary>The sockets and the per-client bookkeeping of one tick scenario.</summary>
    internal sealed class TickFrame
    {
        public TickFrame(Socket server, Socket[] clients, IPEndPoint[] clientEndPoints, int entities, int size, int bufferSize)
        {
            Server = server;
            Clients = clients;
            ClientEndPoints = clientEndPoints;
            Entities = entities;
            Size = size;
            BufferSize = bufferSize;
            Seen = new bool[entities];
        }

        public Socket Server { get; }
        public Socket[] Clients { get; }
        public IPEndPoint[] ClientEndPoints { get; }
        public int Entities { get; }
        public int Size { get; }
        public int BufferSize { get; }
        public bool[] Seen { get; }

        /// <summary>Counts one decoded update of <paramref name="frame"/>; returns 1 when it is valid, of this frame, and new.</summary>
        public int Accept(WaCheckResult result, long sequence, int frame)
        {
            long entity = sequence - (long)frame * Entities;
            if (result != WaCheckResult.Ok || (ulong)entity >= (ulong)Entities || Seen[entity]) return 0;
            Seen[entity] = true;
            return 1;
        }

        public void StartClient() => Array.Clear(Seen, 0, Seen.Length);
    }

    /// <summary>One way of running a frame.</summary>
    internal abstract class TickWay
    {
        public abstract string Name { get; }

        public virtual void Prepare(TickFrame frame) { }

        /// <summary>Sends every update of frame <paramref name="f"/> and receives them all; returns how many were lost.</summary>
        public abstract long Run(TickFrame frame, int f);
    }

    /// <summary>
    /// As a server is first written: a new byte[] per update and the runtime's SendTo(EndPoint); per
    /// received update a new buffer, ReceiveFrom(ref EndPoint) and a new string.
    /// </summary>
    internal sealed class AllocatingWay : TickWay
    {
        public override string Name => "allocating";

        public override long Run(TickFrame frame, int f)
        {
            int entities = frame.Entities;
            for (int c = 0; c < frame.Clients.Length; c++)
            {
                for (int e = 0; e < entities; e++)
                {
                    var update = new byte[frame.Size];
                    WaFormat.Fill(update, 0, frame.Size, (long)f * entities + e);
                    frame.Server.SendTo(update, frame.ClientEndPoints[c]);
                }
            }
            long lost = 0;
            EndPoint from = new IPEndPoint(IPAddress.Any, 0);
            for (int c = 0; c < frame.Clients.Length; c++)
            {
                frame.StartClient();
                int good = 0;
                for (int e = 0; e < entities; e++)
                {
                    var buffer = new byte[frame.BufferSize];
                    int length;
                    try { length = frame.Clients[c].ReceiveFrom(buffer, ref from); }
                    catch (SocketException x) when (x.SocketErrorCode == SocketError.TimedOut) { break; }
                    string text = Encoding.UTF8.GetString(buffer, 0, length);
                    good += frame.Accept(WaFormat.Check(text, out long sequence), sequence, f);
                }
                lost += entities - good;
            }
            return lost;
        }
    }

    /// <summary>
    /// This library's way: one reused update buffer sent with SendTo_NonAlloc to each client's
    /// <see cref="EndPointKey"/>; receives with ReceiveFrom_NonAlloc into one reused
    /// <see cref="IPEndPointNonAlloc"/>, reused byte and char buffers.
    /// </summary>
    internal sealed class LibraryWay : TickWay
    {
        private byte[] _update = Array.Empty<byte>();
        private byte[] _buffer = Array.Empty<byte>();
        private char[] _chars = Array.Empty<char>();
        private EndPointKey[] _clientKeys = Array.Empty<EndPointKey>();
        private readonly IPEndPointNonAlloc _from = new IPEndPointNonAlloc(IPAddress.Any, 0);

        public override string Name => "library";

        public override void Prepare(TickFrame frame)
        {
            _update = new byte[frame.Size];
            _buffer = new byte[frame.BufferSize];
            _chars = new char[frame.BufferSize];
            _clientKeys = new EndPointKey[frame.Clients.Length];
            for (int c = 0; c < _clientKeys.Length; c++) _clientKeys[c] = EndPointKey.FromIPEndPoint(frame.ClientEndPoints[c]);
        }

        public override long Run(TickFrame frame, int f)
        {
            int entities = frame.Entities;
            Encoding utf8 = Encoding.UTF8;
            for (int c = 0; c < frame.Clients.Length; c++)
            {
                for (int e = 0; e < entities; e++)
                {
                    WaFormat.Fill(_update, 0, frame.Size, (long)f * entities + e);
                    frame.Server.SendTo_NonAlloc(_update, 0, frame.Size, SocketFlags.None, in _clientKeys[c]);
                }
            }
            long lost = 0;
            for (int c = 0; c < frame.Clients.Length; c++)
            {
                frame.StartClient();
                int good = 0;
                for (int e = 0; e < entities; e++)
                {
                    int length;
                    try { length = frame.Clients[c].ReceiveFrom_NonAlloc(_buffer, 0, _buffer.Length, SocketFlags.None, _from); }
                    catch (SocketException x) when (x.SocketErrorCode == SocketError.TimedOut) { break; }
                    int count = utf8.GetChars(_buffer, 0, length, _chars, 0);
                    good += frame.Accept(WaFormat.Check(_chars, count, out long sequence), sequence, f);
                }
                lost += entities - good;
            }
            return lost;
        }
    }

    /// <summary>One row of tick.csv.</summary>
    internal sealed class TickRow
    {
        public TickRow(string runtime, string way, int clients, int entities, int frames, long lost, double seconds, long allocatedBytes, int gen0, int gen1, int gen2)
        {
            Runtime = runtime;
            Way = way;
            Clients = clients;
            Entities = entities;
            Frames = frames;
            Lost = lost;
            Seconds = seconds;
            AllocatedBytes = allocatedBytes;
            Gen0 = gen0;
            Gen1 = gen1;
            Gen2 = gen2;
        }

        public string Runtime { get; }
        public string Way { get; }
        public int Clients { get; }
        public int Entities { get; }
        public int Frames { get; }
        public long Lost { get; }
        public double Seconds { get; }
        public long AllocatedBytes { get; }
        public int Gen0 { get; }
        public int Gen1 { get; }
        public int Gen2 { get; }

        /// <summary>Updates sent and received per frame: entities x clients.</summary>
        public long DatagramsPerFrame => (long)Entities * Clients;

        public double FramesPerSecond => Seconds > 0 ? Frames / Seconds : 0;

        /// <summary>Bytes per frame; null where the thread's counter was not seen to count (Boehm: it says 0 whatever is allocated).</summary>
        public double? BytesPerFrame => !FrameCounters.HasAllocationCounter ? (double?)null : Frames > 0 ? (double)AllocatedBytes / Frames : 0;
    }
}
