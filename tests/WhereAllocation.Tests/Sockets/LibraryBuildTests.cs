using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The suite runs against the build of the library its test project names (Support/LibraryBuild.cs), and that build chose
    /// its OS calls the way it was compiled to: a Unity player's build at compile time from the player's define, every other
    /// build (the Unity editor's included, whose defines name the build target, not the OS it runs on) from the runtime.
    /// A stage that silently tested another build than it claims (the Unity defines lost on their way to the library's
    /// compile, the net8.0 build picked where netstandard2.1 was asked for) fails here.
    /// </summary>
    public class LibraryBuildTests
    {
        [Fact]
        public void TheLibraryLoadedIsTheBuildTheTestProjectNames()
        {
            Assert.True(LibraryBuild.CompiledForNetStandard == LibraryBuild.IsNetStandard,
                "the test project names the " + (LibraryBuild.CompiledForNetStandard ? "netstandard2.1" : "net8.0") + " build, and " + LibraryBuild.Framework + " was loaded");
        }

        [Fact]
        public void TheOsCallsWereChosenAsTheBuildWasCompiled()
        {
#if LIBRARY_UNITY_DEFINES && !LIBRARY_UNITY_EDITOR
            // tests/Unity/CoreClr/Player: the library compiled with UNITY_STANDALONE_LINUX and without UNITY_EDITOR.
            const string expected = "compiled for a Unity Linux player";
#else
            const string expected = "from RuntimeInformation at run time";
#endif
            Assert.Equal(expected, OsSocketCalls.ChosenBy);
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux)) Assert.IsType<LinuxSocketCalls>(OsSocketCalls.Current);
            Assert.Contains("OS calls " + OsSocketCalls.Current.Name + " (" + expected + ")", DatagramPathSettings.Diagnostic);
        }
    }
}
