namespace WhereAllocation.Samples.DatagramServer
{
    internal static class ScaleMode
    {
        public static int Run(Options options) => 1;
    }
}
