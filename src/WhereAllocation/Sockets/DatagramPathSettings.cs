#nullable enable
using System;
using System.ComponentModel;

namespace WhereAllocation
{
    /// <summary>
    /// Which <see cref="DatagramPath"/> the socket extensions use. By default the fastest path that is
    /// allocation free on this runtime: <see cref="DatagramPath.Native"/> wherever P/Invoke reaches the OS's
    /// socket calls, else <see cref="DatagramPath.SocketAddress"/> on .NET 8+, else <see cref="DatagramPath.Managed"/>.
    /// </summary>
    /// <remarks>
    /// <para>The native path needs the OS's socket calls through P/Invoke and the socket's handle with a reference held on it
    /// (<see cref="HandleAccess"/>). Where either is missing (an OS the library does not know, a Unity WebGL or console
    /// player, a class library without a way to the handle), the native path is not offered (<see cref="NativeUnavailableReason"/>
    /// says why). Where that leaves only the allocating <see cref="DatagramPath.Managed"/> path, the first datagram call
    /// throws <see cref="PlatformNotSupportedException"/>, once, instead of allocating without a word; calling
    /// <c>Force(DatagramPath.Managed)</c> at start accepts the allocation (on Mono about 96 B per IPv4 datagram received,
    /// more under IL2CPP, whose runtime makes a socket address and a byte array per receive).</para>
    /// <para>Log <see cref="Diagnostic"/> once at start-up in a player build: it names the path, the way to the handle and
    /// why the native path is unavailable, if it is.</para>
    /// </remarks>
    public static class DatagramPathSettings
    {
        private static readonly DatagramPath s_default = ChooseDefault();
        // Internal for the compatible receive's per-datagram test: read as a field, it is not a call on Mono.
        internal static DatagramPath s_active = s_default;
        // Set by Force, cleared by Reset: the diagnostic says whether the path was chosen.
        private static bool s_forced;
        // Set while nobody has been told that the native path is unavailable and the calls fell back to the allocating
        // Managed path: the first call on that path reports it.
        private static bool s_reportFallback = s_default == DatagramPath.Managed;

        /// <summary>The path every call takes now.</summary>
        public static DatagramPath Active => s_active;

        /// <summary>The path chosen for this runtime and OS when nothing is forced.</summary>
        public static DatagramPath Default => s_default;

        /// <summary>
        /// How the native path reaches a socket's handle in this process: the socket's SafeHandle property, or (where a
        /// linker removed that, as Unity's managed code stripping can) the field that holds the handle. Both are
        /// allocation free and keep the descriptor open for the length of a call. <see cref="SocketHandleAccess.None"/>
        /// means neither exists: the native path is then unavailable, and the first call that falls back to the
        /// allocating <see cref="DatagramPath.Managed"/> path throws <see cref="PlatformNotSupportedException"/> once.
        /// It can change once, from the property to the field, when the first call finds the property replaced by a
        /// linker's throwing stub.
        /// </summary>
        public static SocketHandleAccess HandleAccess => SocketHandles.Access;

        /// <summary>
        /// Null when <see cref="DatagramPath.Native"/> can run in this process; otherwise why not: the OS's socket calls
        /// are unknown or unreachable (with the exception P/Invoke threw, if it threw), or no way reaches the socket's handle.
        /// </summary>
        public static string? NativeUnavailableReason => NativeDatagramIO.UnavailableReason;

        /// <summary>
        /// One line to log at start-up: the active and default paths, the way to the socket's handle, which OS's calls
        /// were chosen and how (at compile time for a Unity player, or from the runtime), and why the native path is
        /// unavailable if it is. Builds a new string on each read.
        /// </summary>
        public static string Diagnostic
        {
            get
            {
                string? reason = NativeUnavailableReason;
                return "where-allocation: path " + s_active + (s_forced ? " (forced; default " + s_default + ")" : " (default)")
                    + ", handle access " + HandleAccess
                    + ", OS calls " + OsSocketCalls.Current.Name + " (" + OsSocketCalls.ChosenBy + ")"
                    + (reason == null ? ", native available" : ", native unavailable: " + reason);
            }
        }

        /// <summary>True when <paramref name="path"/> can run in this process.</summary>
        public static bool IsAvailable(DatagramPath path)
        {
            switch (path)
            {
                case DatagramPath.Native: return NativeDatagramIO.IsSupported;
#if NET8_0_OR_GREATER
                case DatagramPath.SocketAddress: return true;
#else
                case DatagramPath.SocketAddress: return false;
#endif
                case DatagramPath.Managed: return true;
                default: return false;
            }
        }

        /// <summary>
        /// A test and benchmark hook: makes every later call, on every thread, take <paramref name="path"/>. Hidden from
        /// code completion, since an application has one use for it only: <c>Force(DatagramPath.Managed)</c> once at start,
        /// where the native path is unavailable (<see cref="NativeUnavailableReason"/>), to accept the Managed path's
        /// allocation per received datagram instead of the one-time exception (see the class remarks).
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The path cannot run here (for example <see cref="DatagramPath.SocketAddress"/> on Mono).</exception>
        [EditorBrowsable(EditorBrowsableState.Never)]
        public static void Force(DatagramPath path)
        {
            if (!IsAvailable(path)) throw new PlatformNotSupportedException("The " + path + " datagram path is not available on this runtime or operating system.");
            s_active = path;
            s_forced = true;
            s_reportFallback = false; // an explicit choice: nothing left to report
        }

        /// <summary>
        /// A test and benchmark hook, hidden from code completion: back to the state the process started in. Every later call
        /// takes <see cref="Default"/> again, nothing is forced, and where the default is the allocating Managed path its
        /// one-time report is armed again (the next call throws it once). The package's Editor assembly calls it when Unity
        /// enters Play Mode without reloading the scripting domain, so that each Play Mode starts as a player does
        /// (docs/UNITY.md). What the process found out (the OS's calls, the way to the handle) is kept.
        /// </summary>
        [EditorBrowsable(EditorBrowsableState.Never)]
        public static void Reset()
        {
            s_active = s_default;
            s_forced = false;
            s_reportFallback = s_default == DatagramPath.Managed;
        }

        /// <summary>
        /// Called by the Managed path before each call: throws, once, when the process fell back to it only because no
        /// way reaches the socket's handle and nobody chose a path. One static read per call otherwise.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The first time, when the handle is out of reach.</exception>
        internal static void ReportFallbackOnce()
        {
            if (!s_reportFallback) return;
            s_reportFallback = false;
            throw new PlatformNotSupportedException("where-allocation's native datagram path is unavailable: " + NativeUnavailableReason
                + " Calls now take the Managed path, which allocates per datagram received."
                + " If the runtime's class library was stripped, keep the package's link.xml (its Editor assembly hands it to Unity's linker);"
                + " to accept the allocation, call DatagramPathSettings.Force(DatagramPath.Managed) at start. This exception is thrown once.");
        }

        /// <summary>For tests: the state a process starts in when the native path is unavailable on netstandard2.1 (Managed active, the report armed). <see cref="Reset"/> undoes the path.</summary>
        internal static void StartAsIfHandleMissing()
        {
            s_active = DatagramPath.Managed;
            s_reportFallback = true;
        }

        private static DatagramPath ChooseDefault()
        {
            if (NativeDatagramIO.SupportedAtStart) return DatagramPath.Native;
            if (IsAvailable(DatagramPath.SocketAddress)) return DatagramPath.SocketAddress;
            return DatagramPath.Managed;
        }
    }
}
