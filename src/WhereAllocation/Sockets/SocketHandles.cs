using System;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.InteropServices;

namespace WhereAllocation
{
    /// <summary>
    /// Reaches a socket's <see cref="SafeHandle"/>, so that a native call can hold a reference on it
    /// (a concurrent Dispose then cannot close the descriptor, or let the OS reuse its number, under the call)
    /// and so that a disposed socket is reported as <see cref="ObjectDisposedException"/>.
    /// </summary>
    internal static class SocketHandles
    {
#if NET8_0_OR_GREATER
        internal static bool Available => true;

        internal static SafeHandle Get(Socket socket) => socket.SafeHandle;

        /// <summary>True once the socket has been disposed, even while a native call still holds a reference on its handle.</summary>
        internal static bool IsDisposed(Socket socket, SafeHandle handle) => handle.IsClosed;
#else
        // netstandard2.1 has no Socket.SafeHandle. Mono has an internal property of that name and
        // .NET Core 3+ a public one; an open-instance delegate to its getter costs no allocation per call.
        private static readonly Func<Socket, SafeHandle>? s_getter = CreateGetter();

        internal static bool Available => s_getter != null;

        internal static SafeHandle Get(Socket socket) => s_getter!(socket);

        // Mono's SafeHandle.IsClosed stays false while anyone holds a reference (our native call does), so a
        // blocked receive would never notice Dispose; Mono's internal Socket.CleanedUp turns true at once.
        private static readonly Func<Socket, bool>? s_cleanedUp = CreateCleanedUp();

        /// <summary>True once the socket has been disposed, even while a native call still holds a reference on its handle.</summary>
        internal static bool IsDisposed(Socket socket, SafeHandle handle) => handle.IsClosed || (s_cleanedUp != null && s_cleanedUp(socket));

        private static Func<Socket, bool>? CreateCleanedUp()
        {
            try
            {
                MethodInfo? getter = typeof(Socket).GetProperty("CleanedUp", BindingFlags.Instance | BindingFlags.NonPublic)?.GetGetMethod(true);
                if (getter == null || getter.ReturnType != typeof(bool)) return null;
                return (Func<Socket, bool>)Delegate.CreateDelegate(typeof(Func<Socket, bool>), getter);
            }
            catch (Exception)
            {
                return null;
            }
        }

        private static Func<Socket, SafeHandle>? CreateGetter()
        {
            try
            {
                PropertyInfo? property = typeof(Socket).GetProperty("SafeHandle", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
                MethodInfo? getter = property?.GetGetMethod(true);
                if (getter == null || !typeof(SafeHandle).IsAssignableFrom(getter.ReturnType)) return null;
                return (Func<Socket, SafeHandle>)Delegate.CreateDelegate(typeof(Func<Socket, SafeHandle>), getter);
            }
            catch (Exception)
            {
                // Stripped by a linker, or a runtime without it: the native path is then not offered.
                return null;
            }
        }
#endif
    }
}
