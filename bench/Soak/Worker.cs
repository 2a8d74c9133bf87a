using System;
using System.Threading;

namespace WhereAllocation.Bench.Soak
{
    /// <summary>
    /// A thread that lives for the whole run and runs one piece of work per segment. A server's receive and send
    /// threads live that long too; a new thread per segment would make every segment pay again for what the
    /// library caches per thread (the SocketAddress and Managed paths keep a socket address or a copy buffer per thread).
    /// </summary>
    internal sealed class Worker
    {
        private readonly Thread _thread;
        private readonly ManualResetEventSlim _start = new ManualResetEventSlim(false);
        private readonly ManualResetEventSlim _done = new ManualResetEventSlim(false);
        private Action? _work;

        internal Worker(string name)
        {
            _thread = new Thread(Loop) { IsBackground = true, Name = name }; // background: a stuck worker cannot keep the process alive
            _thread.Start();
        }

        /// <summary>Hands <paramref name="work"/> to the thread.</summary>
        internal void Begin(Action work)
        {
            _done.Reset();
            Volatile.Write(ref _work, work);
            _start.Set();
        }

        /// <summary>Waits up to <paramref name="timeoutMs"/> for the work to end; false when it has not.</summary>
        internal bool Wait(int timeoutMs) => _done.Wait(timeoutMs);

        private void Loop()
        {
            while (true)
            {
                _start.Wait();
                _start.Reset();
                Action work = Volatile.Read(ref _work)!;
                work();
                _done.Set();
            }
        }
    }
}
