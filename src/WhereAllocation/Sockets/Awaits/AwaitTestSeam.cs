#nullable enable
using System.Collections.Generic;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// The await engine's test hooks and test-only counters, in one place rather than in the engine, its pollers and its
    /// operations. Production pays for them: one read of <see cref="ReportEveryArmedAsReady"/> per turn of the engine's loop
    /// and per arming, one read of <see cref="FailThreadStart"/> per start of the I/O thread, one of <see cref="FailPolls"/>
    /// per wait of a poller that rebuilds its set, and an interlocked increment per empty report and per late IoThread
    /// awaiter (both rare: readiness that brought nothing, an awaiter that came after its operation completed).
    /// </summary>
    /// <remarks>
    /// Every field a test sets is initialised: Unity compiles the package without the tests' InternalsVisibleTo and would
    /// otherwise warn (as an error) that it is never assigned.
    /// </remarks>
    internal static class AwaitTestSeam
    {
        /// <summary>The next start of the I/O thread fails as if the runtime could not create it.</summary>
        internal static volatile bool FailThreadStart = false;

        /// <summary>
        /// Every socket armed for reading is reported readable at once, whether or not anything came. Turned off, it forgets the
        /// sockets armed meanwhile, so that it holds no registration (nor its socket) after the test.
        /// </summary>
        internal static bool ReportEveryArmedAsReady
        {
            get => s_reportEveryArmedAsReady;
            set
            {
                s_reportEveryArmedAsReady = value;
                if (value) return;
                lock (s_armedForReading) s_armedForReading.Clear();
            }
        }

        private static volatile bool s_reportEveryArmedAsReady = false;

        /// <summary>How many of the next waits of a poller that rebuilds its set fail as a whole, as Wine's WSAPoll does when a socket of its set is closed during the call.</summary>
        internal static int FailPolls = 0;

        // The sockets armed for reading since the last report, while ReportEveryArmedAsReady is on; under its own lock
        // (the two engines share it).
        private static readonly List<AwaitedSocket> s_armedForReading = new List<AwaitedSocket>();

        private static long s_emptyReports;
        private static long s_ioThreadLateAwaiters;

        /// <summary>True when this wait is to fail (see <see cref="FailPolls"/>); counts one failure down.</summary>
        internal static bool TakePollFailure() => Volatile.Read(ref FailPolls) > 0 && Interlocked.Decrement(ref FailPolls) >= 0;

        /// <summary>Records <paramref name="socket"/> as armed for reading, for <see cref="TakeArmedForReading"/>. Called only while <see cref="ReportEveryArmedAsReady"/> is on.</summary>
        internal static void ArmedForReading(AwaitedSocket socket)
        {
            lock (s_armedForReading)
            {
                if (!s_armedForReading.Contains(socket)) s_armedForReading.Add(socket);
            }
        }

        /// <summary>
        /// Moves the sockets of <paramref name="engine"/> armed for reading since the last call into <paramref name="into"/>,
        /// from index 0; returns how many.
        /// </summary>
        internal static int TakeArmedForReading(AwaitEngine engine, ref AwaitedSocket?[] into)
        {
            int count = 0;
            lock (s_armedForReading)
            {
                for (int i = s_armedForReading.Count - 1; i >= 0; i--)
                {
                    AwaitedSocket socket = s_armedForReading[i];
                    if (!ReferenceEquals(socket.Engine, engine)) continue;
                    s_armedForReading.RemoveAt(i);
                    if (count == into.Length) System.Array.Resize(ref into, into.Length * 2);
                    into[count++] = socket;
                }
            }
            return count;
        }

        /// <summary>How many reports found nothing for the operation they woke, since the process started (both engines).</summary>
        internal static long EmptyReports => Interlocked.Read(ref s_emptyReports);

        /// <summary>Counts a report that found nothing.</summary>
        internal static void CountEmptyReport() => Interlocked.Increment(ref s_emptyReports);

        /// <summary>How many IoThread-mode awaits (receives and sends) resumed through the thread pool because the operation completed before the awaiter registered.</summary>
        internal static long IoThreadLateAwaiters => Interlocked.Read(ref s_ioThreadLateAwaiters);

        /// <summary>Counts an IoThread-mode awaiter that resumes through the thread pool.</summary>
        internal static void CountLateAwaiter() => Interlocked.Increment(ref s_ioThreadLateAwaiters);
    }
}
