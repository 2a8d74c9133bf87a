#nullable enable
using System.IO;
using UnityEditor;
using UnityEditor.Build;
using UnityEditor.Build.Reporting;
using UnityEditor.UnityLinker;

namespace WhereAllocation.Editor
{
    /// <summary>
    /// Hands Unity's linker the package's link.xml when Unity calls it during a player build. Unity reads link.xml files by itself only under
    /// Assets/, never inside a package; a package's Editor code passes its own through this callback instead. The file keeps
    /// <c>Socket.get_SafeHandle</c>, so that the native datagram path reaches a socket's handle through the property
    /// rather than through the field that holds it (both are allocation free; see docs/UNITY.md).
    /// </summary>
    internal sealed class LinkXmlForUnityLinker : IUnityLinkerProcessor
    {
        /// <summary>The package's name in its package.json: its assets' logical path is "Packages/&lt;name&gt;/..." wherever it lives.</summary>
        internal const string PackageName = "com.where-allocation.core";

        /// <summary>Before callbacks of a higher order; the order does not matter to the linker, which reads every file returned.</summary>
        public int callbackOrder => 0;

        /// <summary>The absolute path of the package's link.xml.</summary>
        /// <exception cref="BuildFailedException">The file is missing: the package was installed incompletely.</exception>
        public string GenerateAdditionalLinkXmlFile(BuildReport report, UnityLinkerBuildPipelineData data)
        {
            // The logical path names the package wherever it lives; FileUtil.GetPhysicalPath (public since 2021.2) says
            // where that is: Packages/<name>/ when embedded, Library/PackageCache/<name>@<hash>/ for a registry, git or
            // tarball install, the folder on disk for a local one. System.IO on the logical path finds the others only
            // where Unity's Mono remaps "Packages/" paths, which Unity's CoreCLR editor does not (Unity's own code moved
            // to FileUtil.PathToAbsolutePath in 6000.5). A relative result is taken from the project's folder.
            string path = Path.GetFullPath(FileUtil.GetPhysicalPath("Packages/" + PackageName + "/link.xml"));
            if (!File.Exists(path))
                throw new BuildFailedException("where-allocation: the package's link.xml is missing at " + path
                    + "; without it the linker removes Socket.get_SafeHandle and the library reaches the socket's handle through its field instead.");
            return path;
        }
    }
}
