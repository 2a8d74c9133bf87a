using System;
using Xunit;

namespace WhereAllocation.Tests
{
    public static class Paths
    {
        /// <summary>
        /// Forces <paramref name="path"/> when this runtime has it and returns true. Where it does not
        /// (the SocketAddress path on Mono), asserts that forcing it is refused with
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
            Assert.True(path == DatagramPath.SocketAddress && Runtime.IsMono, path + " should be available on " + Runtime.Describe());
            Assert.Throws<PlatformNotSupportedException>(() => DatagramPathSettings.Force(path));
            return false;
        }
    }
}
