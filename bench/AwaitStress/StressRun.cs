using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.AwaitStress
{
    /// <summary>
    /// One phase of the benchmark: N sockets, each with a loop awaiting its datagrams, fed round by round by one sender
    /// (this thread). A round sends one datagram to every socket, then waits until every loop has received it and
    /// started its next receive (so that every receive really waits), with a deadline that names what is missing.
    /// </summary>
    /// <remarks>
    /// <para><b>steady</b>: the same sockets throughout. After the warm-up rounds, the whole process's allocated bytes
    /// are read over M rounds and then over 2M more: a cost per await shows in both, twice as large in the second; a
    /// one-time cost of the runtime in one of them only.</para>
    /// <para><b>churn</b>: the same rounds while a second thread replaces sockets at random moments, with awaits waiting
    /// and datagrams in flight: it disposes a receiver's wrapper and socket (wrapper first, socket first, or the socket
    /// alone, its wrapper disposed only after the await ended) and makes a new receiver in its slot. The sender and the
    /// churner take the slot's lock, so a datagram is never sent to a socket already disposed. Accounting: a receiver
    /// that lives must get every datagram sent to it, in order, intact; a disposed one may miss only those still queued
    /// when it was disposed; every loop of a disposed receiver must end with ObjectDisposedException, in time.</para>
    /// </remarks>
    internal sealed class StressRun
    {
        private readonly Options _options;
        private readonly ProcessAllocations _meter;
        private readonly bool _churn;
        private readonly int _count;
        private readonly Receiver?[] _slots;
        private readonly object[] _gates;
        private readonly Receiver?[] _byId;
        private int _nextId;
        private readonly byte[] _payload = new byte[Receiver.DatagramLength];
        private Socket? _sender;

        private readonly long[] _latencies;
        private int _latencyCount;
        private volatile bool _recording;

        private readonly List<string> _failures = new List<string>();
        private int _reports;

        // The churner's (read by this thread after it ended).
        private readonly List<Receiver> _disposed = new List<Receiver>();
        private readonly List<Receiver> _socketOnly = new List<Receiver>();
        private volatile bool _stopChurn;
        private Exception? _churnFailure;

        public StressRun(Options options, ProcessAllocations meter, bool churn)
        {
            _options = options;
            _meter = meter;
            _churn = churn;
            _count = options.Sockets;
            _slots = new Receiver?[_count];
            _gates = new object[_count];
            for (int i = 0; i < _count; i++) _gates[i] = new object();
            _byId = new Receiver?[_count + (churn ? options.ChurnLimit : 0)];
            int rounds = churn ? options.ChurnRounds : 3 * options.Rounds;
            _latencies = new long[(long)_count * rounds];
        }

        /// <summary>The sender's address, which every datagram must come from.</summary>
        public EndPointKey SenderKey { get; private set; }

        private long Deadline => Stopwatch.GetTimestamp() + (long)(_options.DeadlineSeconds * Stopwatch.Frequency);

        // ----- called by the receivers' loops -----

        public void RecordLatency(long ticks)
        {
            if (!_recording) return;
            int index = Interlocked.Increment(ref _latencyCount) - 1;
            if (index < _latencies.Length) _latencies[index] = ticks;
        }

        /// <summary>True when <paramref name="id"/> is a disposed receiver that had <paramref name="port"/>: its datagram reached the socket the OS gave its port next.</summary>
        public bool IsStale(int id, int port)
        {
            if (id < 0 || id >= _byId.Length) return false;
            Receiver? other = Volatile.Read(ref _byId[id]);
            return other != null && other.Disposing && other.Port == port;
        }

        /// <summary>Prints a receiver's bad datagram (the first 20 of the run).</summary>
        public void Report(Receiver receiver, string what)
        {
            if (Interlocked.Increment(ref _reports) <= 20) Console.WriteLine("  socket " + receiver.Slot + " (receiver " + receiver.Id + "): " + what);
        }

        // ----- the phase -----

        public PhaseResult Run()
        {
            string phase = _churn ? "churn" : "steady";
            int measured = _churn ? _options.ChurnRounds : 3 * _options.Rounds;
            long startedAt = Stopwatch.GetTimestamp();
            Console.WriteLine(_churn
                ? $"{phase}: {_count} sockets; warm-up of {_options.Warmup} rounds and {_options.WarmupMilliseconds} ms, then {measured} rounds, sockets replaced at random all along (a pause of 0-{_options.ChurnPauseMilliseconds} ms between two)"
                : $"{phase}: {_count} sockets; warm-up of {_options.Warmup} rounds and {_options.WarmupMilliseconds} ms, then {_options.Rounds} + {2 * _options.Rounds} rounds measured");
            _sender = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            SenderKey = EndPointKey.FromIPEndPoint((IPEndPoint)_sender.LocalEndPoint!);
            Thread? churner = null;
            long first = 0, middle = 0, last = 0;
            int completedRounds = 0, warmup = 0;
            bool complete = false;
            try
            {
                for (int i = 0; i < _count; i++) _slots[i] = Make(i);
                if (_churn)
                {
                    churner = new Thread(Churn) { IsBackground = true, Name = "churn" };
                    churner.Start();
                }
                // The warm-up lasts a number of rounds and a time: the runtime compiles the hot methods again, optimised,
                // in the background (CoreCLR's tiers, some 100 ms after the 30th call), and the library's I/O thread
                // grows the array its once-a-slice sweep copies the waiting sockets into (100 ms slices) the first time
                // that many sockets wait: one-time costs that belong before the measurement.
                long warmupEnds = startedAt + _options.WarmupMilliseconds * Stopwatch.Frequency / 1000;
                bool warm = true;
                while (warm && (warmup < _options.Warmup || Stopwatch.GetTimestamp() < warmupEnds))
                {
                    SendRound();
                    warm = AwaitRound(warmup);
                    if (warm) warmup++;
                }
                if (warm)
                {
                    _recording = true;
                    first = _meter.Read();
                    for (int round = 0; round < measured; round++)
                    {
                        if (!_churn && round == _options.Rounds) middle = _meter.Read();
                        SendRound();
                        if (!AwaitRound(warmup + round)) break;
                        completedRounds++;
                    }
                    last = _meter.Read();
                }
                complete = completedRounds == measured;
                _recording = false;
            }
            finally
            {
                _stopChurn = true;
                if (churner != null && !churner.Join((int)(_options.DeadlineSeconds * 1000)))
                    _failures.Add("the churn thread did not end within " + _options.DeadlineSeconds + " s of being told to");
            }
            if (_churnFailure != null) _failures.Add("the churn failed: " + _churnFailure);
            if (_churn) CheckDisposed();
            var result = new PhaseResult(phase, _count);
            Count(result);
            EndAll();
            _sender.Dispose();
            result.Complete = complete;
            result.WarmupRounds = warmup;
            result.Seconds = (Stopwatch.GetTimestamp() - startedAt) / (double)Stopwatch.Frequency;
            result.Churned = _disposed.Count;
            result.Failures.AddRange(_failures);
            Percentiles(result);
            if (!_churn && result.Complete)
            {
                result.MeasuredAwaits = (long)_count * 3 * _options.Rounds;
                result.BytesFirst = middle - first;
                result.BytesSecond = last - middle;
                result.AwaitsFirst = (long)_count * _options.Rounds;
                result.AwaitsSecond = (long)_count * 2 * _options.Rounds;
            }
            return result;
        }

        private Receiver Make(int slot)
        {
            int id = _nextId++;
            var receiver = new Receiver(this, id, slot, _options.Mode);
            Volatile.Write(ref _byId[id], receiver);
            receiver.Start();
            return receiver;
        }

        private void SendRound()
        {
            for (int i = 0; i < _count; i++)
            {
                if (!_churn)
                {
                    Send(_slots[i]!);
                    continue;
                }
                lock (_gates[i]) Send(_slots[i]!);
            }
        }

        private void Send(Receiver receiver)
        {
            Receiver.Write(_payload, receiver.Id, receiver.Sent);
            int sent;
            try
            {
                sent = _sender!.SendTo_NonAlloc(_payload.AsSpan(), receiver.Key);
            }
            catch (SocketException e)
            {
                _failures.Add("the send to socket " + receiver.Slot + " failed: " + e.SocketErrorCode);
                return;
            }
            if (sent != Receiver.DatagramLength)
            {
                _failures.Add("the send to socket " + receiver.Slot + " sent " + sent + " bytes");
                return;
            }
            receiver.Sent++;
        }

        /// <summary>Waits until every socket has its datagrams and waits for the next; false, with what is missing printed, at the deadline.</summary>
        private bool AwaitRound(int round)
        {
            long deadline = Deadline;
            int i = 0;
            while (i < _count)
            {
                Receiver receiver = Volatile.Read(ref _slots[i])!;
                if (receiver.Disposing || Volatile.Read(ref receiver.ReadyFor) == receiver.Sent)
                {
                    i++;
                    continue;
                }
                if (Volatile.Read(ref receiver.End) != Receiver.Running && !receiver.Disposing)
                {
                    _failures.Add("round " + round + ": the loop of a socket nobody disposed ended: " + receiver.Describe());
                    return false;
                }
                if (Stopwatch.GetTimestamp() > deadline)
                {
                    PrintMissing(round);
                    return false;
                }
                Thread.Sleep(1);
            }
            return true;
        }

        private void PrintMissing(int round)
        {
            var missing = new List<Receiver>();
            for (int i = 0; i < _count; i++)
            {
                Receiver receiver = Volatile.Read(ref _slots[i])!;
                if (!receiver.Disposing && Volatile.Read(ref receiver.ReadyFor) != receiver.Sent) missing.Add(receiver);
            }
            _failures.Add("round " + round + ": after " + _options.DeadlineSeconds + " s, " + missing.Count + " of " + _count
                + " sockets have not received their datagram (or not started their next receive)");
            Console.WriteLine("  round " + round + ": missing after " + _options.DeadlineSeconds + " s (" + missing.Count + " sockets; the first 10):");
            for (int k = 0; k < missing.Count && k < 10; k++) Console.WriteLine("    " + missing[k].Describe());
        }

        // ----- churn -----

        private void Churn()
        {
            var random = new Random(_options.Seed);
            try
            {
                while (!_stopChurn)
                {
                    int pause = random.Next(0, _options.ChurnPauseMilliseconds + 1);
                    if (pause > 0) Thread.Sleep(pause);
                    else Thread.Yield();
                    if (_stopChurn) break;
                    DisposeEndedWrappers();
                    if (_nextId >= _byId.Length) break; // the run's limit of receivers
                    int slot = random.Next(_count);
                    int order = _options.ChurnOrders[random.Next(_options.ChurnOrders.Length)];
                    Receiver old;
                    lock (_gates[slot])
                    {
                        old = _slots[slot]!;
                        old.DisposeOrder = order;
                        old.Disposing = true;
                        switch (order)
                        {
                            case 0:
                                old.Wrapper.Dispose();
                                old.Socket.Dispose();
                                break;
                            case 1:
                                old.Socket.Dispose();
                                old.Wrapper.Dispose();
                                break;
                            default:
                                // The socket alone: its waiting await must end by itself (the library notices the closed
                                // socket); the wrapper is disposed only after that.
                                old.Socket.Dispose();
                                _socketOnly.Add(old);
                                break;
                        }
                        Volatile.Write(ref _slots[slot], Make(slot));
                    }
                    _disposed.Add(old);
                }
            }
            catch (Exception e)
            {
                _churnFailure = e;
            }
        }

        private void DisposeEndedWrappers()
        {
            for (int k = _socketOnly.Count - 1; k >= 0; k--)
            {
                Receiver receiver = _socketOnly[k];
                if (Volatile.Read(ref receiver.End) == Receiver.Running) continue;
                receiver.Wrapper.Dispose();
                _socketOnly.RemoveAt(k);
            }
        }

        /// <summary>After the churn: every disposed receiver's loop must have ended with ObjectDisposedException (waited for up to the deadline).</summary>
        private void CheckDisposed()
        {
            long deadline = Deadline;
            foreach (Receiver receiver in _disposed)
            {
                while (Volatile.Read(ref receiver.End) == Receiver.Running && Stopwatch.GetTimestamp() < deadline) Thread.Sleep(1);
            }
            int[] hung = new int[3], other = new int[3], ended = new int[3];
            var bad = new List<Receiver>();
            foreach (Receiver receiver in _disposed)
            {
                int end = Volatile.Read(ref receiver.End);
                if (end == Receiver.EndedDisposed) ended[receiver.DisposeOrder]++;
                else
                {
                    (end == Receiver.Running ? hung : other)[receiver.DisposeOrder]++;
                    bad.Add(receiver);
                }
            }
            DisposeEndedWrappers();
            foreach (Receiver receiver in _socketOnly) receiver.Wrapper.Dispose(); // those whose await never ended: now
            _socketOnly.Clear();
            Console.WriteLine($"  disposed during the run: {_disposed.Count}; their awaits ended with ObjectDisposedException: wrapper first {ended[0]}, socket first {ended[1]}, socket alone {ended[2]}"
                + (bad.Count == 0 ? "" : $"; not ended within {_options.DeadlineSeconds} s: {hung[0]}/{hung[1]}/{hung[2]}; ended otherwise: {other[0]}/{other[1]}/{other[2]}"));
            for (int k = 0; k < bad.Count && k < 10; k++) Console.WriteLine("    " + bad[k].Describe());
            if (bad.Count > 0) _failures.Add("of the awaits of receivers disposed during the run, " + Endings(bad));
        }

        // ----- the end -----

        private void Count(PhaseResult result)
        {
            void Add(Receiver receiver, bool disposed)
            {
                result.Received += receiver.Received;
                result.Started += receiver.Started;
                result.Waited += receiver.Waited;
                result.Immediate += receiver.Immediate;
                result.Lost += receiver.Lost;
                result.Wrong += receiver.Wrong;
                result.Stale += receiver.Stale;
                if (disposed) result.DroppedByDisposal += receiver.Sent - Volatile.Read(ref receiver.Expected);
            }
            for (int i = 0; i < _count; i++) Add(_slots[i]!, false);
            foreach (Receiver receiver in _disposed) Add(receiver, true);
        }

        /// <summary>Disposes every live receiver (wrapper, then socket): each loop must end with ObjectDisposedException in time.</summary>
        private void EndAll()
        {
            for (int i = 0; i < _count; i++)
            {
                Receiver receiver = _slots[i]!;
                receiver.Wrapper.Dispose();
                receiver.Socket.Dispose();
            }
            long deadline = Deadline;
            var bad = new List<Receiver>();
            for (int i = 0; i < _count; i++)
            {
                Receiver receiver = _slots[i]!;
                while (Volatile.Read(ref receiver.End) == Receiver.Running && Stopwatch.GetTimestamp() < deadline) Thread.Sleep(1);
                if (Volatile.Read(ref receiver.End) != Receiver.EndedDisposed) bad.Add(receiver);
            }
            if (bad.Count == 0) return;
            _failures.Add("at the end (every wrapper disposed, then its socket, one after another), " + Endings(bad));
            for (int k = 0; k < bad.Count && k < 10; k++) Console.WriteLine("    " + bad[k].Describe());
        }

        /// <summary>How the awaits of <paramref name="bad"/> ended instead of with ObjectDisposedException: "3 not within 10 s; 5 with SocketException 10038 (NotSocket)".</summary>
        private string Endings(List<Receiver> bad)
        {
            var counts = new SortedDictionary<string, int>(StringComparer.Ordinal);
            foreach (Receiver receiver in bad)
            {
                string how;
                if (Volatile.Read(ref receiver.End) == Receiver.Running) how = "did not end within " + _options.DeadlineSeconds + " s";
                else if (receiver.Failure is SocketException socketError) how = "ended with SocketException " + socketError.ErrorCode + " (" + socketError.SocketErrorCode + ")";
                else how = "ended with " + receiver.Failure?.GetType().Name;
                counts.TryGetValue(how, out int n);
                counts[how] = n + 1;
            }
            var parts = new List<string>();
            foreach (KeyValuePair<string, int> pair in counts) parts.Add(pair.Value + " " + pair.Key);
            return string.Join("; ", parts) + " (instead of ObjectDisposedException)";
        }

        private void Percentiles(PhaseResult result)
        {
            int count = Math.Min(_latencyCount, _latencies.Length);
            result.LatencySamples = count;
            if (count == 0) return;
            Array.Sort(_latencies, 0, count);
            double Microseconds(double q) => _latencies[(int)((count - 1) * q)] * 1e6 / Stopwatch.Frequency;
            result.P50Microseconds = Microseconds(0.50);
            result.P99Microseconds = Microseconds(0.99);
        }
    }

    /// <summary>What one phase found.</summary>
    internal sealed class PhaseResult
    {
        public PhaseResult(string phase, int sockets)
        {
            Phase = phase;
            Sockets = sockets;
        }

        public string Phase { get; }
        public int Sockets { get; }
        public bool Complete;
        public double Seconds;
        public long Received, Started, Waited, Immediate, Lost, Wrong, Stale, DroppedByDisposal;
        public int Churned;
        public int WarmupRounds;
        public int LatencySamples;
        public double P50Microseconds = double.NaN, P99Microseconds = double.NaN;
        public long MeasuredAwaits;
        public long BytesFirst, BytesSecond, AwaitsFirst, AwaitsSecond;
        public readonly List<string> Failures = new List<string>();
    }
}
