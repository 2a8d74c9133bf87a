#nullable enable
using System;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The exceptions the library throws for an OS error, with a sentence on what to do for the errors a first server meets:
    /// a datagram longer than the buffer, an empty non-blocking socket, a full send buffer, an IPv6 socket sending to an
    /// IPv4 address. The exception is exactly a <see cref="SocketException"/> with the OS's error code, as the runtime's
    /// calls throw (code and tests that match the exact type, as xunit's Assert.Throws does, are unchanged); only its
    /// message says more, where the runtime lets a message be given: .NET 8 and later. netstandard2.1 (Mono, Unity) has
    /// no such constructor, and a type of our own would break exact-type matches, so there the message is the OS's alone.
    /// Only ever on a failure path.
    /// </summary>
    internal static class SocketErrors
    {
        /// <summary>The exception for <paramref name="error"/> from a receive.</summary>
        internal static SocketException Receive(SocketError error)
        {
            switch (error)
            {
                case SocketError.MessageSize:
                    return Advised(error, "The datagram was longer than the buffer: its first bytes and its sender were stored, and the rest of it is lost (a datagram is never split across receives). Give a buffer as long as the longest datagram you accept, or call TryReceiveFrom_NonAlloc with a span, which reports a cut datagram as ReceivedDatagram.Truncated instead of throwing.");
                case SocketError.WouldBlock:
                    return Advised(error, "No datagram is queued on this non-blocking socket. TryReceiveFrom_NonAlloc returns false then, without an exception; or wait first (socket.Poll, DatagramBatch.Receive with a timeout, or AsyncDatagramSocket).");
                default:
                    return new SocketException((int)error);
            }
        }

        /// <summary>The exception for <paramref name="error"/> from a send.</summary>
        internal static SocketException Send(SocketError error)
        {
            switch (error)
            {
                case SocketError.WouldBlock:
                    return Advised(error, "The send buffer of this non-blocking socket is full: nothing was sent. TrySendTo_NonAlloc returns false then, without an exception.");
                case SocketError.NetworkUnreachable:
                    return Advised(error, "If this is an IPv6 socket sending to an IPv4 address (or an IPv4-mapped one): an IPv6 socket reaches IPv4 addresses only in dual mode. Set socket.DualMode = true before Bind, or send from an IPv4 socket.");
                default:
                    return new SocketException((int)error);
            }
        }

        private static SocketException Advised(SocketError error, string advice)
        {
#if NET8_0_OR_GREATER
            return new SocketException((int)error, new SocketException((int)error).Message + ". " + advice);
#else
            _ = advice;
            return new SocketException((int)error);
#endif
        }
    }
}
