#nullable enable
using System;
using System.Diagnostics.CodeAnalysis;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace WhereAllocation
{
    /// <summary>
    /// Reaches a socket's <see cref="SafeHandle"/>, so that a native call can hold a reference on it
    /// (a concurrent Dispose then cannot close the descriptor, or let the OS reuse its number, under the call)
    /// and so that a disposed socket is reported as <see cref="ObjectDisposedException"/>. The way is chosen
    /// once (<see cref="Access"/>): the socket's SafeHandle property, else the field that holds the handle.
    /// </summary>
    /// <remarks>
    /// <para>Why not <see cref="Socket.Handle"/>: it is the bare descriptor, with no reference. A Dispose on another
    /// thread closes it at once, and Linux gives the lowest free number to the next socket or file opened, so a
    /// call still running (or a wait slice, up to 100 ms) could read another socket's datagram or send on it.
    /// That is a use-after-close no check can undo, so a bare descriptor is never used.</para>
    /// <para>Why the field is safe from stripping: the constructor stores the handle in it and every socket method
    /// reads it, so a linker that keeps sockets working keeps the field, while a property nothing calls is removed.
    /// A shipped IL2CPP build of the class library shows exactly that: <c>m_Handle</c> present, the
    /// <c>SafeHandle</c> property gone.</para>
    /// </remarks>
    internal static class SocketHandles
    {
        private static readonly FieldInfo? s_field = FindField();
#if NET8_0_OR_GREATER
        private static readonly SocketHandleAccess s_found = SocketHandleAccess.SafeHandleProperty;
#else
        private static readonly Func<Socket, SafeHandle>? s_property = CreateGetter();
        private static readonly SocketHandleAccess s_found =
            s_property != null ? SocketHandleAccess.SafeHandleProperty : s_field != null ? SocketHandleAccess.SafeHandleField : SocketHandleAccess.None;
#endif
        // Not readonly: a getter a linker replaced by a throwing stub moves the process to the field (once), and tests force a way.
        private static SocketHandleAccess s_access = s_found;

        /// <summary>The way in use.</summary>
        internal static SocketHandleAccess Access => s_access;

        /// <summary>True when some way reaches the handle with a reference (read on each question: tests can force None).</summary>
        internal static bool Available => s_access != SocketHandleAccess.None;

        /// <summary>True when a way was found at start.</summary>
        internal static bool FoundAtStart => s_found != SocketHandleAccess.None;

        /// <summary>
        /// For tests: makes <see cref="Get"/> take <paramref name="access"/> as if it were the only way this runtime
        /// had (<see cref="SocketHandleAccess.None"/>: no way at all); null returns to the way found at start.
        /// </summary>
        /// <exception cref="PlatformNotSupportedException">This runtime lacks <paramref name="access"/>.</exception>
        internal static void Force(SocketHandleAccess? access)
        {
            SocketHandleAccess to = access ?? s_found;
            if (to == SocketHandleAccess.SafeHandleField && s_field == null) throw new PlatformNotSupportedException("This runtime's Socket has no field of a SafeHandle type.");
#if !NET8_0_OR_GREATER
            if (to == SocketHandleAccess.SafeHandleProperty && s_property == null) throw new PlatformNotSupportedException("This runtime's Socket has no SafeHandle property.");
#endif
            s_access = to;
        }

        /// <summary>The socket's handle, for DangerousAddRef (which throws ObjectDisposedException once the socket is disposed).</summary>
        /// <exception cref="ObjectDisposedException">The socket has been disposed and its field was cleared.</exception>
        /// <exception cref="PlatformNotSupportedException">No way reaches the handle (<see cref="Access"/> is None).</exception>
        [MethodImpl(MethodImplOptions.AggressiveInlining)] // one call level less per datagram on Mono
        internal static SafeHandle Get(Socket socket)
        {
            if (s_access == SocketHandleAccess.SafeHandleProperty)
            {
#if NET8_0_OR_GREATER
                return socket.SafeHandle;
#else
                // The hot path is the bare delegate call; only calls before the getter first answered go through the
                // check for a linker's stub, so the try block stays out of the per-datagram path (Mono inlines no method that has one).
                return s_propertyAnswered ? s_property!(socket) : FirstThroughProperty(socket);
#endif
            }
            return FromField(socket);
        }

        /// <summary>
        /// Takes a reference on <paramref name="socket"/>'s handle, for a call that names its descriptor outside a datagram
        /// call and has nothing to do on a disposed socket (the awaits' pollers, the watchdog's wake-up): false when the
        /// handle refuses the reference (its socket is disposed and the last reference went); else <paramref name="held"/>
        /// holds it until its <see cref="HeldHandle.Dispose"/>, at the end of a <c>using (held)</c>. Unlike
        /// <see cref="Hold"/>, it does not ask the Socket whether it was disposed: a socket disposed while others hold its
        /// handle still reaches its descriptor here, as the watchdog needs.
        /// </summary>
        internal static bool TryHold(Socket socket, out HeldHandle held)
        {
            SafeHandle? handle;
            bool added = false;
            try
            {
                handle = Get(socket);
                // Null: Mono's DuplicateAndClose hands the descriptor to the duplicate and leaves the Socket without a handle.
                if (handle == null)
                {
                    held = default;
                    return false;
                }
                handle.DangerousAddRef(ref added);
            }
            catch (ObjectDisposedException)
            {
                held = default;
                return false;
            }
            held = new HeldHandle(handle);
            return true;
        }

        /// <summary>
        /// True when <paramref name="socket"/> has no handle any more: Mono's DuplicateAndClose hands its descriptor to the
        /// duplicate and clears the Socket's field (its Dispose then leaves the descriptor alone). Such a socket is closed for
        /// this process, and every question of the library treats it as disposed. False where no way reaches the handle.
        /// </summary>
        internal static bool IsHandleGone(Socket socket)
        {
#if NET8_0_OR_GREATER
            return false; // .NET's DuplicateAndClose disposes the Socket, whose handle stays
#else
            if (!Available) return false;
            try
            {
                return Get(socket) == null;
            }
            catch (ObjectDisposedException)
            {
                return true; // the field route: the field is empty
            }
#endif
        }

        /// <summary>
        /// Takes a reference on <paramref name="socket"/>'s handle for a call made once per socket or per wait (not per
        /// datagram: the one-call receive and send hold it written out, where each Mono instruction counts), released by
        /// <see cref="HeldHandle.Dispose"/> at the end of a <c>using</c> (a struct in a using statement is not boxed).
        /// </summary>
        /// <exception cref="ObjectDisposedException">The socket has been disposed (on Mono too while another thread waits on it: <see cref="ThrowIfDisposedWhileHeld"/>).</exception>
        internal static HeldHandle Hold(Socket socket)
        {
            // Null: the Socket has no handle any more (Mono's DuplicateAndClose), closed for this process.
            SafeHandle handle = Get(socket) ?? throw new ObjectDisposedException(typeof(Socket).FullName);
            bool added = false;
            try
            {
                ThrowIfDisposedWhileHeld(socket); // before the reference: see there
                handle.DangerousAddRef(ref added); // throws ObjectDisposedException for a disposed socket
                return new HeldHandle(handle);
            }
            catch
            {
                if (added) handle.DangerousRelease();
                throw;
            }
        }

        /// <summary>
        /// True when <paramref name="socket"/>'s handle is known to be closed (its Socket was disposed); false while it is
        /// open, and where no way reaches the handle. Allocates nothing unless the field route finds the field cleared.
        /// </summary>
        internal static bool IsClosed(Socket socket)
        {
            if (!Available) return false;
            try
            {
                return Get(socket).IsClosed;
            }
            catch (ObjectDisposedException)
            {
                return true;
            }
        }

#if !NET8_0_OR_GREATER
        // Set once the getter has returned a handle: it is the real getter, not a stub.
        private static bool s_propertyAnswered;

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static SafeHandle FirstThroughProperty(Socket socket)
        {
            SafeHandle handle;
            try
            {
                handle = s_property!(socket);
            }
            catch (NotSupportedException)
            {
                // A linker that must keep a member it was told to remove leaves a stub that throws this
                // ("Linked away"); the field holds the same handle, so move to it for good.
                if (s_field == null) throw new PlatformNotSupportedException(NoWayMessage);
                s_access = SocketHandleAccess.SafeHandleField;
                return FromField(socket);
            }
            s_propertyAnswered = true;
            return handle;
        }
#endif

        // The field route's cache: the last socket this thread asked for and its handle. Reflection costs about a hundred
        // times a static read on Mono and several internal calls under IL2CPP, and a server asks for the same socket's
        // handle datagram after datagram. Per thread, so that the pair is never torn by another thread's write.
        [ThreadStatic] private static Socket? t_fieldSocket;
        [ThreadStatic] private static SafeHandle? t_fieldHandle;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static SafeHandle FromField(Socket socket)
        {
            // The cached handle is the very object the field holds: Mono's and Unity's class libraries set the field only in
            // the socket's constructors. (.NET's may replace it after a failed connect, but .NET never takes this route
            // outside tests: its SafeHandle property is public and cannot be stripped from under the net8.0 build.) A disposed socket's handle is closed, so DangerousAddRef on it throws ObjectDisposedException as
            // it does on the handle the property returns: the same Dispose safety, without reading the field again.
            if (ReferenceEquals(t_fieldSocket, socket) && s_access == SocketHandleAccess.SafeHandleField) return t_fieldHandle!;
            return ReadField(socket);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static SafeHandle ReadField(Socket socket)
        {
            if (s_access == SocketHandleAccess.None || s_field == null) throw new PlatformNotSupportedException(NoWayMessage);
            // FieldInfo.GetValue of a reference-type field returns the object itself: no boxing, 0 B (measured on
            // Mono 6.8 and CoreCLR by the tests).
            var handle = (SafeHandle?)s_field.GetValue(socket);
            if (handle == null) throw new ObjectDisposedException(typeof(Socket).FullName);
            t_fieldHandle = handle;
            t_fieldSocket = socket;
            return handle;
        }

        /// <summary>
        /// Throws ObjectDisposedException when <paramref name="socket"/> was disposed while another thread waits in the library
        /// on it: Mono's handle accepts new references until the last one held is released, so while such a waiter holds the
        /// handle (see <see cref="EnterWait(ref bool)"/>), a call made after Dispose returned would still reach the socket. Call
        /// it right before DangerousAddRef. On .NET 8+ the handle refuses such references itself: nothing to do. On Mono one
        /// static read per call while no library wait is in progress anywhere in the process (the per-datagram case); else
        /// one call of the Socket's own getter of its disposed flag.
        /// </summary>
        /// <remarks>
        /// Why before the reference, and why a wait's count ends only after its handle is released. A waiter that holds the
        /// handle since before the Dispose is counted for as long as it holds it, so a call made after the Dispose reads a
        /// count above 0 and throws without ever holding the handle; when the waiter releases, no one else holds it and the
        /// handle closes, so every later reference fails. Asked after the reference instead, a call that is about to throw
        /// still held the handle for a moment, and a second call could take a reference through it while the count read 0 (a
        /// waiter that took its datagram and called again): seen on Mono without a JIT, sends after Dispose that went out.
        /// A count that ended before the release (as the kernel wait's once did) left the few instructions up to the release
        /// open the same way (seen on Mono in CI: a batch receive answering 0 instead of ObjectDisposedException).
        /// </remarks>
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        internal static void ThrowIfDisposedWhileHeld(Socket socket)
        {
#if !NET8_0_OR_GREATER
            if (Volatile.Read(ref s_waits) != 0) ThrowIfDisposedFlag(socket);
#endif
        }

        /// <summary>
        /// Counts in a wait of the runtime's own that the library makes (its Poll or receive, which takes the socket's handle
        /// and releases it before it returns), so that <see cref="ThrowIfDisposedWhileHeld"/> asks the Socket meanwhile. Pair
        /// with <see cref="ExitWait"/> after that call. Kept on every runtime (.NET 8+ needs it only for
        /// <see cref="WaitsInProgress"/>): only a call that has to wait pays it, one interlocked add before and one after, never a
        /// call that finds its datagram or room. A wait made while the library itself holds the handle (its native poll slices,
        /// its kernel waits) is counted with <see cref="EnterWait(ref bool)"/> instead, until the handle is released.
        /// </summary>
        internal static void EnterWait()
        {
            Interlocked.Increment(ref s_waits);
        }

        /// <summary>
        /// Counts in a wait made while the caller holds the socket's handle, once per hold: nothing when
        /// <paramref name="counted"/> is already true, else the count and <paramref name="counted"/> set, together (in a
        /// finally clause, which Mono's Thread.Abort does not interrupt). The holder calls <see cref="ExitWait"/> when
        /// <paramref name="counted"/> is true, in its finally clause, after it released the handle: the count must cover the
        /// whole hold (see <see cref="ThrowIfDisposedWhileHeld"/>). Also a full fence when it counts.
        /// </summary>
        internal static void EnterWait(ref bool counted)
        {
            if (counted) return;
            try
            {
            }
            finally
            {
                Interlocked.Increment(ref s_waits);
                counted = true;
            }
        }

        /// <summary>
        /// Whether a receive that waits in the kernel on CoreCLR (WaitPolicy.WaitsInKernel) is counted in by
        /// <see cref="EnterWait()"/> too. (On Mono every kernel wait is counted, with its registration: KernelWaitWatchdog.Enter.) It needs no count for its own sake (CoreCLR's handle refuses new references once
        /// its Socket is disposed), and it cannot know before its call whether it will wait, so counting it would cost every
        /// receive, a queued datagram's too, two interlocked adds on one line shared by every receiving thread. Off by
        /// default; the tests turn it on, so that they can tell such a call is in its wait (<see cref="WaitsInProgress"/>).
        /// </summary>
        internal static bool CountKernelWaits = false; // set by tests only; initialised so Unity, which grants no internals to them, warns of nothing

        /// <summary>Counts a wait of the library out.</summary>
        internal static void ExitWait()
        {
            Interlocked.Decrement(ref s_waits);
        }

        /// <summary>
        /// Ends a hold of <paramref name="handle"/> under which a wait may have been counted in
        /// (<see cref="EnterWait(ref bool)"/>): releases the reference when <paramref name="added"/> (and clears it, so that a
        /// caller's own finally clause does not release it again), then counts the wait out when <paramref name="counted"/>.
        /// In that order, so that the count covers the whole hold (see <see cref="ThrowIfDisposedWhileHeld"/>). Call it in a
        /// finally clause.
        /// </summary>
        [MethodImpl(MethodImplOptions.AggressiveInlining)] // at the end of every native receive that may wait (an await's too)
        internal static void ReleaseThenExitWait(SafeHandle handle, ref bool added, bool counted)
        {
            if (added)
            {
                added = false;
                handle.DangerousRelease();
            }
            if (counted) ExitWait();
        }

        /// <summary>
        /// The library's synchronous calls inside a wait now, in the whole process (counted in by <see cref="EnterWait()"/>). For
        /// the tests: a Dispose "during" a call is made once the call is in its wait, not after a sleep that may be too short.
        /// </summary>
        internal static int WaitsInProgress => Volatile.Read(ref s_waits);

        // Library waits in progress in the process (each holds a socket's handle while it waits).
        private static int s_waits;

#if !NET8_0_OR_GREATER
        // Mono and Unity: Socket.CleanedUp (its Dispose sets it first); CoreCLR, running this build: Socket.Disposed.
        private static readonly Func<Socket, bool>? s_disposed = CreateDisposedGetter();

        [DynamicDependency("get_CleanedUp", typeof(Socket))]
        [DynamicDependency("get_Disposed", typeof(Socket))]
        private static Func<Socket, bool>? CreateDisposedGetter()
        {
            foreach (string name in new[] { "CleanedUp", "Disposed" })
            {
                try
                {
                    MethodInfo? getter = typeof(Socket).GetProperty(name, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public)?.GetGetMethod(true);
                    if (getter != null && getter.ReturnType == typeof(bool))
                        return (Func<Socket, bool>)Delegate.CreateDelegate(typeof(Func<Socket, bool>), getter);
                }
                catch (Exception)
                {
                    // Stripped, or a runtime that refuses: try the next name.
                }
            }
            return null;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowIfDisposedFlag(Socket socket)
        {
            Func<Socket, bool>? disposed = s_disposed;
            if (disposed != null && disposed(socket)) throw new ObjectDisposedException(typeof(Socket).FullName);
        }
#endif

        /// <summary>True when this runtime's Socket tells whether it was disposed while its handle is held (Mono's and Unity's CleanedUp).</summary>
        internal static bool CanReadDisposedFlag =>
#if NET8_0_OR_GREATER
            false; // not needed: the handle itself refuses references once its Socket is disposed
#else
            s_disposed != null;
#endif

        /// <summary>
        /// True once <paramref name="socket"/> was disposed, asked of the Socket's own flag (<see cref="CanReadDisposedFlag"/>),
        /// which Dispose sets first, before the handle is released; false where the flag cannot be read. Allocates nothing.
        /// </summary>
        internal static bool IsDisposedFlagSet(Socket socket)
        {
#if NET8_0_OR_GREATER
            return false;
#else
            Func<Socket, bool>? disposed = s_disposed;
            return disposed != null && disposed(socket);
#endif
        }

        internal const string NoWayMessage =
            "This runtime's Socket has neither a SafeHandle property nor a field holding its SafeHandle, so no way reaches its handle without allocating.";

        /// <summary>The first instance field of <see cref="Socket"/> whose type is a <see cref="SafeHandle"/> (Mono and Unity: m_Handle; .NET: _handle).</summary>
        private static FieldInfo? FindField()
        {
            try
            {
                foreach (FieldInfo field in typeof(Socket).GetFields(BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public))
                {
                    if (typeof(SafeHandle).IsAssignableFrom(field.FieldType)) return field;
                }
            }
            catch (Exception)
            {
                // A runtime that refuses reflection on its own types: no field way.
            }
            return null;
        }

#if !NET8_0_OR_GREATER
        // netstandard2.1 has no Socket.SafeHandle. Mono has an internal property of that name and .NET Core 3+
        // a public one; an open-instance delegate to its getter costs no allocation per call. The name is a
        // constant and the attribute names the getter, so a linker sees the dependency (ILLink keeps the getter
        // for either; Unity's linker is built on it); link.xml in the package says the same for linkers that read only that.
        [DynamicDependency("get_SafeHandle", typeof(Socket))]
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
                // Stripped by a linker, or a runtime without it: the field is tried next.
                return null;
            }
        }
#endif
    }
}
