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
#else
        // netstandard2.1 has no Socket.SafeHandle. Mono has an internal property of that name and
        // .NET Core 3+ a public one; an open-instance delegate to its getter costs no allocation per call.
        private static readonly Func<Socket, SafeHandle>? s_getter = CreateGetter();

        internal static bool Available => s_getter != null;

        internal static SafeHandle Get(Socket socket) => s_getter!(socket);

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
