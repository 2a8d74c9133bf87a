using System;
using Xunit;

namespace WhereAllocation.Tests
{
    public static class Paths
    {
        /// <summary>
        /// Forces <paramref name="path"/> when this runtime and build have it and returns true. Where they do not
        /// (the SocketAddress path, which only the net8.0 build has: never on Mono, nor on CoreCLR running the
        /// netstandard2.1 build as Unity's CoreCLR back end does), asserts that forcing it is refused with
        /// PlatformNotSupportedException and returns false: the case is then tested, not skipped.
        /// </summary>
        public static bool TryForce(DatagramPath path)
        {
            if (DatagramPathSettings.IsAvailable(path))
            {
                DatagramPathSettings.Force(path);
                Assert.Equal(path, DatagramPathSettings.Active);
                return true;
            }
            Assert.True(path == DatagramPath.SocketAddress && LibraryBuild.IsNetStandard, path + " should be available on " + Runtime.Describe());
            Assert.Throws<PlatformNotSupportedException>(() => DatagramPathSettings.Force(path));
            return false;
        }
    }
}
