using System;

/// <summary>How many bytes the calling thread allocates while an action runs, where the runtime can say.</summary>
internal static class Allocations
{
    public static string Measure(Action action)
    {
        // The counter must first see a known allocation: under Mono's Boehm collector (Unity's) it says 0 for everything.
        long canaryBefore = GC.GetAllocatedBytesForCurrentThread();
        object canary = new byte[1000];
        bool counts = GC.GetAllocatedBytesForCurrentThread() - canaryBefore >= 1000;
        GC.KeepAlive(canary);

        long before = GC.GetAllocatedBytesForCurrentThread();
        action();
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;   // read before building the message
        return counts
            ? $"the client allocated {allocated} bytes"
            : "no allocation counter on this runtime (it did not see a byte[1000] canary), so no byte count";
    }
}
