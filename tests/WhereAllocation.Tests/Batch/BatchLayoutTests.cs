using System;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The C# mirrors of Linux's struct msghdr / mmsghdr / iovec against the sizes and offsets a C program
    /// printed with sizeof/offsetof on x86-64 (glibc; arm64 has the same LP64 layout):
    /// iovec 16 (base 0, len 8); msghdr 56 (name 0, namelen 8, iov 16, iovlen 24, control 32,
    /// controllen 40, flags 48); mmsghdr 64 (msg_hdr 0, msg_len 56).
    /// </summary>
    public class BatchLayoutTests
    {
        [Fact]
        public unsafe void LinuxMessageHeadersHaveTheCLayout()
        {
            Assert.Equal(8, IntPtr.Size); // the numbers above are for 64-bit Linux; 32-bit was not measured
            Assert.Equal(16, sizeof(Libc.IoVec));
            Assert.Equal(56, sizeof(Libc.LinuxMsgHdr));
            Assert.Equal(64, sizeof(Libc.LinuxMMsgHdr));

            Libc.LinuxMMsgHdr m = default;
            byte* start = (byte*)&m;
            Assert.Equal(0, (byte*)&m.Header.Name - start);
            Assert.Equal(8, (byte*)&m.Header.NameLength - start);
            Assert.Equal(16, (byte*)&m.Header.Iov - start);
            Assert.Equal(24, (byte*)&m.Header.IovLength - start);
            Assert.Equal(32, (byte*)&m.Header.Control - start);
            Assert.Equal(40, (byte*)&m.Header.ControlLength - start);
            Assert.Equal(48, (byte*)&m.Header.Flags - start);
            Assert.Equal(56, (byte*)&m.Length - start);

            Libc.IoVec v = default;
            Assert.Equal(8, (byte*)&v.Length - (byte*)&v);
        }

        [Fact]
        public void MarshalerAgreesWithTheLayout()
        {
            Assert.Equal(56, Marshal.SizeOf(typeof(Libc.LinuxMsgHdr)));
            Assert.Equal(64, Marshal.SizeOf(typeof(Libc.LinuxMMsgHdr)));
            Assert.Equal(new IntPtr(48), Marshal.OffsetOf(typeof(Libc.LinuxMsgHdr), "Flags"));
            Assert.Equal(new IntPtr(56), Marshal.OffsetOf(typeof(Libc.LinuxMMsgHdr), "Length"));
        }
    }
}
