using System.Net.Sockets;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>One way of receiving the benchmark's datagrams: one row of the results.</summary>
    internal abstract class ReceiverMethod
    {
        protected ReceiverMethod(string name, string summary)
        {
            Name = name;
            Summary = summary;
        }

        /// <summary>The row's name in the results, e.g. "library".</summary>
        public string Name { get; }

        /// <summary>One line: what the method does per datagram.</summary>
        public string Summary { get; }

        /// <summary>Null when the method runs here; otherwise why its row is absent.</summary>
        public virtual string? Unavailable => null;

        /// <summary>
        /// False for the sweep's count-only rows, which look at each datagram's length (and sender) but not its content: they get
        /// no injected corrupt datagrams, which they could not tell from good ones.
        /// </summary>
        public virtual bool ChecksContent => true;
    }

    /// <summary>
    /// A receiver written in C#, run on a thread of this process. <see cref="Receive"/> is the whole receive
    /// loop, written out in each method the way an application would write it, so that what is measured is
    /// exactly what is shown.
    /// </summary>
    internal abstract class ManagedMethod : ReceiverMethod
    {
        protected ManagedMethod(string name, string summary) : base(name, summary) { }

        /// <summary>
        /// Receives until <paramref name="run"/> says the run is complete: per datagram, one receive call, a
        /// UTF-8 decode to chars, and <see cref="ReceiveRun.Account(char[], int)"/> (format, Fletcher-32,
        /// sequence range, duplicates). Calls <see cref="ReceiveRun.Begin"/> first and <see cref="ReceiveRun.End"/> last.
        /// </summary>
        public abstract void Receive(Socket socket, ReceiveRun run);
    }

    /// <summary>A receiver from bench/native (wa-recv), run as a child process.</summary>
    internal sealed class NativeMethod : ReceiverMethod
    {
        private readonly bool _checks;

        /// <param name="checks">False: wa-recv --no-check, which counts the datagrams without looking at their content.</param>
        public NativeMethod(string name, string waRecvMethod, string summary, bool checks = true) : base(name, summary)
        {
            WaRecvMethod = waRecvMethod;
            _checks = checks;
        }

        /// <summary>The --method value wa-recv takes.</summary>
        public string WaRecvMethod { get; }

        public override bool ChecksContent => _checks;
    }

    /// <summary>A method the registry knows but this build or runtime cannot run; it is listed with the reason.</summary>
    internal sealed class AbsentMethod : ReceiverMethod
    {
        private readonly string _reason;

        public AbsentMethod(string name, string summary, string reason) : base(name, summary)
        {
            _reason = reason;
        }

        public override string? Unavailable => _reason;
    }
}
