using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Sockets;
using System.Reflection;
using System.Runtime.InteropServices;
using Xunit;

namespace WhereAllocation.Tests
{
    /// <summary>
    /// Linux's and macOS's error numbers as the SocketError the library reports: one table per OS, written out here (number,
    /// name, answer), checked against the library's maps on any OS (no call is made), and on CoreCLR against the runtime's own
    /// map (System.Net.Sockets' SocketErrorPal, reached by reflection: the names are the runtime's Interop.Error names, and on
    /// Linux the numbers are checked too, through the runtime's own errno conversion). The library differs from the runtime
    /// on purpose in two places, listed in <see cref="Deliberate"/>, and answers where the runtime has none (SocketError.SocketError).
    /// </summary>
    public class ErrnoMapTests
    {
        /// <summary>Every errno a datagram call can meet on Linux (x86-64, arm64), and what the library reports for it.</summary>
        public static readonly (int Number, string Name, SocketError Error)[] Linux =
        {
            (1, "EPERM", SocketError.AccessDenied),
            (2, "ENOENT", SocketError.AddressNotAvailable),
            (3, "ESRCH", SocketError.InvalidArgument),
            (4, "EINTR", SocketError.Interrupted),
            (5, "EIO", SocketError.NetworkDown),
            (6, "ENXIO", SocketError.HostNotFound),
            (9, "EBADF", SocketError.OperationAborted),
            (11, "EAGAIN", SocketError.WouldBlock),
            (12, "ENOMEM", SocketError.NoBufferSpaceAvailable),
            (13, "EACCES", SocketError.AccessDenied),
            (14, "EFAULT", SocketError.Fault),
            (17, "EEXIST", SocketError.InvalidArgument),
            (19, "ENODEV", SocketError.NetworkDown),
            (22, "EINVAL", SocketError.InvalidArgument),
            (23, "ENFILE", SocketError.TooManyOpenSockets),
            (24, "EMFILE", SocketError.TooManyOpenSockets),
            (28, "ENOSPC", SocketError.TooManyOpenSockets),
            (32, "EPIPE", SocketError.Shutdown),
            (61, "ENODATA", SocketError.NoData),
            (64, "ENONET", SocketError.HostUnreachable),
            (71, "EPROTO", SocketError.HostUnreachable),
            (88, "ENOTSOCK", SocketError.NotSocket),
            (89, "EDESTADDRREQ", SocketError.DestinationAddressRequired),
            (90, "EMSGSIZE", SocketError.MessageSize),
            (91, "EPROTOTYPE", SocketError.ProtocolType),
            (92, "ENOPROTOOPT", SocketError.ProtocolOption),
            (93, "EPROTONOSUPPORT", SocketError.ProtocolNotSupported),
            (94, "ESOCKTNOSUPPORT", SocketError.SocketNotSupported),
            (95, "ENOTSUP", SocketError.OperationNotSupported), // EOPNOTSUPP is the same number on Linux
            (96, "EPFNOSUPPORT", SocketError.ProtocolFamilyNotSupported),
            (97, "EAFNOSUPPORT", SocketError.AddressFamilyNotSupported),
            (98, "EADDRINUSE", SocketError.AddressAlreadyInUse),
            (99, "EADDRNOTAVAIL", SocketError.AddressNotAvailable),
            (100, "ENETDOWN", SocketError.NetworkDown),
            (101, "ENETUNREACH", SocketError.NetworkUnreachable),
            (102, "ENETRESET", SocketError.NetworkReset),
            (103, "ECONNABORTED", SocketError.ConnectionAborted),
            (104, "ECONNRESET", SocketError.ConnectionReset),
            (105, "ENOBUFS", SocketError.NoBufferSpaceAvailable),
            (106, "EISCONN", SocketError.IsConnected),
            (107, "ENOTCONN", SocketError.NotConnected),
            (108, "ESHUTDOWN", SocketError.Shutdown),
            (110, "ETIMEDOUT", SocketError.TimedOut),
            (111, "ECONNREFUSED", SocketError.ConnectionRefused),
            (112, "EHOSTDOWN", SocketError.HostDown),
            (113, "EHOSTUNREACH", SocketError.HostUnreachable),
            (114, "EALREADY", SocketError.AlreadyInProgress),
            (115, "EINPROGRESS", SocketError.InProgress),
            (125, "ECANCELED", SocketError.OperationAborted),
        };

        /// <summary>The same errors by macOS's numbers (sys/errno.h), where EOPNOTSUPP and ENOTSUP differ.</summary>
        public static readonly (int Number, string Name, SocketError Error)[] Darwin =
        {
            (1, "EPERM", SocketError.AccessDenied),
            (2, "ENOENT", SocketError.AddressNotAvailable),
            (3, "ESRCH", SocketError.InvalidArgument),
            (4, "EINTR", SocketError.Interrupted),
            (5, "EIO", SocketError.NetworkDown),
            (6, "ENXIO", SocketError.HostNotFound),
            (9, "EBADF", SocketError.OperationAborted),
            (12, "ENOMEM", SocketError.NoBufferSpaceAvailable),
            (13, "EACCES", SocketError.AccessDenied),
            (14, "EFAULT", SocketError.Fault),
            (17, "EEXIST", SocketError.InvalidArgument),
            (19, "ENODEV", SocketError.NetworkDown),
            (22, "EINVAL", SocketError.InvalidArgument),
            (23, "ENFILE", SocketError.TooManyOpenSockets),
            (24, "EMFILE", SocketError.TooManyOpenSockets),
            (28, "ENOSPC", SocketError.TooManyOpenSockets),
            (32, "EPIPE", SocketError.Shutdown),
            (35, "EAGAIN", SocketError.WouldBlock),
            (36, "EINPROGRESS", SocketError.InProgress),
            (37, "EALREADY", SocketError.AlreadyInProgress),
            (38, "ENOTSOCK", SocketError.NotSocket),
            (39, "EDESTADDRREQ", SocketError.DestinationAddressRequired),
            (40, "EMSGSIZE", SocketError.MessageSize),
            (41, "EPROTOTYPE", SocketError.ProtocolType),
            (42, "ENOPROTOOPT", SocketError.ProtocolOption),
            (43, "EPROTONOSUPPORT", SocketError.ProtocolNotSupported),
            (44, "ESOCKTNOSUPPORT", SocketError.SocketNotSupported),
            (45, "ENOTSUP", SocketError.OperationNotSupported),
            (46, "EPFNOSUPPORT", SocketError.ProtocolFamilyNotSupported),
            (47, "EAFNOSUPPORT", SocketError.AddressFamilyNotSupported),
            (48, "EADDRINUSE", SocketError.AddressAlreadyInUse),
            (49, "EADDRNOTAVAIL", SocketError.AddressNotAvailable),
            (50, "ENETDOWN", SocketError.NetworkDown),
            (51, "ENETUNREACH", SocketError.NetworkUnreachable),
            (52, "ENETRESET", SocketError.NetworkReset),
            (53, "ECONNABORTED", SocketError.ConnectionAborted),
            (54, "ECONNRESET", SocketError.ConnectionReset),
            (55, "ENOBUFS", SocketError.NoBufferSpaceAvailable),
            (56, "EISCONN", SocketError.IsConnected),
            (57, "ENOTCONN", SocketError.NotConnected),
            (58, "ESHUTDOWN", SocketError.Shutdown),
            (60, "ETIMEDOUT", SocketError.TimedOut),
            (61, "ECONNREFUSED", SocketError.ConnectionRefused),
            (64, "EHOSTDOWN", SocketError.HostDown),
            (65, "EHOSTUNREACH", SocketError.HostUnreachable),
            (89, "ECANCELED", SocketError.OperationAborted),
            (96, "ENODATA", SocketError.NoData),
            (100, "EPROTO", SocketError.HostUnreachable),
            (102, "EOPNOTSUPP", SocketError.OperationNotSupported),
        };

        /// <summary>
        /// Where the library answers otherwise than the runtime on purpose: EBADF is a descriptor closed under the call (the
        /// socket was disposed: the runtime says InvalidArgument); ESHUTDOWN is Shutdown, as Windows' WSAESHUTDOWN is (the
        /// runtime says Disconnecting).
        /// </summary>
        private static readonly Dictionary<string, SocketError> Deliberate = new Dictionary<string, SocketError>
        {
            ["EBADF"] = SocketError.OperationAborted,
            ["ESHUTDOWN"] = SocketError.Shutdown,
        };

        [Fact]
        public void LinuxTableIsTheLibrarysMap()
        {
            var calls = new LinuxSocketCalls();
            foreach (var (number, name, error) in Linux) Assert.True(error == calls.ErrorOf(number), name + " (" + number + "): written " + error + ", the library says " + calls.ErrorOf(number));
            Assert.Equal(SocketError.Success, calls.ErrorOf(0));
            Assert.Equal(SocketError.SocketError, calls.ErrorOf(4095)); // outside every table: the runtime's own answer
        }

        [Fact]
        public void DarwinTableIsTheLibrarysMap()
        {
            var calls = new DarwinSocketCalls();
            foreach (var (number, name, error) in Darwin) Assert.True(error == calls.ErrorOf(number), name + " (" + number + "): written " + error + ", the library says " + calls.ErrorOf(number));
            Assert.Equal(SocketError.Success, calls.ErrorOf(0));
            Assert.Equal(SocketError.SocketError, calls.ErrorOf(4095));
        }

        /// <summary>No error of a datagram call reaches the user as SocketError.SocketError, and both OSes name the same errors alike.</summary>
        [Fact]
        public void EveryErrorHasAMeaningAndBothOsesAgree()
        {
            foreach (var entry in Linux.Concat(Darwin)) Assert.True(entry.Error != SocketError.SocketError, entry.Name + " has no meaning");
            var darwin = Darwin.ToDictionary(e => e.Name, e => e.Error);
            foreach (var (_, name, error) in Linux)
            {
                if (name == "ENONET") continue; // Linux only
                Assert.True(darwin.ContainsKey(name), name + " is missing from the macOS table");
                Assert.Equal(error, darwin[name]);
            }
        }

        /// <summary>
        /// Each table against the runtime's own map, by name, on CoreCLR for Linux or macOS (whose System.Net.Sockets keeps it as
        /// SocketErrorPal; Mono's sockets map errno in native code that no managed call reaches, so there the written tables
        /// stand alone). On Linux the
        /// numbers are checked too: the runtime's conversion of each number gives the name written beside it.
        /// </summary>
        [Fact]
        public void TablesAreTheRuntimesMapExceptWhereDeliberate()
        {
            Assembly sockets = typeof(Socket).Assembly;
            Type? pal = sockets.GetType("System.Net.Sockets.SocketErrorPal");
            Type? errors = sockets.GetType("Interop+Error");
            if (Runtime.IsMono || RuntimeInformation.IsOSPlatform(OSPlatform.Windows))
            {
                // Tested facts, not skips: Mono has no managed map to compare with, and the runtime's Windows build has no errno
                // map at all (Winsock's error codes are SocketError's own values, which the Windows branch passes on as they are).
                Assert.Null(pal);
                return;
            }
            Assert.NotNull(pal);
            Assert.NotNull(errors);
            MethodInfo map = pal!.GetMethod("GetSocketErrorForNativeError", BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic)!;
            Assert.NotNull(map);
            var differences = new List<string>();
            foreach (var (os, table) in new[] { ("Linux", Linux), ("macOS", Darwin) })
            {
                foreach (var (number, name, error) in table)
                {
                    // A name the runtime's Interop.Error does not have (ENONET) is an errno it has no answer for.
                    var runtime = Enum.IsDefined(errors!, name) ? (SocketError)map.Invoke(null, new[] { Enum.Parse(errors!, name) })! : SocketError.SocketError;
                    SocketError expected = runtime == SocketError.SocketError ? error : Deliberate.TryGetValue(name, out SocketError own) ? own : runtime;
                    if (error != expected) differences.Add(os + " " + name + ": the library says " + error + ", the runtime " + runtime);
                    if (runtime == SocketError.SocketError) Assert.False(Deliberate.ContainsKey(name), name + " is listed as deliberate but the runtime has no answer");
                }
            }
            if (RuntimeInformation.IsOSPlatform(OSPlatform.Linux))
            {
                foreach (var (number, name, _) in Linux)
                {
                    if (!Enum.IsDefined(errors!, name)) continue;
                    int converted = SystemNativeConvertErrorPlatformToPal(number);
                    if (converted != Convert.ToInt32(Enum.Parse(errors!, name))) differences.Add(name + " is not errno " + number + " (the runtime converts " + number + " to " + Enum.ToObject(errors!, converted) + ")");
                }
            }
            Assert.True(differences.Count == 0, string.Join("\n", differences));
        }

        [DllImport("libSystem.Native", EntryPoint = "SystemNative_ConvertErrorPlatformToPal")]
        private static extern int SystemNativeConvertErrorPlatformToPal(int platformErrno);
    }
}
