#nullable enable
using System.Threading;

namespace WhereAllocation.Memory
{
    /// <summary>
    /// A non-reentrant spin lock for critical sections of a few instructions (a free-list push, a hash
    /// insert). It allocates nothing on any runtime, contended or not: a Monitor may inflate its lock into a
    /// sync block under contention, and SpinLock is a struct with debug-mode thread tracking we do not need.
    /// </summary>
    internal struct SpinGate
    {
        private int _taken;

        internal void Enter()
        {
            if (Interlocked.CompareExchange(ref _taken, 1, 0) != 0) EnterContended();
        }

        private void EnterContended()
        {
            var spin = new SpinWait();
            do spin.SpinOnce();
            while (Volatile.Read(ref _taken) != 0 || Interlocked.CompareExchange(ref _taken, 1, 0) != 0);
        }

        internal void Exit() => Volatile.Write(ref _taken, 0);
    }
}
