#nullable enable
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// One socket of a <see cref="DatagramShardGroup"/> group: receive on it from one thread, and reply from it (see the
    /// group's remarks for which clients reach it, and for how long).
    /// </summary>
    public sealed class DatagramShard
    {
        private readonly DatagramShardGroup _group;
        private int _closed;

        internal DatagramShard(DatagramShardGroup group, int index, Socket socket)
        {
            _group = group;
            Index = index;
            Socket = socket;
        }

        /// <summary>The shard's place in its group: it was the <c>Index</c>-th socket bound.</summary>
        public int Index { get; }

        /// <summary>
        /// The shard's socket, bound to the group's address and port: receive on it (for example with a
        /// <see cref="DatagramBatch"/>) and reply from it. Do not connect it (Linux would stop choosing it) and do
        /// not dispose it yourself: <see cref="Close"/> does, and keeps the group's count right.
        /// </summary>
        public Socket Socket { get; }

        /// <summary>True once the shard is closed.</summary>
        public bool IsClosed => Volatile.Read(ref _closed) != 0;

        /// <summary>
        /// Closes the shard's socket, from any thread; a second call does nothing. The datagrams queued on it are lost
        /// with it, the other shards keep theirs, and the OS spreads the clients over the remaining shards anew (most
        /// clients move: see <see cref="DatagramShardGroup"/>). A receive waiting on it ends in <see cref="System.ObjectDisposedException"/>.
        /// </summary>
        public void Close()
        {
            if (Interlocked.Exchange(ref _closed, 1) != 0) return;
            Socket.Dispose();
            _group.ShardClosed();
        }
    }
}
