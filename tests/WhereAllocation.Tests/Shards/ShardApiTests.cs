using System;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>Arguments, platforms, ports and thread pinning of <see cref="DatagramShardGroup"/>.</summary>
    public class ShardApiTests : IDisposable
    {
        public void Dispose()
        {
            OsSocketCalls.InUse = null!;
            DatagramPathSettings.Reset();
        }

        [Fact]
        public void ArgumentsAreCheckedFirst()
        {
            Assert.Throws<ArgumentNullException>(() => DatagramShardGroup.Bind(null!, 2));
            Assert.Throws<ArgumentOutOfRangeException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 0));
            Assert.Throws<ArgumentOutOfRangeException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), DatagramShardGroup.MaxShardCount + 1));
            Assert.Throws<ArgumentException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 2, dualMode: true));
            Assert.Throws<ArgumentOutOfRangeException>(() => DatagramShardGroup.PinCurrentThread(-1));
            Assert.Throws<ArgumentOutOfRangeException>(() => DatagramShardGroup.PinCurrentThread(DatagramShardGroup.MaxCpu));
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using DatagramShardGroup shards = DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 2);
            Assert.Throws<ArgumentOutOfRangeException>(() => shards[2]);
            Assert.Throws<ArgumentOutOfRangeException>(() => shards[-1]);
        }

        [Fact]
        public void ShardsAndPinningWorkOnLinuxAndAreRefusedExplicitlyElsewhere()
        {
            bool linux = System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Linux);
            Assert.Equal(linux, DatagramShardGroup.IsSupported);
            Assert.Equal(linux, DatagramShardGroup.CanPinThreads);
            // Off Linux both assert the PlatformNotSupportedException that names the OS.
            Assert.Equal(linux, ShardSupport.TryUse());
            Assert.Equal(linux, ShardSupport.TryPin());
        }

        [Theory]
        [InlineData("macOS")]
        [InlineData("Windows")]
        [InlineData("This operating system")]
        public void OtherSystemsRefuseBeforeMakingASocket(string os)
        {
            OsSocketCalls.InUse = os == "macOS" ? new DarwinSocketCalls() : os == "Windows" ? new WindowsSocketCalls() : (OsSocketCalls)new UnknownOsSocketCalls("an OS the tests made up");
            Assert.False(DatagramShardGroup.IsSupported);
            Assert.False(DatagramShardGroup.CanPinThreads);
            var e = Assert.Throws<PlatformNotSupportedException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 2));
            Assert.Contains(os, e.Message);
            if (os == "macOS") Assert.Contains("SO_REUSEPORT", e.Message);
            Assert.Throws<PlatformNotSupportedException>(() => DatagramShardGroup.PinCurrentThread(0));
        }

        [Fact]
        public void WithoutTheNativePathShardsAreRefused()
        {
            SocketHandles.Force(SocketHandleAccess.None);
            try
            {
                Assert.False(DatagramShardGroup.IsSupported);
                Assert.Throws<PlatformNotSupportedException>(() => DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 2));
            }
            finally
            {
                SocketHandles.Force(null);
            }
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void EveryShardHasTheGroupsPort(Family family)
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using var traffic = new ShardTraffic(family, 4, 1);
            DatagramShardGroup shards = traffic.Shards;
            Assert.Equal(4, shards.Count);
            Assert.Equal(4, shards.OpenCount);
            Assert.NotEqual(0, shards.LocalEndPoint.Port);
            for (int s = 0; s < 4; s++)
            {
                Assert.Equal(s, shards[s].Index);
                Assert.False(shards[s].IsClosed);
                Assert.Equal(shards.LocalEndPoint, shards[s].Socket.LocalEndPoint);
                Assert.Equal(family == Family.DualMode, shards[s].Socket.AddressFamily == AddressFamily.InterNetworkV6 && shards[s].Socket.DualMode);
            }
        }

        /// <summary>
        /// Groups bound to port 0 never share a port. Linux gives a socket that sets SO_REUSEPORT and binds port 0 a port
        /// another such socket may hold (seen here: 152 shared among 3 000), so without the library's reservation some
        /// of these 500 groups would merge.
        /// </summary>
        [Fact]
        public void GroupsOnPortZeroNeverShareAPort()
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            var groups = new List<DatagramShardGroup>();
            var ports = new HashSet<int>();
            try
            {
                for (int g = 0; g < 500; g++)
                {
                    DatagramShardGroup shards = DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, 0), 1);
                    groups.Add(shards);
                    Assert.True(ports.Add(shards.LocalEndPoint.Port), "group " + g + " got port " + shards.LocalEndPoint.Port + ", which another group holds");
                }
            }
            finally
            {
                foreach (DatagramShardGroup shards in groups) shards.Dispose();
            }
        }

        [Fact]
        public void APortHeldOutsideTheGroupIsRefused()
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using Socket holder = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false);
            var e = Assert.Throws<SocketException>(() => DatagramShardGroup.Bind((IPEndPoint)holder.LocalEndPoint!, 2));
            Assert.Equal(SocketError.AddressAlreadyInUse, e.SocketErrorCode);
        }

        [Fact]
        public void AGivenPortIsBoundByEveryShard()
        {
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            int port;
            using (Socket probe = Loopback.Bound(AddressFamily.InterNetwork, IPAddress.Loopback, false))
                port = ((IPEndPoint)probe.LocalEndPoint!).Port;
            using DatagramShardGroup shards = DatagramShardGroup.Bind(new IPEndPoint(IPAddress.Loopback, port), 3);
            Assert.Equal(port, shards.LocalEndPoint.Port);
            for (int s = 0; s < 3; s++) Assert.Equal(port, ((IPEndPoint)shards[s].Socket.LocalEndPoint!).Port);
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void AReplyFromTheReceivingShardComesFromTheGroupsPort(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return; // asserted that this runtime refuses the path explicitly
            if (!ShardSupport.TryUse()) return; // asserted that this OS refuses shards with its explicit error
            using var traffic = new ShardTraffic(Family.IPv4, 3, 12);
            int[] shardOf = traffic.Discover(-1);
            var scratch = new byte[ShardTraffic.DatagramBytes];
            var buffer = new byte[64];
            for (int c = 0; c < traffic.Clients.Length; c++)
            {
                traffic.Send(c, 7, scratch);
                DatagramShard shard = traffic.Shards[shardOf[c]];
                int length = shard.Socket.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out EndPointKey from);
                Assert.True(ShardTraffic.TryRead(buffer.AsSpan(0, length), out int client, out int sequence));
                Assert.Equal((c, 7), (client, sequence));
                Assert.Equal(length, shard.Socket.SendTo_NonAlloc(buffer, 0, length, SocketFlags.None, from));
                int back = traffic.Clients[c].ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, out EndPointKey replier);
                Assert.Equal(length, back);
                Assert.Equal(traffic.Target, replier);
            }
        }

        [Fact]
        public void PinningKeepsTheThreadOnOneCpu()
        {
            if (!ShardSupport.TryPin()) return; // asserted that this OS refuses pinning with its explicit error
            string? allowed = null;
            Exception? failure = null;
            // The highest CPU this process may use, not ProcessorCount - 1: a container's CPU set need not start at 0
            // (docker --cpuset-cpus=4-5), and DOTNET_PROCESSOR_COUNT overrides the count.
            int last = LastAllowedCpu(CpusAllowed());
            var thread = new Thread(() =>
            {
                try
                {
                    DatagramShardGroup.PinCurrentThread(last);
                    allowed = CpusAllowed();
                }
                catch (Exception e)
                {
                    failure = e;
                }
            });
            thread.Start();
            Assert.True(thread.Join(10_000));
            Assert.Null(failure);
            Assert.Equal(last.ToString(System.Globalization.CultureInfo.InvariantCulture), allowed);
            // A CPU this machine does not have is refused by the OS, as an argument error.
            var offline = new Thread(() =>
            {
                try { DatagramShardGroup.PinCurrentThread(DatagramShardGroup.MaxCpu - 1); }
                catch (Exception e) { failure = e; }
            });
            offline.Start();
            Assert.True(offline.Join(10_000));
            Assert.IsType<ArgumentOutOfRangeException>(failure);
        }

        /// <summary>The highest CPU of a Cpus_allowed_list ("0-1", "2,4-5").</summary>
        private static int LastAllowedCpu(string list)
        {
            int last = -1;
            foreach (string part in list.Split(','))
            {
                int dash = part.IndexOf('-');
                last = Math.Max(last, int.Parse(dash < 0 ? part : part.Substring(dash + 1), System.Globalization.CultureInfo.InvariantCulture));
            }
            return last;
        }

        /// <summary>The calling thread's allowed CPUs as Linux lists them in /proc/thread-self/status ("0-1", "1").</summary>
        private static string CpusAllowed()
        {
            foreach (string line in File.ReadAllLines("/proc/thread-self/status"))
                if (line.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal)) return line.Substring("Cpus_allowed_list:".Length).Trim();
            return "";
        }
    }
}
