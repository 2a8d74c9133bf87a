#nullable enable
using System;
using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// The identity of a peer: address family, 16 address bytes, port and IPv6 scope id, as an
    /// immutable value. It is copied, never aliased, so a key kept in a table can never be changed by
    /// a later receive. Equality is by value; <see cref="GetHashCode"/> is keyed with a random seed
    /// chosen once per process (SipHash-1-3), so senders cannot pick addresses that collide.
    /// </summary>
    /// <remarks>
    /// Nothing here allocates except the members that say so: <see cref="ToIPEndPoint"/>,
    /// <see cref="ToIPAddress"/>, <see cref="ToSocketAddress"/> and <see cref="ToString"/>. Their allocation-free
    /// counterparts: <see cref="Port"/>, <see cref="AddressFamily"/>, <see cref="ScopeId"/>,
    /// <see cref="TryWriteAddressBytes"/> (the address bytes) and <see cref="TryFormat"/> (the text, for logs).
    /// An IPv4 sender seen through a dual-mode socket is an IPv6 key in IPv4-mapped form
    /// (<c>::ffff:a.b.c.d</c>); <see cref="MapToIPv4"/> gives the IPv4 key, which is a different value.
    /// </remarks>
    [StructLayout(LayoutKind.Auto)]
    public readonly partial struct EndPointKey : IEquatable<EndPointKey>
    {
        private const byte FamilyNone = 0;
        private const byte FamilyV4 = 4;
        private const byte FamilyV6 = 6;

        // Address bytes in network order, read into two words in the machine's byte order.
        private readonly ulong _a0;
        private readonly ulong _a1;
        private readonly uint _scopeId;
        private readonly ushort _port;
        private readonly byte _family;

        private EndPointKey(byte family, ulong a0, ulong a1, ushort port, uint scopeId)
        {
            _family = family;
            _a0 = a0;
            _a1 = a1;
            _port = port;
            _scopeId = scopeId;
        }

        /// <summary>An IPv4 key from four address bytes in network order.</summary>
        /// <exception cref="ArgumentException"><paramref name="address"/> is not 4 bytes long.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="port"/> is not 0..65535.</exception>
        public static EndPointKey IPv4(ReadOnlySpan<byte> address, int port)
        {
            if (address.Length != 4) throw new ArgumentException("An IPv4 address is 4 bytes.", nameof(address));
            CheckPort(port);
            return new EndPointKey(FamilyV4, MemoryMarshal.Read<uint>(address), 0, (ushort)port, 0);
        }

        /// <summary>An IPv4 key <c>a.b.c.d:port</c>.</summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="port"/> is not 0..65535.</exception>
        public static EndPointKey IPv4(byte a, byte b, byte c, byte d, int port)
        {
            CheckPort(port);
            Span<byte> bytes = stackalloc byte[4];
            bytes[0] = a; bytes[1] = b; bytes[2] = c; bytes[3] = d;
            return new EndPointKey(FamilyV4, MemoryMarshal.Read<uint>(bytes), 0, (ushort)port, 0);
        }

        /// <summary>An IPv6 key from sixteen address bytes in network order.</summary>
        /// <exception cref="ArgumentException"><paramref name="address"/> is not 16 bytes long.</exception>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="port"/> is not 0..65535.</exception>
        public static EndPointKey IPv6(ReadOnlySpan<byte> address, int port, uint scopeId = 0)
        {
            if (address.Length != 16) throw new ArgumentException("An IPv6 address is 16 bytes.", nameof(address));
            CheckPort(port);
            return new EndPointKey(FamilyV6, MemoryMarshal.Read<ulong>(address), MemoryMarshal.Read<ulong>(address.Slice(8)), (ushort)port, scopeId);
        }

        /// <summary>The key of an <see cref="IPAddress"/> and port. Does not allocate.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="address"/> is null.</exception>
        /// <exception cref="ArgumentException">The address is neither IPv4 nor IPv6.</exception>
        public static EndPointKey FromIPAddress(IPAddress address, int port)
        {
            if (address == null) throw new ArgumentNullException(nameof(address));
            Span<byte> bytes = stackalloc byte[16];
            if (!address.TryWriteBytes(bytes, out int written)) throw new ArgumentException("The address could not be read.", nameof(address));
            if (address.AddressFamily == AddressFamily.InterNetwork && written == 4) return IPv4(bytes.Slice(0, 4), port);
            if (address.AddressFamily == AddressFamily.InterNetworkV6 && written == 16) return IPv6(bytes, port, (uint)address.ScopeId);
            throw new ArgumentException("Only IPv4 and IPv6 addresses make endpoint keys.", nameof(address));
        }

        /// <summary>The key of an <see cref="IPEndPoint"/>. Does not allocate.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="endPoint"/> is null.</exception>
        public static EndPointKey FromIPEndPoint(IPEndPoint endPoint)
        {
            if (endPoint == null) throw new ArgumentNullException(nameof(endPoint));
            if (endPoint is IPEndPointNonAlloc nonAlloc) return nonAlloc.CurrentKey;
            return FromIPAddress(endPoint.Address, endPoint.Port);
        }

        /// <summary>The key held in a runtime <see cref="SocketAddress"/> of family InterNetwork or InterNetworkV6. Does not allocate.</summary>
        /// <exception cref="ArgumentNullException"><paramref name="socketAddress"/> is null.</exception>
        /// <exception cref="ArgumentException">The family is not IPv4/IPv6 or the address is too short.</exception>
        public static EndPointKey FromSocketAddress(SocketAddress socketAddress)
        {
            if (socketAddress == null) throw new ArgumentNullException(nameof(socketAddress));
            // Family, port (2..3, network order), IPv4 (4..7), IPv6 (8..23) and scope (24..27) sit at the
            // same offsets in Mono's and .NET's SocketAddress; only the family bytes differ, so read Family.
            AddressFamily family = socketAddress.Family;
            if (family == AddressFamily.InterNetwork)
            {
                // Mono hands Create() IPv4 addresses of 8 bytes (no sin_zero) and IPv6 ones without the scope.
                if (socketAddress.Size < SockaddrLayout.IPv4AddressOffset + 4) throw new ArgumentException("The IPv4 socket address is too short.", nameof(socketAddress));
                Span<byte> a = stackalloc byte[4];
                for (int i = 0; i < 4; i++) a[i] = socketAddress[SockaddrLayout.IPv4AddressOffset + i];
                return new EndPointKey(FamilyV4, MemoryMarshal.Read<uint>(a), 0, ReadPort(socketAddress), 0);
            }
            if (family == AddressFamily.InterNetworkV6)
            {
                if (socketAddress.Size < SockaddrLayout.IPv6AddressOffset + 16) throw new ArgumentException("The IPv6 socket address is too short.", nameof(socketAddress));
                Span<byte> a = stackalloc byte[20];
                a.Clear();
                for (int i = 0; i < 16; i++) a[i] = socketAddress[SockaddrLayout.IPv6AddressOffset + i];
                if (socketAddress.Size >= SockaddrLayout.IPv6Size)
                {
                    for (int i = 0; i < 4; i++) a[16 + i] = socketAddress[SockaddrLayout.IPv6ScopeIdOffset + i];
                }
                return new EndPointKey(FamilyV6, MemoryMarshal.Read<ulong>(a), MemoryMarshal.Read<ulong>(a.Slice(8)), ReadPort(socketAddress), MemoryMarshal.Read<uint>(a.Slice(16)));
            }
            throw new ArgumentException("Only InterNetwork and InterNetworkV6 socket addresses make endpoint keys.", nameof(socketAddress));
        }

        private static ushort ReadPort(SocketAddress socketAddress)
        {
            return (ushort)((socketAddress[SockaddrLayout.PortOffset] << 8) | socketAddress[SockaddrLayout.PortOffset + 1]);
        }

        /// <summary>
        /// Reads an OS <c>sockaddr_in</c> or <c>sockaddr_in6</c> laid out as <paramref name="format"/> says.
        /// Returns false for another family or too few bytes. Does not allocate.
        /// </summary>
        public static bool TryReadSockaddr(ReadOnlySpan<byte> sockaddr, SockaddrFormat format, out EndPointKey key)
        {
            key = default;
            if (sockaddr.Length < 2) return false;
            int family;
            switch (format)
            {
                case SockaddrFormat.Linux: family = MemoryMarshal.Read<ushort>(sockaddr); break;
                case SockaddrFormat.Bsd:
                    // Not sockaddr[1]: Mono 6.8 lacks ReadOnlySpan's 'ref readonly' indexer (MissingMethodException).
                    family = MemoryMarshal.Read<byte>(sockaddr.Slice(1));
                    break;
                case SockaddrFormat.Windows: family = BinaryPrimitives.ReadUInt16LittleEndian(sockaddr); break;
                default: throw new ArgumentOutOfRangeException(nameof(format));
            }

            if (family == SockaddrLayout.LinuxAfInet) // AF_INET is 2 in all three formats
            {
                if (sockaddr.Length < SockaddrLayout.IPv4Size) return false;
                key = new EndPointKey(FamilyV4, MemoryMarshal.Read<uint>(sockaddr.Slice(SockaddrLayout.IPv4AddressOffset)), 0,
                    BinaryPrimitives.ReadUInt16BigEndian(sockaddr.Slice(SockaddrLayout.PortOffset)), 0);
                return true;
            }

            if (family == Inet6(format))
            {
                if (sockaddr.Length < SockaddrLayout.IPv6Size) return false;
                key = new EndPointKey(FamilyV6,
                    MemoryMarshal.Read<ulong>(sockaddr.Slice(SockaddrLayout.IPv6AddressOffset)),
                    MemoryMarshal.Read<ulong>(sockaddr.Slice(SockaddrLayout.IPv6AddressOffset + 8)),
                    BinaryPrimitives.ReadUInt16BigEndian(sockaddr.Slice(SockaddrLayout.PortOffset)),
                    MemoryMarshal.Read<uint>(sockaddr.Slice(SockaddrLayout.IPv6ScopeIdOffset)));
                return true;
            }

            return false;
        }

        /// <summary>
        /// <see cref="TryReadSockaddr(ReadOnlySpan{byte}, SockaddrFormat, out EndPointKey)"/> for a sockaddr the native receive
        /// has in memory of its own (<paramref name="length"/> readable bytes at <paramref name="sockaddr"/>, no byte past them
        /// read): the same answers, read with plain loads instead of sliced spans, which Mono checks one by one (about 200
        /// instructions per sender there). The native receive's buffers are 8-byte aligned, so the wide loads are aligned.
        /// </summary>
        internal static unsafe bool TryReadSockaddr(byte* sockaddr, int length, SockaddrFormat format, out EndPointKey key)
        {
            key = default;
            if (length < 2) return false;
            int family;
            switch (format)
            {
                case SockaddrFormat.Linux: family = *(ushort*)sockaddr; break;
                case SockaddrFormat.Bsd: family = sockaddr[1]; break;
                case SockaddrFormat.Windows: family = sockaddr[0] | (sockaddr[1] << 8); break;
                default: throw new ArgumentOutOfRangeException(nameof(format));
            }

            if (family == SockaddrLayout.LinuxAfInet) // AF_INET is 2 in all three formats
            {
                if (length < SockaddrLayout.IPv4Size) return false;
                key = new EndPointKey(FamilyV4, *(uint*)(sockaddr + SockaddrLayout.IPv4AddressOffset), 0, ReadPort(sockaddr), 0);
                return true;
            }

            if (family == Inet6(format))
            {
                if (length < SockaddrLayout.IPv6Size) return false;
                key = new EndPointKey(FamilyV6, *(ulong*)(sockaddr + SockaddrLayout.IPv6AddressOffset), *(ulong*)(sockaddr + SockaddrLayout.IPv6AddressOffset + 8),
                    ReadPort(sockaddr), *(uint*)(sockaddr + SockaddrLayout.IPv6ScopeIdOffset));
                return true;
            }

            return false;
        }

        /// <summary>The port of a sockaddr (network order at the same offset in every format), read a byte at a time.</summary>
        private static unsafe ushort ReadPort(byte* sockaddr) => (ushort)((sockaddr[SockaddrLayout.PortOffset] << 8) | sockaddr[SockaddrLayout.PortOffset + 1]);

        /// <summary>
        /// Writes this key as an OS <c>sockaddr_in</c> (16 bytes) or <c>sockaddr_in6</c> (28 bytes) in
        /// <paramref name="format"/>, zeroing the rest, and returns the length written. Does not allocate.
        /// </summary>
        /// <exception cref="InvalidOperationException">This is the default (empty) key.</exception>
        /// <exception cref="ArgumentException"><paramref name="destination"/> is too small.</exception>
        public unsafe int WriteSockaddr(Span<byte> destination, SockaddrFormat format)
        {
            if (_family == FamilyNone) throw new InvalidOperationException("The default EndPointKey has no address.");
            int size = _family == FamilyV4 ? SockaddrLayout.IPv4Size : SockaddrLayout.IPv6Size;
            if (destination.Length < size) throw new ArgumentException("The destination is smaller than the socket address.", nameof(destination));
            if (format != SockaddrFormat.Linux && format != SockaddrFormat.Bsd && format != SockaddrFormat.Windows) throw new ArgumentOutOfRangeException(nameof(format));
            fixed (byte* at = &MemoryMarshal.GetReference(destination)) return WriteSockaddrAt(at, format);
        }

        /// <summary>
        /// <see cref="WriteSockaddr(Span{byte}, SockaddrFormat)"/> into memory the library owns, for a key that is not empty and a
        /// known format: every byte of the 16 or 28 written (the zero padding too) with plain stores, none past them. What each send
        /// runs: the span form's slices and helpers cost about 200 instructions per datagram on .NET 10 without tiering.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal unsafe int WriteSockaddrAt(byte* destination, SockaddrFormat format)
        {
            if (format == SockaddrFormat.Linux && _family == FamilyV4 && BitConverter.IsLittleEndian)
            {
                // The common case in two stores: family 2 (host order), the port in network order, the address; then sin_zero.
                *(ulong*)destination = SockaddrLayout.LinuxAfInet | (ulong)(ushort)((_port >> 8) | (_port << 8)) << 16 | (ulong)(uint)_a0 << 32;
                *(ulong*)(destination + 8) = 0;
                return SockaddrLayout.IPv4Size;
            }
            return WriteSockaddrField(destination, format);
        }

        /// <summary><see cref="WriteSockaddrAt"/> field by field: IPv6, and the other OSes' layouts.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private unsafe int WriteSockaddrField(byte* destination, SockaddrFormat format)
        {
            bool v4 = _family == FamilyV4;
            int size = v4 ? SockaddrLayout.IPv4Size : SockaddrLayout.IPv6Size;
            int family = v4 ? SockaddrLayout.LinuxAfInet : Inet6(format); // AF_INET is 2 in all three formats
            switch (format)
            {
                case SockaddrFormat.Linux: *(ushort*)destination = (ushort)family; break;
                case SockaddrFormat.Bsd: destination[0] = (byte)size; destination[1] = (byte)family; break;
                default: destination[0] = (byte)family; destination[1] = (byte)(family >> 8); break; // Windows: little-endian
            }
            destination[SockaddrLayout.PortOffset] = (byte)(_port >> 8); // network order
            destination[SockaddrLayout.PortOffset + 1] = (byte)_port;
            if (v4)
            {
                *(uint*)(destination + SockaddrLayout.IPv4AddressOffset) = (uint)_a0;
                *(ulong*)(destination + 8) = 0; // sin_zero
            }
            else
            {
                *(uint*)(destination + SockaddrLayout.IPv6FlowInfoOffset) = 0;
                *(ulong*)(destination + SockaddrLayout.IPv6AddressOffset) = _a0;
                *(ulong*)(destination + SockaddrLayout.IPv6AddressOffset + 8) = _a1;
                *(uint*)(destination + SockaddrLayout.IPv6ScopeIdOffset) = _scopeId;
            }
            return size;
        }

        /// <summary>The family field of a sockaddr in <paramref name="format"/> (the OS's own number: AF_INET, AF_INET6).</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static unsafe int ReadSockaddrFamily(byte* sockaddr, SockaddrFormat format)
        {
            switch (format)
            {
                case SockaddrFormat.Linux: return *(ushort*)sockaddr;
                case SockaddrFormat.Bsd: return sockaddr[1];
                default: return sockaddr[0] | (sockaddr[1] << 8);
            }
        }

        /// <summary>The OS's number for <paramref name="family"/> (InterNetwork or InterNetworkV6) in <paramref name="format"/>.</summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static int SockaddrFamily(AddressFamily family, SockaddrFormat format) =>
            family == AddressFamily.InterNetwork ? SockaddrLayout.LinuxAfInet : Inet6(format);

        // MemoryMarshal.Write takes 'ref' on netstandard2.1 and 'in' on .NET 8; one helper serves both.
        private static void Store(Span<byte> destination, uint value) => MemoryMarshal.Cast<byte, uint>(destination.Slice(0, 4))[0] = value;

        private static void Store(Span<byte> destination, ulong value) => MemoryMarshal.Cast<byte, ulong>(destination.Slice(0, 8))[0] = value;

        private static int Inet6(SockaddrFormat format)
        {
            switch (format)
            {
                case SockaddrFormat.Linux: return SockaddrLayout.LinuxAfInet6;
                case SockaddrFormat.Bsd: return SockaddrLayout.DarwinAfInet6;
                case SockaddrFormat.Windows: return SockaddrLayout.WindowsAfInet6;
                default: throw new ArgumentOutOfRangeException(nameof(format));
            }
        }

        /// <summary>
        /// Overwrites <paramref name="socketAddress"/> (same family, large enough) with this key, byte by
        /// byte, so that one <see cref="SocketAddress"/> can be reused for every datagram. Does not allocate.
        /// </summary>
        /// <exception cref="ArgumentNullException"><paramref name="socketAddress"/> is null.</exception>
        /// <exception cref="ArgumentException">The family differs or the address is too short.</exception>
        public void CopyTo(SocketAddress socketAddress)
        {
            if (socketAddress == null) throw new ArgumentNullException(nameof(socketAddress));
            if (socketAddress.Family != AddressFamily) throw new ArgumentException("The socket address has another family than the key.", nameof(socketAddress));
            if (_family == FamilyNone) throw new InvalidOperationException("The default EndPointKey has no address.");
            int size = _family == FamilyV4 ? SockaddrLayout.IPv4Size : SockaddrLayout.IPv6Size;
            if (socketAddress.Size < size) throw new ArgumentException("The socket address is too short.", nameof(socketAddress));
            // The bytes the key has no say in (IPv4 sin_zero, IPv6 flow info) are zeroed, as a new address has them;
            // the family bytes (0..1) are left alone: each runtime writes them its own way, and they already match.
            if (_family == FamilyV4)
            {
                for (int i = SockaddrLayout.IPv4AddressOffset + 4; i < size; i++) socketAddress[i] = 0;
            }
            else
            {
                for (int i = 0; i < 4; i++) socketAddress[SockaddrLayout.IPv6FlowInfoOffset + i] = 0;
            }
            CopyToSameFamily(socketAddress);
        }

        /// <summary>
        /// <see cref="CopyTo"/> without its checks and without zeroing, for a socket address of this key's family
        /// and full size that the caller owns: writes the port, address and scope bytes straight from the fields.
        /// </summary>
        internal void CopyToSameFamily(SocketAddress socketAddress)
        {
            socketAddress[SockaddrLayout.PortOffset] = (byte)(_port >> 8);
            socketAddress[SockaddrLayout.PortOffset + 1] = (byte)_port;
            Span<byte> bytes = stackalloc byte[20];
            ulong a0 = _a0, a1 = _a1;
            Store(bytes, a0);
            Store(bytes.Slice(8), a1);
            Store(bytes.Slice(16), _scopeId);
            if (_family == FamilyV4)
            {
                for (int i = 0; i < 4; i++) socketAddress[SockaddrLayout.IPv4AddressOffset + i] = bytes[i];
                return;
            }
            for (int i = 0; i < 16; i++) socketAddress[SockaddrLayout.IPv6AddressOffset + i] = bytes[i];
            for (int i = 0; i < 4; i++) socketAddress[SockaddrLayout.IPv6ScopeIdOffset + i] = bytes[16 + i];
        }

        /// <summary>A new <see cref="SocketAddress"/> for this key. Allocates.</summary>
        public SocketAddress ToSocketAddress()
        {
            var result = new SocketAddress(AddressFamily, _family == FamilyV4 ? SockaddrLayout.IPv4Size : SockaddrLayout.IPv6Size);
            CopyTo(result);
            return result;
        }

        /// <summary>The address family: InterNetwork, InterNetworkV6, or Unspecified for the default key.</summary>
        public AddressFamily AddressFamily
        {
            // Inlined on Mono too (its IL is over Mono's size limit): the receive checks it per datagram.
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get => _family == FamilyV4 ? AddressFamily.InterNetwork : _family == FamilyV6 ? AddressFamily.InterNetworkV6 : AddressFamily.Unspecified;
        }

        /// <summary>True for the default value, which names no endpoint.</summary>
        public bool IsEmpty => _family == FamilyNone;

        /// <summary>True for an IPv4 key (not an IPv4-mapped IPv6 one): <see cref="AddressFamily"/> is InterNetwork, in one compare.</summary>
        internal bool IsIPv4 => _family == FamilyV4;

        /// <summary>The port, 0..65535.</summary>
        public int Port => _port;

        /// <summary>The IPv6 scope id (interface index); 0 for IPv4.</summary>
        public uint ScopeId => _scopeId;

        /// <summary>True when this is an IPv6 key whose address is IPv4-mapped (<c>::ffff:a.b.c.d</c>).</summary>
        public bool IsIPv4MappedToIPv6
        {
            // Inlined on Mono too: every peer lookup asks it (Canonical). Bytes 8..11 of ::ffff:a.b.c.d are 00 00 ff ff, the
            // low half of _a1 on a little-endian machine, the high half on a big-endian one; no stack buffer to clear.
            [MethodImpl(MethodImplOptions.AggressiveInlining)]
            get => _family == FamilyV6 && _a0 == 0
                && (BitConverter.IsLittleEndian ? (uint)_a1 == 0xFFFF_0000u : (uint)(_a1 >> 32) == 0x0000_FFFFu);
        }

        /// <summary>The IPv4 key of an IPv4-mapped IPv6 key; an IPv4 key itself is returned unchanged.</summary>
        /// <exception cref="InvalidOperationException">The key is IPv6 and not IPv4-mapped, or empty.</exception>
        public EndPointKey MapToIPv4()
        {
            if (_family == FamilyV4) return this;
            if (!IsIPv4MappedToIPv6) throw new InvalidOperationException("Only an IPv4-mapped IPv6 key has an IPv4 form.");
            Span<byte> b = stackalloc byte[8];
            ulong a1 = _a1;
            Store(b, a1);
            return new EndPointKey(FamilyV4, MemoryMarshal.Read<uint>(b.Slice(4)), 0, _port, 0);
        }

        /// <summary>The IPv4-mapped IPv6 key (<c>::ffff:a.b.c.d</c>) of an IPv4 key; an IPv6 key is returned unchanged.</summary>
        /// <exception cref="InvalidOperationException">The key is empty.</exception>
        public EndPointKey MapToIPv6()
        {
            if (_family == FamilyV6) return this;
            if (_family == FamilyNone) throw new InvalidOperationException("The default EndPointKey has no address.");
            Span<byte> full = stackalloc byte[16];
            full.Clear();
            full[10] = 0xff;
            full[11] = 0xff;
            uint a = (uint)_a0;
            Store(full.Slice(12), a);
            return new EndPointKey(FamilyV6, MemoryMarshal.Read<ulong>(full), MemoryMarshal.Read<ulong>(full.Slice(8)), _port, 0);
        }

        /// <summary>
        /// The key as a dual-mode socket reports it: IPv4-mapped keys become IPv4 keys, others are
        /// unchanged. Two keys that name the same IPv4 sender are equal after this.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public EndPointKey Canonical() => IsIPv4MappedToIPv6 ? MapToIPv4() : this;

        /// <summary>Writes the address bytes (4 or 16, network order) into <paramref name="destination"/> and returns how many.</summary>
        /// <exception cref="ArgumentException"><paramref name="destination"/> is too small.</exception>
        public int CopyAddressBytes(Span<byte> destination)
        {
            int n = _family == FamilyV4 ? 4 : _family == FamilyV6 ? 16 : 0;
            if (destination.Length < n) throw new ArgumentException("The destination is too small.", nameof(destination));
            Span<byte> all = stackalloc byte[16];
            ulong a0 = _a0, a1 = _a1;
            Store(all, a0);
            Store(all.Slice(8), a1);
            all.Slice(0, n).CopyTo(destination);
            return n;
        }

        /// <summary>
        /// Writes the address bytes (4 for IPv4, 16 for IPv6; network order, as <see cref="IPAddress.GetAddressBytes"/> gives
        /// them) into <paramref name="destination"/>. Does not allocate.
        /// </summary>
        /// <returns>False, with <paramref name="bytesWritten"/> 0, when <paramref name="destination"/> is too small or this is the default key.</returns>
        public bool TryWriteAddressBytes(Span<byte> destination, out int bytesWritten)
        {
            int n = _family == FamilyV4 ? 4 : _family == FamilyV6 ? 16 : 0;
            if (n == 0 || destination.Length < n)
            {
                bytesWritten = 0;
                return false;
            }
            bytesWritten = CopyAddressBytes(destination);
            return true;
        }

        /// <summary>The IPv4 address as the value of the legacy <see cref="IPAddress"/>(long) constructor. Zero for IPv6.</summary>
        internal long IPv4AddressValue => _family == FamilyV4 ? (uint)_a0 : 0;

        /// <summary>A new <see cref="IPAddress"/> for this key's address. Allocates.</summary>
        /// <exception cref="InvalidOperationException">The key is empty.</exception>
        public IPAddress ToIPAddress()
        {
            if (_family == FamilyV4) return new IPAddress((uint)_a0);
            if (_family == FamilyNone) throw new InvalidOperationException("The default EndPointKey has no address.");
            Span<byte> b = stackalloc byte[16];
            CopyAddressBytes(b);
            return new IPAddress(b, _scopeId);
        }

        /// <summary>A new <see cref="IPEndPoint"/> for this key. Allocates the endpoint and its address.</summary>
        /// <exception cref="InvalidOperationException">The key is empty.</exception>
        public IPEndPoint ToIPEndPoint() => new IPEndPoint(ToIPAddress(), _port);

        /// <summary>True when both keys name the same family, address and scope id, whatever their ports.</summary>
        internal bool HasSameAddress(in EndPointKey other)
        {
            return _a0 == other._a0 && _a1 == other._a1 && _family == other._family && _scopeId == other._scopeId;
        }

        /// <summary>
        /// The rule by which this library's endpoints compare with any <see cref="IPEndPoint"/>: true when
        /// <paramref name="endPoint"/> names this key (for an <see cref="IPEndPointNonAlloc"/>, its current key;
        /// for any other, its address, port and scope id). Does not allocate.
        /// </summary>
        internal bool Names(IPEndPoint endPoint)
        {
            if (endPoint is IPEndPointNonAlloc live) return Equals(live.CurrentKey);
            return endPoint.Port == _port && endPoint.AddressFamily == AddressFamily && FromIPAddress(endPoint.Address, _port).Equals(this);
        }

        /// <summary>Value equality of family, address, port and scope id.</summary>
        public bool Equals(EndPointKey other)
        {
            return _a0 == other._a0 && _a1 == other._a1 && _port == other._port && _family == other._family && _scopeId == other._scopeId;
        }

        /// <inheritdoc />
        public override bool Equals(object? obj) => obj is EndPointKey other && Equals(other);

        /// <summary>A 64-bit hash keyed with this process's random seed. Equal keys hash equally within one process.</summary>
        public ulong GetHashCode64()
        {
            return SeededHash.Hash(_a0, _a1, ((ulong)_scopeId << 32) | ((ulong)_port << 8) | _family);
        }

        /// <summary>A hash keyed with this process's random seed. Equal keys hash equally within one process.</summary>
        public override int GetHashCode()
        {
            ulong h = GetHashCode64();
            return (int)(h ^ (h >> 32));
        }

        /// <summary>Compares two keys by value.</summary>
        public static bool operator ==(EndPointKey left, EndPointKey right) => left.Equals(right);

        /// <summary>Compares two keys by value.</summary>
        public static bool operator !=(EndPointKey left, EndPointKey right) => !left.Equals(right);

        /// <summary>
        /// <c>a.b.c.d:port</c> or <c>[v6%scope]:port</c> (the address as <see cref="IPAddress.ToString"/> writes it); "(none)" for
        /// the default key. Allocates; <see cref="TryFormat"/> writes the same text into a span without allocating.
        /// </summary>
        public override string ToString()
        {
            if (_family == FamilyNone) return "(none)";
            return _family == FamilyV4 ? ToIPAddress() + ":" + _port : "[" + ToIPAddress() + "]:" + _port;
        }

        private static void CheckPort(int port)
        {
            if ((uint)port > 65535) throw new ArgumentOutOfRangeException(nameof(port), port, "A port is 0..65535.");
        }
    }
}
