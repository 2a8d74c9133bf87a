using System;
using System.Net.Sockets;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// The OS this process runs on, seen through a test's change to some of its calls: every call the OS layer must have
    /// goes to the real one (<see cref="OsSocketCalls.Current"/>) unless a subclass overrides it; the optional calls keep
    /// their defaults unless a subclass says otherwise. <see cref="Installed"/> puts a subclass in for the native path;
    /// Dispose takes it out again.
    /// </summary>
    internal abstract unsafe class RealOsCalls : OsSocketCalls, IDisposable
    {
        private readonly string _change;

        /// <param name="change">What the subclass changes, as it ends the name: "with ...".</param>
        protected RealOsCalls(string change)
        {
            _change = change;
        }

        /// <summary>The real OS's calls.</summary>
        protected OsSocketCalls Os { get; } = OsSocketCalls.Current;

        protected static T Installed<T>(T calls) where T : RealOsCalls
        {
            OsSocketCalls.InUse = calls;
            return calls;
        }

        public void Dispose() => OsSocketCalls.InUse = null!;

        internal override string Name => Os.Name + " " + _change;
        internal override SockaddrFormat Format => Os.Format;
        internal override string? Probe() => Os.Probe();
        internal override long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error) => Os.Receive(socket, payload, size, peek, address, addressLength, out error);
        internal override long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error) => Os.Send(socket, payload, size, dontRoute, address, addressLength, out error);
        internal override int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error) => Os.Poll(socket, forWrite, timeoutMilliseconds, out hungUp, out error);
        internal override int ReceiveTimeoutMilliseconds(IntPtr socket) => Os.ReceiveTimeoutMilliseconds(socket);
        internal override bool IsDualMode(IntPtr socket) => Os.IsDualMode(socket);
        internal override SocketError DisableAddressSharing(IntPtr socket) => Os.DisableAddressSharing(socket);
        internal override int BufferSize(IntPtr socket, bool receive) => Os.BufferSize(socket, receive);
        internal override bool IsConnected(IntPtr socket) => Os.IsConnected(socket);
        internal override void WakeWaitingReceives(IntPtr socket) => Os.WakeWaitingReceives(socket);
        internal override bool IsCloseOnExec(IntPtr socket) => Os.IsCloseOnExec(socket);
    }
}
