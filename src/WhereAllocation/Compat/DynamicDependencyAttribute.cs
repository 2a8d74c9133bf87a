#nullable enable
#if !NET8_0_OR_GREATER
namespace System.Diagnostics.CodeAnalysis
{
    /// <summary>
    /// netstandard2.1 lacks this attribute, and linkers recognise it by its namespace and name, wherever it is
    /// declared: on a method, it tells them that the named member is needed whenever the method is kept (here:
    /// the socket's SafeHandle getter, which SocketHandles reaches by reflection). Only the forms this library uses.
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

        /// <summary>
        /// The member <paramref name="memberSignature"/> of the type named <paramref name="typeName"/> in the assembly
        /// <paramref name="assemblyName"/> is needed: for a type of an assembly the library does not reference (Unity's).
        /// </summary>
        public DynamicDependencyAttribute(string memberSignature, string typeName, string assemblyName)
        {
            MemberSignature = memberSignature;
            TypeName = typeName;
            AssemblyName = assemblyName;
        }

        /// <summary>The needed member, in the documentation-comment form without its prefix.</summary>
        public string MemberSignature { get; }

        /// <summary>The type that declares it, when given as a type.</summary>
        public Type? Type { get; }

        /// <summary>The type that declares it, when given by name.</summary>
        public string? TypeName { get; }

        /// <summary>The assembly of <see cref="TypeName"/>.</summary>
        public string? AssemblyName { get; }
    }
}
#endif
