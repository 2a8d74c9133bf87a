using System.Reflection;
using System.Runtime.Versioning;
using WhereAllocation.Memory;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The memory suite's part of <see cref="Runtime"/> (tests/Shared/Runtime.cs): the build of the memory package it runs
    /// against, read from the package's assembly (its target framework and configuration).
    /// </summary>
    public static partial class Runtime
    {
        private static partial string LibraryUnderTest()
        {
            Assembly package = typeof(FrameAllocator).Assembly;
            string framework = package.GetCustomAttribute<TargetFrameworkAttribute>()?.FrameworkName ?? "unknown";
            string configuration = package.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "unknown";
            return "the memory package's " + (framework.StartsWith(".NETStandard,") ? "netstandard2.1" : "net8.0") + " build (" + configuration + ")";
        }
    }
}
