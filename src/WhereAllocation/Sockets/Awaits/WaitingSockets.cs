#nullable enable
namespace WhereAllocation
{
    /// <summary>
    /// The one list of an <see cref="AwaitEngine"/>'s sockets on which an operation waits, each with what it is armed for
    /// (on the <see cref="AwaitedSocket"/>): the state every arming, report, sweep and Dispose works on. Its lock (the list
    /// object itself) is the engine's only lock; whoever touches the list, or a socket's armed state, holds it.
    /// </summary>
    /// <remarks>
    /// A socket joins when an operation on it starts waiting and leaves when its wrapper is disposed, or at the engine's
    /// next sweep once nothing on it waits. A set rebuilt per wait (<see cref="RebuiltSetPoller"/>) is made from it.
    /// </remarks>
    internal sealed class WaitingSockets
    {
        private AwaitedSocket?[] _items = new AwaitedSocket?[16];

        /// <summary>How many sockets are on the list.</summary>
        internal int Count { get; private set; }

        /// <summary>Socket <paramref name="index"/> (0 to <see cref="Count"/> - 1).</summary>
        internal AwaitedSocket this[int index] => _items[index]!;

        /// <summary>Adds <paramref name="socket"/> unless it is on the list. Allocates only when the list grows past its longest.</summary>
        internal void Add(AwaitedSocket socket)
        {
            if (socket.WaitingIndex >= 0) return;
            if (Count == _items.Length) System.Array.Resize(ref _items, Count * 2);
            socket.WaitingIndex = Count;
            _items[Count++] = socket;
        }

        /// <summary>Takes <paramref name="socket"/> off the list if it is on it (the last one takes its place).</summary>
        internal void Remove(AwaitedSocket socket)
        {
            int index = socket.WaitingIndex;
            if (index < 0) return;
            int last = --Count;
            AwaitedSocket moved = _items[last]!;
            _items[index] = moved;
            moved.WaitingIndex = index;
            _items[last] = null;
            socket.WaitingIndex = -1;
        }

        /// <summary>Empties the list.</summary>
        internal void Clear()
        {
            for (int i = 0; i < Count; i++)
            {
                _items[i]!.WaitingIndex = -1;
                _items[i] = null;
            }
            Count = 0;
        }
    }
}
