using System;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;

namespace WhereAllocation
{
    /// <summary>
    /// The readiness of the runtime's own paths (<see cref="DatagramPath.SocketAddress"/>, <see cref="DatagramPath.Managed"/>),
    /// which have no descriptor to give the OS: <see cref="Socket.Select(System.Collections.IList, System.Collections.IList, System.Collections.IList, int)"/>
    /// over the sockets armed now, rebuilt for every wait, plus a loopback socket of the poller's own that a one-byte
    /// datagram wakes when another thread arms a socket. One-shot arming is kept here, as the OS pollers do.
    /// </summary>
    /// <remarks>
    /// On .NET the wait allocates nothing (its lists are reused, the wake-up is sent with a cached SocketAddress); on
    /// Mono, Socket.Select builds arrays per call, as the Managed path it serves allocates per datagram anyway. Its cost
    /// grows with the number of sockets waiting at once. Not Mono's asynchronous socket calls, by design: they are the
    /// slow and allocating machinery this library exists to avoid.
    /// </remarks>
    internal sealed class SelectReadiness : ReadinessPoller
    {
        private readonly object _lock = new object();

        // The armed sockets, under _lock, with a count of arms so that a report disarms only the arming it answers.
        private ReadinessRegistration?[] _armed = new ReadinessRegistration?[8];
        private bool[] _read = new bool[8];
        private bool[] _write = new bool[8];
        private int[] _armings = new int[8];
        private int _count;
        private int _lastArming;

        // One wait's lists and the registrations in them: the waiting thread's own.
        private readonly List<Socket> _readList = new List<Socket>();
        private readonly List<Socket> _writeList = new List<Socket>();
        private readonly List<Socket> _errorList = new List<Socket>();
        private ReadinessRegistration?[] _polled = new ReadinessRegistration?[8];
        private int[] _polledArmings = new int[8];
        private long[] _reportTokens = new long[8];
        private byte[] _reportFlags = new byte[8];

        private Socket? _wake;
        private readonly byte[] _one = new byte[1];
#if NET8_0_OR_GREATER
        private SocketAddress? _wakeAddress;
#else
        private EndPoint? _wakeTarget;
#endif

        internal override string Mechanism => "Socket.Select";

        private protected override SocketError OpenCore()
        {
            try
            {
                var wake = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp);
                wake.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                wake.Blocking = false;
                var self = (IPEndPoint)wake.LocalEndPoint!;
#if NET8_0_OR_GREATER
                _wakeAddress = self.Serialize();
#else
                _wakeTarget = self;
#endif
                _wake = wake;
                return SocketError.Success;
            }
            catch (SocketException e)
            {
                return e.SocketErrorCode;
            }
        }

        private protected override void CloseCore()
        {
            _wake?.Dispose();
            _wake = null;
            lock (_lock)
            {
                Array.Clear(_armed, 0, _count);
                _count = 0;
            }
        }

        private protected override SocketError ArmCore(ReadinessRegistration registration, bool read, bool write, ref bool added)
        {
            lock (_lock)
            {
                int i = IndexOf(registration);
                if (i < 0)
                {
                    if (_count == _armed.Length) Grow();
                    i = _count++;
                    _armed[i] = registration;
                }
                _read[i] = read;
                _write[i] = write;
                _armings[i] = ++_lastArming;
            }
            added = true;
            return SocketError.Success;
        }

        private protected override void RemoveCore(ReadinessRegistration registration)
        {
            lock (_lock)
            {
                int i = IndexOf(registration);
                if (i >= 0) RemoveAt(i);
            }
        }

        private protected override bool ArmNeedsWake => true;

        private protected override void WakeCore()
        {
            Socket? wake = _wake;
            if (wake == null) return;
            try
            {
#if NET8_0_OR_GREATER
                wake.SendTo(_one.AsSpan(), SocketFlags.None, _wakeAddress!);
#else
                wake.SendTo(_one, _wakeTarget!);
#endif
            }
            catch (SocketException)
            {
                // A full queue of wake-ups wakes the wait just as well.
            }
            catch (ObjectDisposedException)
            {
                // The poller ended meanwhile: nothing waits to be woken.
            }
        }

        private protected override int WaitCore(int timeoutMilliseconds, out SocketError error)
        {
            error = SocketError.Success;
            Socket wake = _wake!;
            _readList.Clear();
            _writeList.Clear();
            _errorList.Clear();
            _readList.Add(wake);
            int polled = 0;
            lock (_lock)
            {
                if (_polled.Length < _count)
                {
                    _polled = new ReadinessRegistration?[_armed.Length];
                    _polledArmings = new int[_armed.Length];
                    _reportTokens = new long[_armed.Length];
                    _reportFlags = new byte[_armed.Length];
                }
                for (int i = 0; i < _count; i++)
                {
                    ReadinessRegistration registration = _armed[i]!;
                    if (_read[i]) _readList.Add(registration.Socket);
                    if (_write[i]) _writeList.Add(registration.Socket);
                    _errorList.Add(registration.Socket);
                    _polled[polled] = registration;
                    _polledArmings[polled] = _armings[i];
                    polled++;
                }
            }

            bool failed = false;
            try
            {
                Socket.Select(_readList, _writeList.Count > 0 ? _writeList : null, _errorList, timeoutMilliseconds * 1000);
            }
            catch (ObjectDisposedException)
            {
                failed = true; // a socket of the set was disposed: each waiting operation finds out by trying
            }
            catch (SocketException)
            {
                failed = true; // Windows fails the whole Select for a socket closed under it
            }

            if (!failed && _readList.Contains(wake))
            {
                while (wake.Available > 0) wake.Receive(_one, 0, 1, SocketFlags.None, out SocketError _);
            }

            int reports = 0;
            lock (_lock)
            {
                for (int k = 0; k < polled; k++)
                {
                    ReadinessRegistration registration = _polled[k]!;
                    _polled[k] = null;
                    byte flags = failed ? (byte)(ReportRead | ReportWrite) : (byte)0;
                    if (!failed)
                    {
                        if (_readList.Contains(registration.Socket)) flags |= ReportRead;
                        if (_writeList.Contains(registration.Socket)) flags |= ReportWrite;
                        if (_errorList.Contains(registration.Socket)) flags |= ReportError;
                    }
                    if (flags == 0) continue;
                    _reportTokens[reports] = registration.Token;
                    _reportFlags[reports] = flags;
                    reports++;
                    int i = IndexOf(registration);
                    if (i >= 0 && _armings[i] == _polledArmings[k]) RemoveAt(i); // one-shot: reported, so disarmed
                }
            }
            // Holding no socket between waits: a wrapper nobody references must leave its socket collectable.
            _readList.Clear();
            _writeList.Clear();
            _errorList.Clear();
            return reports;
        }

        private const byte ReportRead = 1;
        private const byte ReportWrite = 2;
        private const byte ReportError = 4;

        private protected override void ReportCore(int index, out long token, out bool readable, out bool writable, out bool error, out bool hungUp)
        {
            token = _reportTokens[index];
            byte flags = _reportFlags[index];
            readable = (flags & ReportRead) != 0;
            writable = (flags & ReportWrite) != 0;
            error = (flags & ReportError) != 0;
            hungUp = false; // Select does not tell a hang-up apart; a disposed socket is found by trying, or by the sweep
        }

        private int IndexOf(ReadinessRegistration registration)
        {
            for (int i = 0; i < _count; i++)
                if (ReferenceEquals(_armed[i], registration)) return i;
            return -1;
        }

        private void RemoveAt(int i)
        {
            int last = --_count;
            _armed[i] = _armed[last];
            _read[i] = _read[last];
            _write[i] = _write[last];
            _armings[i] = _armings[last];
            _armed[last] = null;
        }

        private void Grow()
        {
            // Only when more sockets wait at once than ever before in this process.
            Array.Resize(ref _armed, _armed.Length * 2);
            Array.Resize(ref _read, _read.Length * 2);
            Array.Resize(ref _write, _write.Length * 2);
            Array.Resize(ref _armings, _armings.Length * 2);
        }
    }
}
