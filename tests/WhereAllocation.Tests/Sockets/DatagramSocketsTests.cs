using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>DatagramSockets: sockets that never share a port by accident, and what the OS says about a socket.</summary>
    public class DatagramSocketsTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        private static bool IsLinux => RuntimeInformation.IsOSPlatform(OSPlatform.Linux);

        [Theory]
        [InlineData(AddressFamily.InterNetwork)]
        [InlineData(AddressFamily.InterNetworkV6)]
        public void SocketsBoundToPortZeroNeverShareAPort(AddressFamily family)
        {
            // Mono sets SO_REUSEADDR on every socket; on Linux two of them bound to port 0 can be given one port
            // (79 of 2000 in a measurement here). Hardened sockets cannot.
            IPAddress loopback = family == AddressFamily.InterNetwork ? IPAddress.Loopback : IPAddress.IPv6Loopback;
            var sockets = new List<Socket>();
            var ports = new HashSet<int>();
            try
            {
                for (int i = 0; i < 1000; i++)
                {
                    Socket socket = DatagramSockets.Bind(new IPEndPoint(loopback, 0));
                    sockets.Add(socket);
                    int port = ((IPEndPoint)socket.LocalEndPoint!).Port;
                    Assert.True(ports.Add(port), "port " + port + " was given to two sockets");
                    Assert.Equal(0, (int)socket.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress)!);
                }
            }
            finally
            {
                foreach (Socket socket in sockets) socket.Dispose();
            }
        }

        [Fact]
        public void APortInUseIsRefusedEvenWhenItsOwnerAllowsSharing()
        {
            using var owner = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            owner.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true); // what Mono does to every socket
            owner.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            var e = Assert.Throws<SocketException>(() => DatagramSockets.Bind((IPEndPoint)owner.LocalEndPoint!).Dispose());
            Assert.Equal(SocketError.AddressAlreadyInUse, e.SocketErrorCode);
        }

        [Fact]
        public void CreateGivesAnUnboundHardenedSocketOfTheFamily()
        {
            using (Socket v4 = DatagramSockets.Create(AddressFamily.InterNetwork))
            {
                Assert.False(v4.IsBound);
                Assert.Equal(SocketType.Dgram, v4.SocketType);
                Assert.Equal(0, (int)v4.GetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress)!);
            }
            using (Socket dual = DatagramSockets.Create(AddressFamily.InterNetworkV6, dualMode: true))
                Assert.True(dual.DualMode);
            using (Socket v6 = DatagramSockets.Create(AddressFamily.InterNetworkV6))
                Assert.False(v6.DualMode);
        }

        [Fact]
        public void BadArgumentsAreRefused()
        {
            Assert.Throws<ArgumentException>(() => DatagramSockets.Create(AddressFamily.Unix));
            Assert.Throws<ArgumentException>(() => DatagramSockets.Create(AddressFamily.InterNetwork, dualMode: true));
            Assert.Throws<ArgumentNullException>(() => DatagramSockets.Bind(null!));
            Assert.Throws<ArgumentException>(() => DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0), dualMode: true));
            Assert.Throws<ArgumentNullException>(() => DatagramSockets.Harden(null!));
            Assert.Throws<ArgumentNullException>(() => DatagramSockets.GetDatagramStatus(null!));
            using (var stream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
            {
                Assert.Throws<ArgumentException>(() => stream.Harden());
                Assert.Throws<ArgumentException>(() => stream.GetDatagramStatus());
            }
            Socket disposed = DatagramSockets.Create(AddressFamily.InterNetwork);
            disposed.Dispose();
            Assert.Throws<ObjectDisposedException>(() => disposed.Harden());
            Assert.Throws<ObjectDisposedException>(() => disposed.GetDatagramStatus());
        }

        /// <summary>
        /// Harden and GetDatagramStatus called after Dispose returned, while another thread still waits in a receive on the
        /// socket (and so holds its handle, which on Mono still accepts references then): ObjectDisposedException, as for a
        /// socket disposed before, not a call on the descriptor of a disposed socket.
        /// </summary>
        [Fact]
        public void HardenAndStatusAfterDisposeWhileAnotherThreadWaitsThrowObjectDisposed()
        {
            Assert.True(Paths.TryForce(DatagramPath.Native) || !NativeDatagramIO.IsSupported);
            if (!NativeDatagramIO.IsSupported) return; // no native path: the runtime's own calls report a disposed socket
            var wrong = new List<string>();
            for (int attempt = 0; attempt < 5; attempt++)
            {
                wrong.Clear();
                Socket server = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                bool waiterDone = false;
                int before = DisposeDuringWait.CountBefore();
                var waiter = new System.Threading.Thread(() =>
                {
                    var from = new IPEndPointNonAlloc(IPAddress.Any, 0);
                    try { server.ReceiveFrom_NonAlloc(new byte[16], 0, 16, SocketFlags.None, from); }
                    catch (Exception) { } // ended by the Dispose
                    System.Threading.Volatile.Write(ref waiterDone, true);
                }) { IsBackground = true };
                waiter.Start();
                Assert.True(DisposeDuringWait.UntilInside(before, waiter), "the receive never reached its wait");
                server.Dispose();
                try { server.Harden(); wrong.Add("Harden: no exception"); }
                catch (ObjectDisposedException) { }
                catch (Exception e) { wrong.Add("Harden: " + e.GetType().Name); }
                try { server.GetDatagramStatus(); wrong.Add("GetDatagramStatus: no exception"); }
                catch (ObjectDisposedException) { }
                catch (Exception e) { wrong.Add("GetDatagramStatus: " + e.GetType().Name); }
                bool stillInside = !System.Threading.Volatile.Read(ref waiterDone);
                Assert.True(waiter.Join(10_000), "the waiting receive did not end after Dispose");
                if (stillInside) break; // the calls were made while the waiter held the handle: the case was produced
            }
            Assert.True(wrong.Count == 0, Runtime.Describe() + ", after Dispose: " + string.Join(", ", wrong));
        }

        [Fact]
        public void HardenAndStatusAllocateNothing()
        {
            using Socket socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            Assert.Equal(0, Allocations.Measure(() => socket.Harden()));
            Assert.Equal(0, Allocations.Measure(() => socket.GetDatagramStatus()));
        }

        [Fact]
        public void TheStatusGivesTheBufferTheKernelGranted()
        {
            using Socket socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            socket.ReceiveBufferSize = 256 * 1024;
            socket.SendBufferSize = 128 * 1024;
            DatagramSocketStatus status = socket.GetDatagramStatus();
            if (IsLinux)
            {
                // Linux doubles what it is given. CoreCLR passes the size through; Mono passes half of it, so that
                // its getter, which returns the kernel's figure, reads back the size that was set.
                int factor = Runtime.IsMono ? 1 : 2;
                Assert.Equal(256 * 1024 * factor, status.ReceiveBufferBytes);
                Assert.Equal(128 * 1024 * factor, status.SendBufferBytes);
                Assert.Equal(0, status.QueuedReceiveBytes);
            }
            else
            {
                Assert.Equal(256 * 1024, status.ReceiveBufferBytes);
                Assert.Equal(128 * 1024, status.SendBufferBytes);
                Assert.Equal(-1, status.QueuedReceiveBytes);
            }
        }

        [Theory]
        [MemberData(nameof(Matrix.Paths), MemberType = typeof(Matrix))]
        public void DroppedDatagramsAreCountedAndNothingElseIsLost(DatagramPath path)
        {
            if (!Paths.TryForce(path)) return;
            using Socket server = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            using Socket client = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            server.ReceiveBufferSize = 16 * 1024;
            var key = EndPointKey.FromIPEndPoint((IPEndPoint)server.LocalEndPoint!);
            var payload = new byte[64];
            const int sent = 2000; // far more than 16 KiB holds
            for (int i = 0; i < sent; i++) client.SendTo_NonAlloc(payload.AsSpan(), key);
            DatagramSocketStatus full = server.GetDatagramStatus();

            int received = 0;
            var buffer = new byte[128];
            while (server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _)) received++;
            DatagramSocketStatus drained = server.GetDatagramStatus();

            Assert.True(received > 0);
            if (IsLinux)
            {
                Assert.True(full.HasDropCount);
                Assert.Equal(sent, received + full.DroppedDatagrams); // loopback delivers at once: each was queued or dropped
                Assert.True(full.DroppedDatagrams > 0);
                Assert.True(full.QueuedReceiveBytes > 0);
                Assert.Equal(full.DroppedDatagrams, drained.DroppedDatagrams);
                Assert.Equal(0, drained.QueuedReceiveBytes);
            }
            else
            {
                Assert.False(full.HasDropCount);
                Assert.Equal(-1, full.DroppedDatagrams);
            }
        }
    }
}
