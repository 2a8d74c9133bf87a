using System;
using System.Diagnostics;
using System.Net.Sockets;
using System.Threading;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// One receiver's run, shared by the receiving thread (which counts every datagram) and the
    /// controlling thread (which starts the sender, says how many datagrams to expect, and ends the run).
    /// </summary>
    /// <remarks>
    /// <para>The receiving thread calls, per datagram: <see cref="IsWakeUp"/>, then <see cref="Account(char[], int)"/>
    /// (or the string overload), which checks it, records the time, and says when the run is complete. The sweep's rows
    /// (--mode sweep) check the bytes as received instead (<see cref="AccountOfBatch(ReadOnlySpan{byte}, in EndPointKey)"/>),
    /// or count only (<see cref="AccountLength(int)"/>: the length, and the sender where the form gives one).
    /// Nothing here allocates, so the bytes a method allocates per datagram are its own.</para>
    /// <para>The run ends when the receiver has read as many datagrams as the kernel accepted
    /// (<see cref="SetTarget"/>: sent minus the socket's drops, plus any injected ones), or, if that never
    /// happens, when the controller sees no progress for the idle time and asks it to stop: it then sends
    /// empty datagrams (<see cref="RequestStop"/>), which wake a receiver blocked in its receive call.</para>
    /// <para>In drain mode the receiver waits at a gate before each round while the sender fills its queue;
    /// only the time from the first to the last datagram of each round is counted.</para>
    /// </remarks>
    internal sealed class ReceiveRun
    {
        private readonly long _firstSequence;
        private readonly long _range;
        private readonly ulong[] _seen;
        private readonly bool _gated;
        private readonly int _datagramSize;

        // The sender of the current queue fill: set by its first datagram that passed, then every datagram's must match.
        private EndPointKey _sender;

        // counters, written by the receiving thread only
        private long _read;
        private long _valid;
        private long _corrupt;
        private long _duplicate;
        private long _outOfRange;
        private long _roundFirst;
        private long _last;
        private long _timedTicks;
        private long _allocatedBefore;
        private long _cpuBefore;
        private long _cpuRoundStart;
        private long _cpuInRounds;
        private int _started;

        // set by the controller
        private long _target = long.MaxValue;
        private int _stop;
        private int _openedRounds;
        private int _finishedRounds;

        public ReceiveRun(long firstSequence, long range, int bufferSize, int datagramSize, bool gated)
        {
            if (range < 1) throw new ArgumentOutOfRangeException(nameof(range));
            _firstSequence = firstSequence;
            _range = range;
            _seen = new ulong[(range + 63) / 64];
            _gated = gated;
            _datagramSize = datagramSize;
            BufferSize = bufferSize;
        }

        /// <summary>Bytes each receive buffer must hold.</summary>
        public int BufferSize { get; }

        public long Read => Volatile.Read(ref _read);
        public long Valid => _valid;
        public long Corrupt => _corrupt;
        public long Duplicate => _duplicate;
        public long OutOfRange => _outOfRange;

        /// <summary>Seconds from the first to the last datagram (summed over the rounds in drain mode).</summary>
        public double Seconds => (_timedTicks + (_roundFirst == 0 ? 0 : _last - _roundFirst)) / (double)Stopwatch.Frequency;

        /// <summary>
        /// Managed bytes the receiving thread allocated between <see cref="Begin"/> and <see cref="End"/> (the whole
        /// process's with <see cref="MeasureWholeProcess"/>; null where the runtime does not count those).
        /// </summary>
        public long? AllocatedBytes { get; private set; }

        /// <summary>
        /// CPU time (user + system) the receiving thread used between <see cref="Begin"/> and <see cref="End"/>, in nanoseconds
        /// (the whole process's with <see cref="MeasureWholeProcess"/>); in drain mode only while draining (from a round's
        /// opening to its last datagram), as wa-recv's rusage covers only its drain.
        /// </summary>
        public long CpuNanoseconds { get; private set; }

        /// <summary>
        /// Set by a method before <see cref="Begin"/> when its loop runs on threads the runtime picks (an async loop
        /// resumed on the thread pool): bytes and CPU time are then counted for the whole process. Bytes only where
        /// the runtime counts every thread's (GC.GetTotalAllocatedBytes: .NET; Mono 6.8 has no such counter).
        /// </summary>
        public bool MeasureWholeProcess { get; set; }

        /// <summary>Set when the receiver is about to make its first receive call.</summary>
        public bool Started => Volatile.Read(ref _started) != 0;

        public Exception? Failure { get; set; }

        // ----- the receiving thread -----

        /// <summary>Called once before the receive loop. In drain mode it waits for the first round.</summary>
        public void Begin()
        {
            _cpuBefore = MeasureWholeProcess ? Linux.ProcessCpuNanoseconds() : Linux.ThreadCpuNanoseconds();
            _allocatedBefore = MeasureWholeProcess ? ProcessAllocatedBytes() ?? -1 : GC.GetAllocatedBytesForCurrentThread();
            Volatile.Write(ref _started, 1);
            if (_gated && WaitForRound(0)) _cpuRoundStart = Linux.ThreadCpuNanoseconds();
        }

        /// <summary>Called once after the receive loop.</summary>
        public void End()
        {
            if (MeasureWholeProcess)
            {
                long? now = ProcessAllocatedBytes();
                AllocatedBytes = now == null || _allocatedBefore < 0 ? (long?)null : now.Value - _allocatedBefore;
                CpuNanoseconds = Linux.ProcessCpuNanoseconds() - _cpuBefore;
                return;
            }
            // Under Boehm the thread's counter says 0 whatever was allocated: no figure then, rather than a false 0.
            AllocatedBytes = FrameCounters.HasAllocationCounter ? GC.GetAllocatedBytesForCurrentThread() - _allocatedBefore : (long?)null;
            CpuNanoseconds = _gated ? _cpuInRounds : Linux.ThreadCpuNanoseconds() - _cpuBefore;
        }

        private static long? ProcessAllocatedBytes()
        {
#if NET8_0_OR_GREATER
            return GC.GetTotalAllocatedBytes(true);
#else
            return null; // netstandard2.1, run on Mono 6.8: no whole-process counter
#endif
        }

        /// <summary>True for the controller's empty wake-up datagram after it asked the receiver to stop.</summary>
        public bool IsWakeUp(int length) => length == 0 && Volatile.Read(ref _stop) != 0;

        /// <summary>Counts a datagram the runtime reported as cut (longer than the buffer) as corrupt.</summary>
        public bool AccountCut()
        {
            Stamp();
            return AccountCutOfBatch();
        }

        /// <summary>Checks and counts one decoded datagram held in a char array. Returns true when the run is complete.</summary>
        public bool Account(char[] chars, int length)
        {
            Stamp();
            return AccountOfBatch(chars, length);
        }

        /// <summary>
        /// A batch receiver's clock: called once per receive call that returned datagrams, which are then
        /// counted with <see cref="AccountOfBatch"/> and <see cref="AccountCutOfBatch"/>. The C recvmmsg
        /// receiver reads its clock once per call too; the one-datagram methods read it per datagram, which is
        /// once per call for them as well.
        /// </summary>
        public void StampCall() => Stamp();

        /// <summary><see cref="Account(char[], int)"/> without reading the clock; see <see cref="StampCall"/>.</summary>
        public bool AccountOfBatch(char[] chars, int length)
        {
            Record(WaFormat.Check(chars, length, out long sequence), sequence);
            return Advance();
        }

        /// <summary><see cref="AccountCut"/> without reading the clock; see <see cref="StampCall"/>.</summary>
        public bool AccountCutOfBatch()
        {
            _corrupt++;
            return Advance();
        }

        /// <summary>
        /// The sweep's check: the bytes as received (no decode, as the C receiver checks them), and the sender, which must be
        /// the one of the fill's first good datagram (a datagram from another counts as corrupt). Without reading the clock.
        /// </summary>
        public bool AccountOfBatch(ReadOnlySpan<byte> datagram, in EndPointKey sender)
        {
            WaCheckResult result = WaFormat.Check(datagram, out long sequence);
            if (result == WaCheckResult.Ok && !IsFillSender(sender)) _corrupt++;
            else Record(result, sequence);
            return Advance();
        }

        /// <summary>
        /// Count only (the sweep's count rows, as wa-recv --no-check): a datagram of the run's size is counted received, any other
        /// corrupt; its content is not looked at, so neither duplicates nor a stray sequence can show. Reads the clock.
        /// </summary>
        public bool AccountLength(int length)
        {
            Stamp();
            return AccountLengthOfBatch(length);
        }

        /// <summary><see cref="AccountLength(int)"/>, and the sender must be the fill's (as the first datagram of the fill gave it).</summary>
        public bool AccountLength(int length, in EndPointKey sender)
        {
            Stamp();
            return AccountLengthOfBatch(length, sender);
        }

        /// <summary><see cref="AccountLength(int)"/> without reading the clock; see <see cref="StampCall"/>.</summary>
        public bool AccountLengthOfBatch(int length)
        {
            if (length == _datagramSize) _valid++;
            else _corrupt++;
            return Advance();
        }

        /// <summary><see cref="AccountLength(int, in EndPointKey)"/> without reading the clock; see <see cref="StampCall"/>.</summary>
        public bool AccountLengthOfBatch(int length, in EndPointKey sender)
        {
            if (length == _datagramSize && IsFillSender(sender)) _valid++;
            else _corrupt++;
            return Advance();
        }

        /// <summary>True when <paramref name="sender"/> is the fill's sender (the first one asked about in the fill becomes it); never an empty key.</summary>
        private bool IsFillSender(in EndPointKey sender)
        {
            if (sender.IsEmpty) return false;
            if (_sender.IsEmpty)
            {
                _sender = sender;
                return true;
            }
            return _sender.Equals(sender);
        }

        /// <summary>Checks and counts one decoded datagram held in a string. Returns true when the run is complete.</summary>
        public bool Account(string text)
        {
            Stamp();
            Record(WaFormat.Check(text, out long sequence), sequence);
            return Advance();
        }

        private void Stamp()
        {
            long now = Stopwatch.GetTimestamp();
            if (_roundFirst == 0) _roundFirst = now;
            _last = now;
        }

        private void Record(WaCheckResult result, long sequence)
        {
            if (result != WaCheckResult.Ok)
            {
                _corrupt++;
                return;
            }
            long index = sequence - _firstSequence;
            if ((ulong)index >= (ulong)_range)
            {
                _outOfRange++;
                return;
            }
            ulong bit = 1UL << (int)(index & 63);
            ref ulong word = ref _seen[index >> 6];
            if ((word & bit) != 0)
            {
                _duplicate++;
                return;
            }
            word |= bit;
            _valid++;
        }

        private bool Advance()
        {
            long read = _read + 1;
            Volatile.Write(ref _read, read);
            if (read < Volatile.Read(ref _target)) return false;
            if (!_gated) return true;
            // Drain mode: this round is drained. Stop its clock, report it, and wait for the next one.
            _timedTicks += _last - _roundFirst;
            _roundFirst = 0;
            _cpuInRounds += Linux.ThreadCpuNanoseconds() - _cpuRoundStart;
            int round = _finishedRounds + 1;
            Volatile.Write(ref _finishedRounds, round);
            if (!WaitForRound(round)) return true;
            _sender = default; // each fill comes from a sender of its own
            _cpuRoundStart = Linux.ThreadCpuNanoseconds();
            return false;
        }

        // Polls with Thread.Sleep(1): it allocates nothing on either runtime and the receiver is idle anyway.
        private bool WaitForRound(int round)
        {
            while (Volatile.Read(ref _openedRounds) <= round)
            {
                if (Volatile.Read(ref _stop) != 0) return false;
                Thread.Sleep(1);
            }
            return true;
        }

        // ----- the controlling thread -----

        /// <summary>The run is complete once this many datagrams have been read (all rounds so far, in drain mode).</summary>
        public void SetTarget(long datagrams) => Volatile.Write(ref _target, datagrams);

        /// <summary>Drain mode: lets the receiver drain the round the sender has just queued.</summary>
        public void OpenRound() => Interlocked.Increment(ref _openedRounds);

        /// <summary>Drain mode: rounds the receiver has drained completely.</summary>
        public int FinishedRounds => Volatile.Read(ref _finishedRounds);

        /// <summary>Asks the receiver to stop; it notices at the next datagram, or at the empty wake-up datagram sent here.</summary>
        public void RequestStop(Socket waker, System.Net.EndPoint receiver)
        {
            Volatile.Write(ref _stop, 1);
            waker.SendTo(Array.Empty<byte>(), receiver);
        }
    }
}
