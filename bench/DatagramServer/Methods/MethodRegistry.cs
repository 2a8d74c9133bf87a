using System;
using System.Collections.Generic;

namespace WhereAllocation.Bench.DatagramServer
{
    /// <summary>
    /// Every receiver the benchmark knows, in the order of the results. A method that cannot run in this
    /// build or on this runtime stays in the list as an <see cref="AbsentMethod"/> with its reason, so the
    /// output says why its row is missing instead of leaving it out silently.
    /// </summary>
    internal static class MethodRegistry
    {
        public static IReadOnlyList<ReceiverMethod> All()
        {
            return new ReceiverMethod[]
            {
                new AllocBaseline(),
                new ManagedNonAlloc(),
                new LibrarySingle(),
                new LibraryBatch(),
#if NET8_0_OR_GREATER
                new DotnetSocketAddress(),
#else
                new AbsentMethod("dotnet-socketaddress", "Socket.ReceiveFrom(Span<byte>, SocketFlags, SocketAddress)",
                    Machine.IsMono
                        ? "the overload exists on .NET 8 and newer only, not on Mono"
                        : "this is the netstandard2.1 build; the overload needs the .NET 8+ build"),
#endif
                new SeedAsyncAlloc(),
                new SeedAsyncReuse(),
                new LibraryAsync(),
#if NET8_0_OR_GREATER
                new DotnetSocketAddressAsync(),
#else
                new AbsentMethod("dotnet-socketaddress-async", "await Socket.ReceiveFromAsync(Memory<byte>, SocketFlags, SocketAddress, token)",
                    Machine.IsMono
                        ? "the overload exists on .NET 8 and newer only, not on Mono"
                        : "this is the netstandard2.1 build; the overload needs the .NET 8+ build"),
#endif
                new RawPinvoke(),
                new RawPinvokeHeld(),
                new RawPinvokeSafe(),
                new RawRecvmmsg(),
                new NativeMethod("c-recvfrom", "recvfrom", "bench/native wa-recv: one recvmsg per datagram, check of the bytes"),
                new NativeMethod("c-recvmmsg", "recvmmsg", "bench/native wa-recv: recvmmsg, up to 64 datagrams per call, check of the bytes"),
            };
        }

        /// <summary>
        /// The sweep's rows (--mode sweep), in three groups, each after its C baseline doing the same work: the batch at every size
        /// in <paramref name="batchSizes"/> and, at the largest, by single calls (every datagram's bytes checked, as wa-recv checks
        /// them); count only at the largest size; the one-datagram-per-call forms, count only.
        /// </summary>
        public static IReadOnlyList<ReceiverMethod> Sweep(IReadOnlyList<int> batchSizes)
        {
            int largest = 0;
            foreach (int b in batchSizes) largest = Math.Max(largest, b);
            var rows = new List<ReceiverMethod> { new NativeMethod("c-recvmmsg", "recvmmsg", "bench/native wa-recv: recvmmsg, up to 64 datagrams per call, check of the bytes") };
            foreach (int b in batchSizes) rows.Add(new SweepBatch(b, DatagramBatchMode.MultiMessage, true));
            rows.Add(new SweepBatch(largest, DatagramBatchMode.SingleCalls, true));
            rows.Add(new NativeMethod("c-recvmmsg-count", "recvmmsg", "bench/native wa-recv --no-check: recvmmsg of up to 64, count only", false));
            rows.Add(new SweepBatch(largest, DatagramBatchMode.MultiMessage, false));
            rows.Add(new NativeMethod("c-recvfrom-count", "recvfrom", "bench/native wa-recv --no-check: one recvmsg per datagram, count only", false));
            foreach (OneCallForm form in (OneCallForm[])Enum.GetValues(typeof(OneCallForm))) rows.Add(new OneCallCount(form));
            return rows;
        }

        /// <summary>The sweep's ratios, each row to the C receiver doing the same work (and the compatible call to the bare P/Invoke).</summary>
        public static IEnumerable<SweepComparison> SweepComparisons(IReadOnlyList<int> batchSizes)
        {
            int largest = 0;
            foreach (int b in batchSizes) largest = Math.Max(largest, b);
            foreach (int b in batchSizes)
                yield return new SweepComparison("a batch of " + b + " against C's recvmmsg of 64, both checking the bytes", SweepBatch.NameOf(b, DatagramBatchMode.MultiMessage, true), "c-recvmmsg");
            yield return new SweepComparison("the loop of single calls against C's recvmmsg", SweepBatch.NameOf(largest, DatagramBatchMode.SingleCalls, true), "c-recvmmsg");
            yield return new SweepComparison("count only: the batch against C's recvmmsg --no-check", SweepBatch.NameOf(largest, DatagramBatchMode.MultiMessage, false), "c-recvmmsg-count");
            foreach (OneCallForm form in (OneCallForm[])Enum.GetValues(typeof(OneCallForm)))
            {
                var row = new OneCallCount(form);
                yield return new SweepComparison("one datagram per call, count only, against C's recvfrom --no-check", row.Name, "c-recvfrom-count");
            }
            yield return new SweepComparison("the compatible call's own cost over the bare P/Invoke, count only", "library-count", "raw-pinvoke-count");
        }

        public static ReceiverMethod? Find(IReadOnlyList<ReceiverMethod> methods, string name)
        {
            foreach (ReceiverMethod method in methods)
                if (string.Equals(method.Name, name, StringComparison.Ordinal)) return method;
            return null;
        }
    }

    /// <summary>One ratio of the sweep's table: <see cref="Method"/>'s rate over <see cref="Baseline"/>'s, round by round.</summary>
    internal sealed class SweepComparison
    {
        public SweepComparison(string label, string method, string baseline)
        {
            Label = label;
            Method = method;
            Baseline = baseline;
        }

        public string Label { get; }
        public string Method { get; }
        public string Baseline { get; }
    }
}
