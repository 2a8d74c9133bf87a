using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// docs/CONTRACT.md, "Hostile conditions": every receive that can wait (<see cref="WaitingForm"/>), on every path this
    /// runtime has, under each condition a hostile user, a busy runtime or Unity makes (<see cref="HostileCondition"/>): a
    /// collection every 50 ms, an aborted thread, a descriptor without FD_CLOEXEC, a non-owning handle, DuplicateAndClose, a
    /// domain reload. Where a condition cannot be made (the runtime refuses the call, the OS has no such flag) the exclusion is
    /// named and checked (<see cref="Hostile.Exclusion"/>), never skipped silently. Everything is bounded in time; a case that
    /// could end its process (a library thread dying of an exception) runs in a child process (<see cref="ChildProcess"/>).
    /// </summary>
    public sealed class HostileConditionTests : IDisposable
    {
        public void Dispose()
        {
            DatagramPathSettings.Reset();
        }

        [Observes(Hostile.Section, "R1 R4 B2 B2C A1", "collection storm; Thread.Abort; no FD_CLOEXEC; non-owning handle; DuplicateAndClose; domain reload; empty datagram")]
        [Theory]
        [MemberData(nameof(Hostile.ConditionsWithPaths), MemberType = typeof(Hostile))]
        public void EveryWaitingFormKeepsTheContractUnder(HostileCondition condition, DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            if (RunsInAChild(condition) && ChildProcess.Available && !ChildProcess.InChild)
            {
                ChildProcess.AssertPasses(GetType(), nameof(EveryWaitingFormKeepsTheContractUnder) + "(" + condition + ", " + path + ")");
                return;
            }
            Dictionary<string, Dictionary<string, string>> documented = ContractTable.Load(Hostile.Section);
            string column = Hostile.Column(condition);
            var differences = new List<string>();
            int checkedCells = 0;
            foreach (WaitingForm form in Hostile.EveryForm)
            {
                string row = Hostile.Row(form);
                Assert.True(documented.ContainsKey(row) && documented[row].ContainsKey(column), "docs/CONTRACT.md's '" + Hostile.Section + "' has no cell " + row + " / " + column);
                Exclusion? excluded = Hostile.Exclusion(condition, form, path);
                string result = excluded != null ? CheckExclusion(excluded.Value, form, path) : Scenario(condition, form, path);
                if (excluded != null)
                {
                    if (result.Length > 0) differences.Add(row + " (" + form + "): excluded as " + excluded + ", but " + result);
                    continue;
                }
                checkedCells++;
                string cell = documented[row][column];
                if (result != cell) differences.Add(row + " (" + form + ") / " + column + ": documented '" + cell + "', got '" + result + "'");
            }
            Assert.True(differences.Count == 0, "under " + condition + " on " + path + ", " + Runtime.Describe() + ":\n" + string.Join("\n", differences));
            Assert.True(checkedCells > 0 || Hostile.EveryForm.All(f => Hostile.Exclusion(condition, f, path) != null), "no cell was checked");
        }

        /// <summary>
        /// Mono's DuplicateAndClose leaves a Socket without a handle, and before the library knew, its watchdog and its awaits'
        /// I/O thread died of a NullReferenceException on it, which ends the process: those cases run in a child process.
        /// </summary>
        private static bool RunsInAChild(HostileCondition condition) => condition == HostileCondition.DuplicateAndClose && Runtime.IsMono;

        private static string Scenario(HostileCondition condition, WaitingForm form, DatagramPath path)
        {
            switch (condition)
            {
                case HostileCondition.CollectionStorm: return CollectionStorm(form);
                case HostileCondition.ThreadAbort: return ThreadAbort(form);
                case HostileCondition.NoCloseOnExec: return NoCloseOnExec(form);
                case HostileCondition.NonOwningHandle: return NonOwningHandle(form);
                case HostileCondition.DuplicateAndClose: return DuplicateAndClose(form);
                case HostileCondition.DomainReload: return DomainReload(form, path);
                case HostileCondition.EmptyDatagram: return EmptyDatagram(form);
                default: throw new ArgumentOutOfRangeException(nameof(condition), condition, "no scenario for this condition");
            }
        }

        // ----- a collection every 50 ms during a wait with a limit -----

        private const int StormLimitMs = 300;
        private const int StormBoundMs = 1500;

        /// <summary>
        /// A receive with a 300 ms limit on an empty socket while another thread collects every 50 ms (each collection stops
        /// the world, and on Mono its signal interrupts a receive waiting in the kernel): it ends with its limit's answer
        /// (TimedOut, 0, an await's cancellation) after at least 250 ms and within 1.5 s. A bound of correctness, not of speed.
        /// </summary>
        private static string CollectionStorm(WaitingForm form)
        {
            using var pair = new Loopback(Family.IPv4, 0);
            bool stop = false;
            int collections = 0;
            var storm = new Thread(() =>
            {
                while (!Volatile.Read(ref stop))
                {
                    GC.Collect();
                    Interlocked.Increment(ref collections);
                    Thread.Sleep(50);
                }
            }) { IsBackground = true, Name = "collection storm" };
            storm.Start();
            try
            {
                using FormWait wait = FormWait.Start(form, pair.Server, StormLimitMs);
                if (!wait.Join(6000)) return "still waiting after 6 s of collections every 50 ms (limit " + StormLimitMs + " ms)";
                string expected = form == WaitingForm.Await ? "OperationCanceled" : form == WaitingForm.Batch || form == WaitingForm.CoalescedBatch ? "0" : nameof(SocketError.TimedOut);
                if (wait.Outcome != expected) return wait.Outcome;
                if (wait.ElapsedMs >= StormBoundMs) return "ended with " + expected + " after " + wait.ElapsedMs + " ms (limit " + StormLimitMs + " ms, bound " + StormBoundMs + " ms, " + Volatile.Read(ref collections) + " collections)";
                if (wait.ElapsedMs < StormLimitMs - 50) return "ended with " + expected + " after only " + wait.ElapsedMs + " ms (limit " + StormLimitMs + " ms)";
                return "deadline kept";
            }
            finally
            {
                Volatile.Write(ref stop, true);
                storm.Join(5000);
            }
        }

        // ----- an empty datagram ends a wait -----

        /// <summary>
        /// The receive waits without a limit; a datagram of 0 bytes comes, then one of 10. "datagram" when the wait ends with the
        /// empty one (length 0: a waiting recvfrom ends with 0 bytes on a shutdown too, but without a sender) and the next
        /// receive of the same form gets the 10-byte one (a batch may take both in one call: the coalesced batch then takes the
        /// second through its spill).
        /// </summary>
        private static string EmptyDatagram(WaitingForm form)
        {
            using var pair = new Loopback(Family.IPv4, 0);
            using (FormWait wait = FormWait.Start(form, pair.Server, 0))
            {
                if (!wait.UntilInside()) return "the receive never reached its wait (" + wait.Outcome + ")";
                pair.Client.SendTo(new byte[0], pair.ServerTarget);
                pair.Client.SendTo(new byte[10], pair.ServerTarget);
                if (!wait.Join(5000))
                {
                    pair.Server.Dispose(); // ends the wait, so that its thread does not outlive the test
                    return "still waiting 5 s after an empty datagram came";
                }
                if (wait.Outcome != "datagram") return wait.Outcome;
                if (wait.Length != 0) return "the first datagram came as " + wait.Length + " B";
                // A batch takes the 10-byte one in the same call when it was queued by then (the coalesced batch through its
                // spill: fewer than 128 slots are free after the first), else in the next call.
                if (wait.Count == 2) return "datagram";
            }
            // The first receive's wrapper (an await) is disposed: a socket has one at a time.
            using FormWait next = FormWait.Start(form, pair.Server, 5000);
            if (!next.Join(10_000) || next.Outcome != "datagram" || next.Length != 10) return "datagram, then " + next.Outcome + " (" + next.Length + " B)";
            return "datagram";
        }

        // ----- Thread.Abort during a wait (Mono, and Unity's reload of threads still running) -----

        /// <summary>
        /// The waiting thread is aborted. The thread ends; nothing of its wait stays registered (no watchdog slot, the library's
        /// count of waits back to what it was); the socket still receives; the watchdog parks a second after the last wait.
        /// </summary>
        private static string ThreadAbort(WaitingForm form)
        {
            using var pair = new Loopback(Family.IPv4, 0);
            using FormWait wait = FormWait.Start(form, pair.Server, 0);
            if (!wait.UntilInside()) return "the receive never reached its wait (" + wait.Outcome + ")";
            Abort(wait.Thread);
            if (!wait.Join(5000)) return "the aborted thread did not end within 5 s";
            if (wait.Outcome != "ThreadAbort") return "the aborted receive ended with " + wait.Outcome;
            if (KernelWaitWatchdog.IsWaiting(pair.Server)) return "the aborted receive is still registered with the watchdog";
            int waitingAfter = DisposeDuringWait.CallsWaiting();
            if (form != WaitingForm.Await && waitingAfter != wait.WaitsBefore)
                return "the library counts " + waitingAfter + " calls waiting after the abort, " + wait.WaitsBefore + " before the receive";
            pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
            if (form == WaitingForm.Await)
            {
                // The aborted thread only blocked on the await's result: the await itself goes on and gets the datagram.
                if (!wait.Awaited!.Wait(5000)) return "the await whose waiting thread was aborted did not get the datagram that came after";
            }
            else
            {
                using FormWait next = FormWait.Start(form, pair.Server, 5000);
                if (!next.Join(10_000) || next.Outcome != "datagram") return "the next receive on the socket did not get its datagram: " + next.Outcome;
            }
            var watch = Stopwatch.StartNew();
            while (KernelWaitWatchdog.IsRunning && watch.ElapsedMilliseconds < 5000) Thread.Sleep(20);
            if (KernelWaitWatchdog.IsRunning) return "the watchdog still runs 5 s after the last wait (it parks after " + KernelWaitWatchdog.IdleTicks * KernelWaitWatchdog.TickMilliseconds + " ms without one)";
            return "nothing left";
        }

#pragma warning disable SYSLIB0006 // Thread.Abort: refused on CoreCLR (checked as an exclusion), how Mono and Unity stop a thread
        private static void Abort(Thread thread) => thread.Abort();
#pragma warning restore SYSLIB0006

        // ----- Dispose must end the wait, whatever the descriptor -----

        /// <summary>
        /// A receive of <paramref name="form"/> on <paramref name="waitOn"/> waits without a limit; <paramref name="dispose"/> runs
        /// on another thread. Both must end within 5 s: the receive's outcome then, else what hung. A receive or a Dispose that
        /// hangs is freed by a datagram sent to the socket (a kernel wait that nothing woke takes it), so nothing is left behind.
        /// </summary>
        private static string DisposeEndsTheWait(WaitingForm form, Loopback pair, Socket waitOn, Action dispose)
        {
            using FormWait wait = FormWait.Start(form, waitOn, 0);
            if (!wait.UntilInside()) return "the receive never reached its wait (" + wait.Outcome + ")";
            Exception? failed = null;
            var disposer = new Thread(() =>
            {
                try { dispose(); }
                catch (Exception e) { failed = e; }
            }) { IsBackground = true, Name = "dispose" };
            disposer.Start();
            bool disposed = disposer.Join(5000);
            bool ended = wait.Join(disposed ? 5000 : 0);
            if (!disposed || !ended)
            {
                pair.Client.SendTo(new byte[] { 1 }, pair.ServerTarget);
                disposer.Join(5000);
                wait.Join(5000);
                return disposed ? "still waiting 5 s after Dispose" : "Dispose did not return within 5 s, nor did the receive end (it then ended with " + wait.Outcome + ")";
            }
            if (failed != null) return "Dispose threw " + FormWait.Describe(failed);
            return wait.Outcome;
        }

        [DllImport("libc", SetLastError = true, EntryPoint = "fcntl")]
        private static extern int Fcntl(int descriptor, int command, int argument);

        private const int GetDescriptorFlags = 1, SetDescriptorFlags = 2, CloseOnExec = 1;

        /// <summary>
        /// The socket's descriptor loses FD_CLOEXEC before the receive (as an inherited, a dup'ed or systemd's descriptor has
        /// none): a Dispose during the wait still ends it with ObjectDisposedException, and returns.
        /// </summary>
        private static string NoCloseOnExec(WaitingForm form)
        {
            using var pair = new Loopback(Family.IPv4, 0);
            int descriptor = (int)pair.Server.Handle;
            Assert.True(Fcntl(descriptor, SetDescriptorFlags, 0) == 0, "fcntl(F_SETFD) failed: " + Marshal.GetLastWin32Error());
            Assert.Equal(0, Fcntl(descriptor, GetDescriptorFlags, 0) & CloseOnExec);
            return DisposeEndsTheWait(form, pair, pair.Server, pair.Server.Dispose);
        }

        /// <summary>
        /// A Socket over a handle that does not own its descriptor (another socket's): a Dispose of it during the wait ends the
        /// wait with ObjectDisposedException and returns; the owner is not shut down and still receives.
        /// </summary>
        private static string NonOwningHandle(WaitingForm form)
        {
#if MONO_RUNNER
            throw new InvalidOperationException("excluded on Mono, whose SafeSocketHandle no code outside its class library can make");
#else
            using var pair = new Loopback(Family.IPv4, 0);
            var wrapper = new Socket(new SafeSocketHandle(pair.Server.Handle, ownsHandle: false));
            string result = DisposeEndsTheWait(form, pair, wrapper, wrapper.Dispose);
            if (result != "ObjectDisposed") return result;
            return OwnerStillReceives(pair.Client, pair.ServerTarget, pair.Server) ?? result;
#endif
        }

        /// <summary>Null when <paramref name="owner"/> gets a datagram sent to it now; else what it got.</summary>
        private static string? OwnerStillReceives(Socket client, EndPoint target, Socket owner)
        {
            client.SendTo(new byte[] { 7, 7 }, target);
            owner.ReceiveTimeout = 5000;
            try
            {
                int length = owner.ReceiveFrom(new byte[64], ref Unused);
                return length == 2 ? null : "the descriptor's owner then received " + length + " bytes (shut down?)";
            }
            catch (Exception e)
            {
                return "the descriptor's owner then failed to receive: " + FormWait.Describe(e);
            }
        }

        private static EndPoint Unused = new IPEndPoint(IPAddress.Any, 0);

        /// <summary>
        /// DuplicateAndClose, then Dispose, while a receive waits: the wait ends with ObjectDisposedException, nothing crashes
        /// (a library thread's death would end the process: on Mono this runs in a child process), and the duplicate's
        /// descriptor is not shut down (a Socket made from it gets a datagram).
        /// </summary>
#pragma warning disable CA1416 // DuplicateAndClose and Socket(SocketInformation): Windows only on CoreCLR (checked as an exclusion elsewhere), Mono has them on Linux
        private static string DuplicateAndClose(WaitingForm form)
        {
            using var pair = new Loopback(Family.IPv4, 0);
            if (form == WaitingForm.OneCall) StraightToTheKernelsWait(pair.Server);
            SocketInformation information = default;
            Socket server = pair.Server;
            // Mono on Unix hands the duplicate the same descriptor number and drops its own SafeSocketHandle unclosed. When a
            // collection finalizes that handle, it closes whatever descriptor has that number then: this scenario's duplicate,
            // or, the number reused, the next scenario's socket, whose calls then fail with "The descriptor is not a socket"
            // (once under mono-boehm; every time with a forced collection between two scenarios). The test's own doing, not the
            // library's: the dropped handle is made invalid once the duplicate was asked, so that it never closes anything.
            SafeHandle original = SocketHandles.Get(server);
            try
            {
                string result = DisposeEndsTheWait(form, pair, server, () =>
                {
                    information = server.DuplicateAndClose(Process.GetCurrentProcess().Id);
                    server.Dispose();
                });
                if (result != "ObjectDisposed") return result;
                using var duplicate = new Socket(information);
                return OwnerStillReceives(pair.Client, pair.ServerTarget, duplicate) ?? result;
            }
            finally
            {
                if (information.ProtocolInformation != null) original.SetHandleAsInvalid();
            }
        }
#pragma warning restore CA1416

        /// <summary>
        /// Mono: one receive that finds nothing and times out, so that the one-call receives after it go straight to the kernel's
        /// wait (NativeDatagramIO's try-first count) and a wait interrupted there goes on in the general path, not in the one
        /// it began in. Elsewhere nothing.
        /// </summary>
        private static void StraightToTheKernelsWait(Socket socket)
        {
            if (!WaitPolicy.WatchdogWakes || DatagramPathSettings.Active != DatagramPath.Native) return;
            socket.ReceiveTimeout = 1;
            var error = Assert.Throws<SocketException>(() => socket.ReceiveFrom_NonAlloc(new byte[64], 0, 64, SocketFlags.None, new IPEndPointNonAlloc(IPAddress.Any, 0)));
            Assert.Equal(SocketError.TimedOut, error.SocketErrorCode);
            socket.ReceiveTimeout = 0;
        }

        // ----- Unity's domain reload -----

        private const int UnloadBoundMs = 5000;

        /// <summary>
        /// A receive of <paramref name="form"/> waits in a second application domain, which is then unloaded (Mono's model of
        /// Unity's domain reload, which aborts the threads still running): the unload ends within 5 s; none of the old domain's
        /// library threads (watchdog, I/O thread) nor its waiting thread is left; a next domain's library receives a datagram
        /// and ends a wait that a Dispose interrupts.
        /// </summary>
        private static string DomainReload(WaitingForm form, DatagramPath path)
        {
            HashSet<string> before = DomainAgent.ProcessThreads();
            DomainAgent agent = DomainAgent.Create("hostile reload " + form, out object domain);
            string started = agent.StartWait((int)form, (int)path);
            List<string> ofTheDomain = DomainAgent.LibraryOrWaitThreads(DomainAgent.ProcessThreads().Except(before));
            if (!DomainAgent.TryUnload(domain, UnloadBoundMs, out string? unloadFailure)) return "the unload did not end within " + UnloadBoundMs + " ms";
            if (started.Length > 0) return "in the old domain: " + started;
            if (unloadFailure != null) return "the unload failed: " + unloadFailure;
            if (!ofTheDomain.Any(t => t.EndsWith(FormWait.ThreadName, StringComparison.Ordinal))) return "the old domain's waiting thread was not seen among the process's threads: " + string.Join(", ", ofTheDomain);
            List<string> left = DomainAgent.LibraryOrWaitThreads(DomainAgent.ProcessThreads().Intersect(ofTheDomain));
            if (left.Count > 0) return "still running after the unload: " + string.Join(", ", left);
            DomainAgent next = DomainAgent.Create("hostile reload, next " + form, out object nextDomain);
            string works = next.ReceiveWorks((int)form, (int)path);
            if (!DomainAgent.TryUnload(nextDomain, UnloadBoundMs, out _)) return "the next domain's unload did not end within " + UnloadBoundMs + " ms";
            return works.Length > 0 ? "in the next domain: " + works : "unloaded";
        }

        // ----- exclusions, checked -----

        /// <summary>"" when the reason <paramref name="why"/> holds here (the runtime refuses the call, the OS lacks the flag); else what contradicts it.</summary>
        private static string CheckExclusion(Exclusion why, WaitingForm form, DatagramPath path)
        {
            try
            {
                switch (why)
                {
                    case Exclusion.NoCoalescedReceive:
                        Assert.Throws<PlatformNotSupportedException>(() => new DatagramBatch(DatagramBatch.MinCoalescedReceiveCapacity, 1500, DatagramBatch.DefaultMode) { CoalescedReceive = true });
                        return "";
                    case Exclusion.CoalescedIsNativeOnly:
                        return form == WaitingForm.CoalescedBatch && path != DatagramPath.Native ? "" : "not a coalesced batch off the native path";
                    case Exclusion.NoThreadAbort:
                        Assert.False(Runtime.IsMono);
                        Assert.Throws<PlatformNotSupportedException>(() => Abort(new Thread(() => { })));
                        return "";
                    case Exclusion.NoCloseOnExecFlag:
                        return RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "" : "this OS has FD_CLOEXEC";
                    case Exclusion.NoNonOwningHandle:
                        Type? handle = typeof(Socket).Assembly.GetType("System.Net.Sockets.SafeSocketHandle");
                        return handle != null && !handle.IsPublic && !handle.IsNestedPublic ? "" : "this runtime's SafeSocketHandle is public";
                    case Exclusion.NoDuplicateAndClose:
                        using (var pair = new Loopback(Family.IPv4, 0))
                        {
#pragma warning disable CA1416 // the refusal is what is checked
                            Assert.Throws<PlatformNotSupportedException>(() => pair.Server.DuplicateAndClose(Process.GetCurrentProcess().Id));
#pragma warning restore CA1416
                        }
                        return "";
                    case Exclusion.NoSecondDomain:
#if MONO_RUNNER
                        return "a second domain excluded on Mono";
#else
                        // Called directly, not through reflection: under Wine 8 an exception thrown through MethodInfo.Invoke
                        // hangs the runtime at the next one (docs/testing-under-wine.md).
#pragma warning disable SYSLIB0024 // the refusal is what is checked
                        Assert.Throws<PlatformNotSupportedException>(() => AppDomain.CreateDomain("refused"));
#pragma warning restore SYSLIB0024
                        return "";
#endif
                    case Exclusion.NoDomainReloadWithoutJit:
                        return Runtime.CodeMadeAtRunTimeRefused ? "" : "this run has a JIT";
                    default:
                        return "no check for " + why;
                }
            }
            catch (Exception e)
            {
                return e.GetType().Name + ": " + e.Message;
            }
        }
    }
}
