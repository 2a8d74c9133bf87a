using System;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using WhereAllocation;

// AwaitStress: N sockets (default 1000) each awaiting ReceiveFromAsync at once, fed round by round by one sender: every
// datagram carries its socket, its round, its send time and a checksum. Checks that nothing is lost or mixed up and
// that every await completes; prints the completion latency (send to resumed await) p50/p99 and the bytes the process
// allocated per await over the measured rounds. Then the same with sockets disposed and made anew between rounds.
// The latency runs from the datagram's send, and the sender sends a round's datagrams one after another: it includes
// the time the round took to send, so it is a figure for comparing runs on one machine, not a per-datagram cost.
// Usage: AwaitStress [sockets] [rounds] [ThreadPool|IoThread]
int count = args.Length > 0 ? int.Parse(args[0]) : 1000;
int rounds = args.Length > 1 ? int.Parse(args[1]) : 40;
DatagramContinuations mode = args.Length > 2 ? Enum.Parse<DatagramContinuations>(args[2]) : AsyncDatagramSocket.DefaultContinuations;
const int Warmup = 5;
const int Churn = 20; // sockets replaced between two rounds in the second run

Console.WriteLine($"AwaitStress: {count} sockets, {rounds} rounds, {mode}, path {DatagramPaths.Active}, {System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription}");
int failures = 0;
failures += Run(false);
failures += Run(true);
Console.WriteLine(failures == 0 ? "AwaitStress: passed" : $"AwaitStress: {failures} failures");
return failures == 0 ? 0 : 1;

int Run(bool churn)
{
    var sockets = new Socket[count];
    var wrappers = new AsyncDatagramSocket[count];
    var keys = new EndPointKey[count];
    var next = new int[count];          // the round each socket's loop expects next
    var bad = new int[1];
    var latencies = new long[count * rounds];
    int[] done = new int[rounds];
    using var sender = Bound();
    for (int i = 0; i < count; i++) Make(i, 0);

    var payload = new byte[32];
    long allocatedBefore = 0;
    int replaced = 0;
    var random = new Random(12345);
    for (int r = 0; r < rounds; r++)
    {
        if (r == Warmup) allocatedBefore = GC.GetTotalAllocatedBytes(true);
        for (int i = 0; i < count; i++)
        {
            BitConverter.TryWriteBytes(payload.AsSpan(0, 4), i);
            BitConverter.TryWriteBytes(payload.AsSpan(4, 4), r);
            BitConverter.TryWriteBytes(payload.AsSpan(8, 8), Stopwatch.GetTimestamp());
            BitConverter.TryWriteBytes(payload.AsSpan(16, 8), Checksum(i, r));
            sender.SendTo_NonAlloc(payload.AsSpan(), keys[i]);
        }
        long start = Environment.TickCount64;
        while (Volatile.Read(ref done[r]) < count)
        {
            if (Environment.TickCount64 - start > 10_000)
            {
                Console.WriteLine($"  round {r}: only {Volatile.Read(ref done[r])} of {count} awaits completed within 10 s");
                return 1;
            }
            Thread.Sleep(0);
        }
        if (churn && r < rounds - 1)
        {
            for (int k = 0; k < Churn; k++)
            {
                int i = random.Next(count);
                wrappers[i].Dispose();   // its waiting await ends with ObjectDisposedException, its loop ends
                sockets[i].Dispose();
                Make(i, r + 1);
                replaced++;
            }
        }
    }
    long allocated = GC.GetTotalAllocatedBytes(true) - allocatedBefore;
    for (int i = 0; i < count; i++)
    {
        wrappers[i].Dispose();
        sockets[i].Dispose();
    }
    Array.Sort(latencies);
    int from = Array.FindIndex(latencies, l => l > 0);
    double P(double q) => latencies[from + (int)((latencies.Length - from - 1) * q)] * 1e6 / Stopwatch.Frequency;
    long awaits = (long)count * (rounds - Warmup);
    Console.WriteLine(churn
        ? $"  with {replaced} sockets replaced between rounds: {Volatile.Read(ref bad[0])} datagrams wrong or lost; latency p50 {P(0.5):F0} us, p99 {P(0.99):F0} us"
        : $"  {awaits} awaits measured: {Volatile.Read(ref bad[0])} datagrams wrong or lost; latency p50 {P(0.5):F0} us, p99 {P(0.99):F0} us; {(double)allocated / awaits:F2} B per await ({allocated} B in all, whole process: the runtime's own one-off work included)");
    return Volatile.Read(ref bad[0]) == 0 ? 0 : 1;

    void Make(int i, int firstRound)
    {
        sockets[i] = Bound();
        keys[i] = EndPointKey.FromIPEndPoint((IPEndPoint)sockets[i].LocalEndPoint!);
        wrappers[i] = new AsyncDatagramSocket(sockets[i], mode);
        next[i] = firstRound;
        _ = Loop(i, wrappers[i]);
    }

    async Task Loop(int i, AsyncDatagramSocket wrapper)
    {
        var buffer = new byte[64];
        while (next[i] < rounds)
        {
            ReceivedDatagram datagram;
            try
            {
                datagram = await wrapper.ReceiveFromAsync(buffer);
            }
            catch (ObjectDisposedException)
            {
                return; // replaced
            }
            long now = Stopwatch.GetTimestamp();
            int r = next[i];
            bool right = datagram.Length == 32 && !datagram.Truncated
                && BitConverter.ToInt32(buffer, 0) == i && BitConverter.ToInt32(buffer, 4) == r
                && BitConverter.ToInt64(buffer, 16) == Checksum(i, r);
            if (!right) Interlocked.Increment(ref bad[0]);
            latencies[i * rounds + r] = now - BitConverter.ToInt64(buffer, 8);
            next[i] = r + 1;
            Interlocked.Increment(ref done[r]);
        }
    }
}

static long Checksum(int socket, int round) => unchecked((socket * (long)0x9E3779B97F4A7C15UL) ^ (round * (long)0xC2B2AE3D27D4EB4FUL));

static Socket Bound()
{
    Socket socket = DatagramSockets.Create(AddressFamily.InterNetwork, false);
    socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    return socket;
}
