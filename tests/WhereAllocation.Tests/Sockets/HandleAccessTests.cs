using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The ways the native path reaches a socket's handle (<see cref="DatagramPathSettings.HandleAccess"/>). A stripped class
    /// library loses the SafeHandle getter; the field that holds the handle must then keep the native path allocation
    /// free and keep reporting a disposed socket; with neither, the first fallback to the allocating Managed path must
    /// be an exception, once, never silence. "Getter unavailable" is forced through <see cref="SocketHandles.Force"/>.
    /// </summary>
    public class HandleAccessTests : IDisposable
    {
        public void Dispose()
        {
            SocketHandles.Force(null);
            DatagramPathSettings.Reset();
        }

        [Fact]
        public void TheSocketsOwnPropertyIsTheWayWhenNothingWasStripped()
        {
            Assert.Equal(SocketHandleAccess.SafeHandleProperty, DatagramPathSettings.HandleAccess);
            Assert.Equal(DatagramPath.Native, DatagramPathSettings.Default);
        }

        [Fact]
        public void TheFieldHoldsTheSameHandleAsTheProperty()
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            SafeHandle viaProperty = SocketHandles.Get(socket);
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            Assert.Equal(SocketHandleAccess.SafeHandleField, DatagramPathSettings.HandleAccess);
            SafeHandle viaField = SocketHandles.Get(socket);
            Assert.Same(viaProperty, viaField);
            Assert.Equal(socket.Handle, viaField.DangerousGetHandle());
        }

        [Theory]
        [MemberData(nameof(Matrix.Families), MemberType = typeof(Matrix))]
        public void WithoutTheGetterTheNativePathStillAllocatesNothing(Family family)
        {
            Assert.True(Paths.TryForce(DatagramPath.Native));
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            using var pair = new Loopback(family);
            var buffer = new byte[1500];
            var payload = new byte[64];
            var toServer = new IPEndPointNonAlloc(pair.ServerTarget.Address, pair.ServerTarget.Port);
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            int calls = 0, intact = 0;
            long allocated = Allocations.Measure(() =>
            {
                calls++;
                payload[0]++;
                pair.Client.SendTo_NonAlloc(payload, 0, payload.Length, SocketFlags.None, toServer);
                int received = pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                if (received == payload.Length && buffer[0] == payload[0]) intact++;
            });
            Assert.Equal(0, allocated);
            Assert.Equal(SocketHandleAccess.SafeHandleField, DatagramPathSettings.HandleAccess);
            Assert.Equal(calls, intact);
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
        }

        [Fact]
        public void WithoutTheGetterADisposedSocketThrowsObjectDisposed()
        {
            Assert.True(Paths.TryForce(DatagramPath.Native));
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            var pair = new Loopback(Family.IPv4);
            IPEndPointNonAlloc to = pair.NewServerEndPoint();
            var buffer = new byte[16];
            pair.Dispose();
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer, 0, 16, SocketFlags.None, to));
            Assert.Throws<ObjectDisposedException>(() => pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
            Assert.Throws<ObjectDisposedException>(() => pair.Client.SendTo_NonAlloc(buffer.AsSpan(), pair.ServerKey));
        }

        [Fact]
        public void WithoutTheGetterASocketUsedThenDisposedThrowsObjectDisposed()
        {
            // The field route remembers the last socket and handle of each thread: a disposed one must still be refused.
            Assert.True(Paths.TryForce(DatagramPath.Native));
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            var pair = new Loopback(Family.IPv4);
            var buffer = new byte[16];
            Assert.Equal(4, pair.Client.SendTo_NonAlloc(buffer.AsSpan(0, 4), pair.ServerKey));
            Assert.Equal(4, pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()).Length);
            pair.Dispose();
            Assert.Throws<ObjectDisposedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()));
            Assert.Throws<ObjectDisposedException>(() => pair.Server.TryReceiveFrom_NonAlloc(buffer.AsSpan(), out _));
            Assert.Throws<ObjectDisposedException>(() => pair.Client.SendTo_NonAlloc(buffer.AsSpan(0, 4), pair.ServerKey));
        }

        [Fact]
        public void WithoutTheGetterEachSocketGetsItsOwnHandle()
        {
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            using var a = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            using var b = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
            for (int i = 0; i < 3; i++)
            {
                Assert.Equal(a.Handle, SocketHandles.Get(a).DangerousGetHandle());
                Assert.Equal(b.Handle, SocketHandles.Get(b).DangerousGetHandle());
            }
        }

        [Fact]
        public void TheDiagnosticNamesThePathTheHandleAccessAndWhetherNativeIsAvailable()
        {
            Assert.Null(DatagramPathSettings.NativeUnavailableReason);
            string line = DatagramPathSettings.Diagnostic;
            Assert.Contains("path " + DatagramPathSettings.Active, line);
            Assert.Contains("handle access SafeHandleProperty", line);
            Assert.Contains("native available", line);
            Assert.DoesNotContain("\n", line);
            SocketHandles.Force(SocketHandleAccess.None);
            Assert.Equal(SocketHandles.NoWayMessage, DatagramPathSettings.NativeUnavailableReason);
            Assert.Contains("native unavailable: " + SocketHandles.NoWayMessage, DatagramPathSettings.Diagnostic);
        }

        [Fact]
        public void WithoutTheGetterDisposingWakesABlockedReceiveWithObjectDisposed()
        {
            Assert.True(Paths.TryForce(DatagramPath.Native));
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            var pair = new Loopback(Family.IPv4, receiveTimeoutMs: 0);
            DisposeDuringWait.AssertEndsWithObjectDisposed(() => pair.Server.ReceiveFrom_NonAlloc(new byte[16].AsSpan()), pair.Dispose);
        }

        [Fact]
        public void WithNoWayToTheHandleTheNativePathIsNotOffered()
        {
            SocketHandles.Force(SocketHandleAccess.None);
            Assert.False(DatagramPathSettings.IsAvailable(DatagramPath.Native));
            Assert.Throws<PlatformNotSupportedException>(() => DatagramPathSettings.Force(DatagramPath.Native));
            // And the socket tools that use the handle take the runtime's calls instead.
            using var pair = new Loopback(Family.IPv4);
            Assert.Equal(-1, pair.Server.GetDatagramStatus().ReceiveBufferBytes);
        }

        [Fact]
        public void ANativeCallNeverFallsBackToTheBareDescriptor()
        {
            // Should the way be lost under a call already on the native path, the call refuses: it never uses Socket.Handle.
            Assert.True(Paths.TryForce(DatagramPath.Native));
            using var pair = new Loopback(Family.IPv4);
            SocketHandles.Force(SocketHandleAccess.None);
            Assert.Throws<PlatformNotSupportedException>(() => pair.Client.SendTo_NonAlloc(new byte[4].AsSpan(), pair.ServerKey));
            Assert.False(pair.Server.Poll(100_000, SelectMode.SelectRead), "nothing may have been sent");
        }

        [Fact]
        public void WithNoWayToTheHandleTheFirstFallbackFailsLoudlyOnceAndThenTheManagedPathWorks()
        {
            SocketHandles.Force(SocketHandleAccess.None);
            DatagramPathSettings.StartAsIfHandleMissing();
            Assert.Equal(SocketHandleAccess.None, DatagramPathSettings.HandleAccess);
            Assert.Equal(DatagramPath.Managed, DatagramPathSettings.Active);
            using var pair = new Loopback(Family.IPv4);
            var buffer = new byte[16];
            PlatformNotSupportedException report = Assert.Throws<PlatformNotSupportedException>(
                () => pair.Client.SendTo_NonAlloc(buffer, 0, 4, SocketFlags.None, pair.ServerKey));
            Assert.Contains("link.xml", report.Message);
            Assert.Contains("DatagramPathSettings.Force(DatagramPath.Managed)", report.Message);
            Assert.False(pair.Server.Poll(100_000, SelectMode.SelectRead), "the refused send sent nothing");

            // Once only: the calls go on, on the Managed path.
            Assert.Equal(4, pair.Client.SendTo_NonAlloc(buffer, 0, 4, SocketFlags.None, pair.ServerKey));
            IPEndPointNonAlloc from = pair.NewServerEndPoint();
            Assert.Equal(4, pair.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from));
            Assert.Equal(pair.ClientAsSeenByServer, from.CurrentKey);
        }

        [Fact]
        public void WithNoWayToTheHandleAReceiveIsTheCallThatReportsWhenItComesFirst()
        {
            SocketHandles.Force(SocketHandleAccess.None);
            DatagramPathSettings.StartAsIfHandleMissing();
            using var pair = new Loopback(Family.IPv4);
            pair.Client.SendTo(new byte[] { 1, 2, 3 }, pair.ServerTarget);
            Assert.True(pair.Server.Poll(2_000_000, SelectMode.SelectRead));
            var buffer = new byte[16];
            Assert.Throws<PlatformNotSupportedException>(() => pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan()));
            // The report is thrown before the runtime's receive: the datagram is still there.
            ReceivedDatagram datagram = pair.Server.ReceiveFrom_NonAlloc(buffer.AsSpan());
            Assert.Equal(3, datagram.Length);
        }

        [Fact]
        public void ChoosingThePathExplicitlyAcceptsTheFallbackWithoutTheReport()
        {
            SocketHandles.Force(SocketHandleAccess.None);
            DatagramPathSettings.StartAsIfHandleMissing();
            DatagramPathSettings.Force(DatagramPath.Managed);
            using var pair = new Loopback(Family.IPv4);
            Assert.Equal(4, pair.Client.SendTo_NonAlloc(new byte[4], 0, 4, SocketFlags.None, pair.ServerKey));
        }

        [Fact]
        public void ForcingNullReturnsToTheWayFoundAtStart()
        {
            SocketHandles.Force(SocketHandleAccess.SafeHandleField);
            Assert.Equal(SocketHandleAccess.SafeHandleField, DatagramPathSettings.HandleAccess);
            SocketHandles.Force(null);
            Assert.Equal(SocketHandleAccess.SafeHandleProperty, DatagramPathSettings.HandleAccess);
        }
    }
}
