using System;
using System.Collections.Generic;
using Mirage.SocketLayer;

// The server's socket as Mirage's Peer sees it, with meters around it: every call goes to the socket under test, and
// the bytes GC.GetAllocatedBytesForCurrentThread counts are split into the socket's own (Tick less the OnData calls it
// makes into Mirage; Send, wherever Mirage calls it) and Mirage's (inside OnData, less the sends it makes from there). Each received datagram's sender is checked against the client
// ports (sender): a datagram from anyone else, or one the socket attributes to the wrong peer, is counted as wrong.
internal sealed class MeteredSocket : ISocket
{
    private readonly ISocket _inner;
    private readonly Func<IConnectionHandle, (bool Loopback, int Port)> _sender;
    private readonly HashSet<int> _clientPorts;
    private OnData _mirage;

    public long TickBytes, MirageBytes, SendBytes, SendBytesInsideTick, Datagrams, Sends, WrongSenders;

    public MeteredSocket(ISocket inner, Func<IConnectionHandle, (bool Loopback, int Port)> sender, HashSet<int> clientPorts)
    {
        _inner = inner;
        _sender = sender;
        _clientPorts = clientPorts;
    }

    public void SetTickEvents(int maxPacketSize, OnData onData, OnDisconnect onDisconnect)
    {
        _mirage = onData;
        _inner.SetTickEvents(maxPacketSize, OnData, onDisconnect);
    }

    private void OnData(IConnectionHandle handle, ReadOnlySpan<byte> data)
    {
        Datagrams++;
        (bool loopback, int port) = _sender(handle);
        if (!loopback || !_clientPorts.Contains(port)) WrongSenders++;
        long sendBytes = SendBytes, before = GC.GetAllocatedBytesForCurrentThread();
        _mirage(handle, data);
        // Less what the socket's Send spent when Mirage sent from inside OnData (an ack after a number of receives).
        MirageBytes += GC.GetAllocatedBytesForCurrentThread() - before - (SendBytes - sendBytes);
    }

    public void Tick()
    {
        long sendBytes = SendBytes, before = GC.GetAllocatedBytesForCurrentThread();
        _inner.Tick();
        TickBytes += GC.GetAllocatedBytesForCurrentThread() - before;
        SendBytesInsideTick += SendBytes - sendBytes;
    }

    public void Send(IConnectionHandle handle, ReadOnlySpan<byte> packet)
    {
        Sends++;
        long before = GC.GetAllocatedBytesForCurrentThread();
        _inner.Send(handle, packet);
        SendBytes += GC.GetAllocatedBytesForCurrentThread() - before;
    }

    public void Bind(IBindEndPoint endPoint) => _inner.Bind(endPoint);
    public IConnectionHandle Connect(IConnectEndPoint endPoint) => _inner.Connect(endPoint);
    public void Close() => _inner.Close();
    public void Flush() => _inner.Flush();
    public bool Poll() => _inner.Poll();
    public int Receive(Span<byte> outBuffer, out IConnectionHandle handle) => _inner.Receive(outBuffer, out handle);
}
