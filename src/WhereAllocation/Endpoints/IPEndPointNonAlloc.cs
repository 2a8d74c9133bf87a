#nullable enable
using System;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// An <see cref="IPEndPoint"/> that a receive overwrites in place instead of allocating a new one:
    /// pass the same instance to every <c>ReceiveFrom_NonAlloc</c> call and it names the sender of the
    /// last datagram. Copy it with <see cref="DeepCopyIPEndPoint"/> (or keep <see cref="CurrentKey"/>)
    /// before storing it: the instance itself changes on the next receive.
    /// </summary>
    /// <remarks>
    /// <para>Receiving into it never allocates. Reading <see cref="Address"/> or <see cref="ToString"/> may allocate:
    /// an <see cref="IPAddress"/> is built once per change of sender. <see cref="DeepCopyIPEndPoint"/> allocates the copy.</para>
    /// <para><see cref="IPEndPoint.Address"/> is not virtual, so code that reads it through an
    /// <see cref="IPEndPoint"/>-typed reference sees the address as of the last time this class built it
    /// (construction, or a read of <see cref="Address"/> or <see cref="ToString"/>);
    /// <see cref="IPEndPoint.Port"/>, <see cref="AddressFamily"/>, <see cref="Equals(object)"/> and
    /// <see cref="GetHashCode"/> are always current. A plain <see cref="IPEndPoint"/>'s own <c>Equals</c> reads
    /// those base fields, so compare with this endpoint's <see cref="Equals(object)"/>, not the other way round.</para>
    /// <para>Hashing and equality: this endpoint, its <see cref="DeepCopyIPEndPoint"/> copies and <see cref="CurrentKey"/>
    /// share one seeded hash; copies are the keys to store, this endpoint the value to look them up with (see
    /// <see cref="GetHashCode"/>).</para>
    /// <para>One instance belongs to one receiving thread at a time.</para>
    /// </remarks>
    public class IPEndPointNonAlloc : IPEndPoint
    {
        /// <summary>
        /// The current endpoint (after a receive: the last sender) as a <see cref="SocketAddress"/>,
        /// kept up to date in place after every receive on every path, without allocating. Its hash is
        /// stable for one sender. Kept as a public field for code written against earlier versions
        /// (<c>endPoint.temp.GetHashCode()</c>); new code should prefer <see cref="CurrentKey"/>.
        /// </summary>
        // Public mutable field kept deliberately: existing callers read it on every datagram.
#pragma warning disable IDE1006, CA1051
        public SocketAddress temp;
#pragma warning restore IDE1006, CA1051

        // One reusable socket address per family, in the runtime's own layout; temp points at the current one.
        private readonly SocketAddress _v4SocketAddress = new IPEndPoint(IPAddress.Any, 0).Serialize();
        private readonly SocketAddress _v6SocketAddress = new IPEndPoint(IPAddress.IPv6Any, 0).Serialize();
        private EndPointKey _key;
        private EndPointKey _keyOfBaseAddress;

        // The last sender's sockaddr exactly as the OS wrote it (up to 28 bytes), kept while it still names
        // _key (temp must also still be this endpoint's own socket address): the native receive then
        // recognises a repeated sender by comparing these bytes, without parsing them. Length 0: nothing kept.
        private ulong _sockaddr0;
        private ulong _sockaddr1;
        private ulong _sockaddr2;
        private uint _sockaddr3;
        private int _sockaddrLength;
        // What temp was when the bytes were kept: the kept bytes name the current sender only while temp is still that object.
        private SocketAddress? _sockaddrTemp;

        // Set only while the managed fallback path runs Socket.ReceiveFrom, so that the runtime's call to
        // Create() writes the sender into this instance. Anyone else calling Create() gets a new endpoint:
        // Mono builds Socket.LocalEndPoint through the last endpoint given to ReceiveFrom, and the old
        // class answered with itself, corrupting both.
        internal bool ReceivingIntoSelf;

        // The socket that last passed every check of the compatible receive with this endpoint. What those checks test
        // cannot change while the socket lives (its family and type, whether it is bound, and, once bound, whether an IPv6
        // socket takes IPv4 peers), so the next receive on the same socket skips them; this endpoint's own family is the
        // one thing that can, and a change of it clears this. A Dispose is still caught: the handle reference throws.
        internal Socket? CheckedSocket;

        /// <summary>Creates an endpoint from an IPv4 address in the legacy <c>long</c> form and a port.</summary>
        /// <exception cref="ArgumentOutOfRangeException">The address or port is out of range.</exception>
        public IPEndPointNonAlloc(long address, int port) : base(address, port)
        {
            temp = _v4SocketAddress;
            Initialize(base.Address, port);
        }

        /// <summary>Creates an endpoint from an IPv4 or IPv6 address and a port.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="address"/> is null.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="port"/> is out of range.</exception>
        /// <exception cref="ArgumentException">The address is neither IPv4 nor IPv6.</exception>
        public IPEndPointNonAlloc(IPAddress address, int port) : base(address, port)
        {
            temp = _v4SocketAddress;
            Initialize(address, port);
        }

        private void Initialize(IPAddress address, int port)
        {
            SetCurrent(EndPointKey.FromIPAddress(address, port));
            _keyOfBaseAddress = _key;
        }

        /// <summary>The current endpoint (after a receive: the last sender) as an immutable key. Does not allocate.</summary>
        public EndPointKey CurrentKey => _key;

        /// <summary>The current address (after a receive: the last sender's). Allocates once per change of sender.</summary>
        /// <exception cref="ArgumentNullException">Set to null.</exception>
        public new IPAddress Address
        {
            get
            {
                RefreshBaseAddress();
                return base.Address;
            }
            set
            {
                if (value == null) throw new ArgumentNullException(nameof(value));
                base.Address = value;
                SetCurrent(EndPointKey.FromIPAddress(value, Port));
                _keyOfBaseAddress = _key;
            }
        }

        /// <summary>The family of the current endpoint.</summary>
        public override AddressFamily AddressFamily => _key.AddressFamily;

        /// <summary>True when the current endpoint is of <paramref name="family"/>: <see cref="AddressFamily"/> without a virtual call.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal bool HasFamily(AddressFamily family) => _key.AddressFamily == family;

        /// <summary>Makes this endpoint name <paramref name="key"/>. Does not allocate.</summary>
        /// <exception cref="ArgumentException"><paramref name="key"/> is empty.</exception>
        public void Set(in EndPointKey key)
        {
            if (key.IsEmpty) throw new ArgumentException("An empty key names no endpoint.", nameof(key));
            SetCurrent(key);
        }

        internal void SetCurrent(in EndPointKey key)
        {
            SocketAddress target = OwnSocketAddress(key);
            // The same sender again (the common case in a burst): everything already describes it.
            if (ReferenceEquals(temp, target) && key.Equals(_key)) return;
            if (key.AddressFamily != _key.AddressFamily) CheckedSocket = null; // the socket must be checked against the new family
            _sockaddrLength = 0;
            _key = key;
            base.Port = key.Port;
            key.CopyToSameFamily(target);
            temp = target;
        }

        /// <summary>
        /// Makes this endpoint name the sender whose OS sockaddr (<paramref name="length"/> bytes, at most
        /// <see cref="SockaddrLayout.StorageSize"/>, 8-byte aligned) the native receive got in its own stack buffer. When the
        /// bytes equal the previous sender's, nothing is parsed or written: the repeated sender is recognised with four loads
        /// and compares, with no span made or sliced (each of which Mono checks and does not inline away).
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)] // into the native receive: one call level less per datagram on Mono
        internal unsafe void SetCurrentFromSockaddr(byte* sockaddr, int length, SockaddrFormat format)
        {
            if (length == _sockaddrLength
                && *(ulong*)sockaddr == _sockaddr0
                && *(ulong*)(sockaddr + 8) == _sockaddr1
                && (length == SockaddrLayout.IPv4Size || (*(ulong*)(sockaddr + 16) == _sockaddr2 && *(uint*)(sockaddr + 24) == _sockaddr3))
                && ReferenceEquals(temp, _sockaddrTemp))
            {
                return;
            }
            ParseSockaddr(new ReadOnlySpan<byte>(sockaddr, length), format);
        }

        /// <summary>A sender other than the last one: parses its sockaddr, and keeps its bytes for the next comparison.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private void ParseSockaddr(ReadOnlySpan<byte> sockaddr, SockaddrFormat format)
        {
            int length = sockaddr.Length;
            EndPointKey.TryReadSockaddr(sockaddr, format, out EndPointKey key);
            SetCurrent(key);
            if (key.IsEmpty || (length != SockaddrLayout.IPv4Size && length != SockaddrLayout.IPv6Size)) return;
            _sockaddr0 = MemoryMarshal.Read<ulong>(sockaddr);
            _sockaddr1 = MemoryMarshal.Read<ulong>(sockaddr.Slice(8));
            _sockaddr2 = length == SockaddrLayout.IPv6Size ? MemoryMarshal.Read<ulong>(sockaddr.Slice(16)) : 0;
            _sockaddr3 = length == SockaddrLayout.IPv6Size ? MemoryMarshal.Read<uint>(sockaddr.Slice(24)) : 0;
            _sockaddrLength = length;
            _sockaddrTemp = temp;
        }

        /// <summary>This endpoint's own reusable socket address for the family of <paramref name="key"/>: what <see cref="temp"/> is after <see cref="SetCurrent"/>.</summary>
        private SocketAddress OwnSocketAddress(in EndPointKey key) => key.AddressFamily == AddressFamily.InterNetwork ? _v4SocketAddress : _v6SocketAddress;

        private void RefreshBaseAddress()
        {
            if (_keyOfBaseAddress.HasSameAddress(_key)) return;
            base.Address = _key.ToIPAddress();
            _keyOfBaseAddress = _key;
        }

        /// <summary>Returns <see cref="temp"/>, the current endpoint's socket address, without allocating.</summary>
        public override SocketAddress Serialize() => temp;

        /// <summary>
        /// Creates a new <see cref="IPEndPoint"/> from <paramref name="socketAddress"/>, as the base class
        /// does. (Only the library's own managed receive path makes it write into this instance instead.)
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socketAddress"/> is null.</exception>
        public override EndPoint Create(SocketAddress socketAddress)
        {
            if (socketAddress == null) throw new ArgumentNullException(nameof(socketAddress));
            EndPointKey key = EndPointKey.FromSocketAddress(socketAddress);
            if (ReceivingIntoSelf)
            {
                SetCurrent(key);
                return this;
            }
            return key.ToIPEndPoint();
        }

        /// <summary>
        /// A new, independent <see cref="IPEndPoint"/> for the current endpoint, to keep after the next
        /// receive has overwritten this one. Allocates only the endpoint it returns (and its address).
        /// </summary>
        /// <remarks>
        /// <para>The copy's <see cref="IPEndPoint.Address"/> and <see cref="IPEndPoint.Port"/> are the current
        /// values, so the runtime uses it as any <see cref="IPEndPoint"/> (SendTo, ToString, Serialize). It hashes
        /// and compares as this class does: <see cref="object.GetHashCode"/> is the seeded hash of its
        /// <see cref="EndPointKey"/> and <see cref="object.Equals(object)"/> compares keys with any <see cref="IPEndPoint"/>.
        /// So a copy and the live endpoint naming the same sender are equal both ways with the same hash, copies of one
        /// sender taken at different times are equal with the same hash, and a <c>Dictionary&lt;IPEndPoint, T&gt;</c>
        /// keyed by copies is found with the live endpoint. The copy never changes with later receives; its hash and
        /// equality follow its own <see cref="IPEndPoint.Address"/> and <see cref="IPEndPoint.Port"/> if they are set.</para>
        /// <para>Do not use copies and plain <see cref="IPEndPoint"/>s (<c>new IPEndPoint(address, port)</c>) as keys of
        /// one hash table: they are equal, but a plain one keeps the runtime's hash, so a lookup with one kind misses an
        /// entry of the other. Key such a table by copies only, or by <see cref="EndPointKey"/>.</para>
        /// </remarks>
        /// <exception cref="InvalidOperationException">The current key is empty (no endpoint).</exception>
        public IPEndPoint DeepCopyIPEndPoint() => new IPEndPointCopy(_key.ToIPAddress(), _key.Port);

        /// <summary>
        /// The seeded hash of <see cref="CurrentKey"/> (SipHash-1-3 keyed per process): equal for equal endpoints,
        /// unpredictable to senders, and the same as the hash of a <see cref="DeepCopyIPEndPoint"/> copy naming the same
        /// endpoint. Does not allocate.
        /// </summary>
        /// <remarks>
        /// It changes with every change of sender, so a live endpoint must never be the key stored in a hash table: store
        /// a <see cref="DeepCopyIPEndPoint"/> copy (or <see cref="CurrentKey"/>) and look it up with the live endpoint.
        /// A plain <see cref="IPEndPoint"/> naming the same endpoint is equal but hashes with the runtime's own function
        /// (unseeded on Mono 6.8: the address's hash, the same in every process, XOR the port), so the two kinds must
        /// not be mixed as keys of one table.
        /// </remarks>
        public override int GetHashCode() => _key.GetHashCode();

        /// <summary>
        /// True when <paramref name="comparand"/> is an <see cref="IPEndPoint"/> naming the same address, port and scope
        /// id as the current endpoint: another <see cref="IPEndPointNonAlloc"/> by its current key, a
        /// <see cref="DeepCopyIPEndPoint"/> copy or a plain <see cref="IPEndPoint"/> by its address, port and scope id.
        /// Equal endpoints of this library (live or copied) have equal <see cref="GetHashCode"/>s. Does not allocate.
        /// </summary>
        public override bool Equals(object? comparand) => comparand is IPEndPoint endPoint && _key.Names(endPoint);

        /// <summary>The current endpoint as text (<c>a.b.c.d:port</c> or <c>[v6]:port</c>). Allocates.</summary>
        public override string ToString()
        {
            RefreshBaseAddress();
            return base.ToString();
        }
    }
}
