using System;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The names the library's P/Invokes give their native libraries, as built for these runtimes (dynamic loaders):
    /// "libc" for every C library call, "ws2_32.dll" for Winsock and "kernel32.dll" for the Windows kernel calls beside it. The statically linked form ("__Internal", for
    /// Unity's Apple mobile players) is compiled only for those players; scripts/no-jit.sh compiles it and checks it.
    /// </summary>
    public class NativeLibraryNameTests
    {
        [Fact]
        public void EveryCLibraryCallNamesLibc()
        {
            MethodInfo[] calls = PInvokes(typeof(WhereAllocation.Interop.Libc));
            Assert.True(calls.Length >= 10, calls.Length + " C library calls found");
            foreach (MethodInfo call in calls)
                Assert.True(LibraryOf(call) == "libc", call.Name + " names " + LibraryOf(call));
            Assert.Equal("libc", WhereAllocation.Interop.Libc.Lib);
        }

        [Fact]
        public void TheLinuxOnlyCallsAlwaysNameTheDynamicLibrary()
        {
            Assert.Equal("libc", WhereAllocation.Interop.Libc.LinuxLib);
            foreach (string name in new[] { "RecvMMsg", "SendMMsg", "SchedSetAffinity", "EpollCreate1", "EpollCtl", "EpollWait" })
            {
                MethodInfo call = typeof(WhereAllocation.Interop.Libc).GetMethod(name, BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public)!;
                Assert.Equal("libc", LibraryOf(call));
            }
        }

        [Fact]
        public void EveryWinsockCallNamesWs2_32()
        {
            MethodInfo[] calls = PInvokes(typeof(WhereAllocation.Interop.Ws2_32));
            Assert.NotEmpty(calls);
            foreach (MethodInfo call in calls)
                Assert.True(LibraryOf(call) == "ws2_32.dll", call.Name + " names " + LibraryOf(call));
        }

        [Fact]
        public void EveryWindowsKernelCallNamesKernel32()
        {
            MethodInfo[] calls = PInvokes(typeof(WhereAllocation.Interop.Kernel32));
            Assert.NotEmpty(calls);
            foreach (MethodInfo call in calls)
                Assert.True(LibraryOf(call) == "kernel32.dll", call.Name + " names " + LibraryOf(call));
        }

        [Fact]
        public void TheOsSocketLibraryAnswersUnderItsNameOnThisMachine()
        {
            Assert.Null(OsSocketCalls.Current.Probe());
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Windows))
            {
                // Windows has no "libc": the Windows branch names only ws2_32.dll, and the C library is not reached.
                Assert.Throws<DllNotFoundException>(() => WhereAllocation.Interop.Libc.GetPid());
                return;
            }
            // The name resolves here (Mono's dllmap, CoreCLR's own mapping of "libc" to libc.so.6): one harmless call.
            Assert.Equal(System.Diagnostics.Process.GetCurrentProcess().Id, WhereAllocation.Interop.Libc.GetPid());
        }

        private static MethodInfo[] PInvokes(Type type)
        {
            return type.GetMethods(BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public)
                .Where(m => (m.Attributes & MethodAttributes.PinvokeImpl) != 0).ToArray();
        }

        private static string LibraryOf(MethodInfo call)
        {
            var import = (DllImportAttribute?)call.GetCustomAttributes(typeof(DllImportAttribute), false).FirstOrDefault();
            return import?.Value ?? "(no DllImport)";
        }
    }
}
