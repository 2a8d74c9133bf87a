using System;
using System.Net.Sockets;
using System.Reflection;
using Mirage.SocketLayer;
using WhereAllocation;
using WhereAllocation.Samples;

// The measurement's question, not the sample: would the sample's Flush pay for a DatagramBatch? This socket is the
// sample's WhereAllocationSocket for everything but sending: Send copies each datagram into a batch slot (sending the
// batch first when it is full) and Flush, which Mirage's Peer calls after UpdateSent, sends the batch (one sendmmsg on
// Linux). The sample's socket is reached by reflection (its Socket is private), which a bench may do and the sample
// should not need. Datagrams the OS did not take (a full send buffer, PendingCount) are dropped and counted, as the
// sample's own Send drops them.
internal sealed class BatchedSendSocket : ISocket, IDisposable
{
    private static readonly FieldInfo SocketField = typeof(WhereAllocationSocket).GetField("_socket", BindingFlags.NonPublic | BindingFlags.Instance)
        ?? throw new MissingFieldException(nameof(WhereAllocationSocket), "_socket");
    private readonly WhereAllocationSocket _inner;
    private readonly DatagramBatch _batch;
    private Socket _socket;

    public long BatchSends, Dropped;

    public BatchedSendSocket(WhereAllocationSocket inner, int capacity, int slotSize)
    {
        _inner = inner;
        _batch = new DatagramBatch(capacity, slotSize);
    }

    public WhereAllocationSocket Inner => _inner;

    public void Bind(IBindEndPoint endPoint) { _inner.Bind(endPoint); _socket = (Socket)SocketField.GetValue(_inner); }
    public IConnectionHandle Connect(IConnectEndPoint endPoint) { var server = _inner.Connect(endPoint); _socket = (Socket)SocketField.GetValue(_inner); return server; }
    public void Close() { _inner.Close(); _socket = null; }
    public void SetTickEvents(int maxPacketSize, OnData onData, OnDisconnect onDisconnect) => ((ISocket)_inner).SetTickEvents(maxPacketSize, onData, onDisconnect);
    public void Tick() => ((ISocket)_inner).Tick();
    public bool Poll() => false;
    public int Receive(Span<byte> outBuffer, out IConnectionHandle handle) => throw new NotSupportedException();

    public void Send(IConnectionHandle handle, ReadOnlySpan<byte> packet)
    {
        if (_socket == null) throw new ObjectDisposedException(nameof(BatchedSendSocket));
        EndPointKey to = ((WhereAllocationConnectionHandle)handle).Key;
        if (_batch.TryAdd(packet, to)) return;
        Flush();
        _batch.TryAdd(packet, to);
    }

    public void Flush()
    {
        if (_batch.Count == 0 || _socket == null) return;
        _batch.Send(_socket);
        BatchSends++;
        Dropped += _batch.PendingCount + _batch.FailedCount;
        _batch.Clear();
    }

    public void Dispose() => _batch.Dispose();
}
