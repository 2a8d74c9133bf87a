using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;

namespace WhereAllocation.Bench.BatchReceive
{
    /// <summary>Linux's view of a socket's receive queue (SO_MEMINFO): queued bytes and the drop counter.</summary>
    internal static unsafe class SocketQueue
    {
        private const int SolSocket = 1;
        private const int SoMemInfo = 55;
        private const int RmemAlloc = 0; // SK_MEMINFO_RMEM_ALLOC
        private const int Drops = 8;     // SK_MEMINFO_DROPS

        [DllImport("libc", EntryPoint = "getsockopt", SetLastError = true)]
        private static extern int GetSockOpt(int fd, int level, int name, void* value, uint* length);

        [DllImport("libc", EntryPoint = "clock_gettime", SetLastError = true)]
        private static extern int ClockGetTime(int clock, long* timespec);

        /// <summary>CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID; 64-bit struct timespec).</summary>
        internal static long ThreadCpuNanoseconds()
        {
            long* timespec = stackalloc long[2];
            if (ClockGetTime(3, timespec) != 0) return 0;
            return timespec[0] * 1_000_000_000 + timespec[1];
        }

        internal static void Read(Socket socket, out uint queuedBytes, out uint drops)
        {
            uint* info = stackalloc uint[9];
            uint length = 9 * sizeof(uint);
            if (GetSockOpt((int)socket.Handle, SolSocket, SoMemInfo, info, &length) != 0 || length < 9 * sizeof(uint))
                throw new InvalidOperationException("getsockopt(SO_MEMINFO) failed: errno " + Marshal.GetLastWin32Error());
            queuedBytes = info[RmemAlloc];
            drops = info[Drops];
        }

        /// <summary>
        /// Waits until the queue holds something and neither its bytes nor its drop counter changed for
        /// <paramref name="settleMilliseconds"/> (looked at every 5 ms), as wa-recv --drain does. False after 10 s.
        /// </summary>
        internal static bool WaitUntilSettled(Socket socket, int settleMilliseconds = 100)
        {
            var clock = Stopwatch.StartNew();
            long changedAt = 0;
            uint lastBytes = uint.MaxValue, lastDrops = uint.MaxValue;
            while (clock.ElapsedMilliseconds < 10_000)
            {
                Read(socket, out uint bytes, out uint drops);
                if (bytes != lastBytes || drops != lastDrops)
                {
                    lastBytes = bytes;
                    lastDrops = drops;
                    changedAt = clock.ElapsedMilliseconds;
                }
                else if (bytes > 0 && clock.ElapsedMilliseconds - changedAt >= settleMilliseconds)
                {
                    return true;
                }
                Thread.Sleep(5);
            }
            return false;
        }
    }
}
