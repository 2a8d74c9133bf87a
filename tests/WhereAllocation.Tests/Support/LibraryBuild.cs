using System.Reflection;
using System.Runtime.Versioning;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Which build of the library the suite runs against, read from the library assembly itself. The runtime does not say
    /// it: CoreCLR runs the net8.0 build in the CoreCLR and Wine stages and the netstandard2.1 build, compiled with Unity's
    /// defines, in the Unity CoreCLR stage (tests/Unity/CoreClr); Mono runs the netstandard2.1 build. What only the net8.0
    /// build has (the SocketAddress path, advice in exception messages) is asked of this, never of the runtime.
    /// </summary>
    public static class LibraryBuild
    {
        /// <summary>The library's target framework, as its TargetFrameworkAttribute names it (".NETStandard,Version=v2.1", ".NETCoreApp,Version=v8.0").</summary>
        public static readonly string Framework =
            typeof(DatagramPathSettings).Assembly.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName ?? "unknown";

        /// <summary>True when the library under test is its netstandard2.1 build (the one Unity compiles, on every back end).</summary>
        public static readonly bool IsNetStandard = Framework.StartsWith(".NETStandard,");

        /// <summary>
        /// True when the test project compiled the suite for the netstandard2.1 build: LIBRARY_NETSTANDARD, which the Mono, Boehm
        /// and Unity CoreCLR test projects define. <see cref="LibraryBuildTests"/> checks that it names the build that was loaded.
        /// </summary>
        public const bool CompiledForNetStandard =
#if LIBRARY_NETSTANDARD
            true;
#else
            false;
#endif

        /// <summary>
        /// True when the test project compiled the library with a Unity target's defines (LIBRARY_UNITY_DEFINES: tests/Unity/CoreClr),
        /// false for the builds the NuGet package ships.
        /// </summary>
        public const bool CompiledWithUnityDefines =
#if LIBRARY_UNITY_DEFINES
            true;
#else
            false;
#endif
    }

    /// <summary>The sockets suite's part of <see cref="Runtime"/> (tests/Shared/Runtime.cs): the build of the library it runs against.</summary>
    public static partial class Runtime
    {
        private static partial string LibraryUnderTest() =>
            "the library's " + (LibraryBuild.IsNetStandard ? "netstandard2.1" : "net8.0") + " build" + (LibraryBuild.CompiledWithUnityDefines ? " with Unity's defines" : "");
    }
}
