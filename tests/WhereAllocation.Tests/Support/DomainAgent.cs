using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Reflection;
using System.Threading;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Unity's domain reload as Mono 6.8 models it: a second application domain (<see cref="Create"/>), the library loaded
    /// in it afresh (its statics, threads and registrations its own), work started there through this agent, then
    /// <see cref="TryUnload"/>. netstandard2.1 names none of AppDomain's members for this, so they are reached by reflection
    /// (CoreCLR has them and refuses them: PlatformNotSupportedException).
    /// </summary>
    public sealed class DomainAgent : MarshalByRefObject
    {
        private Loopback? _pair;
        private FormWait? _wait;

        /// <summary>
        /// In this agent's domain: a receive of <paramref name="form"/> (a <see cref="WaitingForm"/>) on path
        /// <paramref name="path"/> that waits for a datagram that never comes. "" once it is inside its wait, else what went wrong.
        /// </summary>
        public string StartWait(int form, int path)
        {
            DatagramPathSettings.Force((DatagramPath)path);
            _pair = new Loopback(Family.IPv4, 0);
            _wait = FormWait.Start((WaitingForm)form, _pair.Server, 0);
            return _wait.UntilInside() ? "" : "the receive never reached its wait (" + _wait.Outcome + ")";
        }

        /// <summary>
        /// In this agent's domain: a receive of <paramref name="form"/> on <paramref name="path"/> gets a datagram, and one that
        /// waits ends with ObjectDisposedException when its socket is disposed. "" when both hold, else what went wrong.
        /// </summary>
        public string ReceiveWorks(int form, int path)
        {
            DatagramPathSettings.Force((DatagramPath)path);
            using (var pair = new Loopback(Family.IPv4, 0))
            {
                pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
                using FormWait received = FormWait.Start((WaitingForm)form, pair.Server, 5000);
                if (!received.Join(10_000) || received.Outcome != "datagram") return "a queued datagram was not received: " + received.Outcome;
            }
            using (var pair = new Loopback(Family.IPv4, 0))
            {
                using FormWait disposed = FormWait.Start((WaitingForm)form, pair.Server, 0);
                if (!disposed.UntilInside()) return "the receive never reached its wait (" + disposed.Outcome + ")";
                pair.Server.Dispose();
                if (!disposed.Join(5000) || disposed.Outcome != "ObjectDisposed") return "a Dispose during the wait ended it with: " + disposed.Outcome;
            }
            return "";
        }

        // ----- the host's side -----

        /// <summary>A new application domain (AppDomain.CreateDomain by reflection) with an agent in it.</summary>
        public static DomainAgent Create(string name, out object domain)
        {
            // Its base directory is the test assembly's (under xunit's console runner the process's is the runner's).
            Type? setupType = typeof(AppDomain).Assembly.GetType("System.AppDomainSetup");
            Type? evidenceType = typeof(AppDomain).Assembly.GetType("System.Security.Policy.Evidence");
            MethodInfo? create = setupType == null || evidenceType == null ? null : typeof(AppDomain).GetMethod("CreateDomain", new[] { typeof(string), evidenceType, setupType });
            object?[] arguments;
            if (create != null)
            {
                object setup = Activator.CreateInstance(setupType!)!;
                setupType!.GetProperty("ApplicationBase")!.SetValue(setup, Path.GetDirectoryName(typeof(DomainAgent).Assembly.Location));
                arguments = new object?[] { name, null, setup };
            }
            else
            {
                // CoreCLR: only CreateDomain(string), which refuses (PlatformNotSupportedException).
                create = typeof(AppDomain).GetMethod("CreateDomain", new[] { typeof(string) })
                    ?? throw new PlatformNotSupportedException("This runtime's AppDomain has no CreateDomain.");
                arguments = new object?[] { name };
            }
            try
            {
                domain = create.Invoke(null, arguments)!;
            }
            catch (TargetInvocationException e) when (e.InnerException != null)
            {
                throw e.InnerException;
            }
            MethodInfo unwrap = domain.GetType().GetMethod("CreateInstanceAndUnwrap", new[] { typeof(string), typeof(string) })!;
            return (DomainAgent)unwrap.Invoke(domain, new object[] { typeof(DomainAgent).Assembly.FullName!, typeof(DomainAgent).FullName! })!;
        }

        /// <summary>AppDomain.Unload(<paramref name="domain"/>) on a thread of its own: true when it returned within <paramref name="milliseconds"/>.</summary>
        public static bool TryUnload(object domain, int milliseconds, out string? failure)
        {
            MethodInfo unload = typeof(AppDomain).GetMethod("Unload", new[] { typeof(AppDomain) })!;
            string? error = null;
            var thread = new Thread(() =>
            {
                try
                {
                    unload.Invoke(null, new[] { domain });
                }
                catch (TargetInvocationException e)
                {
                    error = (e.InnerException ?? e).ToString();
                }
            }) { IsBackground = true, Name = "unload" };
            thread.Start();
            bool ended = thread.Join(milliseconds);
            failure = error;
            return ended;
        }

        /// <summary>The process's threads (Linux: /proc/self/task), as "id name".</summary>
        public static HashSet<string> ProcessThreads()
        {
            var threads = new HashSet<string>(StringComparer.Ordinal);
            foreach (string task in Directory.GetDirectories("/proc/self/task"))
            {
                try
                {
                    threads.Add(Path.GetFileName(task) + " " + File.ReadAllText(Path.Combine(task, "comm")).Trim());
                }
                catch (IOException)
                {
                    // Ended meanwhile.
                }
            }
            return threads;
        }

        /// <summary>
        /// True for a thread the library or a <see cref="FormWait"/> runs: the watchdog ("WhereAllocation kernel-wait watchdog"),
        /// the awaits' I/O thread ("where-allocation I/O (...)"), the waiting thread; Linux keeps a thread name's first 15 bytes.
        /// </summary>
        public static bool IsLibraryOrWaitThread(string thread)
        {
            string name = thread.Substring(thread.IndexOf(' ') + 1);
            return name.StartsWith("WhereAllocation", StringComparison.Ordinal) || name.StartsWith("where-allocatio", StringComparison.Ordinal)
                || name.StartsWith(FormWait.ThreadName, StringComparison.Ordinal);
        }

        public static List<string> LibraryOrWaitThreads(IEnumerable<string> threads) => threads.Where(IsLibraryOrWaitThread).OrderBy(t => t, StringComparer.Ordinal).ToList();
    }
}
