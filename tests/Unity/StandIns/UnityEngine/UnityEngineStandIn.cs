// A stand-in for UnityEngine.dll, compiled as an assembly of its own named UnityEngine: the few UnityEngine types the
// package's samples (src/WhereAllocation/Samples~) use, and the one the library's NuGet build asks for at run time
// (Application.platform), declared with the shapes of Unity's scripting reference, so that CI compiles each of the
// package's assemblies against it as Unity compiles them (scripts/unity-builds.sh, tests/Unity/Samples) on a machine
// without Unity. In Unity these types live in UnityEngine.CoreModule.dll, which UnityEngine.dll forwards to. Behaviour
// is not modelled, except Application.platform, which answers what a check asks it to (see there).
using System;

namespace UnityEngine
{
    /// <summary>Stand-in for Unity's base class of every object in a scene.</summary>
    public class Object
    {
        /// <summary>Unity's null check for destroyed objects; here plain reference comparison.</summary>
        public static implicit operator bool(Object exists) => !ReferenceEquals(exists, null);
    }

    /// <summary>Stand-in for Unity's Component.</summary>
    public class Component : Object
    {
        /// <summary>Unity returns the component of that type on the same GameObject, or null.</summary>
        public T GetComponent<T>() => default;
    }

    /// <summary>Stand-in for Unity's Behaviour.</summary>
    public class Behaviour : Component
    {
        /// <summary>Whether Unity calls Update on it.</summary>
        public bool enabled { get; set; }
    }

    /// <summary>Stand-in for Unity's MonoBehaviour: Unity calls its Awake, OnEnable, Start, Update, OnDisable and OnDestroy by name.</summary>
    public class MonoBehaviour : Behaviour
    {
    }

    /// <summary>Stand-in for Unity's attribute that shows a private field in the inspector.</summary>
    [AttributeUsage(AttributeTargets.Field)]
    public sealed class SerializeField : Attribute
    {
    }

    /// <summary>Stand-in for Unity's Console logging.</summary>
    public static class Debug
    {
        /// <summary>Writes a message to the Console.</summary>
        public static void Log(object message) { }

        /// <summary>Writes a warning to the Console.</summary>
        public static void LogWarning(object message) { }

        /// <summary>Writes an error to the Console.</summary>
        public static void LogError(object message) { }

        /// <summary>Writes an exception to the Console.</summary>
        public static void LogException(Exception exception) { }
    }

    /// <summary>Stand-in for Unity's frame clock.</summary>
    public static class Time
    {
        /// <summary>Seconds since the start of the game, at the start of this frame.</summary>
        public static float time => 0f;

        /// <summary>Seconds the last frame took.</summary>
        public static float deltaTime => 0f;

        /// <summary>Frames since the start of the game.</summary>
        public static int frameCount => 0;
    }

    /// <summary>Stand-in for Unity's RuntimePlatform: the platform the code runs on. Only the names are Unity's (the library reads the name, never the number).</summary>
    public enum RuntimePlatform
    {
        /// <summary>The Editor on macOS.</summary>
        OSXEditor,
        /// <summary>A macOS player.</summary>
        OSXPlayer,
        /// <summary>A Windows player.</summary>
        WindowsPlayer,
        /// <summary>The Editor on Windows.</summary>
        WindowsEditor,
        /// <summary>An iPhone or iPad player.</summary>
        IPhonePlayer,
        /// <summary>An Android player.</summary>
        Android,
        /// <summary>A Linux player.</summary>
        LinuxPlayer,
        /// <summary>The Editor on Linux.</summary>
        LinuxEditor,
        /// <summary>A WebGL player.</summary>
        WebGLPlayer,
        /// <summary>A PlayStation 5 player.</summary>
        PS5,
        /// <summary>An Apple TV player.</summary>
        tvOS,
        /// <summary>A Linux dedicated server.</summary>
        LinuxServer,
    }

    /// <summary>Stand-in for Unity's Application.</summary>
    public static class Application
    {
        /// <summary>
        /// The platform the game runs on. The stand-in answers the name in the environment variable
        /// WHEREALLOCATION_STANDIN_PLATFORM (scripts/unity-builds.sh sets it), LinuxEditor when it is unset, and throws
        /// for a name RuntimePlatform does not have, as a check's typo must not pass.
        /// </summary>
        public static RuntimePlatform platform
        {
            get
            {
                string name = Environment.GetEnvironmentVariable("WHEREALLOCATION_STANDIN_PLATFORM");
                return string.IsNullOrEmpty(name) ? RuntimePlatform.LinuxEditor : (RuntimePlatform)Enum.Parse(typeof(RuntimePlatform), name);
            }
        }
    }
}
