// The few UnityEngine members Mirage's SocketLayer and its managed UDP socket use (and the Mirage sample's factory), so
// that Mirage's own source compiles and runs outside Unity for this benchmark: ILogger and LogType, Debug, Mathf,
// Time.unscaledTimeAsDouble, Application.quitting and platform, MonoBehaviour, and the inspector attributes. Shapes as
// in Unity's scripting reference; behaviour only as far as a headless server needs: logs go to stderr, the time is a
// Stopwatch's, the platform is LinuxPlayer. Not tests/Unity/StandIns/UnityEngine (the package's compile stand-in):
// that one has no ILogger, Time.unscaledTimeAsDouble or Application.quitting, which only Mirage's runtime needs.
using System;
using System.Diagnostics;

namespace UnityEngine
{
    public enum LogType { Error, Assert, Warning, Log, Exception }

    public interface ILogHandler
    {
        void LogFormat(LogType logType, Object context, string format, params object[] args);
        void LogException(Exception exception, Object context);
    }

    public interface ILogger : ILogHandler
    {
        ILogHandler logHandler { get; set; }
        bool logEnabled { get; set; }
        LogType filterLogType { get; set; }
        bool IsLogTypeAllowed(LogType logType);
        void Log(LogType logType, object message);
        void Log(object message);
        void LogWarning(string tag, object message);
        void LogError(string tag, object message);
        void LogException(Exception exception);
    }

    /// <summary>A logger that writes what its filter allows to stderr, and counts what it wrote.</summary>
    public sealed class StandInLogger : ILogger
    {
        public int Written;
        public ILogHandler logHandler { get; set; }
        public bool logEnabled { get; set; } = true;
        public LogType filterLogType { get; set; } = LogType.Warning;

        // Unity's order: Error, Assert, Warning, Log, Exception; a filter lets through its own level and the ones before it.
        public bool IsLogTypeAllowed(LogType logType) => logEnabled && (logType == LogType.Exception || logType <= filterLogType);

        public void Log(LogType logType, object message)
        {
            if (!IsLogTypeAllowed(logType)) return;
            Written++;
            Console.Error.WriteLine("[" + logType + "] " + message);
        }

        public void Log(object message) => Log(LogType.Log, message);
        public void LogWarning(string tag, object message) => Log(LogType.Warning, tag + ": " + message);
        public void LogError(string tag, object message) => Log(LogType.Error, tag + ": " + message);
        public void LogException(Exception exception) => Log(LogType.Exception, exception);
        public void LogFormat(LogType logType, Object context, string format, params object[] args) => Log(logType, string.Format(format, args));
        public void LogException(Exception exception, Object context) => LogException(exception);
    }

    public class Object
    {
    }

    public class Component : Object
    {
    }

    public class Behaviour : Component
    {
        public bool enabled { get; set; } = true;
    }

    public class MonoBehaviour : Behaviour
    {
    }

    public static class Debug
    {
        public static readonly StandInLogger unityLogger = new StandInLogger();
        public static void Log(object message) => unityLogger.Log(LogType.Log, message);
        public static void LogWarning(object message) => unityLogger.Log(LogType.Warning, message);
        public static void LogError(object message) => unityLogger.Log(LogType.Error, message);
        public static void LogException(Exception exception) => unityLogger.LogException(exception);
        public static void Assert(bool condition) { if (!condition) unityLogger.Log(LogType.Assert, "Assertion failed"); }
        public static void Assert(bool condition, object message) { if (!condition) unityLogger.Log(LogType.Assert, message); }
        public static void Assert(bool condition, string message) { if (!condition) unityLogger.Log(LogType.Assert, message); }
    }

    public static class Mathf
    {
        public static int CeilToInt(float f) => (int)Math.Ceiling(f);
    }

    public static class Time
    {
        private static readonly Stopwatch Clock = Stopwatch.StartNew();
        public static double unscaledTimeAsDouble => Clock.Elapsed.TotalSeconds;
    }

    public enum RuntimePlatform { OSXEditor = 0, OSXPlayer = 1, WindowsPlayer = 2, WindowsEditor = 7, IPhonePlayer = 8, Android = 11, LinuxPlayer = 13, LinuxEditor = 16, WebGLPlayer = 17 }

    public static class Application
    {
        public static event Action quitting;
        public static RuntimePlatform platform => RuntimePlatform.LinuxPlayer;
        internal static void Quit() => quitting?.Invoke();
    }

    [AttributeUsage(AttributeTargets.Field, AllowMultiple = true)]
    public sealed class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }

    [AttributeUsage(AttributeTargets.Field, AllowMultiple = true)]
    public sealed class HeaderAttribute : Attribute
    {
        public HeaderAttribute(string header) { }
    }

    [AttributeUsage(AttributeTargets.Class)]
    public sealed class HelpURLAttribute : Attribute
    {
        public HelpURLAttribute(string url) { }
    }
}
