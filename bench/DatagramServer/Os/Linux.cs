using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// The few Linux calls the benchmark needs and the runtimes do not offer: CPU pinning, SO_RCVBUF set
    /// exactly as the C receiver sets it (the drop counter comes from the library), and stopping and
    /// resuming a child process. All of them run outside the timed receive loops.
    /// </summary>
    internal static unsafe class Linux
    {
        private const string Lib = "libc";
        private const int SolSocket = 1;
        private const int SoRcvbuf = 8;
        private const int SigInt = 2;
        private const int SigQuit = 3;
        private const int SigCont = 18;
        private const int SigStop = 19;

        [DllImport(Lib, EntryPoint = "sched_setaffinity", SetLastError = true)]
        private static extern int SchedSetAffinity(int pid, nuint size, ulong* mask);

        [DllImport(Lib, EntryPoint = "sched_getaffinity", SetLastError = true)]
        private static extern int SchedGetAffinity(int pid, nuint size, ulong* mask);

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

        /// <summary>The CPUs the calling thread may run on (the first 64), or 0 when the kernel would not say.</summary>
        public static ulong CurrentAffinity()
        {
            ulong mask = 0;
            return SchedGetAffinity(0, sizeof(ulong), &mask) == 0 ? mask : 0;
        }

        /// <summary>Lets the calling thread run on the CPUs of <paramref name="mask"/> only (0: leaves it as it is).</summary>
        public static bool SetCurrentAffinity(ulong mask)
        {
            return mask != 0 && SchedSetAffinity(0, sizeof(ulong), &mask) == 0;
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

        /// <summary>The receive buffer the kernel granted, as the library reports it.</summary>
        public static int ReceiveBuffer(Socket socket)
        {
            int granted = socket.GetDatagramStatus().ReceiveBufferBytes;
            if (granted < 0) throw new InvalidOperationException("The receive buffer size is not available on this platform.");
            return granted;
        }

        /// <summary>
        /// The socket's own drop counter (datagrams the kernel accepted for this socket but threw away, almost
        /// always because the receive queue was full) and the bytes queued now: the library's
        /// <c>GetDatagramStatus</c>, per socket, so other programs on the machine do not disturb it.
        /// </summary>
        public static bool TryReadMemInfo(Socket socket, out long drops, out long queuedBytes)
        {
            DatagramSocketStatus status = socket.GetDatagramStatus();
            drops = status.HasDropCount ? status.DroppedDatagrams : 0;
            queuedBytes = status.QueuedReceiveBytes < 0 ? 0 : status.QueuedReceiveBytes;
            return status.HasDropCount;
        }

        /// <summary>Reads the drop counter; throws where the OS keeps none per socket (Linux 4.15+ does).</summary>
        public static long Drops(Socket socket)
        {
            if (!TryReadMemInfo(socket, out long drops, out _))
                throw new InvalidOperationException("The kernel's drops per socket are not available here.");
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

        /// <summary>CPU time every thread of this process has used, user and system, in nanoseconds (CLOCK_PROCESS_CPUTIME_ID). Allocates nothing.</summary>
        public static long ProcessCpuNanoseconds()
        {
            const int ClockProcessCpuTime = 2;
            long* timespec = stackalloc long[2];
            if (ClockGetTime(ClockProcessCpuTime, timespec) != 0) return 0;
            return timespec[0] * 1_000_000_000 + timespec[1];
        }

        /// <summary>Stops a process (SIGSTOP) until <see cref="Resume"/>.</summary>
        public static void Suspend(int pid)
        {
            if (Kill(pid, SigStop) != 0) throw new InvalidOperationException("kill(SIGSTOP) failed: errno " + Marshal.GetLastWin32Error());
        }

        /// <summary>Interrupts a process (SIGINT), as Ctrl+C would: strace then detaches and writes its counts.</summary>
        public static void Interrupt(int pid)
        {
            if (Kill(pid, SigInt) != 0) throw new InvalidOperationException("kill(SIGINT) failed: errno " + Marshal.GetLastWin32Error());
        }

        /// <summary>
        /// A thread that should have ended has not: on Mono, every managed thread's stack is written to standard output
        /// (Mono's answer to SIGQUIT, after which the process goes on), so the run's log shows where it hangs. CoreCLR has no
        /// such answer (SIGQUIT would end it): there only the message is written.
        /// </summary>
        public static void DumpThreadsIfMono(string why)
        {
            Console.WriteLine("DatagramServer: " + why + (Machine.IsMono ? "; every thread's stack follows (Mono, SIGQUIT)" : ""));
            if (!Machine.IsMono) return;
            Kill(System.Diagnostics.Process.GetCurrentProcess().Id, SigQuit);
            System.Threading.Thread.Sleep(500); // the dump is written by the runtime's own thread
        }

        /// <summary>Resumes a stopped process (SIGCONT).</summary>
        public static void Resume(int pid)
        {
            if (Kill(pid, SigCont) != 0) throw new InvalidOperationException("kill(SIGCONT) failed: errno " + Marshal.GetLastWin32Error());
        }
    }
}
