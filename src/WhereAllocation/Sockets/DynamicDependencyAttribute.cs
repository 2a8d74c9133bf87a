#nullable enable
#if !NET8_0_OR_GREATER
namespace System.Diagnostics.CodeAnalysis
{
    /// <summary>
    /// netstandard2.1 lacks this attribute, and linkers recognise it by its namespace and name, wherever it is
    /// declared: on a method, it tells them that the named member is needed whenever the method is kept (here:
    /// the socket's SafeHandle getter, which SocketHandles reaches by reflection). Only the form this library uses.
    /// </summary>
    [AttributeUsage(AttributeTargets.Constructor | AttributeTargets.Field | AttributeTargets.Method, AllowMultiple = true, Inherited = false)]
    internal sealed class DynamicDependencyAttribute : Attribute
    {
        /// <summary>The member <paramref name="memberSignature"/> of <paramref name="type"/> is needed.</summary>
        public DynamicDependencyAttribute(string memberSignature, Type type)
        {
            MemberSignature = memberSignature;
            Type = type;
        }

        /// <summary>The needed member, in the documentation-comment form without its prefix.</summary>
        public string MemberSignature { get; }

        /// <summary>The type that declares it.</summary>
        public Type Type { get; }
    }
}
#endif
