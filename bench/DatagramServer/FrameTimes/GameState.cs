using System;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The live heap of the frame-time benchmark: a game's state as a server holds it, ordinary small managed objects
    /// (an entity with a few fields, a reference to another and a small array of its own) that survive the whole run, so
    /// every full collection has them to trace. Each frame moves the entities it sends updates for.
    /// </summary>
    internal sealed class GameState
    {
        /// <summary>Bytes of one entity as laid out on 64-bit runtimes: the object (header, 8 fields of 8 bytes) and its int[4].</summary>
        public const int BytesPerEntity = (16 + 8 * 8) + (16 + 8 + 4 * 4);

        private readonly Entity[] _entities;
        private int _cursor;

        public GameState(int megabytes)
        {
            long count = (long)megabytes * 1024 * 1024 / BytesPerEntity;
            _entities = new Entity[count];
            for (int i = 0; i < _entities.Length; i++)
            {
                _entities[i] = new Entity { Id = i, X = i, Y = -i, Z = 0.5, Vx = 1, Vy = 0.25, Inventory = new int[4] };
                if (i > 0) _entities[i].Near = _entities[(int)(unchecked((uint)i * 2654435761u) % (uint)i)];
            }
        }

        public int Count => _entities.Length;

        /// <summary>The state's bytes, as <see cref="BytesPerEntity"/> counts them (the entity array aside).</summary>
        public long Bytes => (long)_entities.Length * BytesPerEntity;

        /// <summary>Moves the next <paramref name="updates"/> entities one step; allocates nothing.</summary>
        public void Step(int updates)
        {
            if (_entities.Length == 0) return;
            for (int u = 0; u < updates; u++)
            {
                Entity e = _entities[_cursor];
                e.X += e.Vx;
                e.Y += e.Vy;
                e.Z = e.X - e.Y;
                e.Inventory![u & 3]++;
                if (++_cursor == _entities.Length) _cursor = 0;
            }
        }

        private sealed class Entity
        {
            public long Id;
            public double X, Y, Z, Vx, Vy;
            public Entity? Near;
            public int[]? Inventory;
        }
    }
}
