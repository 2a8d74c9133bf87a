#nullable enable
using UnityEditor;

namespace WhereAllocation.Editor
{
    /// <summary>
    /// Makes each Play Mode start as a player does when Unity enters Play Mode without reloading the scripting domain
    /// ("Enter Play Mode Options" with domain reload off): static state then survives from the last Play Mode, so a path
    /// forced by <c>DatagramPathSettings.Force</c> would stay forced and the one-time report of the allocating fallback, once
    /// thrown, would never come again. <c>DatagramPathSettings.Reset</c> undoes both and keeps what the process found out
    /// (the OS's socket calls, the way to a socket's handle), which a domain reload would find out the same again.
    /// </summary>
    internal static class PlayModeStart
    {
        /// <summary>Called by the Editor on entering Play Mode, with the options in effect.</summary>
        [InitializeOnEnterPlayMode]
        private static void OnEnterPlayMode(EnterPlayModeOptions options)
        {
            if ((options & EnterPlayModeOptions.DisableDomainReload) != 0)
                DatagramPathSettings.Reset();
        }
    }
}
