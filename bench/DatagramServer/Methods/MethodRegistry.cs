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

        public static ReceiverMethod? Find(IReadOnlyList<ReceiverMethod> methods, string name)
        {
            foreach (ReceiverMethod method in methods)
                if (string.Equals(method.Name, name, StringComparison.Ordinal)) return method;
            return null;
        }
    }
}
