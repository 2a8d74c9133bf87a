#nullable enable
using System;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using WhereAllocation.Interop;

namespace WhereAllocation
{
    /// <summary>
    /// The socket calls of one operating system that the native path makes, behind one small surface.
    /// Exactly one subclass is chosen, once, when the library first needs it (<see cref="Current"/>):
    /// <see cref="LinuxSocketCalls"/>, <see cref="DarwinSocketCalls"/> or <see cref="WindowsSocketCalls"/>.
    /// Nothing above this surface asks which OS it runs on.
    /// </summary>
    /// <remarks>
    /// <para>Every member works on a raw descriptor (SOCKET on Windows) that the caller holds a reference on,
    /// and reports an error as a <see cref="SocketError"/>: each OS maps its own error numbers. Nothing here
    /// allocates, blocks longer than asked, or throws for an error the OS reports.</para>
    /// <para>Sockaddrs cross this surface as bytes in the OS's own layout (<see cref="Format"/>), in buffers of
    /// <see cref="SockaddrLayout.StorageSize"/> bytes; parsing them is the caller's business.</para>
    /// </remarks>
    internal abstract unsafe partial class OsSocketCalls
    {
        /// <summary>The calls of the OS this process runs on.</summary>
        internal static readonly OsSocketCalls Current = Choose(out s_chosenBy);

        private static readonly string s_chosenBy;

        /// <summary>How <see cref="Current"/> was chosen, for diagnostics: at compile time for a Unity player, or from the runtime's answer.</summary>
        internal static string ChosenBy => s_chosenBy;

        // Declared after Current, which it starts as: static fields start in order.
        private static OsSocketCalls s_inUse = Current;

        /// <summary>
        /// The calls every native call of the library makes (<see cref="Current"/> unless a test put another in between, one
        /// that injects what this OS never reports, counts calls, or pretends to be another OS); null sets <see cref="Current"/>
        /// again. The one seam of the tests: nothing is told when it changes, and whoever derives something from it (the
        /// wait policy, <see cref="WaitPolicy"/>) asks it again when it needs the answer, never caching it.
        /// </summary>
        internal static OsSocketCalls InUse
        {
            get => s_inUse;
            set => s_inUse = value ?? Current;
        }

        // Where Unity compiles the package for one player (outside the Editor, whose defines name the build target, not
        // the OS the Editor runs on), the player's define says which kernel it runs on. That is decided at compile time
        // because IL2CPP's RuntimeInformation knows only Windows, macOS and Linux players and answers "unknown" for
        // Android, the consoles and WebGL. Everywhere else the runtime is asked.
        private static OsSocketCalls Choose(out string chosenBy)
        {
#if !UNITY_EDITOR && (UNITY_IOS || UNITY_TVOS || UNITY_VISIONOS)
            // Apple's mobile systems: the XNU kernel, with macOS's socket constants and sockaddr layout, and the C
            // library linked statically (Interop/Libc.cs).
            chosenBy = "compiled for a Unity iOS, tvOS or visionOS player";
            return new DarwinSocketCalls();
#elif !UNITY_EDITOR && UNITY_ANDROID
            // Android is Linux underneath: the same system calls, constants and sockaddr layout; its C library (bionic)
            // has recvfrom, sendto, poll, recvmmsg, sendmmsg, epoll and sched_setaffinity. What a kernel or Android's
            // policy refuses is reported as each call's own "not available" (SO_MEMINFO before Linux 4.6: -1 counters;
            // a refused affinity: the call's error).
            chosenBy = "compiled for a Unity Android player";
            return new LinuxSocketCalls();
#elif !UNITY_EDITOR && UNITY_STANDALONE_LINUX
            chosenBy = "compiled for a Unity Linux player";
            return new LinuxSocketCalls();
#elif !UNITY_EDITOR && UNITY_STANDALONE_OSX
            chosenBy = "compiled for a Unity macOS player";
            return new DarwinSocketCalls();
#elif !UNITY_EDITOR && UNITY_STANDALONE_WIN
            chosenBy = "compiled for a Unity Windows player";
            return new WindowsSocketCalls();
#elif !UNITY_EDITOR && (UNITY_WEBGL || UNITY_PS4 || UNITY_PS5 || UNITY_SWITCH || UNITY_GAMECORE || UNITY_XBOXONE)
            // No POSIX or Winsock socket calls that P/Invoke can reach: a browser, or a console's closed SDK.
            chosenBy = "compiled for a Unity WebGL or console player";
            return new UnknownOsSocketCalls("Unity's WebGL and console players offer no POSIX or Winsock socket calls that P/Invoke can reach (the library has no binding for a closed SDK).");
#else
            string unityFailure = "";
#if !NET8_0_OR_GREATER && !UNITY_5_3_OR_NEWER
            // Compiled without Unity's defines (the NuGet package's netstandard2.1 build) yet perhaps inside a Unity player:
            // Unity itself names the player, where IL2CPP's runtime would answer "unknown" (UnityPlayerPlatform.cs).
            string[]? unity = UnityPlayerPlatform.Ask(out string? failure);
            if (failure != null) unityFailure = UnityPlatformUnread(failure);
            if (unity != null)
            {
                foreach (string name in unity)
                {
                    OsSocketCalls? forUnity = ForUnityPlayer(name);
                    if (forUnity == null) continue;
                    chosenBy = "from Unity's Application.platform at run time: " + name;
                    return forUnity;
                }
            }
#endif
            chosenBy = "from RuntimeInformation at run time";
            if (RuntimeSays(OSPlatform.Linux)) return new LinuxSocketCalls();
            if (RuntimeSays(OSPlatform.OSX)) return new DarwinSocketCalls();
            if (RuntimeSays(OSPlatform.Windows)) return new WindowsSocketCalls();
            return new UnknownOsSocketCalls("The runtime names none of Linux, macOS and Windows as this operating system"
                + " (IL2CPP answers so for every player but those three), so the library does not know its socket calls." + unityFailure);
#endif
        }

#if !NET8_0_OR_GREATER && !UNITY_5_3_OR_NEWER
        /// <summary>Unity's package for Unity players, named by the refusals below.</summary>
        internal const string UnityPackageAdvice = " Install the Unity package com.where-allocation.core instead of the NuGet package:"
            + " Unity compiles it for each player with the player's define (docs/INSTALL.md, docs/UNITY.md).";

        /// <summary>
        /// What the refusal of an unknown OS adds when Unity's player platform could not be read (<paramref name="failure"/>): the
        /// reason, and that the Unity package, which Unity compiles with the player's define, needs no such question.
        /// </summary>
        internal static string UnityPlatformUnread(string failure) =>
            " Unity's player platform could not be read either (" + failure + ")." + UnityPackageAdvice;

        /// <summary>
        /// The calls for a Unity player named by <paramref name="platform"/> (RuntimePlatform's name), for the build compiled
        /// without Unity's defines; null where the runtime's own answer is right (the Editor and desktop players, whose
        /// runtimes name their OS) or Unity's name is one the library does not know.
        /// </summary>
        internal static OsSocketCalls? ForUnityPlayer(string platform)
        {
            switch (platform)
            {
                case "Android":
                    // Linux underneath, and the C library is loaded by the name "libc" as on Linux (see Choose).
                    return new LinuxSocketCalls();
                case "IPhonePlayer":
                case "tvOS":
                case "VisionOS":
                    // The C library of a statically linked player is reached as "__Internal", a name fixed in the DllImport
                    // attributes when the library is compiled (Interop/Libc.cs); this build names "libc", which such a player
                    // does not load dynamically. Refused, loudly, rather than guessed.
                    return new UnknownOsSocketCalls("Unity names this player " + platform + ", whose C library is linked statically and reached"
                        + " only as \"__Internal\"; this build of the library (the NuGet package, compiled without Unity's defines) binds"
                        + " \"libc\", so its native path cannot run here." + UnityPackageAdvice);
                case "WebGLPlayer":
                case "PS4":
                case "PS5":
                case "Switch":
                case "Switch2":
                case "XboxOne":
                case "GameCoreXboxSeries":
                case "GameCoreScarlett": // GameCoreXboxSeries's own value until Unity renumbered the alias: ToString may give either
                case "GameCoreXboxOne":
                    return new UnknownOsSocketCalls("Unity names this player " + platform + ": Unity's WebGL and console players offer no POSIX"
                        + " or Winsock socket calls that P/Invoke can reach (the library has no binding for a closed SDK).");
                default:
                    return null;
            }
        }
#endif

        private static bool RuntimeSays(OSPlatform platform)
        {
#if WHEREALLOCATION_CHECK_OS_UNKNOWN
            // Only in the checks' builds (scripts/unity-builds.sh): answers as IL2CPP does on Android, consoles and WebGL.
            return false;
#else
            return RuntimeInformation.IsOSPlatform(platform);
#endif
        }

        /// <summary>The OS's name, for diagnostics.</summary>
        internal abstract string Name { get; }

        /// <summary>The layout of the OS's sockaddr_in / sockaddr_in6.</summary>
        internal abstract SockaddrFormat Format { get; }

        /// <summary>
        /// Null when this OS's socket library answers through P/Invoke in this process (one harmless call); otherwise why
        /// not, with the exception the call threw (any exception: IL2CPP's stubs can throw NotSupportedException too).
        /// </summary>
        internal abstract string? Probe();

        /// <summary>The text <see cref="Probe"/> returns for an exception <paramref name="e"/> of its call to <paramref name="library"/>.</summary>
        protected string ProbeFailed(string library, Exception e)
        {
            return "P/Invoke cannot call " + library + " for " + Name + " in this process (" + e.GetType().FullName + ": " + e.Message + ").";
        }

        /// <summary>
        /// Receives one queued datagram without waiting for one. Returns the datagram's length, which is more
        /// than <paramref name="size"/> when it was cut (its real length where the OS tells it, else
        /// <paramref name="size"/> + 1); or -1 with <paramref name="error"/> set, WouldBlock when none was
        /// queued. The sender's sockaddr is written at <paramref name="address"/> and its length replaces
        /// <paramref name="addressLength"/> (which comes in as the buffer's size).
        /// </summary>
        internal abstract long Receive(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error);

        /// <summary>
        /// <see cref="Receive"/> right after a wait of the caller's (<see cref="Poll"/>, or a poller's report) said the socket
        /// was readable: where the OS's receive asks for readiness itself before it receives (Windows: WSAPoll, then the
        /// receive), it need not ask again, so that a receive that waited asks the OS once whether a datagram came. It still
        /// never waits: the datagram the wait saw may be gone (another reader took it), and then it answers WouldBlock.
        /// Elsewhere it is <see cref="Receive"/>.
        /// </summary>
        internal virtual long ReceiveAfterReadiness(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            return Receive(socket, payload, size, peek, address, addressLength, out error);
        }

        /// <summary>
        /// True when <see cref="ReceiveWaiting"/> exists on this OS: a receive without the per-call "do not wait" flag, which
        /// a descriptor in blocking mode ends only when a datagram comes, the socket's own receive timeout (SO_RCVTIMEO)
        /// passes, a signal interrupts it, or the socket is shut down for receiving.
        /// </summary>
        internal virtual bool HasWaitingReceive => false;

        /// <summary>
        /// <see cref="Receive"/> without the per-call "do not wait" flag: on a descriptor in blocking mode it waits in the kernel
        /// until a datagram comes (one system call for a datagram that was not yet queued), and answers WouldBlock when the
        /// socket's receive timeout passed; on a descriptor in non-blocking mode it answers as <see cref="Receive"/> does. A
        /// socket shut down for receiving ends it at once with 0 bytes and no sender.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such receive here (<see cref="HasWaitingReceive"/> is false).</exception>
        internal virtual long ReceiveWaiting(IntPtr socket, byte* payload, int size, bool peek, byte* address, int* addressLength, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + ": the library has no receive that waits in the kernel here.");
        }

        /// <summary>
        /// Wakes every <see cref="ReceiveWaiting"/> blocked on the socket by shutting it down for receiving: each ends with 0
        /// bytes and no sender, and so does every receive after it. Only for a socket that was disposed (the library's wake-up
        /// of its own kernel waits where the runtime's Dispose wakes none: <see cref="KernelWaitWatchdog"/>); the caller holds
        /// a reference on the socket's handle, so the descriptor is still the socket's own.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such receive here (<see cref="HasWaitingReceive"/> is false).</exception>
        internal virtual void WakeWaitingReceives(IntPtr socket)
        {
            throw new PlatformNotSupportedException(Name + ": the library has no receive that waits in the kernel here.");
        }

        /// <summary>
        /// Sends one datagram to the sockaddr at <paramref name="address"/>. Where the OS has a per-call flag
        /// for it (Linux, macOS) the call never waits for room in the send buffer and says WouldBlock instead;
        /// on Windows it follows the socket's own blocking mode. Returns the bytes sent, or -1 with <paramref name="error"/>.
        /// </summary>
        internal abstract long Send(IntPtr socket, byte* payload, int size, bool dontRoute, byte* address, int addressLength, out SocketError error);

        /// <summary>
        /// Waits up to <paramref name="timeoutMilliseconds"/> (0: not at all, -1: no limit) until the socket is
        /// readable (or writable when <paramref name="forWrite"/>), or reports an error or a hang-up. Returns 1
        /// when ready or when an error is pending (the next call reports it), 0 when the time passed, -1 with
        /// <paramref name="error"/> when the wait itself failed. <paramref name="hungUp"/>: the socket was shut down or closed.
        /// </summary>
        internal abstract int Poll(IntPtr socket, bool forWrite, int timeoutMilliseconds, out bool hungUp, out SocketError error);

        /// <summary>
        /// Without waiting: true when something is queued to read; else <paramref name="pending"/> is the error the socket is
        /// flagged with (SO_ERROR, read and so cleared here, as a receive would), Success when none. Apart where the OS tells
        /// them apart (Linux, macOS: POLLIN and POLLERR); elsewhere one "ready" answer and no error.
        /// </summary>
        internal virtual bool HasInput(IntPtr socket, out SocketError pending)
        {
            pending = SocketError.Success;
            return Poll(socket, false, 0, out _, out _) > 0;
        }

        /// <summary>
        /// True when the socket was shut down for receiving, asked after a receive found nothing queued: on Linux a
        /// non-waiting <c>recvfrom</c> then says only "nothing queued" while <c>poll</c> keeps saying "readable". False where
        /// the OS's receive reports the shutdown itself (Windows: WSAESHUTDOWN; macOS: 0 bytes without a sender).
        /// </summary>
        internal virtual bool IsReceiveShutDown(IntPtr socket) => false;

        /// <summary>
        /// True when the descriptor has its close-on-exec flag (FD_CLOEXEC), or the flag cannot be read: CoreCLR's Dispose
        /// shuts a socket down to wake the calls that hold it only then (one that lacks the flag "may be shared with other
        /// processes"). True where the OS has no such flag. One system call on Linux and macOS.
        /// </summary>
        internal virtual bool IsCloseOnExec(IntPtr socket) => true;

        /// <summary>The socket's receive timeout (SO_RCVTIMEO) in milliseconds, 0 for none. Read natively: the runtime's getter boxes.</summary>
        internal abstract int ReceiveTimeoutMilliseconds(IntPtr socket);

        /// <summary>True when an IPv6 socket accepts IPv4 peers (IPV6_V6ONLY is 0). One system call.</summary>
        internal abstract bool IsDualMode(IntPtr socket);

        // ----- what a server sets once, and asks now and then -----

        /// <summary>Turns SO_REUSEADDR off, so that no other socket can be given this socket's port by sharing it.</summary>
        internal abstract SocketError DisableAddressSharing(IntPtr socket);

        /// <summary>
        /// Stops the OS from reporting, on later receives, that an earlier send met a closed port (Windows'
        /// SIO_UDP_CONNRESET and SIO_UDP_NETRESET). Success where the OS has no such reports.
        /// </summary>
        internal virtual SocketError DisableResetReports(IntPtr socket) => SocketError.Success;

        /// <summary>True when a send to a closed port leaves a report for the next receive on an unconnected socket (Windows).</summary>
        internal virtual bool HasResetReports => false;

        /// <summary>True when the socket has a peer (getpeername succeeds).</summary>
        internal abstract bool IsConnected(IntPtr socket);

        /// <summary>
        /// True when a receive's <paramref name="error"/> only reports that an earlier send met a closed port (or a TTL
        /// expiry), on an OS that reports that to unconnected sockets (Windows: WSAECONNRESET, WSAENETRESET). Such a
        /// report is no fault of the socket: the receive consumes it and goes on. Asked only after a receive failed.
        /// </summary>
        internal bool IsResetReportToSkip(IntPtr socket, SocketError error)
        {
            return HasResetReports && (error == SocketError.ConnectionReset || error == SocketError.NetworkReset) && !IsConnected(socket);
        }

        /// <summary>The receive (or send) buffer the OS gives the socket, in bytes as it reports them; -1 when it cannot be read.</summary>
        internal abstract int BufferSize(IntPtr socket, bool receive);

        /// <summary>
        /// Datagrams the OS dropped for this socket since it was created (its receive queue was full), and the bytes
        /// queued now; -1 each where the OS does not count them per socket.
        /// </summary>
        internal virtual void QueueCounters(IntPtr socket, out long dropped, out int queuedBytes)
        {
            dropped = -1;
            queuedBytes = -1;
        }

        // ----- many datagrams per call: only where the OS has such calls -----

        /// <summary>True when <see cref="ReceiveMany"/> and <see cref="SendMany"/> work in this process.</summary>
        internal virtual bool HasMultiMessage => false;

        /// <summary>One non-blocking receive of up to <paramref name="count"/> datagrams into Linux mmsghdrs. Returns how many, or -1 with <paramref name="error"/> (WouldBlock when none was queued).</summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call (<see cref="HasMultiMessage"/> is false).</exception>
        internal virtual int ReceiveMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + " has no call that receives many datagrams at once.");
        }

        /// <summary>
        /// <see cref="ReceiveMany"/> that waits in the kernel for the first datagram on a descriptor in blocking mode, then takes
        /// the ones queued with it without waiting (MSG_WAITFORONE). WouldBlock when the socket's own receive timeout passed or
        /// the descriptor is in non-blocking mode. A socket shut down for receiving ends it at once with one entry of 0 bytes
        /// and no sender, which the caller must not take for a datagram.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call (<see cref="HasMultiMessage"/> or <see cref="HasWaitingReceive"/> is false).</exception>
        internal virtual int ReceiveManyWaiting(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + " has no call that waits for many datagrams at once.");
        }

        /// <summary>One send of up to <paramref name="count"/> datagrams from Linux mmsghdrs, never waiting for room. Returns how many went, or -1 with <paramref name="error"/>.</summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call (<see cref="HasMultiMessage"/> is false).</exception>
        internal virtual int SendMany(IntPtr socket, Libc.LinuxMMsgHdr* messages, int count, out SocketError error)
        {
            throw new PlatformNotSupportedException(Name + " has no call that sends many datagrams at once.");
        }

        // ----- one port over many sockets, and the threads that serve them (DatagramShardGroup) -----

        /// <summary>
        /// Null when <see cref="JoinBalancedGroup"/> works on this OS; otherwise why not, the text of the
        /// PlatformNotSupportedException that DatagramShardGroup throws before any system call.
        /// </summary>
        internal virtual string? BalancedGroupUnsupported => Name + " has no socket option that spreads one port's datagrams over several sockets by sender.";

        /// <summary>
        /// Lets an unbound socket join a group of sockets bound to one address and port, among which the OS spreads
        /// the datagrams by sender (Linux: SO_REUSEPORT). Call it before bind, on every member.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such group (<see cref="BalancedGroupUnsupported"/> is not null).</exception>
        internal virtual SocketError JoinBalancedGroup(IntPtr socket)
        {
            throw new PlatformNotSupportedException(BalancedGroupUnsupported);
        }

        /// <summary>Null when <see cref="PinCurrentThread"/> works on this OS; otherwise why not.</summary>
        internal virtual string? ThreadPinningUnsupported => Name + ": the library has no call that pins a thread to a CPU here.";

        /// <summary>
        /// Lets the calling thread run only on CPU <paramref name="cpu"/> (0..1023). InvalidArgument when the OS
        /// refuses that CPU (offline, or outside the CPUs this process may use).
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">The OS has no such call (<see cref="ThreadPinningUnsupported"/> is not null).</exception>
        internal virtual SocketError PinCurrentThread(int cpu)
        {
            throw new PlatformNotSupportedException(ThreadPinningUnsupported);
        }

        // ----- waiting for many sockets at once: the awaitable receive and send -----

        /// <summary>This OS's readiness mechanism for the awaits' native path (<see cref="ReadinessPoller"/>), not yet opened; null where the library knows none.</summary>
        internal virtual ReadinessPoller? CreatePoller() => null;

        /// <summary>
        /// True when <see cref="Send"/> never waits for room in the send buffer, whatever the socket's blocking mode (a
        /// per-call flag: Linux, macOS). False where it follows the socket's mode (Windows): a send that must not wait
        /// then asks <see cref="Poll"/> for room first.
        /// </summary>
        internal virtual bool SendNeverWaits => true;

        // ----- facts about the runtime's own socket calls on this OS, for the SocketAddress and Managed paths -----

        /// <summary>
        /// True when MSG_TRUNC, given to a receive, makes it return a cut datagram's real length (Linux). CoreCLR passes
        /// <see cref="SocketFlags.Truncated"/> through to the OS as that flag; Mono refuses it (OperationNotSupported).
        /// </summary>
        internal virtual bool TruncatedFlagGivesLength => false;

        /// <summary>
        /// True when FIONREAD (<see cref="Socket.Available"/>) on a datagram socket gives the size of the next datagram
        /// (Linux); elsewhere it gives all the bytes queued (Windows, macOS), which says nothing about one datagram.
        /// </summary>
        internal virtual bool AvailableIsNextDatagramSize => false;
    }
}
