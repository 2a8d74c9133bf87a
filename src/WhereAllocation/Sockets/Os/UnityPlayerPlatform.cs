#nullable enable
#if !NET8_0_OR_GREATER && !UNITY_5_3_OR_NEWER
using System;
using System.Reflection;

namespace WhereAllocation
{
    /// <summary>
    /// The player platform Unity names, asked once at run time by the build that was compiled without Unity's defines: the
    /// NuGet package's netstandard2.1 assembly, which a Unity project can install (NuGetForUnity and other importers). The
    /// Unity package never needs it: Unity compiles that from source with the target's define (OsSocketCalls.Choose), so
    /// this file is empty there, and in the net8.0 build, which Unity never loads.
    /// </summary>
    /// <remarks>
    /// <para>The library references no Unity assembly. It looks for <c>UnityEngine.Application</c> by name (in
    /// UnityEngine.CoreModule, where Unity 2017.2 and later keep it, then in UnityEngine) and reads its static
    /// <c>platform</c> property through reflection, once: no generic instantiation, no code made at run time, so IL2CPP
    /// runs it ahead of time. Outside Unity the type is missing and the answer is null. Any exception (a call Unity refuses
    /// off the main thread) becomes the reason <see cref="Ask"/> returns through its out parameter, never a crash.</para>
    /// <para>Unity's linker could strip the getter in a player, and nothing of Unity's keeps it for a DLL it did not
    /// compile (link.xml files are read under Assets/ only): the attribute on <see cref="Ask"/> names it, which linkers built
    /// on ILLink (Unity's is) honour for whatever assembly carries it. Stripped all the same, the answer is null with the
    /// reason, which the OS choice reports with the advice to install the Unity package (OsSocketCalls.Choose).</para>
    /// <para>The answer is every name Unity's enum gives the value (<c>Android</c>, <c>IPhonePlayer</c>, …), compared as
    /// text: the names are Unity's documented API, the numbers are not compared. Every name, because the enum has aliases
    /// (<c>GameCoreScarlett</c> was <c>GameCoreXboxSeries</c>'s value until Unity renumbered it, <c>MetroPlayerX64</c> is
    /// <c>WSAPlayerX64</c>'s), and the runtime's <c>ToString</c> picks one of them, not always the current one.</para>
    /// </remarks>
    internal static class UnityPlayerPlatform
    {
        /// <summary>
        /// The names of Unity's <c>Application.platform</c> value (one, or its aliases too), or null outside Unity or when it
        /// could not be read (then <paramref name="failure"/> says why).
        /// </summary>
        [System.Diagnostics.CodeAnalysis.DynamicDependency("get_platform", "UnityEngine.Application", "UnityEngine.CoreModule")]
        internal static string[]? Ask(out string? failure)
        {
            failure = null;
            try
            {
                Type? application = Type.GetType("UnityEngine.Application, UnityEngine.CoreModule", false)
                    ?? Type.GetType("UnityEngine.Application, UnityEngine", false);
                if (application == null) return null;
                PropertyInfo? platform = application.GetProperty("platform", BindingFlags.Public | BindingFlags.Static);
                object? value = platform?.GetValue(null);
                if (value == null)
                {
                    failure = "UnityEngine.Application has no readable static property platform (stripped?)";
                    return null;
                }
                return NamesOf(value);
            }
            catch (Exception e)
            {
                failure = "reading UnityEngine.Application.platform threw " + e.GetType().FullName + ": " + e.Message;
                return null;
            }
        }

        /// <summary>Every name <paramref name="value"/>'s enum gives its number (its ToString alone when it is no enum).</summary>
        internal static string[] NamesOf(object value)
        {
            Type type = value.GetType();
            if (!type.IsEnum) return new[] { value.ToString() ?? "" };
            string[] names = Enum.GetNames(type);
            Array values = Enum.GetValues(type);
            long number = Convert.ToInt64(value, System.Globalization.CultureInfo.InvariantCulture);
            int count = 0;
            var matching = new string[names.Length];
            for (int i = 0; i < names.Length; i++)
            {
                if (Convert.ToInt64(values.GetValue(i), System.Globalization.CultureInfo.InvariantCulture) == number) matching[count++] = names[i];
            }
            if (count == 0) return new[] { value.ToString() ?? "" };
            Array.Resize(ref matching, count);
            return matching;
        }
    }
}
#endif
