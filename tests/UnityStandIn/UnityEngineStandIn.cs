// The few UnityEngine types the package's samples (src/WhereAllocation/Samples~) use, declared with the shapes
// Unity gives them, so that CI can compile the samples as Unity would (C# 9, netstandard2.1, nullable off) on a
// machine without Unity. Behaviour is not modelled: nothing here runs.
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
}
