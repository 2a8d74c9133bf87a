using System;
using System.Buffers.Binary;
using System.Runtime.InteropServices;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// A test datagram that proves itself: [sequence u32][length u16][payload][Fletcher-32 u32], so a
    /// receiver can tell a lost, reordered, cut or altered datagram from a good one.
    /// </summary>
    public static class TestDatagram
    {
        public const int Overhead = 10;

        public static int Write(Span<byte> destination, uint sequence, int payloadLength)
        {
            int total = Overhead + payloadLength;
            BinaryPrimitives.WriteUInt32LittleEndian(destination, sequence);
            BinaryPrimitives.WriteUInt16LittleEndian(destination.Slice(4), (ushort)payloadLength);
            for (int i = 0; i < payloadLength; i++) destination[6 + i] = (byte)(sequence * 31 + i * 7);
            BinaryPrimitives.WriteUInt32LittleEndian(destination.Slice(6 + payloadLength), Fletcher32(destination.Slice(0, 6 + payloadLength)));
            return total;
        }

        /// <summary>True when <paramref name="datagram"/> is whole and unaltered; gives its sequence number.</summary>
        public static bool Check(ReadOnlySpan<byte> datagram, out uint sequence)
        {
            sequence = 0;
            if (datagram.Length < Overhead) return false;
            sequence = BinaryPrimitives.ReadUInt32LittleEndian(datagram);
            int payloadLength = BinaryPrimitives.ReadUInt16LittleEndian(datagram.Slice(4));
            if (datagram.Length != Overhead + payloadLength) return false;
            return BinaryPrimitives.ReadUInt32LittleEndian(datagram.Slice(6 + payloadLength)) == Fletcher32(datagram.Slice(0, 6 + payloadLength));
        }

        public static uint Fletcher32(ReadOnlySpan<byte> data)
        {
            uint sum1 = 0, sum2 = 0;
            // Indexed through a Span: Mono 6.8 cannot index or enumerate a ReadOnlySpan (missing 'ref readonly' members).
            for (int i = 0; i < data.Length; i++)
            {
                byte b = MemoryMarshal.Read<byte>(data.Slice(i));
                sum1 = (sum1 + b) % 65535;
                sum2 = (sum2 + sum1) % 65535;
            }
            return (sum2 << 16) | sum1;
        }
    }
}
