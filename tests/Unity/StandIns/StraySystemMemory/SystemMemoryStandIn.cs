// A stand-in of the System.Memory.dll that NuGetForUnity and older SDKs leave among a Unity project's plugins
// (Assets/Plugins): NuGet's System.Memory 4.5.x for netstandard2.0, assembly version 4.0.1.1, which defines in its own
// assembly the types .NET Standard 2.1 already has. Its public types read from a copy of that DLL
// (microsoft.codecoverage 18.0.1's build/netstandard2.0/System.Memory.dll, listed with monodis --typedef): Span<T>,
// ReadOnlySpan<T>, Memory<T>, ReadOnlyMemory<T>, MemoryExtensions (AsSpan, AsMemory, ...),
// System.Runtime.InteropServices.MemoryMarshal and System.Buffers.Binary.BinaryPrimitives, among others left out here.
// Signatures only, every body throws: scripts/unity-builds.sh compiles it as Assets/Plugins/System.Memory.dll, an
// auto-referenced plugin, to show what an assembly that does not override references meets there: a call such as
// buffer.AsSpan() matches MemoryExtensions.AsSpan in both this DLL and netstandard.dll (CS0121), and a type named by
// its name exists in both (CS0433). Never part of a package.
using System.Reflection;

[assembly: AssemblyVersion("4.0.1.1")]

namespace System
{
    public readonly ref struct Span<T>
    {
        public Span(T[] array) => throw new NotImplementedException();
        public Span(T[] array, int start, int length) => throw new NotImplementedException();
        public int Length => throw new NotImplementedException();
        public bool IsEmpty => throw new NotImplementedException();
        public ref T this[int index] => throw new NotImplementedException();
        public Span<T> Slice(int start) => throw new NotImplementedException();
        public Span<T> Slice(int start, int length) => throw new NotImplementedException();
        public void Clear() => throw new NotImplementedException();
        public T[] ToArray() => throw new NotImplementedException();
        public static implicit operator Span<T>(T[] array) => throw new NotImplementedException();
        public static implicit operator Span<T>(ArraySegment<T> segment) => throw new NotImplementedException();
        public static implicit operator ReadOnlySpan<T>(Span<T> span) => throw new NotImplementedException();
    }

    public readonly ref struct ReadOnlySpan<T>
    {
        public ReadOnlySpan(T[] array) => throw new NotImplementedException();
        public ReadOnlySpan(T[] array, int start, int length) => throw new NotImplementedException();
        public int Length => throw new NotImplementedException();
        public bool IsEmpty => throw new NotImplementedException();
        public ref readonly T this[int index] => throw new NotImplementedException();
        public ReadOnlySpan<T> Slice(int start) => throw new NotImplementedException();
        public ReadOnlySpan<T> Slice(int start, int length) => throw new NotImplementedException();
        public T[] ToArray() => throw new NotImplementedException();
        public static implicit operator ReadOnlySpan<T>(T[] array) => throw new NotImplementedException();
        public static implicit operator ReadOnlySpan<T>(ArraySegment<T> segment) => throw new NotImplementedException();
    }

    public readonly struct Memory<T>
    {
        public Memory(T[] array) => throw new NotImplementedException();
        public Memory(T[] array, int start, int length) => throw new NotImplementedException();
        public int Length => throw new NotImplementedException();
        public Span<T> Span => throw new NotImplementedException();
        public Memory<T> Slice(int start, int length) => throw new NotImplementedException();
        public static implicit operator Memory<T>(T[] array) => throw new NotImplementedException();
        public static implicit operator Memory<T>(ArraySegment<T> segment) => throw new NotImplementedException();
        public static implicit operator ReadOnlyMemory<T>(Memory<T> memory) => throw new NotImplementedException();
    }

    public readonly struct ReadOnlyMemory<T>
    {
        public ReadOnlyMemory(T[] array) => throw new NotImplementedException();
        public ReadOnlyMemory(T[] array, int start, int length) => throw new NotImplementedException();
        public int Length => throw new NotImplementedException();
        public ReadOnlySpan<T> Span => throw new NotImplementedException();
        public static implicit operator ReadOnlyMemory<T>(T[] array) => throw new NotImplementedException();
    }

    public static class MemoryExtensions
    {
        public static Span<T> AsSpan<T>(this T[] array) => throw new NotImplementedException();
        public static Span<T> AsSpan<T>(this T[] array, int start) => throw new NotImplementedException();
        public static Span<T> AsSpan<T>(this T[] array, int start, int length) => throw new NotImplementedException();
        public static Span<T> AsSpan<T>(this ArraySegment<T> segment) => throw new NotImplementedException();
        public static ReadOnlySpan<char> AsSpan(this string text) => throw new NotImplementedException();
        public static Memory<T> AsMemory<T>(this T[] array) => throw new NotImplementedException();
        public static Memory<T> AsMemory<T>(this T[] array, int start, int length) => throw new NotImplementedException();
        public static bool SequenceEqual<T>(this ReadOnlySpan<T> span, ReadOnlySpan<T> other) where T : IEquatable<T> => throw new NotImplementedException();
        public static int IndexOf<T>(this ReadOnlySpan<T> span, T value) where T : IEquatable<T> => throw new NotImplementedException();
    }
}

namespace System.Runtime.InteropServices
{
    public static class MemoryMarshal
    {
        public static ref T GetReference<T>(Span<T> span) => throw new NotImplementedException();
        public static ref T GetReference<T>(ReadOnlySpan<T> span) => throw new NotImplementedException();
        public static Span<TTo> Cast<TFrom, TTo>(Span<TFrom> span) where TFrom : struct where TTo : struct => throw new NotImplementedException();
        public static Span<byte> AsBytes<T>(Span<T> span) where T : struct => throw new NotImplementedException();
        public static T Read<T>(ReadOnlySpan<byte> source) where T : struct => throw new NotImplementedException();
        public static void Write<T>(Span<byte> destination, ref T value) where T : struct => throw new NotImplementedException();
        public static bool TryGetArray<T>(ReadOnlyMemory<T> memory, out ArraySegment<T> segment) => throw new NotImplementedException();
    }
}

namespace System.Buffers.Binary
{
    public static class BinaryPrimitives
    {
        public static ushort ReadUInt16BigEndian(ReadOnlySpan<byte> source) => throw new NotImplementedException();
        public static uint ReadUInt32BigEndian(ReadOnlySpan<byte> source) => throw new NotImplementedException();
        public static void WriteUInt16BigEndian(Span<byte> destination, ushort value) => throw new NotImplementedException();
        public static void WriteUInt32BigEndian(Span<byte> destination, uint value) => throw new NotImplementedException();
    }
}
