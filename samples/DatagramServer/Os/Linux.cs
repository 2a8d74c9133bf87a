using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation.Samples.DatagramServer
{
    /// <summary>
    /// The few Linux calls the benchmark needs and the runtimes do not offer: CPU pinning, raw socket
    /// options (SO_RCVBUF exactly as the C receiver sets it, the socket's drop counter), and stopping and
    /// resuming a child process. All of them run outside the timed receive loops.
    /// </summary>
    internal static unsafe class Linux
    {
        private const string Lib = "libc";
        private const int SolSocket = 1;
        private const int SoRcvbuf = 8;
        private const int SoMeminfo = 55;
        private const int SkMeminfoRmemAlloc = 0;
        private const int SkMeminfoDrops = 8;
        private const int SigCont = 18;
        private const int SigStop = 19;

        [DllImport(Lib, EntryPoint = "sched_setaffinity", SetLastError = true)]
        private static extern int SchedSetAffinity(int pid, nuint size, ulong* mask);

        [DllImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
        private static extern int GetSockOpt(int fd, int level, int name, void* value, uint* length);

        [DllImport(Lib, EntryPoint = "setsockopt", SetLastError = true)]
        private static extern int SetSockOpt(int fd, int level, int name, void* value, uint length);

        [DllImport(Lib, EntryPoint = "clock_gettime", SetLastError = true)]
        private static extern int ClockGetTime(int clock, long* timespec);

        [DllImport(Lib, EntryPoint = "kill", SetLastError = true)]
        private static extern int Kill(int pid, int signal);

        public static bool IsLinux => RuntimeInformation.IsOSPlatform(OSPlatform.Linux);

        /// <summary>Pins the calling thread to one CPU (pid 0 = this thread). Returns false when the kernel refused.</summary>
        public static bool PinCurrentThread(int cpu)
        {
            if (cpu < 0 || cpu >= 64) return false;
            ulong mask = 1UL << cpu;
            return SchedSetAffinity(0, sizeof(ulong), &mask) == 0;
        }

        /// <summary>
        /// Asks for a receive buffer with setsockopt(SO_RCVBUF), the way the C receiver does, and returns what
        /// the kernel granted (Linux doubles the request and caps it at twice net.core.rmem_max). Not through
        /// Socket.ReceiveBufferSize: Mono halves the value it hands to the kernel, so the same request
        /// would give Mono a different buffer than CoreCLR and the C programs.
        /// </summary>
        public static int SetReceiveBuffer(Socket socket, int bytes)
        {
            int fd = (int)socket.Handle;
            int value = bytes;
            if (SetSockOpt(fd, SolSocket, SoRcvbuf, &value, sizeof(int)) != 0)
                throw new InvalidOperationException("setsockopt(SO_RCVBUF) failed: errno " + Marshal.GetLastWin32Error());
            return ReceiveBuffer(socket);
        }

        /// <summary>getsockopt(SO_RCVBUF): the receive buffer the kernel granted.</summary>
        public static int ReceiveBuffer(Socket socket)
        {
            int value = 0;
            uint length = sizeof(int);
            if (GetSockOpt((int)socket.Handle, SolSocket, SoRcvbuf, &value, &length) != 0)
                throw new InvalidOperationException("getsockopt(SO_RCVBUF) failed: errno " + Marshal.GetLastWin32Error());
            return value;
        }

        /// <summary>
        /// The socket's own drop counter (sk_drops: datagrams the kernel accepted for this socket but threw
        /// away, almost always because the receive queue was full) and the bytes queued now, read with
        /// getsockopt(SO_MEMINFO). Per socket, so other programs on the machine do not disturb it.
        /// </summary>
        public static bool TryReadMemInfo(Socket socket, out long drops, out long queuedBytes)
        {
            uint* info = stackalloc uint[16];
            for (int i = 0; i < 16; i++) info[i] = 0;
            uint length = 16 * sizeof(uint);
            drops = 0;
            queuedBytes = 0;
            if (GetSockOpt((int)socket.Handle, SolSocket, SoMeminfo, info, &length) != 0) return false;
            if (length < (SkMeminfoDrops + 1) * sizeof(uint)) return false;
            drops = info[SkMeminfoDrops];
            queuedBytes = info[SkMeminfoRmemAlloc];
            return true;
        }

        /// <summary>Reads the drop counter; throws when the kernel does not offer SO_MEMINFO (Linux 4.4+ does).</summary>
        public static long Drops(Socket socket)
        {
            if (!TryReadMemInfo(socket, out long drops, out _))
                throw new InvalidOperationException("getsockopt(SO_MEMINFO) is not available: cannot count the kernel's drops per socket.");
            return drops;
        }

        /// <summary>CPU time the calling thread has used, user and system, in nanoseconds (CLOCK_THREAD_CPUTIME_ID). Allocates nothing.</summary>
        public static long ThreadCpuNanoseconds()
        {
            const int ClockThreadCpuTime = 3;
            long* timespec = stackalloc long[2];
            if (ClockGetTime(ClockThreadCpuTime, timespec) != 0) return 0;
            return timespec[0] * 1_000_000_000 + timespec[1];
        }

        /// <summary>Stops a process (SIGSTOP) until <see cref="Resume"/>.</summary>
        public static void Suspend(int pid)
        {
            if (Kill(pid, SigStop) != 0) throw new InvalidOperationException("kill(SIGSTOP) failed: errno " + Marshal.GetLastWin32Error());
        }

        /// <summary>Resumes a stopped process (SIGCONT).</summary>
        public static void Resume(int pid)
        {
            if (Kill(pid, SigCont) != 0) throw new InvalidOperationException("kill(SIGCONT) failed: errno " + Marshal.GetLastWin32Error());
        }
    }
}
