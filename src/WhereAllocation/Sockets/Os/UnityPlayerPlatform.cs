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
    /// runs it ahead of time. Outside Unity the type is missing and the answer is null. Any exception (the property
    /// stripped by Unity's linker, a call Unity refuses off the main thread) becomes the reason <see cref="Ask"/> returns
    /// through its out parameter, never a crash.</para>
    /// <para>The answer is the enum value's name (<c>Android</c>, <c>IPhonePlayer</c>, …), compared as text: the names are
    /// Unity's documented API, the numbers are not compared.</para>
    /// </remarks>
    internal static class UnityPlayerPlatform
    {
        /// <summary>The name of Unity's <c>Application.platform</c>, or null outside Unity or when it could not be read (then <paramref name="failure"/> says why).</summary>
        internal static string? Ask(out string? failure)
        {
            failure = null;
            try
            {
                Type? application = Type.GetType("UnityEngine.Application, UnityEngine.CoreModule", false)
                    ?? Type.GetType("UnityEngine.Application, UnityEngine", false);
                if (application == null) return null;
                PropertyInfo? platform = application.GetProperty("platform", BindingFlags.Public | BindingFlags.Static);
                object? value = platform?.GetValue(null);
                if (value == null) failure = "UnityEngine.Application has no readable static property platform (stripped?)";
                return value?.ToString();
            }
            catch (Exception e)
            {
                failure = "reading UnityEngine.Application.platform threw " + e.GetType().FullName + ": " + e.Message;
                return null;
            }
        }
    }
}
#endif
