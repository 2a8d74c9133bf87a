using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Which runtime runs the suite: the same sources run on CoreCLR (xunit), on Mono (the suite runner) and
    /// on the win-x64 runtime under Wine (the suite runner, scripts/wine-tests.sh). Shared by both packages' suites
    /// (tests/Shared): each suite says which build of its package it runs against (<see cref="LibraryUnderTest"/>).
    /// </summary>
    public static partial class Runtime
    {
        public static readonly bool IsMono = Type.GetType("Mono.Runtime") != null;

        /// <summary>
        /// True under Mono's Boehm build (mono-boehm, the collector family Unity runs), which reports a single generation where
        /// SGen reports two. Boehm scans the heap as well as the stacks conservatively: a word that looks like a pointer keeps its
        /// object, so "nothing else holds it" cannot be asserted there, only what a known holder holds.
        /// </summary>
        public static readonly bool IsConservativeCollector = IsMono && GC.MaxGeneration == 0;

        /// <summary>
        /// True on Windows as Wine emulates it: Wine's ntdll exports wine_get_version, Windows' does not. The few
        /// places where Wine's sockets differ from Windows' ask this, and each says how they differ.
        /// </summary>
        public static readonly bool IsWine = RuntimeInformation.IsOSPlatform(OSPlatform.Windows) && WineVersionExport() != IntPtr.Zero;

        /// <summary>
        /// True when the suite runs without a JIT (Mono's full AOT, IL2CPP's stand-in): set by the suite's own runner from its
        /// <c>--aot-only</c> option (scripts/no-jit.sh), the one place that knows.
        /// </summary>
        public static bool CodeMadeAtRunTimeRefused { get; set; }

        public static string Describe()
        {
            return (IsMono ? "Mono" : "CoreCLR") + " (" + RuntimeInformation.FrameworkDescription + ", " + RuntimeInformation.OSDescription + (IsWine ? ", under Wine" : "")
                + ", " + LibraryUnderTest() + ")";
        }

        /// <summary>The build of the package under test, in words ("the library's net8.0 build"): each suite writes its own.</summary>
        private static partial string LibraryUnderTest();

        private static IntPtr WineVersionExport()
        {
            IntPtr ntdll = GetModuleHandleW("ntdll.dll");
            return ntdll == IntPtr.Zero ? IntPtr.Zero : GetProcAddress(ntdll, "wine_get_version");
        }

        [DllImport("kernel32.dll", CharSet = CharSet.Unicode)]
        private static extern IntPtr GetModuleHandleW(string name);

        [DllImport("kernel32.dll", CharSet = CharSet.Ansi, BestFitMapping = false)]
        private static extern IntPtr GetProcAddress(IntPtr module, string name);
    }
}
