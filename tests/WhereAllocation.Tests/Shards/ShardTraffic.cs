using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A shard group on loopback and many client sockets that send to it, each from its own port: the
    /// datagrams carry the client's number and a sequence number, so a receiver can tell who sent what.
    /// </summary>
    public sealed class ShardTraffic : IDisposable
    {
        public const int DatagramBytes = 16;
        private const int Magic = 0x57415348; // "WASH"

        public DatagramShardGroup Shards { get; }
        public Socket[] Clients { get; }
        public Family Family { get; }

        /// <summary>Where the clients send: the group's port on 127.0.0.1, or ::1 for IPv6.</summary>
        public EndPointKey Target { get; }

        public ShardTraffic(Family family, int shardCount, int clientCount)
        {
            Family = family;
            IPAddress groupAddress = family == Family.IPv4 ? IPAddress.Loopback : family == Family.IPv6 ? IPAddress.IPv6Loopback : Loopback.MappedLoopback;
            Shards = DatagramShardGroup.Bind(new IPEndPoint(groupAddress, 0), shardCount, family == Family.DualMode);
            foreach (int i in Range(shardCount))
            {
                // Room for every datagram a test queues on one shard (Linux doubles it, up to 2 x net.core.rmem_max).
                Shards[i].Socket.ReceiveBufferSize = 4 * 1024 * 1024;
            }
            Target = EndPointKey.FromIPEndPoint(new IPEndPoint(family == Family.IPv6 ? IPAddress.IPv6Loopback : IPAddress.Loopback, Shards.LocalEndPoint.Port));
            Clients = new Socket[clientCount];
            for (int c = 0; c < clientCount; c++)
            {
                Clients[c] = family == Family.IPv6
                    ? Loopback.Bound(AddressFamily.InterNetworkV6, IPAddress.IPv6Loopback, false)
                    : Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            }
        }

        public static int[] Range(int n)
        {
            var r = new int[n];
            for (int i = 0; i < n; i++) r[i] = i;
            return r;
        }

        /// <summary>Sends datagram <paramref name="sequence"/> of client <paramref name="client"/> (0 B: the key overload and a reused buffer).</summary>
        public void Send(int client, int sequence, byte[] scratch)
        {
            Write(scratch, client, sequence);
            // Not Assert.Equal: it allocates, and allocation tests send through here.
            if (Clients[client].SendTo_NonAlloc(new ReadOnlySpan<byte>(scratch, 0, DatagramBytes), Target) != DatagramBytes) throw new InvalidOperationException("a short send");
        }

        public static void Write(byte[] buffer, int client, int sequence)
        {
            Span<int> words = MemoryMarshal.Cast<byte, int>(buffer.AsSpan(0, DatagramBytes));
            words[0] = Magic;
            words[1] = client;
            words[2] = sequence;
            words[3] = client * 31 + sequence;
        }

        /// <summary>Reads a datagram written by <see cref="Write"/>; false when it is not one.</summary>
        public static bool TryRead(ReadOnlySpan<byte> datagram, out int client, out int sequence)
        {
            client = sequence = -1;
            if (datagram.Length != DatagramBytes || MemoryMarshal.Read<int>(datagram) != Magic) return false;
            client = MemoryMarshal.Read<int>(datagram.Slice(4));
            sequence = MemoryMarshal.Read<int>(datagram.Slice(8));
            return MemoryMarshal.Read<int>(datagram.Slice(12)) == client * 31 + sequence;
        }

        /// <summary>
        /// Which shard each client reaches: every client sends one datagram (sequence <paramref name="sequence"/>),
        /// and every shard is read until all of them came (at most 10 s). Asserts that each came once, intact.
        /// </summary>
        public int[] Discover(int sequence)
        {
            var shardOf = new int[Clients.Length];
            for (int c = 0; c < shardOf.Length; c++) shardOf[c] = -1;
            var scratch = new byte[DatagramBytes];
            for (int c = 0; c < Clients.Length; c++) Send(c, sequence, scratch);
            using var batch = new DatagramBatch(64, 64);
            int found = 0;
            var watch = Stopwatch.StartNew();
            while (found < Clients.Length && watch.ElapsedMilliseconds < 10_000)
            {
                int before = found;
                for (int s = 0; s < Shards.Count; s++)
                {
                    if (Shards[s].IsClosed) continue;
                    int n = batch.Receive(Shards[s].Socket);
                    for (int i = 0; i < n; i++)
                    {
                        Assert.True(TryRead(batch.GetDatagram(i), out int client, out int seq), "a damaged datagram on shard " + s);
                        Assert.Equal(sequence, seq);
                        Assert.Equal(-1, shardOf[client]);
                        shardOf[client] = s;
                        found++;
                    }
                }
                if (found == before) Thread.Sleep(1);
            }
            Assert.Equal(Clients.Length, found);
            return shardOf;
        }

        /// <summary>Waits (at most 2 s) until no open shard's queue has changed for 50 ms: the kernel has queued every datagram sent.</summary>
        public void Settle()
        {
            long last = -1;
            var still = Stopwatch.StartNew();
            var watch = Stopwatch.StartNew();
            while (watch.ElapsedMilliseconds < 2000)
            {
                long queued = 0;
                for (int s = 0; s < Shards.Count; s++)
                    if (!Shards[s].IsClosed) queued = queued * 31 + Shards[s].Socket.GetDatagramStatus().QueuedReceiveBytes;
                if (queued != last)
                {
                    last = queued;
                    still.Restart();
                }
                else if (still.ElapsedMilliseconds >= 50) return;
                Thread.Sleep(5);
            }
        }

        public long Drops()
        {
            long drops = 0;
            for (int s = 0; s < Shards.Count; s++)
                if (!Shards[s].IsClosed) drops += Shards[s].Socket.GetDatagramStatus().DroppedDatagrams;
            return drops;
        }

        public void Dispose()
        {
            Shards.Dispose();
            foreach (Socket client in Clients) client.Dispose();
        }
    }
}
