#nullable enable
using System;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// One address and port served by several datagram sockets, the shards, each meant to be read by its own
    /// thread: the operating system spreads the incoming datagrams over the shards by sender (Linux's
    /// SO_REUSEPORT), so that N threads on N cores share one port, and every client always reaches the same shard.
    /// </summary>
    /// <remarks>
    /// <para><b>Which shard a client reaches.</b> For every datagram, Linux chooses the shard from a hash of the
    /// datagram's source address and port and destination address and port, scaled to the number of sockets in the
    /// group; the hash's key is chosen at random once per boot. So all the datagrams of one client (one source address
    /// and port, sending to one address of the group) reach the same shard, for as long as the group is unchanged;
    /// which shard that is cannot be known in advance. What changes it:</para>
    /// <list type="bullet">
    /// <item>a shard closing (<see cref="DatagramShard.Close"/>, <see cref="Dispose"/>): Linux puts the group's last
    /// socket in the closed one's place and scales the hash to one socket fewer, so most clients move, not only the
    /// closed shard's. Datagrams already queued on the other shards stay there; those queued on the closed one are lost with it;</item>
    /// <item>a socket joining the group: Linux lets any socket of the same user (effective user id) that sets
    /// SO_REUSEPORT bind this address and port and take a share of the clients; that is the only check it makes;</item>
    /// <item>the client's source port changing (a NAT that maps it anew): for the hash that is another client;</item>
    /// <item>a shard socket that is connected (<see cref="Socket.Connect(EndPoint)"/>): Linux skips connected members
    /// when it chooses. Do not connect a shard.</item>
    /// </list>
    /// <para>The library neither sets SO_INCOMING_CPU on the shards (since Linux 6.1 that makes the kernel prefer the member
    /// whose CPU is the one handling the datagram, which trades this guarantee for CPU locality) nor attaches a BPF
    /// program to the group (SO_ATTACH_REUSEPORT_CBPF / _EBPF, which replaces the hash). Sources: Linux's socket(7) for
    /// SO_REUSEPORT; its net/core/sock_reuseport.c and net/ipv4/udp.c (net/ipv6/udp.c) for the choice by hash and
    /// what a closing member does.</para>
    /// <para><b>One thread per shard, no locks.</b> Read each shard from its own thread, with its own
    /// <see cref="DatagramBatch"/> (0 bytes per receive after construction, as everywhere). Since a client always reaches
    /// the same shard, a <see cref="PeerTable{T}"/> per shard, touched only by that shard's thread, needs no lock: every
    /// client is in exactly one table. Code that must survive a client moving (a shard closing, a NAT rebinding)
    /// identifies its clients by something in the datagrams too. <see cref="PinCurrentThread"/> keeps a shard's thread
    /// on one CPU.</para>
    /// <para><b>Replies.</b> Every shard is bound to the group's address and port, so a reply sent from any of them reaches
    /// the client from the port it sent to. Reply from the shard that received, on its own thread
    /// (<see cref="DatagramShard.Socket"/> with <see cref="SocketExtensions.SendTo_NonAlloc(Socket, ReadOnlySpan{byte}, SocketFlags, in EndPointKey)"/>
    /// or a <see cref="DatagramBatch"/>'s <see cref="DatagramBatch.Send"/>): nothing is shared between threads.</para>
    /// <para><b>Port 0.</b> Linux gives a socket that sets SO_REUSEPORT and binds port 0 a port that another such socket of the
    /// same user may already hold (the two then form one group). So for port 0 the port is first taken by a socket that does
    /// not share it, which Linux gives a port no socket holds; that socket closes and the shards bind the port it had.</para>
    /// <para><b>Platforms.</b> Linux (3.9 and later) only. macOS has SO_REUSEPORT, but it gives each unicast datagram to one
    /// socket of those sharing the port (the one bound last) rather than spreading them; Windows has no option that
    /// spreads a port over sockets. There, and where the native path does not run (<see cref="IsSupported"/>),
    /// <see cref="Bind"/> throws <see cref="PlatformNotSupportedException"/> before making any socket.</para>
    /// </remarks>
    public sealed class DatagramShardGroup : IDisposable
    {
        /// <summary>The most shards one group can have.</summary>
        public const int MaxShardCount = 1024;

        /// <summary>The CPUs <see cref="PinCurrentThread"/> knows: 0 to MaxCpu - 1.</summary>
        public const int MaxCpu = 1024;

        // How often a port-0 group takes a new port when another socket took the reserved one before the shards bound it.
        private const int PortAttempts = 8;

        private readonly DatagramShard[] _shards;
        private int _open;

        private DatagramShardGroup(Socket[] sockets, IPEndPoint localEndPoint)
        {
            _shards = new DatagramShard[sockets.Length];
            for (int i = 0; i < sockets.Length; i++) _shards[i] = new DatagramShard(this, i, sockets[i]);
            _open = sockets.Length;
            LocalEndPoint = localEndPoint;
        }

        /// <summary>
        /// True when <see cref="Bind"/> works in this process: Linux, with the native path (see <see cref="DatagramPathSettings"/>).
        /// </summary>
        public static bool IsSupported => NativeDatagramIO.IsSupported && OsSocketCalls.InUse.BalancedGroupUnsupported == null;

        /// <summary>True when <see cref="PinCurrentThread"/> works in this process (Linux).</summary>
        public static bool CanPinThreads => NativeDatagramIO.OsCallsWork && OsSocketCalls.InUse.ThreadPinningUnsupported == null;

        /// <summary>
        /// Opens <paramref name="shardCount"/> UDP sockets, each made by <see cref="DatagramSockets.Create"/> (no address
        /// sharing by accident, no reset reports), marks them as one group (SO_REUSEPORT) and binds them all to
        /// <paramref name="localEndPoint"/>; shard i is the i-th bound. With port 0 the OS chooses a port no other socket holds.
        /// </summary>
        /// <param name="localEndPoint">The address and port every shard binds (port 0: one the OS chooses, see the remarks).</param>
        /// <param name="shardCount">The number of shards, 1..<see cref="MaxShardCount"/>; typically one per core that receives.</param>
        /// <param name="dualMode">For an IPv6 address: accept IPv4 senders too (as IPv4-mapped addresses).</param>
        /// <exception cref="ArgumentNullException"><paramref name="localEndPoint"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="shardCount"/> is not 1..<see cref="MaxShardCount"/>.</exception>
        /// <exception cref="ArgumentException">The address is neither IPv4 nor IPv6, or <paramref name="dualMode"/> is asked with an IPv4 address.</exception>
        /// <exception cref="PlatformNotSupportedException">The OS cannot spread a port over sockets (macOS, Windows), or the native path does not run here (<see cref="IsSupported"/>).</exception>
        /// <exception cref="SocketException">The OS refused a socket, the option or the bind (AddressAlreadyInUse when a socket outside the group holds the port).</exception>
        public static DatagramShardGroup Bind(IPEndPoint localEndPoint, int shardCount, bool dualMode = false)
        {
            if (localEndPoint == null) throw new ArgumentNullException(nameof(localEndPoint));
            if (shardCount < 1 || shardCount > MaxShardCount) throw new ArgumentOutOfRangeException(nameof(shardCount), shardCount, "A group has 1.." + MaxShardCount + " shards.");
            AddressFamily family = localEndPoint.AddressFamily;
            if (family != AddressFamily.InterNetwork && family != AddressFamily.InterNetworkV6)
                throw new ArgumentException("Only IPv4 and IPv6 addresses are supported, not " + family + ".", nameof(localEndPoint));
            if (dualMode && family != AddressFamily.InterNetworkV6) throw new ArgumentException("Only an IPv6 address can be dual-mode.", nameof(dualMode));
            ThrowIfUnsupported();

            for (int attempt = 1; ; attempt++)
            {
                int port = localEndPoint.Port != 0 ? localEndPoint.Port : ReservePort(localEndPoint.Address, dualMode);
                var bound = new IPEndPoint(localEndPoint.Address, port);
                var sockets = new Socket[shardCount];
                try
                {
                    for (int i = 0; i < shardCount; i++)
                    {
                        sockets[i] = DatagramSockets.Create(family, dualMode);
                        NativeSocketAdmin.JoinBalancedGroup(sockets[i]);
                        sockets[i].Bind(bound);
                    }
                    return new DatagramShardGroup(sockets, bound);
                }
                catch (SocketException e) when (localEndPoint.Port == 0 && e.SocketErrorCode == SocketError.AddressAlreadyInUse && attempt < PortAttempts)
                {
                    // Another socket took the reserved port before the shards bound it: reserve another.
                    CloseAll(sockets);
                }
                catch
                {
                    CloseAll(sockets);
                    throw;
                }
            }
        }

        /// <summary>The address and port every shard is bound to (the port the OS chose, for port 0).</summary>
        public IPEndPoint LocalEndPoint { get; }

        /// <summary>The number of shards the group was made with, closed ones included; shard indices are 0 to Count - 1.</summary>
        public int Count => _shards.Length;

        /// <summary>The shards not closed yet: the sockets among which the OS spreads the clients now.</summary>
        public int OpenCount => Volatile.Read(ref _open);

        /// <summary>Shard <paramref name="index"/>: the <paramref name="index"/>-th socket bound.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not 0..<see cref="Count"/>-1.</exception>
        public DatagramShard this[int index]
        {
            get
            {
                if ((uint)index >= (uint)_shards.Length) throw new ArgumentOutOfRangeException(nameof(index), index, "The group has " + _shards.Length + " shards.");
                return _shards[index];
            }
        }

        /// <summary>
        /// Closes every shard (see <see cref="DatagramShard.Close"/>), from any thread. A receive waiting on a shard ends in
        /// <see cref="ObjectDisposedException"/>.
        /// </summary>
        public void Dispose()
        {
            foreach (DatagramShard shard in _shards) shard.Close();
        }

        /// <summary>Counts a shard out of the open ones (called once per shard).</summary>
        internal void ShardClosed() => Interlocked.Decrement(ref _open);

        /// <summary>
        /// Lets the calling thread run only on CPU <paramref name="cpu"/>, for the rest of its life or until pinned again:
        /// a shard's receive loop calls it first, so that its thread keeps its CPU and caches. One system call.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="cpu"/> is not 0..<see cref="MaxCpu"/>-1, or the OS refused it (offline, or not among the CPUs this process may use).</exception>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call here (see <see cref="CanPinThreads"/>): macOS, Windows.</exception>
        /// <exception cref="InvalidOperationException">The OS refused for another reason.</exception>
        public static void PinCurrentThread(int cpu)
        {
            if (cpu < 0 || cpu >= MaxCpu) throw new ArgumentOutOfRangeException(nameof(cpu), cpu, "A CPU number is 0.." + (MaxCpu - 1) + ".");
            OsSocketCalls os = OsSocketCalls.InUse;
            string? unsupported = os.ThreadPinningUnsupported;
            if (unsupported != null) throw new PlatformNotSupportedException(unsupported);
            if (!NativeDatagramIO.OsCallsWork) throw new PlatformNotSupportedException("The C library's calls cannot be reached through P/Invoke in this process.");
            SocketError error = os.PinCurrentThread(cpu);
            if (error == SocketError.InvalidArgument)
                throw new ArgumentOutOfRangeException(nameof(cpu), cpu, "The OS refused CPU " + cpu + ": it is offline, or not among the CPUs this process may use.");
            if (error != SocketError.Success) throw new InvalidOperationException("The OS refused to pin the thread to CPU " + cpu + " (" + error + ").");
        }

        private static void ThrowIfUnsupported()
        {
            string? unsupported = OsSocketCalls.InUse.BalancedGroupUnsupported;
            if (unsupported != null) throw new PlatformNotSupportedException(unsupported);
            if (!NativeDatagramIO.IsSupported)
                throw new PlatformNotSupportedException("Shards need the native path (the OS's socket calls through P/Invoke, and a way to the socket's handle), which does not run in this process.");
        }

        /// <summary>A port no socket holds now: the one the OS gives a socket that does not share its port.</summary>
        private static int ReservePort(IPAddress address, bool dualMode)
        {
            using Socket reservation = DatagramSockets.Create(address.AddressFamily, dualMode);
            reservation.Bind(new IPEndPoint(address, 0));
            return ((IPEndPoint)reservation.LocalEndPoint!).Port;
        }

        private static void CloseAll(Socket[] sockets)
        {
            foreach (Socket? socket in sockets) socket?.Dispose();
        }
    }
}
