// UnityPlayerPlatform is compiled only into the netstandard2.1 build made without Unity's defines (the NuGet package's):
// Unity's own compile of the package (LIBRARY_UNITY_DEFINES, tests/Unity/CoreClr) names the player at compile time instead.
#if LIBRARY_NETSTANDARD && !LIBRARY_UNITY_DEFINES
using System;
using System.Linq;
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
        [InlineData("GameCoreScarlett")]
        [InlineData("Switch2")]
        public void AWebGLOrConsolePlayerRefuses(string platform)
        {
            OsSocketCalls calls = OsSocketCalls.ForUnityPlayer(platform)!;
            Assert.IsType<UnknownOsSocketCalls>(calls);
            Assert.Contains(platform, calls.Probe()!);
        }

        /// <summary>A stand-in of Unity's RuntimePlatform with an alias, as Unity's has had (GameCoreScarlett had GameCoreXboxSeries's value).</summary>
        public enum AliasedPlatform
        {
            OSXEditor = 0,
            GameCoreScarlett = 36,
            GameCoreXboxSeries = 36,
            GameCoreXboxOne = 37,
        }

        /// <summary>
        /// The answer is every name of the value, whichever one the runtime's ToString picks, and the choice refuses the
        /// console under any of them.
        /// </summary>
        [Fact]
        public void EveryNameOfAnAliasedValueIsAnsweredAndRefused()
        {
            string[] names = UnityPlayerPlatform.NamesOf(AliasedPlatform.GameCoreXboxSeries);
            Assert.Equal(new[] { "GameCoreScarlett", "GameCoreXboxSeries" }, names.OrderBy(n => n, StringComparer.Ordinal).ToArray());
            Assert.Contains(AliasedPlatform.GameCoreXboxSeries.ToString(), names);
            Assert.Equal(new[] { "GameCoreXboxOne" }, UnityPlayerPlatform.NamesOf(AliasedPlatform.GameCoreXboxOne));
            foreach (string name in names) Assert.IsType<UnknownOsSocketCalls>(OsSocketCalls.ForUnityPlayer(name));
        }

        /// <summary>
        /// Unity's linker may strip Application.platform from a player: the library's question names it for linkers built on
        /// ILLink (Unity's is), and when it is gone all the same, the refusal says so and names the Unity package.
        /// </summary>
        [Fact]
        public void TheGetterIsNamedForTheLinkerAndItsLossIsReported()
        {
            var ask = typeof(UnityPlayerPlatform).GetMethod(nameof(UnityPlayerPlatform.Ask), System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.NonPublic)!;
            Assert.Contains(ask.GetCustomAttributes(false), a => a is System.Diagnostics.CodeAnalysis.DynamicDependencyAttribute d
                && d.MemberSignature == "get_platform" && d.TypeName == "UnityEngine.Application" && d.AssemblyName == "UnityEngine.CoreModule");
            string said = OsSocketCalls.UnityPlatformUnread("UnityEngine.Application has no readable static property platform (stripped?)");
            Assert.Contains("stripped?", said);
            Assert.Contains("com.where-allocation.core", said);
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
