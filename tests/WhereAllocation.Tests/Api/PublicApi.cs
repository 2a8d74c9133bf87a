using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Text;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Lists the public surface of an assembly, one sorted line per type and per public or protected
    /// member, in a form that reads the same on CoreCLR and Mono (own type-name formatting, not
    /// Type.ToString, whose output differs between the runtimes for generics and by-ref types).
    /// </summary>
    public static class PublicApi
    {
        private const BindingFlags Declared =
            BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

        public static string Describe(Assembly assembly)
        {
            var lines = new List<string>();
            foreach (Type type in assembly.GetTypes())
            {
                if (!IsVisible(type)) continue;
                string owner = TypeName(type, true);
                lines.Add(owner + " " + TypeHeader(type));
                foreach (MemberInfo member in type.GetMembers(Declared))
                {
                    string? line = Member(type, member);
                    if (line != null) lines.Add(owner + " :: " + line);
                }
            }
            lines.Sort(StringComparer.Ordinal);
            var text = new StringBuilder();
            foreach (string line in lines) text.Append(line).Append('\n');
            return text.ToString();
        }

        private static bool IsVisible(Type type)
        {
            if (type.IsNested)
            {
                bool nestedVisible = type.IsNestedPublic || type.IsNestedFamily || type.IsNestedFamORAssem;
                return nestedVisible && IsVisible(type.DeclaringType!);
            }
            return type.IsPublic;
        }

        private static string TypeHeader(Type type)
        {
            var parts = new List<string>();
            if (type.IsEnum)
            {
                parts.Add("enum : " + TypeName(Enum.GetUnderlyingType(type), false));
                return string.Join(" ", parts);
            }
            if (typeof(Delegate).IsAssignableFrom(type.BaseType))
            {
                MethodInfo invoke = type.GetMethod("Invoke")!;
                return "delegate " + TypeName(invoke.ReturnType, false) + Parameters(invoke);
            }
            if (type.IsInterface) parts.Add("interface");
            else if (type.IsValueType)
            {
                if (HasAttribute(type, "System.Runtime.CompilerServices.IsReadOnlyAttribute")) parts.Add("readonly");
                if (HasAttribute(type, "System.Runtime.CompilerServices.IsByRefLikeAttribute")) parts.Add("ref");
                parts.Add("struct");
            }
            else
            {
                if (type.IsAbstract && type.IsSealed) parts.Add("static");
                else if (type.IsAbstract) parts.Add("abstract");
                else if (type.IsSealed) parts.Add("sealed");
                parts.Add("class");
            }
            parts.Add(GenericConstraints(type.GetGenericArguments()));
            var bases = new List<string>();
            if (type.BaseType != null && type.BaseType != typeof(object) && type.BaseType != typeof(ValueType))
                bases.Add(TypeName(type.BaseType, false));
            bases.AddRange(type.GetInterfaces().Where(i => IsVisible(i) || i.Namespace!.StartsWith("System", StringComparison.Ordinal))
                .Select(i => TypeName(i, false)).OrderBy(n => n, StringComparer.Ordinal));
            if (bases.Count > 0) parts.Add(": " + string.Join(", ", bases));
            if (HasAttribute(type, "System.ObsoleteAttribute")) parts.Add("[Obsolete]");
            return string.Join(" ", parts.Where(p => p.Length > 0));
        }

        private static string? Member(Type type, MemberInfo member)
        {
            switch (member)
            {
                case ConstructorInfo constructor:
                    if (!IsVisible(constructor)) return null;
                    return Access(constructor) + (constructor.IsStatic ? "static " : "") + "ctor" + Parameters(constructor) + Obsolete(constructor);
                case MethodInfo method:
                    if (!IsVisible(method)) return null;
                    // Property and event accessors are listed with their property or event; operators stay.
                    if (method.IsSpecialName && !method.Name.StartsWith("op_", StringComparison.Ordinal)) return null;
                    return Access(method) + Modifiers(method) + "method " + ReturnType(method) + " " + method.Name
                        + GenericArguments(method) + Parameters(method) + Obsolete(method);
                case PropertyInfo property:
                    {
                        MethodInfo? get = property.GetGetMethod(true), set = property.GetSetMethod(true);
                        bool getVisible = get != null && IsVisible(get), setVisible = set != null && IsVisible(set);
                        if (!getVisible && !setVisible) return null;
                        MethodInfo first = getVisible ? get! : set!;
                        var accessors = new StringBuilder(" {");
                        if (getVisible) accessors.Append(' ').Append(AccessorAccess(first, get!)).Append("get;");
                        if (setVisible) accessors.Append(' ').Append(AccessorAccess(first, set!)).Append(IsInitOnly(set!) ? "init;" : "set;");
                        accessors.Append(" }");
                        ParameterInfo[] index = property.GetIndexParameters();
                        string indexer = index.Length == 0 ? "" : "[" + string.Join(", ", index.Select(Parameter)) + "]";
                        string refKind = property.PropertyType.IsByRef ? (HasReadOnlyReturn(get) ? "ref readonly " : "ref ") : "";
                        return Access(first) + Modifiers(first) + "property " + refKind + TypeName(property.PropertyType, false) + " "
                            + property.Name + indexer + accessors + Obsolete(property);
                    }
                case FieldInfo field:
                    {
                        if (!(field.IsPublic || field.IsFamily || field.IsFamilyOrAssembly)) return null;
                        if (type.IsEnum)
                        {
                            if (field.IsSpecialName) return null; // value__
                            object raw = field.GetRawConstantValue()!;
                            return "value " + field.Name + " = " + Convert.ToString(raw, CultureInfo.InvariantCulture);
                        }
                        string kind = field.IsLiteral ? "const " : (field.IsStatic ? "static " : "") + (field.IsInitOnly ? "readonly " : "");
                        string value = field.IsLiteral ? " = " + Literal(field.GetRawConstantValue()) : "";
                        return (field.IsPublic ? "public " : "protected ") + kind + "field " + TypeName(field.FieldType, false) + " " + field.Name + value + Obsolete(field);
                    }
                case EventInfo evt:
                    {
                        MethodInfo? add = evt.GetAddMethod(true);
                        if (add == null || !IsVisible(add)) return null;
                        return Access(add) + Modifiers(add) + "event " + TypeName(evt.EventHandlerType!, false) + " " + evt.Name + Obsolete(evt);
                    }
                default: // nested types are listed as types of their own
                    return null;
            }
        }

        private static bool IsVisible(MethodBase method) => method.IsPublic || method.IsFamily || method.IsFamilyOrAssembly;

        private static string Access(MethodBase method) => method.IsPublic ? "public " : "protected ";

        private static string AccessorAccess(MethodBase property, MethodBase accessor) =>
            Access(property) == Access(accessor) ? "" : Access(accessor);

        private static string Modifiers(MethodInfo method)
        {
            if (method.IsStatic) return "static ";
            if (method.IsAbstract) return "abstract ";
            if (!method.IsVirtual || (method.IsFinal && method.GetBaseDefinition() == method)) return ""; // interface implementations are final virtual
            bool overrides = method.GetBaseDefinition().DeclaringType != method.DeclaringType;
            if (overrides) return method.IsFinal ? "sealed override " : "override ";
            return "virtual ";
        }

        private static string ReturnType(MethodInfo method)
        {
            Type returnType = method.ReturnType;
            if (!returnType.IsByRef) return TypeName(returnType, false);
            return (HasReadOnlyReturn(method) ? "ref readonly " : "ref ") + TypeName(returnType.GetElementType()!, false);
        }

        private static bool HasReadOnlyReturn(MethodInfo? method) =>
            method != null && method.ReturnParameter.GetCustomAttributesData()
                .Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.IsReadOnlyAttribute");

        private static bool IsInitOnly(MethodInfo setter) =>
            setter.ReturnParameter.GetRequiredCustomModifiers().Any(m => m.FullName == "System.Runtime.CompilerServices.IsExternalInit");

        private static string GenericArguments(MethodInfo method)
        {
            if (!method.IsGenericMethodDefinition) return "";
            Type[] arguments = method.GetGenericArguments();
            string constraints = GenericConstraints(arguments);
            return "<" + string.Join(", ", arguments.Select(a => a.Name)) + ">" + (constraints.Length == 0 ? "" : "[" + constraints + "]");
        }

        private static string GenericConstraints(Type[] arguments)
        {
            var all = new List<string>();
            foreach (Type argument in arguments)
            {
                if (!argument.IsGenericParameter) continue;
                var these = new List<string>();
                GenericParameterAttributes flags = argument.GenericParameterAttributes;
                bool unmanaged = HasAttribute(argument, "System.Runtime.CompilerServices.IsUnmanagedAttribute");
                if (unmanaged) these.Add("unmanaged");
                else if ((flags & GenericParameterAttributes.NotNullableValueTypeConstraint) != 0) these.Add("struct");
                else if ((flags & GenericParameterAttributes.ReferenceTypeConstraint) != 0) these.Add("class");
                these.AddRange(argument.GetGenericParameterConstraints()
                    .Where(c => c != typeof(ValueType))
                    .Select(c => TypeName(c, false)).OrderBy(n => n, StringComparer.Ordinal));
                if ((flags & GenericParameterAttributes.DefaultConstructorConstraint) != 0 && (flags & GenericParameterAttributes.NotNullableValueTypeConstraint) == 0)
                    these.Add("new()");
                if (these.Count > 0) all.Add("where " + argument.Name + " : " + string.Join(", ", these));
            }
            return string.Join(" ", all);
        }

        private static string Parameters(MethodBase method) =>
            "(" + string.Join(", ", method.GetParameters().Select(Parameter)) + ")";

        private static string Parameter(ParameterInfo parameter)
        {
            var text = new StringBuilder();
            if (parameter.Position == 0 && HasAttribute(parameter.Member, "System.Runtime.CompilerServices.ExtensionAttribute")) text.Append("this ");
            Type type = parameter.ParameterType;
            if (type.IsByRef)
            {
                if (parameter.IsOut) text.Append("out ");
                else if (parameter.GetCustomAttributesData().Any(a => a.AttributeType.FullName == "System.Runtime.CompilerServices.IsReadOnlyAttribute")) text.Append("in ");
                else text.Append("ref ");
                type = type.GetElementType()!;
            }
            if (parameter.GetCustomAttributesData().Any(a => a.AttributeType.FullName == "System.ParamArrayAttribute")) text.Append("params ");
            text.Append(TypeName(type, false)).Append(' ').Append(parameter.Name);
            if (parameter.IsOptional) text.Append(" = ").Append(Literal(parameter.RawDefaultValue));
            return text.ToString();
        }

        private static string Literal(object? value)
        {
            switch (value)
            {
                case null: return "null";
                case DBNull _: return "default";
                case Missing _: return "default";
                case string s: return "\"" + s + "\"";
                case char c: return "'" + c + "'";
                case bool b: return b ? "true" : "false";
                case IFormattable f: return f.ToString(null, CultureInfo.InvariantCulture);
                default: return value.ToString() ?? "";
            }
        }

        private static string Obsolete(MemberInfo member) =>
            HasAttribute(member, "System.ObsoleteAttribute") ? " [Obsolete]" : "";

        private static bool HasAttribute(MemberInfo member, string fullName) =>
            member.GetCustomAttributesData().Any(a => a.AttributeType.FullName == fullName);

        /// <summary>A C#-like name: namespace-qualified, nested types joined by '.', generic arguments in angle brackets.</summary>
        public static string TypeName(Type type, bool definition)
        {
            if (type.IsGenericParameter) return type.Name;
            if (type.IsByRef) return TypeName(type.GetElementType()!, definition) + "&";
            if (type.IsPointer) return TypeName(type.GetElementType()!, definition) + "*";
            if (type.IsArray)
            {
                int rank = type.GetArrayRank();
                return TypeName(type.GetElementType()!, definition) + "[" + new string(',', rank - 1) + "]";
            }
            Type[] arguments = type.GetGenericArguments();
            return QualifiedName(type, arguments, out _);
        }

        // Builds "Outer<A>.Inner<B>": a nested generic type carries its parents' arguments first.
        private static string QualifiedName(Type type, Type[] all, out int consumed)
        {
            string prefix;
            int taken;
            if (type.IsNested)
            {
                prefix = QualifiedName(type.DeclaringType!, all, out taken) + ".";
            }
            else
            {
                prefix = string.IsNullOrEmpty(type.Namespace) ? "" : type.Namespace + ".";
                taken = 0;
            }
            string name = type.Name;
            int tick = name.IndexOf('`');
            int own = 0;
            if (tick >= 0)
            {
                own = int.Parse(name.Substring(tick + 1), CultureInfo.InvariantCulture);
                name = name.Substring(0, tick);
            }
            if (own > 0)
            {
                IEnumerable<Type> mine = all.Skip(taken).Take(own);
                name += "<" + string.Join(", ", mine.Select(a => TypeName(a, false))) + ">";
            }
            consumed = taken + own;
            return prefix + name;
        }
    }
}
