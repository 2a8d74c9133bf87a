// UnityPlayerPlatform is compiled only into the netstandard2.1 build made without Unity's defines (the NuGet package's):
// Unity's own compile of the package (LIBRARY_UNITY_DEFINES, tests/UnityCoreClr) names the player at compile time instead.
#if LIBRARY_NETSTANDARD && !LIBRARY_UNITY_DEFINES
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The netstandard2.1 build compiled without Unity's defines (the NuGet package) asks Unity for the player platform
    /// (UnityPlayerPlatform) and chooses the OS calls from its answer. Here, outside Unity, the question finds no Unity;
    /// the answers themselves are mapped as below. The run with a UnityEngine stand-in answering each platform is
    /// scripts/unity-builds.sh (nuget-android, nuget-ios, ...).
    /// </summary>
    public class UnityPlayerPlatformTests
    {
        [Fact]
        public void OutsideUnityThereIsNoAnswerAndNoFailure()
        {
            Assert.Null(UnityPlayerPlatform.Ask(out string? failure));
            Assert.Null(failure);
        }

        [Fact]
        public void AnAndroidPlayerTakesTheLinuxCalls()
        {
            Assert.IsType<LinuxSocketCalls>(OsSocketCalls.ForUnityPlayer("Android"));
        }

        [Theory]
        [InlineData("IPhonePlayer")]
        [InlineData("tvOS")]
        [InlineData("VisionOS")]
        public void AnAppleMobilePlayerRefusesAndNamesTheUnityPackage(string platform)
        {
            OsSocketCalls calls = OsSocketCalls.ForUnityPlayer(platform)!;
            Assert.IsType<UnknownOsSocketCalls>(calls);
            string why = calls.Probe()!;
            Assert.Contains(platform, why);
            Assert.Contains("__Internal", why);
            Assert.Contains("com.where-allocation.core", why);
        }

        [Theory]
        [InlineData("WebGLPlayer")]
        [InlineData("PS5")]
        [InlineData("Switch")]
        [InlineData("GameCoreXboxSeries")]
        public void AWebGLOrConsolePlayerRefuses(string platform)
        {
            OsSocketCalls calls = OsSocketCalls.ForUnityPlayer(platform)!;
            Assert.IsType<UnknownOsSocketCalls>(calls);
            Assert.Contains(platform, calls.Probe()!);
        }

        [Theory]
        [InlineData("LinuxEditor")]
        [InlineData("WindowsEditor")]
        [InlineData("OSXEditor")]
        [InlineData("WindowsPlayer")]
        [InlineData("LinuxPlayer")]
        [InlineData("LinuxServer")]
        [InlineData("OSXPlayer")]
        public void TheEditorAndDesktopPlayersLeaveTheChoiceToTheRuntime(string platform)
        {
            Assert.Null(OsSocketCalls.ForUnityPlayer(platform));
        }
    }
}
#endif
