using System;
using System.Runtime.InteropServices;

namespace WhereAllocation.Tests
{
    /// <summary>Which runtime runs the suite: the same sources run on CoreCLR (xunit) and on Mono (MonoTestRunner).</summary>
    public static class Runtime
    {
        public static readonly bool IsMono = Type.GetType("Mono.Runtime") != null;

        public static string Describe()
        {
            return (IsMono ? "Mono" : "CoreCLR") + " (" + RuntimeInformation.FrameworkDescription + ", " + RuntimeInformation.OSDescription + ")";
        }
    }
}
