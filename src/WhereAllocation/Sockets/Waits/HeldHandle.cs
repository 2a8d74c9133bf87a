#nullable enable
using System;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// A reference held on a socket's handle (from <see cref="SocketHandles.Hold"/>), for the length of a <c>using</c>: the
    /// descriptor stays open, and its number the socket's, until <see cref="Dispose"/> releases it. A struct, so holding
    /// allocates nothing (a using statement calls a struct's Dispose without boxing it).
    /// </summary>
    internal readonly struct HeldHandle : IDisposable
    {
        private readonly SafeHandle _handle;

        internal HeldHandle(SafeHandle handle)
        {
            _handle = handle;
        }

        /// <summary>The held handle (the sliced waits ask it whether it closed).</summary>
        internal SafeHandle Handle => _handle;

        /// <summary>The descriptor, valid while the reference is held.</summary>
        internal IntPtr Raw => _handle.DangerousGetHandle();

        /// <summary>Releases the reference.</summary>
        public void Dispose()
        {
            _handle.DangerousRelease();
        }
    }
}
