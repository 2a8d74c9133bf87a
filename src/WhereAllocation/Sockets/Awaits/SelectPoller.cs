#nullable enable
using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The readiness of the runtime's own paths (<see cref="DatagramPath.SocketAddress"/>, <see cref="DatagramPath.Managed"/>),
    /// which have no descriptor to give the OS: <see cref="Socket.Select(System.Collections.IList, System.Collections.IList, System.Collections.IList, int)"/>
    /// over a set rebuilt for every wait (<see cref="RebuiltSetPoller"/>).
    /// </summary>
    /// <remarks>
    /// The poller's own work allocates nothing after warm-up (its lists and the map from a socket to its entry are reused;
    /// on .NET the wake-up is sent with a cached SocketAddress). Socket.Select itself does, from some size of set on: on
    /// .NET 10 8 B per list entry once its lists hold 80 entries or more (measured by bench/AwaitStress: 0 B with 39 waiting
    /// sockets, 664 B at 40, 16 024 B at 1 000; each socket is listed for reading and for errors); on Mono it builds arrays
    /// per call, as the Managed path it serves allocates per datagram anyway. Not Mono's asynchronous socket calls, by design: they are the slow and allocating machinery
    /// this library exists to avoid.
    /// </remarks>
    internal sealed class SelectPoller : RebuiltSetPoller
    {
        private readonly List<Socket> _readList = new List<Socket>();
        private readonly List<Socket> _writeList = new List<Socket>();
        private readonly List<Socket> _errorList = new List<Socket>();
        private readonly Dictionary<Socket, int> _entries = new Dictionary<Socket, int>();
        private Readiness[] _results = new Readiness[16];
        private readonly byte[] _one = new byte[1];
#if NET8_0_OR_GREATER
        private SocketAddress? _wakeAddress;
#endif

        internal override string Mechanism => "Socket.Select";

        private protected override SocketError OpenSet()
        {
#if NET8_0_OR_GREATER
            _wakeAddress = WakeTarget!.Serialize();
#endif
            return SocketError.Success;
        }

        internal override void Wake()
        {
            // Read once each: the engine's thread may close the poller meanwhile.
            Socket? wake = WakeSocket;
#if NET8_0_OR_GREATER
            SocketAddress? target = _wakeAddress;
#else
            EndPoint? target = WakeTarget;
#endif
            if (wake == null || target == null) return;
            try
            {
#if NET8_0_OR_GREATER
                wake.SendTo(_one.AsSpan(), SocketFlags.None, target);
#else
                wake.SendTo(_one, target);
#endif
            }
            catch (SocketException)
            {
                // A full queue of wake-ups wakes the wait just as well.
            }
            catch (ObjectDisposedException)
            {
                // The poller closed meanwhile: nothing waits to be woken.
            }
        }

        private protected override void BeginSet(int capacity)
        {
            if (_results.Length < capacity) _results = new Readiness[capacity * 2];
            _readList.Add(WakeSocket!);
        }

        private protected override void AddToSet(int index, Socket socket, bool read, bool write)
        {
            if (read) _readList.Add(socket);
            if (write) _writeList.Add(socket);
            _errorList.Add(socket);
            _entries[socket] = index;
            _results[index] = Readiness.None;
        }

        private protected override int PollSet(int timeoutMilliseconds, out SocketError error)
        {
            error = SocketError.Success;
            Socket wake = WakeSocket!;
            try
            {
                Socket.Select(_readList, _writeList.Count > 0 ? _writeList : null, _errorList, timeoutMilliseconds * 1000);
            }
            catch (ObjectDisposedException)
            {
                // A socket of the set was disposed after the set was built: the base builds it again without it.
                error = SocketError.NotSocket;
                return -1;
            }
            catch (SocketException e)
            {
                // Windows fails the whole Select for a socket closed under it: the same.
                error = e.SocketErrorCode;
                return -1;
            }
            Mark(_readList, Readiness.Read, wake);
            Mark(_writeList, Readiness.Write, wake);
            Mark(_errorList, Readiness.Error, wake);
            if (_readList.Contains(wake))
            {
                while (wake.Available > 0) wake.Receive(_one, 0, 1, SocketFlags.None, out SocketError _);
            }
            return _readList.Count + _writeList.Count + _errorList.Count;
        }

        private void Mark(List<Socket> reported, Readiness what, Socket wake)
        {
            for (int i = 0; i < reported.Count; i++)
            {
                Socket socket = reported[i];
                if (!ReferenceEquals(socket, wake) && _entries.TryGetValue(socket, out int index)) _results[index] |= what;
            }
        }

        private protected override Readiness ResultOf(int index) => _results[index];

        private protected override void EndSet()
        {
            _readList.Clear();
            _writeList.Clear();
            _errorList.Clear();
            _entries.Clear();
        }
    }
}
