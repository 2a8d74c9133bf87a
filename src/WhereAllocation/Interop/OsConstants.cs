namespace WhereAllocation.Interop
{
    /// <summary>Socket constants that differ between the C libraries the native path supports.</summary>
    internal static class OsConstants
    {
        internal static readonly int MsgPeek = 0x2;          // same value on Linux, macOS and Windows
        internal static readonly int MsgDontRoute = 0x4;     // same value on Linux, macOS and Windows
        internal static readonly int MsgDontWait = Platform.Os == OsFamily.Darwin ? 0x80 : 0x40;
        /// <summary>Linux: as an input flag, recvfrom returns the datagram's real length. macOS: an output flag of recvmsg.</summary>
        internal static readonly int MsgTrunc = Platform.Os == OsFamily.Darwin ? 0x10 : 0x20;
        internal static readonly int SolSocket = Platform.Os == OsFamily.Linux ? 1 : 0xffff;
        internal static readonly int SoRcvTimeo = Platform.Os == OsFamily.Linux ? 20 : Platform.Os == OsFamily.Darwin ? 0x1006 : 0x1006;
        internal static readonly int IpProtoIPv6 = 41;
        internal static readonly int IPv6V6Only = Platform.Os == OsFamily.Darwin ? 27 : Platform.Os == OsFamily.Linux ? 26 : 27;
        internal const short PollIn = 0x1;
        internal const short PollOut = 0x4;                  // poll() events: same values on Linux and macOS
        internal const short PollHup = 0x10;
        internal const short PollNval = 0x20;
    }
}
