using System;
using System.Collections.Generic;
using System.Linq;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// What a hostile user, a busy runtime or Unity does to a receive while it waits (docs/CONTRACT.md, "Hostile
    /// conditions"): one value per condition, one column of that table each. A condition added here is run by
    /// <see cref="HostileConditionTests"/> over every waiting form and path with nothing else to change but its scenario
    /// there (the switch in <c>Scenario</c>), its exclusions (<see cref="Hostile.Exclusion"/>) and its column in the document.
    /// </summary>
    public enum HostileCondition
    {
        /// <summary>Another thread collects every 50 ms while a receive waits with a 300 ms limit: the limit is kept.</summary>
        CollectionStorm,

        /// <summary>The waiting thread is aborted (Mono, Unity): nothing of the wait stays registered, the watchdog parks.</summary>
        ThreadAbort,

        /// <summary>The socket's descriptor has no FD_CLOEXEC (an inherited or dup'ed one, systemd's): Dispose still ends the wait.</summary>
        NoCloseOnExec,

        /// <summary>The Socket is made over a handle that does not own its descriptor: Dispose ends the wait, the owner is untouched.</summary>
        NonOwningHandle,

        /// <summary>DuplicateAndClose, then Dispose, while a receive waits: Dispose ends the wait, nothing crashes, the duplicate is untouched.</summary>
        DuplicateAndClose,

        /// <summary>Unity's domain reload (Mono: AppDomain.Unload) while a receive waits: the unload ends promptly, nothing of the old domain stays.</summary>
        DomainReload,

        /// <summary>A datagram of 0 bytes comes while a receive waits: it ends the wait as a datagram, with its sender (the coalesced batch through its spill).</summary>
        EmptyDatagram,
    }

    /// <summary>The receives that can wait, one row each of docs/CONTRACT.md's "Hostile conditions".</summary>
    public enum WaitingForm
    {
        /// <summary>R1: <c>int ReceiveFrom_NonAlloc(byte[], int, int, SocketFlags, IPEndPointNonAlloc)</c>, its own one-call path.</summary>
        OneCall,

        /// <summary>R4: <c>ReceivedDatagram ReceiveFrom_NonAlloc(Span&lt;byte&gt;, SocketFlags)</c>, the general path.</summary>
        OneCallSpan,

        /// <summary>B2: <c>DatagramBatch.Receive(Socket, timeout)</c> in the batch mode the OS offers first.</summary>
        Batch,

        /// <summary>B2C: the same with <c>CoalescedReceive</c> on (Linux 5.0+).</summary>
        CoalescedBatch,

        /// <summary>A1: <c>AsyncDatagramSocket.ReceiveFromAsync</c>.</summary>
        Await,
    }

    /// <summary>The data of the hostile-conditions dimension, read from the two enums, and where a condition cannot be made.</summary>
    public static class Hostile
    {
        public const string Section = "Hostile conditions";

        public static IReadOnlyList<HostileCondition> EveryCondition { get; } = Enum.GetValues(typeof(HostileCondition)).Cast<HostileCondition>().ToArray();

        public static IReadOnlyList<WaitingForm> EveryForm { get; } = Enum.GetValues(typeof(WaitingForm)).Cast<WaitingForm>().ToArray();

        /// <summary>Every condition × every datagram path.</summary>
        public static TheoryData<HostileCondition, DatagramPath> ConditionsWithPaths
        {
            get
            {
                var data = new TheoryData<HostileCondition, DatagramPath>();
                foreach (HostileCondition c in EveryCondition)
                    foreach (DatagramPath p in Matrix.EveryPath)
                        data.Add(c, p);
                return data;
            }
        }

        /// <summary>The row of docs/CONTRACT.md's "Hostile conditions" for <paramref name="form"/>.</summary>
        public static string Row(WaitingForm form)
        {
            switch (form)
            {
                case WaitingForm.OneCall: return "R1";
                case WaitingForm.OneCallSpan: return "R4";
                case WaitingForm.Batch: return "B2";
                case WaitingForm.CoalescedBatch: return "B2C";
                default: return "A1";
            }
        }

        /// <summary>The column of docs/CONTRACT.md's "Hostile conditions" for <paramref name="condition"/>.</summary>
        public static string Column(HostileCondition condition)
        {
            switch (condition)
            {
                case HostileCondition.CollectionStorm: return "collection storm";
                case HostileCondition.ThreadAbort: return "Thread.Abort";
                case HostileCondition.NoCloseOnExec: return "no FD_CLOEXEC";
                case HostileCondition.NonOwningHandle: return "non-owning handle";
                case HostileCondition.DuplicateAndClose: return "DuplicateAndClose";
                case HostileCondition.EmptyDatagram: return "empty datagram";
                default: return "domain reload";
            }
        }

        /// <summary>
        /// Null when <paramref name="condition"/> can be made for <paramref name="form"/> on <paramref name="path"/> in this
        /// process; else the named reason it cannot, which the test then checks is true (the runtime refuses the call, the OS
        /// has no such flag): an exclusion is asserted, never a silent skip.
        /// </summary>
        public static Exclusion? Exclusion(HostileCondition condition, WaitingForm form, DatagramPath path)
        {
            bool windows = System.Runtime.InteropServices.RuntimeInformation.IsOSPlatform(System.Runtime.InteropServices.OSPlatform.Windows);
            if (form == WaitingForm.CoalescedBatch && !DatagramBatch.IsCoalescedReceiveAvailable) return Tests.Exclusion.NoCoalescedReceive;
            // The coalesced batch reads the socket through recvmmsg whatever the active path: it is run once, on Native.
            if (form == WaitingForm.CoalescedBatch && path != DatagramPath.Native) return Tests.Exclusion.CoalescedIsNativeOnly;
            switch (condition)
            {
                case HostileCondition.ThreadAbort:
                    return Runtime.IsMono ? null : Tests.Exclusion.NoThreadAbort;
                case HostileCondition.NoCloseOnExec:
                    return windows ? Tests.Exclusion.NoCloseOnExecFlag : null;
                case HostileCondition.NonOwningHandle:
                    return Runtime.IsMono ? Tests.Exclusion.NoNonOwningHandle : null;
                case HostileCondition.DuplicateAndClose:
                    return Runtime.IsMono || windows ? null : Tests.Exclusion.NoDuplicateAndClose;
                case HostileCondition.DomainReload:
                    if (!Runtime.IsMono) return Tests.Exclusion.NoSecondDomain;
                    return Runtime.CodeMadeAtRunTimeRefused ? Tests.Exclusion.NoDomainReloadWithoutJit : null;
                default:
                    return null;
            }
        }
    }

    /// <summary>Why a hostile condition cannot be made here (see <see cref="Hostile.Exclusion"/>); each is checked when it is given.</summary>
    public enum Exclusion
    {
        /// <summary>Coalesced receive is refused here (not Linux 5.0+): setting it throws PlatformNotSupportedException.</summary>
        NoCoalescedReceive,

        /// <summary>The coalesced batch does not take the active path (it is recvmmsg): run on Native only.</summary>
        CoalescedIsNativeOnly,

        /// <summary>CoreCLR refuses Thread.Abort (PlatformNotSupportedException).</summary>
        NoThreadAbort,

        /// <summary>Windows has no close-on-exec flag on a socket (handles are inherited only when asked).</summary>
        NoCloseOnExecFlag,

        /// <summary>Mono's SafeSocketHandle is internal, as is the Socket constructor that takes one: no code outside its class library makes a non-owning one.</summary>
        NoNonOwningHandle,

        /// <summary>CoreCLR refuses DuplicateAndClose outside Windows (PlatformNotSupportedException).</summary>
        NoDuplicateAndClose,

        /// <summary>CoreCLR has one application domain (AppDomain.CreateDomain throws PlatformNotSupportedException).</summary>
        NoSecondDomain,

        /// <summary>Without a JIT (full AOT, IL2CPP's stand-in) the suite makes no second domain: IL2CPP players never reload one.</summary>
        NoDomainReloadWithoutJit,
    }
}
