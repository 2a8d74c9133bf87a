using System;
using System.Net;
using System.Net.Sockets;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// One <see cref="IPEndPointNonAlloc"/> receiving from several senders in turn. A receive may skip the
    /// rewrite when the sender repeats (the native path compares the OS's sockaddr bytes with the last ones),
    /// so these tests change the sender, and change the endpoint behind the receive's back, and check after
    /// every datagram that the key, <c>temp</c>, the hash, the port and the family all name the real sender.
    /// </summary>
    public class SenderChangeTests : IDisposable
    {
        public void Dispose() => DatagramPathSettings.Reset();

        // Which client sends each datagram: repeats, returns and changes, in one fixed order.
        private static readonly int[] Order = { 0, 0, 1, 0, 2, 2, 2, 1, 1, 0, 2, 0, 1, 2, 0, 0 };

        [Theory]
        [MemberData(nameof(Matrix.PathsWithFamilies), MemberType = typeof(Matrix))]
        public void EveryDatagramIsAttributedToItsOwnSender(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var senders = new Senders(family);
            IPEndPointNonAlloc from = senders.NewServerEndPoint();
            var buffer = new byte[64];
            for (int round = 0; round < 3; round++)
            {
                foreach (int client in Order)
                {
                    senders.Send(client, (byte)client);
                    bool useTry = round == 1;
                    int length;
                    if (useTry)
                    {
                        Assert.True(senders.Server.Poll(2_000_000, SelectMode.SelectRead));
                        Assert.True(senders.Server.TryReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from, out ReceivedDatagram datagram));
                        Assert.Equal(from.CurrentKey, datagram.RemoteEndPoint);
                        length = datagram.Length;
                    }
                    else
                    {
                        length = senders.Server.ReceiveFrom_NonAlloc(buffer, 0, buffer.Length, SocketFlags.None, from);
                    }
                    Assert.Equal(1, length);
                    Assert.Equal((byte)client, buffer[0]);
                    senders.AssertNames(from, client);
                }
            }
        }

        /// <summary>Every path on IPv4 and IPv6; dual mode on Native.</summary>
        public static TheoryData<DatagramPath, Family> UndoCases => Matrix.PathsWithFamiliesWhere((p, f) => f != Family.DualMode || p == DatagramPath.Native);

        [Theory]
        [MemberData(nameof(UndoCases))]
        public void AReceiveFromTheSameSenderUndoesChangesMadeInBetween(DatagramPath path, Family family)
        {
            if (!Paths.TryForce(path)) return;
            using var senders = new Senders(family);
            IPEndPointNonAlloc from = senders.NewServerEndPoint();
            var buffer = new byte[64];
            EndPointKey elsewhere = family == Family.IPv4 ? EndPointKey.IPv4(10, 1, 2, 3, 4567) : EndPointKey.FromIPAddress(IPAddress.Parse("fe80::1234"), 4567);
            var changes = new Action[]
            {
                () => from.Set(elsewhere),
                () => from.Set(senders.Keys[1]),
                () => from.Address = family == Family.IPv4 ? IPAddress.Parse("10.9.8.7") : IPAddress.Parse("2001:db8::7"),
                () => from.temp = new IPEndPoint(IPAddress.Parse("10.0.0.1"), 1).Serialize(),
                () => from.temp = new IPEndPoint(IPAddress.Parse("2001:db8::1"), 1).Serialize(),
                () => from.Create(from.temp), // answers with a new endpoint; this one must not change
            };
            foreach (Action change in changes)
            {
                senders.Send(0, 7);
                Assert.Equal(1, senders.Server.ReceiveFrom_NonAlloc(buffer, from));
                senders.AssertNames(from, 0);
                change();
                senders.Send(0, 8);
                Assert.Equal(1, senders.Server.ReceiveFrom_NonAlloc(buffer, from));
                Assert.Equal(8, buffer[0]);
                senders.AssertNames(from, 0);
            }
        }
    }
}
