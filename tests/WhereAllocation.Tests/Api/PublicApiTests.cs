using System;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using Xunit;

namespace WhereAllocation.Tests.Api
{
    /// <summary>
    /// The public surface of the library build this runtime loads (net8.0 on CoreCLR, netstandard2.1 on
    /// Mono) must equal the checked-in PublicApi.&lt;framework&gt;.txt. After a deliberate API change run
    /// scripts/api-snapshot.sh, which rewrites both files, and commit them with the change.
    /// </summary>
    public class PublicApiTests
    {
        private const string WriteVariable = "WHEREALLOCATION_API_WRITE";

        [Fact]
        public void PublicSurfaceMatchesTheSnapshot()
        {
            Assembly library = typeof(EndPointKey).Assembly;
            string file = SnapshotPath(FrameworkOf(library));
            string actual = PublicApi.Describe(library);
            if (Environment.GetEnvironmentVariable(WriteVariable) == "1")
            {
                File.WriteAllText(file, actual);
            }
            Assert.True(File.Exists(file), "missing snapshot " + file + ": run scripts/api-snapshot.sh");
            string expected = File.ReadAllText(file).Replace("\r\n", "\n");
            if (expected == actual) return;
            string[] was = expected.Split('\n'), now = actual.Split('\n');
            string removed = string.Join("\n", was.Except(now).Select(l => "  - " + l));
            string added = string.Join("\n", now.Except(was).Select(l => "  + " + l));
            Assert.Fail("public API differs from " + Path.GetFileName(file)
                + " (run scripts/api-snapshot.sh if the change is meant):\n" + removed + "\n" + added);
        }

        [Fact]
        public void SnapshotListsTheCompatibleSurface()
        {
            // The names existing callers compile against (DESIGN principle 1) are in the listing itself,
            // so the snapshot cannot be regenerated into a state that drops them unnoticed.
            string api = PublicApi.Describe(typeof(EndPointKey).Assembly);
            Assert.Contains("WhereAllocation.IPEndPointNonAlloc :: public field System.Net.SocketAddress temp", api);
            Assert.Contains("WhereAllocation.IPEndPointNonAlloc :: public method System.Net.IPEndPoint DeepCopyIPEndPoint()", api);
            Assert.Contains("WhereAllocation.IPEndPointNonAlloc :: public override method System.Net.SocketAddress Serialize()", api);
            Assert.Contains("WhereAllocation.SocketExtensions :: public static method System.Int32 ReceiveFrom_NonAlloc(this System.Net.Sockets.Socket ", api);
            Assert.Contains("WhereAllocation.SocketExtensions :: public static method System.Int32 SendTo_NonAlloc(this System.Net.Sockets.Socket ", api);
        }

        [Theory]
        [InlineData(typeof(int), "System.Int32")]
        [InlineData(typeof(Span<byte>), "System.Span<System.Byte>")]
        [InlineData(typeof(System.Collections.Generic.KeyValuePair<EndPointKey, string[]>), "System.Collections.Generic.KeyValuePair<WhereAllocation.EndPointKey, System.String[]>")]
        [InlineData(typeof(PeerTable<int>.Enumerator), "WhereAllocation.PeerTable<System.Int32>.Enumerator")]
        [InlineData(typeof(byte*), "System.Byte*")]
        public void TypeNamesReadTheSameOnEveryRuntime(Type type, string expected)
        {
            Assert.Equal(expected, PublicApi.TypeName(type, false));
        }

        private static string FrameworkOf(Assembly library)
        {
            string name = library.GetCustomAttribute<TargetFrameworkAttribute>()!.FrameworkName;
            if (name.StartsWith(".NETStandard,Version=v2.1", StringComparison.Ordinal)) return "netstandard2.1";
            if (name.StartsWith(".NETCoreApp,Version=v8.0", StringComparison.Ordinal)) return "net8.0";
            throw new InvalidOperationException("no snapshot for " + name);
        }

        // The snapshot lives next to this source file (the path the compiler saw), for both test projects.
        private static string SnapshotPath(string framework, [CallerFilePath] string source = "") =>
            Path.Combine(Path.GetDirectoryName(source)!, "PublicApi." + framework + ".txt");
    }
}
