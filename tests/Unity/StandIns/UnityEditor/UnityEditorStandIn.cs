// A stand-in for UnityEditor.dll, compiled as an assembly of its own named UnityEditor (referencing the UnityEngine
// stand-in, as Unity's does): the few Unity Editor types the package's Editor assembly (src/WhereAllocation/Editor)
// uses, with the signatures of Unity's scripting reference (2021.2 to 6000.x), so that CI compiles that code without a
// Unity Editor, with only the references Unity's rules give it (scripts/unity-builds.sh). Compiling against it proves
// that the Editor code names these types and members as documented and is valid C# 9; it proves nothing about what
// Unity does with the callbacks (that needs an Editor and a player build). One behaviour is modelled: FileUtil.
// GetPhysicalPath maps a package's logical path to the folder the package really lives in (see there), so that
// scripts/unity-builds.sh can call the Editor assembly's linker callback in an embedded and in a cached install. Never
// imported by Unity: it lives outside the package folder.
using System;
using System.IO;

namespace UnityEditor.Build
{
    /// <summary>Stand-in: UnityEditor.Build.IOrderedCallback (property callbackOrder).</summary>
    public interface IOrderedCallback
    {
        /// <summary>Stand-in: the order in which callbacks run, lowest first.</summary>
        int callbackOrder { get; }
    }

    /// <summary>Stand-in: UnityEditor.Build.IUnityLinkerProcessor as of 2021.2 (OnBeforeRun and OnAfterRun were removed then).</summary>
    public interface IUnityLinkerProcessor : IOrderedCallback
    {
        /// <summary>Stand-in: returns the path of a link.xml file for UnityLinker; a relative path is taken from the working directory.</summary>
        string GenerateAdditionalLinkXmlFile(Reporting.BuildReport report, UnityLinker.UnityLinkerBuildPipelineData data);
    }

    /// <summary>Stand-in: UnityEditor.Build.BuildFailedException, which a build callback throws to stop the build.</summary>
    public class BuildFailedException : Exception
    {
        /// <summary>Stand-in: the constructor with a message.</summary>
        public BuildFailedException(string message) : base(message)
        {
        }

        /// <summary>Stand-in: the constructor with an inner exception.</summary>
        public BuildFailedException(Exception innerException) : base(innerException?.Message, innerException)
        {
        }
    }
}

namespace UnityEditor.Build.Reporting
{
    /// <summary>Stand-in: UnityEditor.Build.Reporting.BuildReport (sealed; made by Unity only).</summary>
    public sealed class BuildReport
    {
        internal BuildReport()
        {
        }
    }
}

namespace UnityEditor.UnityLinker
{
    /// <summary>Stand-in: UnityEditor.UnityLinker.UnityLinkerBuildPipelineData.</summary>
    public sealed class UnityLinkerBuildPipelineData
    {
        /// <summary>Stand-in: the build target.</summary>
        public BuildTarget target;

        /// <summary>Stand-in: the folder of the assemblies UnityLinker reads.</summary>
        public string inputDirectory = "";

        /// <summary>Stand-in: the constructor.</summary>
        public UnityLinkerBuildPipelineData(BuildTarget target, string inputDirectory)
        {
            this.target = target;
            this.inputDirectory = inputDirectory;
        }
    }
}

namespace UnityEditor
{
    /// <summary>Stand-in: UnityEditor.BuildTarget (values omitted: the Editor code does not read them).</summary>
    public enum BuildTarget
    {
        /// <summary>Stand-in.</summary>
        NoTarget = -2,
    }

    /// <summary>Stand-in: UnityEditor.EnterPlayModeOptions, what the Editor skips when it enters Play Mode (flags).</summary>
    [Flags]
    public enum EnterPlayModeOptions
    {
        /// <summary>Stand-in: nothing skipped.</summary>
        None = 0,
        /// <summary>Stand-in: the scripting domain is not reloaded, so static state survives from the last Play Mode.</summary>
        DisableDomainReload = 1,
        /// <summary>Stand-in: the scene is not reloaded.</summary>
        DisableSceneReload = 2,
    }

    /// <summary>Stand-in: UnityEditor.InitializeOnEnterPlayModeAttribute, on a static method the Editor calls on entering Play Mode (with no parameter, or one EnterPlayModeOptions).</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class InitializeOnEnterPlayModeAttribute : Attribute
    {
    }
}

namespace UnityEditor
{
    /// <summary>Stand-in: UnityEditor.FileUtil (only the member the Editor code uses).</summary>
    public static class FileUtil
    {
        /// <summary>
        /// Stand-in: the physical path of a logical one (public since Unity 2021.2.0a5; UnityCsReference
        /// Editor/Mono/FileUtil.bindings.cs, a native call). Modelled on where the Package Manager puts a package: a
        /// "Packages/&lt;name&gt;/..." path stays as it is when the project holds the package there (embedded), and
        /// becomes "Library/PackageCache/&lt;name&gt;@&lt;hash&gt;/..." when the package lives in the project's package cache
        /// (registry, git and tarball installs); any other path is returned as it is. Relative paths are taken from the
        /// working directory, which in Unity is the project's folder.
        /// </summary>
        public static string GetPhysicalPath(string path)
        {
            if (path == null) throw new ArgumentNullException(nameof(path));
            string normal = path.Replace('\\', '/');
            if (!normal.StartsWith("Packages/", StringComparison.Ordinal)) return path;
            int slash = normal.IndexOf('/', "Packages/".Length);
            string name = slash < 0 ? normal.Substring("Packages/".Length) : normal.Substring("Packages/".Length, slash - "Packages/".Length);
            string rest = slash < 0 ? "" : normal.Substring(slash);
            if (Directory.Exists("Packages/" + name)) return path;
            string cache = "Library/PackageCache";
            if (!Directory.Exists(cache)) return path;
            foreach (string folder in Directory.GetDirectories(cache, name + "@*"))
                return "Library/PackageCache/" + Path.GetFileName(folder) + rest;
            return path;
        }
    }
}
