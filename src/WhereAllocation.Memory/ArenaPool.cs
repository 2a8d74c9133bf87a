#nullable enable
using System;
using System.Threading;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// A thread-safe pool of small arenas for the short-lived parameters of native calls (a struct the call
    /// fills, an array of buffer descriptors, a string converted for it). Rent an arena, allocate from it several times (4096-byte
    /// pages; extra pages are allocated as needed and freed at return, beyond a few spare 4096-byte pages an
    /// arena keeps, see <see cref="DefaultSparePagesPerArena"/>), return it and everything it handed out is
    /// released at once:
    /// <code>
    /// using (ArenaLease arena = ArenaPool.Shared.Rent())
    /// {
    ///     byte* result = (byte*)arena.Allocate(128, 8);
    ///     Span&lt;Buffer&gt; buffers = arena.AllocateSpan&lt;Buffer&gt;(16);
    ///     ...native call...
    /// } // returned here
    /// </code>
    /// Any thread may rent and return; one arena is used by one thread at a time. <see cref="Dispose"/> may
    /// come from any thread at any time: it frees only idle arenas, under the pool's lock, and a rented arena
    /// stays usable until it is returned, then is freed. Renting and returning
    /// allocate no managed memory once the pool holds as many arenas as were ever rented at once.
    /// </summary>
    public sealed class ArenaPool : IDisposable
    {
        /// <summary>Bytes in an arena page: the first page is kept with the arena, extra pages are freed on return.</summary>
        public const int PageSize = 4096;

        /// <summary>The process-wide pool, for library code and callers that need no separate accounting.</summary>
        public static ArenaPool Shared { get; } = new ArenaPool();

        private readonly int _sparePages;
        private Arena?[] _idle = new Arena?[8];
        private int _idleCount;
        private SpinGate _gate;
        private long _nativeBytes;
        private int _rented;
        private long _rentCount;
        private bool _disposed;

        /// <summary>
        /// Extra 4096-byte pages an arena keeps for its next rent by default: 2. Why keep any: with glibc, a
        /// freed 4 KiB block next to the top of the heap is given back to the kernel (sbrk) and the next rent
        /// asks for it again, two system calls per page; measured, 10 x 1000 bytes took 416 ns freeing its two
        /// extra pages at each return and 54 ns keeping them (raw malloc/free: 253 ns). See the package README.md.
        /// </summary>
        public const int DefaultSparePagesPerArena = 2;

        /// <summary>
        /// A pool whose arenas keep up to <paramref name="sparePagesPerArena"/> 4096-byte extra pages across
        /// rents (beyond those, and any larger block, extra pages are freed at return); 0 frees every extra
        /// page at return. The first page of each arena is always kept.
        /// </summary>
        public ArenaPool(int sparePagesPerArena = DefaultSparePagesPerArena)
        {
            if (sparePagesPerArena < 0 || sparePagesPerArena > 1024) throw new ArgumentOutOfRangeException(nameof(sparePagesPerArena), "sparePagesPerArena " + sparePagesPerArena + " is not from 0 to 1024.");
            _sparePages = sparePagesPerArena;
        }

        /// <summary>Extra 4096-byte pages an arena keeps across rents (0: all freed at return).</summary>
        public int SparePagesPerArena => _sparePages;

        /// <summary>Arenas rented and not returned.</summary>
        public int Rented => Volatile.Read(ref _rented);

        /// <summary>Arenas waiting in the pool.</summary>
        public int Idle => Volatile.Read(ref _idleCount);

        /// <summary>Rents so far.</summary>
        public long RentCount => Interlocked.Read(ref _rentCount);

        /// <summary>Native bytes held by all of this pool's arenas, rented or idle (pages and page lists).</summary>
        public long NativeBytes => Interlocked.Read(ref _nativeBytes);

        internal void CountNative(long bytes) => Interlocked.Add(ref _nativeBytes, bytes);

        /// <summary>Takes an arena from the pool (or makes one) for the calling thread's use until the lease is returned.</summary>
        /// <exception cref="ObjectDisposedException">the pool was disposed.</exception>
        public ArenaLease Rent()
        {
            Arena? arena = null;
            _gate.Enter();
            if (_disposed)
            {
                _gate.Exit();
                throw new ObjectDisposedException(nameof(ArenaPool));
            }
            if (_idleCount != 0)
            {
                arena = _idle[--_idleCount];
                _idle[_idleCount] = null;
            }
            _rented++;
            _rentCount++;
            _gate.Exit();
            if (arena == null) arena = new Arena(this);
            arena.Rented = true;
            return new ArenaLease(arena, arena.ViewGeneration);
        }

        /// <summary>Returns a lease's arena: everything allocated from it is freed. Same as disposing the lease.</summary>
        /// <exception cref="InvalidOperationException">the lease was already returned, or is default.</exception>
        /// <exception cref="ArgumentException">the lease came from another pool.</exception>
        public void Return(ArenaLease lease)
        {
            if (lease.Arena != null && lease.Arena.Pool != this) throw new ArgumentException("this arena lease belongs to another ArenaPool.", nameof(lease));
            lease.Dispose();
        }

        internal void Return(Arena arena, int generation)
        {
            if (arena.Pool != this) throw new ArgumentException("this arena lease belongs to another ArenaPool.", nameof(arena));
            _gate.Enter();
            if (!arena.Rented || arena.ViewGeneration != generation)
            {
                _gate.Exit();
                throw new InvalidOperationException("this arena lease was already returned (returning an arena twice).");
            }
            arena.Rented = false;
            arena.ViewGeneration++; // every copy of this lease, and every view from it, is now stale
            _rented--;
            if (arena.ExtraPages == 0 && !_disposed && _idleCount < _idle.Length)
            {
                // The usual case, one lock: nothing to free, only the cursor to rewind.
                arena.Rewind();
                _idle[_idleCount++] = arena;
                _gate.Exit();
                return;
            }
            _gate.Exit();
            arena.Rewind(); // frees extra pages outside the lock
            _gate.Enter();
            bool keep = !_disposed;
            if (keep)
            {
                if (_idleCount == _idle.Length)
                {
                    // Grows only when more arenas are out at once than ever before (warm-up).
                    var larger = new Arena?[_idle.Length * 2];
                    Array.Copy(_idle, larger, _idleCount);
                    _idle = larger;
                }
                _idle[_idleCount++] = arena;
            }
            _gate.Exit();
            if (!keep) arena.Dispose();
        }

        /// <summary>Frees the arenas waiting in the pool (rented ones are freed when returned, if the pool is disposed by then).</summary>
        public void Trim()
        {
            while (true)
            {
                Arena? arena;
                _gate.Enter();
                if (_idleCount == 0)
                {
                    _gate.Exit();
                    return;
                }
                arena = _idle[--_idleCount];
                _idle[_idleCount] = null;
                _gate.Exit();
                arena!.Dispose();
            }
        }

        /// <summary>Frees idle arenas and makes further rents throw; arenas still rented are freed when returned.</summary>
        public void Dispose()
        {
            if (ReferenceEquals(this, Shared)) throw new InvalidOperationException("ArenaPool.Shared cannot be disposed; call Trim() to free its idle arenas.");
            _gate.Enter();
            _disposed = true;
            _gate.Exit();
            Trim();
        }
    }
}
