using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.Json;
using System.Text.RegularExpressions;

// Compiles a Unity project's scripts the way Unity's editor does, without Unity: every assembly definition (.asmdef)
// under Assets/ and in the project's packages becomes an assembly of its own, compiled by the SDK's C# compiler with
// only the references Unity's rules give it, for one build target and one API compatibility level. scripts/unity-builds.sh
// runs it; the rules and their sources are listed in that script's header and in docs/UNITY.md. Commands:
//
//   import-samples --package <folder> --project <folder> [--only <sample folder name>]
//       copies each sample listed in the package's package.json (or the one whose path ends in that folder name) to
//       where the Package Manager imports it: Assets/Samples/<package displayName>/<package version>/<sample
//       displayName>/ (PackageManager.UI.Sample.importPath).
//   compile --project <folder> --target <name> --api <standard|framework> --out <folder> --csc <csc.dll>
//           --standard <.NET Standard 2.1 reference folder> --framework <Mono 4.x folder with Facades/>
//           --engine <UnityEngine.dll> --editor <UnityEditor.dll> [--warnaserror]
//       prints one line per assembly (compiled, with its warnings counted by code, or why not, with the compiler's
//       errors) and exits 0 only when every assembly of the target compiled. --warnaserror makes every warning an
//       error, stricter than Unity; without it only a csc.rsp that says so does (as in Unity).
//   linker-callback --project <folder> --assemblies <folder> --engine <UnityEngine.dll> --editor <UnityEditor.dll>
//       calls every IUnityLinkerProcessor found in the editor assemblies of <folder> (an editor compile's output) as
//       Unity does during a player build (the type made through its parameterless constructor, public or not;
//       GenerateAdditionalLinkXmlFile called) with the project's folder as the working directory, as in Unity; prints
//       each returned path and exits 0 only when each names an existing file. It runs on this tool's runtime (CoreCLR),
//       which, like Unity's CoreCLR editor, has no remapping of Unity's logical "Packages/" paths in System.IO.
//
// What is modelled (Unity 2021.2 to 6000.x):
//  - the project's packages: embedded ones in Packages/<folder>, and cached ones (registry, git and tarball installs)
//    in Library/PackageCache/<name>@<hash>; either way a package's assets have the logical path Packages/<name>/...;
//  - an assembly's scripts: the .cs files in its .asmdef's folder and below, except those under a deeper .asmdef;
//    folders Unity skips (a name starting with '.' or ending with '~') are skipped;
//  - the predefined assemblies (EditorBuildRules.CreatePredefinedTargetAssemblies and GetPredefinedTargetAssembly): a
//    script under Assets/ and under no .asmdef goes to Assembly-CSharp-firstpass when its path starts with
//    Assets/Plugins/, Assets/Standard Assets/, Assets/Pro Standard Assets/ or Assets/iPhone Standard Assets/, to
//    Assembly-CSharp-Editor(-firstpass) when its path has a folder named Editor (the deeper match wins, case
//    ignored), else to Assembly-CSharp. Assembly-CSharp references the runtime firstpass one, the Editor firstpass one
//    the runtime firstpass one, Assembly-CSharp-Editor the other three; each references every compiled custom assembly
//    whose .asmdef leaves autoReferenced true (EditorCompilation.GetPredefinedAssemblyReferences: not
//    ExplicitlyReferenced) and every auto-referenced precompiled DLL; no unsafe code (Player Settings' default). The
//    Editor ones are Editor-only assemblies. A script outside Assets/ under no .asmdef is not compiled by Unity ("will
//    not be compiled because it exists outside the Assets folder"): an error here, since a package's script that Unity
//    drops is a defect of the package;
//  - the .asmdef files as LoadingAssemblyDefinition.cs loads them: two with one name, case ignored ("Assembly with name
//    ... already exists"), a name Unity reserves (a predefined assembly's, or a system library's of either API level:
//    "Assembly cannot be have reserved name"), and two in one folder ("contains multiple assembly definition files")
//    each stop the whole compilation;
//  - includePlatforms / excludePlatforms against the target's platform ("Editor" in the editor); an assembly whose
//    includePlatforms is ["Editor"] alone is an Editor-only assembly;
//  - the project's scripting define symbols per build target: ProjectSettings/ProjectSettings.asset's
//    scriptingDefineSymbols, one list per NamedBuildTarget name (Standalone, Server, Android, iPhone, WebGL, PS5, ...).
//    A player build uses its target's list: a Dedicated Server uses Server's, not Standalone's
//    (NamedBuildTarget.FromActiveSettings, Editor/Mono/BuildPipeline/NamedBuildTarget.cs, used by
//    EditorCompilation.CreateScriptAssemblySettings); the editor uses its active build target's (Android here);
//  - defineConstraints as DefineConstraintsHelper.cs evaluates them: every entry must hold; an entry holds when one of
//    its "||" alternatives does ("A" defined, "!A" not defined); an entry that is empty, has "|| ||" or names an invalid
//    symbol is invalid, and Unity stops the compilation on it (CustomScriptAssembly.IsCompatibleWith: "Invalid Define
//    Constraint"). The defines seen are the target's, the symbols of the target's list, the assembly's versionDefines
//    and the -define: options of its csc.rsp (CustomScriptAssembly.IsCompatibleWith merges ResponseFileDefines);
//  - versionDefines whose "name" is a package of the project or "Unity" (expressions: "1.2.3" for that version or later,
//    intervals such as "[1.0,2.0)");
//  - references by name or "GUID:<the .asmdef.meta guid>" (case ignored); a reference that names no assembly
//    compatible with the target is dropped, as Unity drops it (the compiler then reports what it misses);
//  - UnityEngine.dll for every assembly, and UnityEditor.dll for every assembly in an editor compile and for Editor-only
//    assemblies, unless the assembly sets noEngineReferences (EditorBuildRules.cs);
//  - precompiled DLLs under Assets/ and in the packages: every auto-referenced one (its .meta does not say
//    isExplicitlyReferenced: 1) for an assembly with overrideReferences false; only those named in precompiledReferences
//    when it is true; two DLLs with one file name are refused, as Unity refuses them;
//  - allowUnsafeCode (-unsafe);
//  - the response file as ResponseFileProvider.cs (Editor/Mono/Scripting/Compilers/) finds it in Unity 2021.3 to
//    6000.4: the csc.rsp in the assembly's folder, looked up at its logical path joined to the project's folder, else
//    Assets/csc.rsp; one or the other, never both. So a cached package's own csc.rsp is never found (its logical folder
//    Packages/<name>/ is not where it lives) and the project's Assets/csc.rsp applies to it instead. Unity 6000.5 and
//    later resolve the logical path (FileUtil.PathToAbsolutePath) and find it; not modelled;
//  - C# 9 (-langversion:9), the target's and the API level's defines, and the API level's reference assemblies: .NET
//    Standard 2.1, or the ".NET Framework" level (Unity's 4.8 profile; Editor-only assemblies always compile at this
//    level, as the editor compiles them against its own profile).
// Not modelled: .asmref files (refused), the test runner's assemblies, Roslyn analyzers and source generators, build
// profiles' own define symbols (Unity 6), Unity's own compiler build and its exact reference list.
internal static class Program
{
    // A build target: the asmdef platform name, whether it is an editor compile, Unity's defines for it, and the
    // NamedBuildTarget whose scripting define symbols it compiles with.
    private sealed record Target(string Platform, bool Editor, string Defines, string NamedTarget);

    // Build targets. The editor's active build target is Android (its defines name the target, not the OS the editor
    // runs on, and it compiles with that target's define list).
    private static readonly Dictionary<string, Target> Targets = new Dictionary<string, Target>
    {
        ["editor"] = new Target("Editor", true, "UNITY_EDITOR;UNITY_EDITOR_64;UNITY_EDITOR_LINUX;UNITY_ANDROID;ENABLE_MONO", "Android"),
        ["android-il2cpp"] = new Target("Android", false, "UNITY_ANDROID;ENABLE_IL2CPP", "Android"),
        ["ios-il2cpp"] = new Target("iOS", false, "UNITY_IOS;UNITY_IPHONE;ENABLE_IL2CPP", "iPhone"),
        ["linux-server-il2cpp"] = new Target("LinuxStandalone64", false, "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;UNITY_SERVER;ENABLE_IL2CPP", "Server"),
        ["linux-mono"] = new Target("LinuxStandalone64", false, "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;ENABLE_MONO", "Standalone"),
        ["windows-mono"] = new Target("WindowsStandalone64", false, "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_MONO", "Standalone"),
        ["windows-il2cpp"] = new Target("WindowsStandalone64", false, "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_IL2CPP", "Standalone"),
        ["macos-il2cpp"] = new Target("macOSStandalone", false, "UNITY_STANDALONE_OSX;UNITY_STANDALONE;ENABLE_IL2CPP", "Standalone"),
        ["webgl-il2cpp"] = new Target("WebGL", false, "UNITY_WEBGL;ENABLE_IL2CPP", "WebGL"),
        ["ps5-il2cpp"] = new Target("PS5", false, "UNITY_PS5;ENABLE_IL2CPP", "PS5"),
    };

    // What Unity 2021.3 defines for every compile.
    private const string UnityVersion = "2021.3.0";
    private const string CommonDefines = "UNITY_5_3_OR_NEWER;UNITY_2017_1_OR_NEWER;UNITY_2018_1_OR_NEWER;UNITY_2019_1_OR_NEWER;"
        + "UNITY_2020_1_OR_NEWER;UNITY_2021_1_OR_NEWER;UNITY_2021_2_OR_NEWER;UNITY_2021_3_OR_NEWER;UNITY_2021_3;UNITY_2021;"
        + "CSHARP_7_3_OR_NEWER;ENABLE_MANAGED_JOBS";
    private const string StandardDefines = "NET_STANDARD_2_1;NET_STANDARD;NETSTANDARD2_1;NETSTANDARD";
    private const string FrameworkDefines = "NET_4_6;NET_UNITY_4_8";
    // The assemblies of the ".NET Framework" profile Unity references, from Mono's 4.x folder, and every facade beside them.
    private static readonly string[] FrameworkAssemblies =
    {
        "mscorlib", "System", "System.Core", "System.Runtime.Serialization", "System.Xml", "System.Xml.Linq", "System.Numerics",
        "System.Numerics.Vectors", "System.Net.Http", "System.IO.Compression", "Microsoft.CSharp", "System.Data",
    };
    private static readonly string[] PredefinedNames = { "Assembly-CSharp-firstpass", "Assembly-CSharp", "Assembly-CSharp-Editor-firstpass", "Assembly-CSharp-Editor" };

    private sealed class Asmdef
    {
        public string Name = "", Path = "", Folder = "", LogicalFolder = "", Guid = "";
        public List<string> References = new(), Include = new(), Exclude = new(), Precompiled = new(), Constraints = new();
        public List<(string Package, string Expression, string Define)> VersionDefines = new();
        public bool Unsafe, Override, NoEngine, AutoReferenced = true, Predefined;
        public List<string> Sources = new();
        public List<string> RspOptions = new(), RspDefines = new();
        public string Rsp = "";
        public bool EditorOnly => Include.Count == 1 && Include[0] == "Editor";
    }

    // A folder Unity imports assets from: Assets/, or a package's folder, with the logical path its assets have.
    private sealed record Root(string Physical, string Logical);

    private static int Main(string[] args)
    {
        var options = new Dictionary<string, string>();
        for (int i = 1; i < args.Length; i++)
        {
            if (args[i] == "--warnaserror") options["warnaserror"] = "1";
            else if (args[i].StartsWith("--") && i + 1 < args.Length) options[args[i].Substring(2)] = args[++i];
        }
        try
        {
            if (args.Length > 0 && args[0] == "import-samples") return ImportSamples(options["package"], options["project"], options.GetValueOrDefault("only"));
            if (args.Length > 0 && args[0] == "compile") return Compile(options);
            if (args.Length > 0 && args[0] == "linker-callback") return LinkerCallback(options);
        }
        catch (KeyNotFoundException e)
        {
            Console.Error.WriteLine("unity-compile: a required option is missing (" + e.Message + ")");
            return 2;
        }
        Console.Error.WriteLine("usage: UnityCompile import-samples|compile|linker-callback [options] (see Program.cs)");
        return 2;
    }

    private static int ImportSamples(string package, string project, string? only)
    {
        var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(package, "package.json"))).RootElement;
        string displayName = json.GetProperty("displayName").GetString()!, version = json.GetProperty("version").GetString()!;
        int imported = 0;
        foreach (var sample in json.GetProperty("samples").EnumerateArray())
        {
            string path = sample.GetProperty("path").GetString()!;
            if (only != null && Path.GetFileName(path.TrimEnd('/')) != only) continue;
            string to = Path.Combine(project, "Assets", "Samples", displayName, version, sample.GetProperty("displayName").GetString()!);
            CopyFolder(Path.Combine(package, path), to);
            Console.WriteLine("  imported sample to " + Path.GetRelativePath(project, to));
            imported++;
        }
        if (imported > 0) return 0;
        Console.Error.WriteLine("unity-compile: no sample " + only + " in " + package);
        return 1;
    }

    private static void CopyFolder(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (string file in Directory.GetFiles(from)) File.Copy(file, Path.Combine(to, Path.GetFileName(file)), true);
        foreach (string folder in Directory.GetDirectories(from)) CopyFolder(folder, Path.Combine(to, Path.GetFileName(folder)));
    }

    // Files Unity imports: below Assets/ and each package's folder, skipping hidden folders and those ending in '~'.
    private static IEnumerable<string> ProjectFiles(string folder)
    {
        foreach (string file in Directory.GetFiles(folder).OrderBy(f => f, StringComparer.Ordinal))
            if (!Path.GetFileName(file).StartsWith(".")) yield return file;
        foreach (string sub in Directory.GetDirectories(folder).OrderBy(f => f, StringComparer.Ordinal))
        {
            string name = Path.GetFileName(sub);
            if (name.StartsWith(".") || name.EndsWith("~")) continue;
            foreach (string file in ProjectFiles(sub)) yield return file;
        }
    }

    private static List<string> Strings(JsonElement json, string name)
    {
        var list = new List<string>();
        if (json.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.Array)
            foreach (var item in value.EnumerateArray()) list.Add(item.GetString() ?? "");
        return list;
    }

    private static bool Flag(JsonElement json, string name) => json.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.True;

    private static string MetaGuid(string path)
    {
        string meta = path + ".meta";
        if (!File.Exists(meta)) return "";
        foreach (string line in File.ReadLines(meta))
            if (line.StartsWith("guid: ")) return line.Substring(6).Trim().ToLowerInvariant();
        return "";
    }

    private static string PackageName(string folder)
    {
        string json = Path.Combine(folder, "package.json");
        if (!File.Exists(json)) return Path.GetFileName(folder);
        return JsonDocument.Parse(File.ReadAllText(json)).RootElement.GetProperty("name").GetString()!;
    }

    // The project's folders of assets: Assets/, each embedded package (Packages/<folder>) and each cached one
    // (Library/PackageCache/<name>@<hash>), the packages with their logical path Packages/<name>.
    private static List<Root> Roots(string project)
    {
        var roots = new List<Root>();
        if (Directory.Exists(Path.Combine(project, "Assets"))) roots.Add(new Root(Path.Combine(project, "Assets"), "Assets"));
        foreach (string parent in new[] { Path.Combine(project, "Packages"), Path.Combine(project, "Library", "PackageCache") })
            if (Directory.Exists(parent))
                foreach (string folder in Directory.GetDirectories(parent).OrderBy(f => f, StringComparer.Ordinal))
                    roots.Add(new Root(folder, "Packages/" + PackageName(folder)));
        return roots;
    }

    // The scripting define symbols of ProjectSettings/ProjectSettings.asset, by build target name.
    private static Dictionary<string, string> ScriptingDefineSymbols(string project)
    {
        var lists = new Dictionary<string, string>(StringComparer.Ordinal);
        string asset = Path.Combine(project, "ProjectSettings", "ProjectSettings.asset");
        if (!File.Exists(asset)) return lists;
        bool inside = false;
        foreach (string line in File.ReadLines(asset))
        {
            if (line.TrimStart().StartsWith("scriptingDefineSymbols:")) { inside = !line.Contains("{}"); continue; }
            if (!inside) continue;
            var entry = Regex.Match(line, @"^    ([^:]+):\s*(.*)$");
            if (!entry.Success) { inside = false; continue; }
            lists[entry.Groups[1].Value.Trim()] = entry.Groups[2].Value.Trim();
        }
        return lists;
    }

    // A response file's options, and the symbols of its -define: (/define:, -d:) options.
    private static (List<string> Options, List<string> Defines) ReadRsp(string rsp)
    {
        var options = File.ReadAllLines(rsp).SelectMany(l => l.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries)).ToList();
        var defines = new List<string>();
        foreach (string option in options)
        {
            var define = Regex.Match(option, @"^[-/](define|d):(.+)$", RegexOptions.IgnoreCase);
            if (define.Success) defines.AddRange(define.Groups[2].Value.Split(new[] { ';', ',' }, StringSplitOptions.RemoveEmptyEntries));
        }
        return (options, defines);
    }

    private static int Compile(Dictionary<string, string> options)
    {
        string project = Path.GetFullPath(options["project"]), output = Path.GetFullPath(options["out"]);
        if (!Targets.TryGetValue(options["target"], out var target))
        {
            Console.Error.WriteLine("unity-compile: no target " + options["target"] + " (targets: " + string.Join(", ", Targets.Keys) + ")");
            return 2;
        }
        bool framework = options["api"] switch { "framework" => true, "standard" => false, _ => throw new KeyNotFoundException("api: standard or framework") };
        Directory.CreateDirectory(output);

        var roots = Roots(project);
        var files = roots.SelectMany(r => ProjectFiles(r.Physical)).ToList();
        string Logical(string path)
        {
            var root = roots.Where(r => path == r.Physical || path.StartsWith(r.Physical + Path.DirectorySeparatorChar)).OrderByDescending(r => r.Physical.Length).First();
            return root.Logical + path.Substring(root.Physical.Length).Replace(Path.DirectorySeparatorChar, '/');
        }

        int errors = 0;
        void Error(string text) { Console.WriteLine("  error: " + text); errors++; }

        // Packages' versions, for versionDefines.
        var packageVersions = new Dictionary<string, string> { ["Unity"] = UnityVersion };
        foreach (var root in roots.Where(r => r.Logical.StartsWith("Packages/") && File.Exists(Path.Combine(r.Physical, "package.json"))))
        {
            var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(root.Physical, "package.json"))).RootElement;
            packageVersions[json.GetProperty("name").GetString()!] = json.GetProperty("version").GetString()!;
        }

        // The project's scripting define symbols for this target's NamedBuildTarget.
        var symbolLists = ScriptingDefineSymbols(project);
        string symbols = symbolLists.GetValueOrDefault(target.NamedTarget, "");
        Console.WriteLine("  scripting define symbols (" + target.NamedTarget + "): " + (symbols.Length > 0 ? symbols : "none"));

        // The response file a folder's assembly gets (ResponseFileProvider, 2021.3 to 6000.4): the one at the folder's
        // logical path joined to the project's folder, else Assets/csc.rsp.
        string assetsRsp = Path.Combine(project, "Assets", "csc.rsp");
        string RspFor(string logicalFolder)
        {
            string own = Path.Combine(project, logicalFolder.Replace('/', Path.DirectorySeparatorChar), "csc.rsp");
            return File.Exists(own) ? own : File.Exists(assetsRsp) ? assetsRsp : "";
        }

        var reserved = new HashSet<string>(PredefinedNames, StringComparer.Ordinal);
        foreach (string dll in Directory.GetFiles(options["standard"], "*.dll").Concat(FrameworkAssemblies.Select(n => n + ".dll"))
            .Concat(Directory.GetFiles(Path.Combine(options["framework"], "Facades"), "*.dll")))
            reserved.Add(Path.GetFileNameWithoutExtension(dll));

        var asmdefs = new List<Asmdef>();
        foreach (string path in files.Where(f => f.EndsWith(".asmdef")))
        {
            var json = JsonDocument.Parse(File.ReadAllText(path)).RootElement;
            var asmdef = new Asmdef
            {
                Name = json.GetProperty("name").GetString()!, Path = path, Folder = Path.GetDirectoryName(path)!, Guid = MetaGuid(path),
                References = Strings(json, "references"), Include = Strings(json, "includePlatforms"), Exclude = Strings(json, "excludePlatforms"),
                Precompiled = Strings(json, "precompiledReferences"), Constraints = Strings(json, "defineConstraints"),
                Unsafe = Flag(json, "allowUnsafeCode"), Override = Flag(json, "overrideReferences"), NoEngine = Flag(json, "noEngineReferences"),
                AutoReferenced = !(json.TryGetProperty("autoReferenced", out var auto) && auto.ValueKind == JsonValueKind.False),
            };
            asmdef.LogicalFolder = Logical(asmdef.Folder);
            if (json.TryGetProperty("versionDefines", out var versionDefines))
                foreach (var v in versionDefines.EnumerateArray())
                    asmdef.VersionDefines.Add((v.GetProperty("name").GetString()!, v.GetProperty("expression").GetString()!, v.GetProperty("define").GetString()!));
            asmdef.Rsp = RspFor(asmdef.LogicalFolder);
            if (asmdef.Rsp.Length > 0) (asmdef.RspOptions, asmdef.RspDefines) = ReadRsp(asmdef.Rsp);
            asmdefs.Add(asmdef);
        }
        foreach (string asmref in files.Where(f => f.EndsWith(".asmref"))) Error(Logical(asmref) + ": .asmref files are not modelled here");
        // LoadingAssemblyDefinition.CheckPredefinedAssemblyNames: reserved names, one name per assembly (case ignored), one
        // .asmdef per folder.
        foreach (var asmdef in asmdefs.Where(a => reserved.Contains(a.Name)))
            Error("Assembly cannot be have reserved name '" + asmdef.Name + "' (" + Logical(asmdef.Path) + ")");
        foreach (var group in asmdefs.GroupBy(a => a.Name, StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
            Error("Assembly with name '" + group.Last().Name + "' already exists (" + string.Join(", ", group.Select(a => Logical(a.Path))) + ")");
        foreach (var group in asmdefs.GroupBy(a => a.LogicalFolder, StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
            Error("Folder '" + group.Key + "/' contains multiple assembly definition files (" + string.Join(", ", group.Select(a => Logical(a.Path))) + ")");
        foreach (var asmdef in asmdefs)
            foreach (string constraint in asmdef.Constraints.Where(c => !ConstraintValid(c)))
                Error("Invalid Define Constraint: \"" + constraint + "\" (" + Logical(asmdef.Path) + ")");

        var predefined = new Dictionary<string, Asmdef>();
        foreach (string source in files.Where(f => f.EndsWith(".cs")))
        {
            var owner = asmdefs.Where(a => source.StartsWith(a.Folder + Path.DirectorySeparatorChar)).OrderByDescending(a => a.Folder.Length).FirstOrDefault();
            if (owner == null && source.StartsWith(Path.Combine(project, "Assets") + Path.DirectorySeparatorChar))
            {
                string name = PredefinedAssembly("/" + Logical(source).ToLowerInvariant());
                if (!predefined.TryGetValue(name, out owner))
                {
                    owner = new Asmdef { Name = name, Path = source, Folder = Path.Combine(project, "Assets"), LogicalFolder = "Assets", Predefined = true };
                    if (name.Contains("-Editor")) owner.Include.Add("Editor");
                    owner.Rsp = File.Exists(assetsRsp) ? assetsRsp : "";
                    if (owner.Rsp.Length > 0) (owner.RspOptions, owner.RspDefines) = ReadRsp(owner.Rsp);
                    predefined[name] = owner;
                }
            }
            if (owner == null) Error("Script '" + Logical(source) + "' will not be compiled because it exists outside the Assets folder and does not belong to any assembly definition file");
            else owner.Sources.Add(source);
        }

        var dlls = files.Where(f => f.EndsWith(".dll", StringComparison.OrdinalIgnoreCase)).ToList();
        foreach (var group in dlls.GroupBy(d => Path.GetFileName(d), StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
            Error("Multiple precompiled assemblies with the same name " + group.Key + " (" + string.Join(", ", group.Select(Logical)) + ")");
        var autoReferenced = dlls.Where(d => !File.Exists(d + ".meta") || !File.ReadAllText(d + ".meta").Contains("isExplicitlyReferenced: 1")).ToList();
        if (errors > 0) return 1;

        string baseDefines = CommonDefines + ";" + target.Defines + (symbols.Length > 0 ? ";" + symbols : "");
        var compatible = new Dictionary<string, Asmdef>(StringComparer.OrdinalIgnoreCase);
        foreach (var asmdef in asmdefs)
        {
            string why = Incompatible(asmdef, target, Defines(asmdef, baseDefines, packageVersions) + ";" + string.Join(";", asmdef.RspDefines));
            if (why.Length > 0) Console.WriteLine("  " + asmdef.Name + ": not compiled for " + options["target"] + " (" + why + ")");
            else if (asmdef.Sources.Count == 0) Console.WriteLine("  " + asmdef.Name + ": no scripts, not compiled");
            else compatible[asmdef.Name] = asmdef;
        }

        // The predefined assemblies that have scripts: each references the predefined ones before it (as Unity orders them)
        // and every custom assembly compiled for the target that is auto-referenced.
        var before = new Dictionary<string, string[]>
        {
            ["Assembly-CSharp-firstpass"] = new string[0],
            ["Assembly-CSharp"] = new[] { "Assembly-CSharp-firstpass" },
            ["Assembly-CSharp-Editor-firstpass"] = new[] { "Assembly-CSharp-firstpass" },
            ["Assembly-CSharp-Editor"] = new[] { "Assembly-CSharp-firstpass", "Assembly-CSharp", "Assembly-CSharp-Editor-firstpass" },
        };
        var custom = compatible.Values.Where(a => a.AutoReferenced).Select(a => a.Name).OrderBy(n => n, StringComparer.Ordinal).ToList();
        foreach (string name in PredefinedNames)
        {
            if (!predefined.TryGetValue(name, out var assembly)) continue;
            string why = Incompatible(assembly, target, baseDefines);
            if (why.Length > 0) { Console.WriteLine("  " + name + ": not compiled for " + options["target"] + " (an editor assembly)"); continue; }
            assembly.References.AddRange(before[name].Where(compatible.ContainsKey));
            assembly.References.AddRange(custom);
            compatible[name] = assembly;
        }

        // Compile in reference order; an assembly whose reference failed is not compiled.
        var done = new Dictionary<string, bool>(StringComparer.OrdinalIgnoreCase);
        bool Build(Asmdef asmdef, HashSet<string> visiting)
        {
            if (done.TryGetValue(asmdef.Name, out bool ok)) return ok;
            if (!visiting.Add(asmdef.Name)) { Error("reference cycle through " + asmdef.Name); return false; }
            var references = new List<string>();
            var named = new List<string>();
            foreach (string reference in asmdef.References)
            {
                var to = reference.StartsWith("GUID:", StringComparison.OrdinalIgnoreCase)
                    ? compatible.Values.FirstOrDefault(a => a.Guid.Length > 0 && a.Guid == reference.Substring(5).ToLowerInvariant())
                    : compatible.GetValueOrDefault(reference);
                if (to == null) { Console.WriteLine("  " + asmdef.Name + ": reference " + reference + " names no assembly compiled for this target; dropped, as Unity drops it"); continue; }
                if (!Build(to, visiting)) { Error(asmdef.Name + ": not compiled, its reference " + to.Name + " failed"); done[asmdef.Name] = false; return false; }
                references.Add(Path.Combine(output, to.Name + ".dll"));
                named.Add(to.Name);
            }
            bool atFramework = framework || asmdef.EditorOnly;
            if (atFramework)
            {
                string folder = options["framework"];
                references.AddRange(FrameworkAssemblies.Select(n => Path.Combine(folder, n + ".dll")));
                references.AddRange(Directory.GetFiles(Path.Combine(folder, "Facades"), "*.dll").OrderBy(f => f, StringComparer.Ordinal));
            }
            else references.AddRange(Directory.GetFiles(options["standard"], "*.dll").OrderBy(f => f, StringComparer.Ordinal));
            if (!asmdef.NoEngine)
            {
                references.Add(options["engine"]); named.Add("UnityEngine");
                if (target.Editor || asmdef.EditorOnly) { references.Add(options["editor"]); named.Add("UnityEditor"); }
            }
            var precompiled = asmdef.Override ? dlls.Where(d => asmdef.Precompiled.Contains(Path.GetFileName(d))).ToList() : autoReferenced;
            references.AddRange(precompiled);
            named.AddRange(precompiled.Select(Path.GetFileName)!);

            var arguments = new List<string>
            {
                "-nologo", "-noconfig", "-nostdlib", "-target:library", "-langversion:9", "-deterministic", "-optimize",
                "-nowarn:0169,0649,1701,1702", "-define:" + Defines(asmdef, baseDefines + ";" + (atFramework ? FrameworkDefines : StandardDefines), packageVersions),
                "-out:" + Path.Combine(output, asmdef.Name + ".dll"),
            };
            if (options.ContainsKey("warnaserror")) arguments.Add("-warnaserror");
            if (asmdef.Unsafe) arguments.Add("-unsafe");
            arguments.AddRange(asmdef.RspOptions);
            arguments.AddRange(references.Select(r => "-reference:" + r));
            arguments.AddRange(asmdef.Sources.OrderBy(s => s, StringComparer.Ordinal));
            string argumentFile = Path.Combine(output, asmdef.Name + ".args");
            File.WriteAllLines(argumentFile, arguments.Select(a => "\"" + a + "\""));

            var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
            start.ArgumentList.Add(options["csc"]);
            start.ArgumentList.Add("-shared");
            start.ArgumentList.Add("@" + argumentFile);
            using var compiler = Process.Start(start)!;
            string text = compiler.StandardOutput.ReadToEnd() + compiler.StandardError.ReadToEnd();
            compiler.WaitForExit();
            ok = compiler.ExitCode == 0;
            var lines = text.Split('\n').Select(l => l.Trim()).Distinct().ToList();
            var warnings = lines.Select(l => Regex.Match(l, @": warning (CS\d+)")).Where(m => m.Success).GroupBy(m => m.Groups[1].Value).OrderByDescending(g => g.Count()).ToList();
            string rsp = asmdef.Rsp.Length == 0 ? "" : ", " + Logical(asmdef.Rsp) + " " + string.Join(" ", asmdef.RspOptions);
            string summary = asmdef.Name + " (" + (atFramework ? ".NET Framework" : ".NET Standard 2.1") + (asmdef.Unsafe ? ", unsafe" : "")
                + rsp + "; references " + (named.Count > 0 ? string.Join(", ", named) : "no Unity or package assembly") + ")";
            string counted = warnings.Count == 0 ? "" : "; " + warnings.Sum(g => g.Count()) + " warning(s): " + string.Join(", ", warnings.Select(g => g.Key + " x" + g.Count()));
            if (ok) Console.WriteLine("  compiled " + summary + counted);
            else
            {
                Error("failed to compile " + summary + counted);
                foreach (string line in lines.Where(l => l.Contains(": error ")).Take(12))
                    Console.WriteLine("    " + line.Replace(project + Path.DirectorySeparatorChar, ""));
            }
            visiting.Remove(asmdef.Name);
            done[asmdef.Name] = ok;
            return ok;
        }
        foreach (var asmdef in compatible.Values.OrderBy(a => a.Name, StringComparer.Ordinal)) Build(asmdef, new HashSet<string>(StringComparer.OrdinalIgnoreCase));
        return errors == 0 ? 0 : 1;
    }

    // Unity's linker callbacks, called as Unity calls them during a player build, in the project's folder.
    private static int LinkerCallback(Dictionary<string, string> options)
    {
        string project = Path.GetFullPath(options["project"]), folder = Path.GetFullPath(options["assemblies"]);
        var locations = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase)
        {
            ["UnityEngine"] = Path.GetFullPath(options["engine"]), ["UnityEditor"] = Path.GetFullPath(options["editor"]),
        };
        foreach (string dll in Directory.GetFiles(folder, "*.dll")) locations[Path.GetFileNameWithoutExtension(dll)] = dll;
        AppDomain.CurrentDomain.AssemblyResolve += (_, e) =>
            locations.TryGetValue(new AssemblyName(e.Name).Name!, out string? path) ? Assembly.LoadFrom(path) : null;
        var editor = Assembly.LoadFrom(locations["UnityEditor"]);
        Type processor = editor.GetType("UnityEditor.Build.IUnityLinkerProcessor", true)!;
        Type data = editor.GetType("UnityEditor.UnityLinker.UnityLinkerBuildPipelineData", true)!;
        Type buildTarget = editor.GetType("UnityEditor.BuildTarget", true)!;
        int called = 0, failed = 0;
        Directory.SetCurrentDirectory(project);
        foreach (string dll in Directory.GetFiles(folder, "*.dll").OrderBy(f => f, StringComparer.Ordinal))
        {
            Type[] types;
            try { types = Assembly.LoadFrom(dll).GetTypes(); }
            catch (ReflectionTypeLoadException) { continue; }
            catch (BadImageFormatException) { continue; }
            foreach (Type type in types.Where(t => !t.IsAbstract && processor.IsAssignableFrom(t)))
            {
                called++;
                object instance = Activator.CreateInstance(type, nonPublic: true)!;
                object pipelineData = Activator.CreateInstance(data, Enum.ToObject(buildTarget, -2), Path.Combine(project, "Temp", "StagingArea", "Data", "Managed"))!;
                try
                {
                    string path = (string)processor.GetMethod("GenerateAdditionalLinkXmlFile")!.Invoke(instance, new object?[] { null, pipelineData })!;
                    bool exists = File.Exists(path);
                    Console.WriteLine("  " + type.FullName + " returned " + path + (exists ? " (exists)" : " (no such file)"));
                    if (!exists) failed++;
                }
                catch (TargetInvocationException e)
                {
                    Console.WriteLine("  " + type.FullName + " threw " + e.InnerException!.GetType().FullName + ": " + e.InnerException.Message);
                    failed++;
                }
            }
        }
        if (called == 0) { Console.WriteLine("  no IUnityLinkerProcessor found in " + folder); return 1; }
        return failed == 0 ? 0 : 1;
    }

    // The predefined assembly of a script under Assets/ and under no .asmdef, from its lower-case path "/assets/...": the
    // filter that matches deepest wins, the first in Unity's order on a tie (EditorBuildRules.GetPredefinedTargetAssembly).
    private static string PredefinedAssembly(string lowerPath)
    {
        int firstPass = new[] { "/assets/plugins/", "/assets/standard assets/", "/assets/pro standard assets/", "/assets/iphone standard assets/" }
            .Where(p => lowerPath.StartsWith(p, StringComparison.Ordinal)).Select(p => p.Length).DefaultIfEmpty(-1).First();
        int editorAt = lowerPath.IndexOf("/editor/", StringComparison.Ordinal);
        int editor = editorAt < 0 ? -1 : editorAt + "/editor/".Length;
        int editorFirstPass = firstPass < 0 ? -1 : editor;
        var depths = new (string Name, int Depth)[]
        {
            ("Assembly-CSharp-firstpass", firstPass), ("Assembly-CSharp", 0), ("Assembly-CSharp-Editor-firstpass", editorFirstPass), ("Assembly-CSharp-Editor", editor),
        };
        var best = depths[0];
        foreach (var d in depths) if (d.Depth > best.Depth) best = d;
        return best.Name;
    }

    // The target's defines and the assembly's versionDefines whose package version matches.
    private static string Defines(Asmdef asmdef, string defines, Dictionary<string, string> packageVersions)
    {
        var all = defines.Split(';', StringSplitOptions.RemoveEmptyEntries).ToList();
        foreach (var (package, expression, define) in asmdef.VersionDefines)
            if (packageVersions.TryGetValue(package, out string? version) && InRange(version, expression)) all.Add(define);
        return string.Join(";", all.Distinct());
    }

    // Why the assembly is not compiled for the target ("" when it is): its platforms, then its define constraints.
    private static string Incompatible(Asmdef asmdef, Target target, string defines)
    {
        if (asmdef.Include.Count > 0 && !asmdef.Include.Contains(target.Platform)) return "includePlatforms " + string.Join(", ", asmdef.Include);
        if (asmdef.Include.Count == 0 && asmdef.Exclude.Contains(target.Platform)) return "excludePlatforms " + string.Join(", ", asmdef.Exclude);
        var set = new HashSet<string>(defines.Split(';', StringSplitOptions.RemoveEmptyEntries), StringComparer.Ordinal);
        foreach (string constraint in asmdef.Constraints)
            if (!ConstraintHolds(set, constraint)) return "defineConstraints " + constraint;
        return "";
    }

    // A symbol name as SymbolNameRestrictions.IsValid accepts it (CustomScriptAssembly.cs).
    private static bool ValidSymbol(string name) =>
        name.Length > 0 && name.Length <= 247 && !char.IsNumber(name[0]) && name.All(c => char.IsLetterOrDigit(c) || c == '_');

    // DefineConstraintsHelper.IsDefineConstraintValid: every "||" alternative, without its "!", a valid symbol.
    private static bool ConstraintValid(string constraint) =>
        constraint.Split("||", StringSplitOptions.RemoveEmptyEntries).Select(d => d.Trim(' ', '\t')).All(d => ValidSymbol(d.StartsWith("!") ? d.Substring(1) : d));

    // DefineConstraintsHelper.GetDefineConstraintCompatibility: true only for "Compatible" (an invalid entry is not).
    private static bool ConstraintHolds(HashSet<string> defines, string constraint)
    {
        if (string.IsNullOrEmpty(constraint)) return false;
        string[] parts = Regex.Split(constraint, @"(\|\|)").Select(p => p.Trim(' ', '\t')).ToArray();
        for (int i = 0; i + 1 < parts.Length; i++) if (parts[i] == "||" && parts[i + 1] == "||") return false;
        var notExpected = new HashSet<string>(parts.Where(p => p != "||" && p.StartsWith("!")).Select(p => p.Substring(1)));
        var expected = new HashSet<string>(parts.Where(p => p != "||" && !p.StartsWith("!")));
        if (!expected.All(ValidSymbol) || !notExpected.All(ValidSymbol)) return false;
        if (expected.Overlaps(notExpected))
        {
            var both = new HashSet<string>(expected);
            expected.ExceptWith(notExpected);
            notExpected.ExceptWith(both);
        }
        if (expected.Count == 0 && notExpected.Count == 0) return false;
        bool expectedHolds = expected.Any(defines.Contains);
        if (notExpected.Count == 0) return expectedHolds;
        bool notExpectedHolds = !notExpected.Any(defines.Contains);
        if (expected.Count == 0) return notExpectedHolds;
        return expectedHolds || notExpectedHolds;
    }

    // Unity's version expressions: "1.2.3" means that version or later; "[a,b]", "(a,b)", "[a,b)", "(a,b]" intervals; "[a]" exactly a.
    private static bool InRange(string version, string expression)
    {
        Version v = Parse(version);
        expression = expression.Trim();
        if (!expression.StartsWith("[") && !expression.StartsWith("(")) return v >= Parse(expression);
        bool lowClosed = expression[0] == '[', highClosed = expression[^1] == ']';
        string[] bounds = expression.Substring(1, expression.Length - 2).Split(',');
        if (bounds.Length == 1) return v == Parse(bounds[0]);
        bool low = bounds[0].Trim().Length == 0 || (lowClosed ? v >= Parse(bounds[0]) : v > Parse(bounds[0]));
        bool high = bounds[1].Trim().Length == 0 || (highClosed ? v <= Parse(bounds[1]) : v < Parse(bounds[1]));
        return low && high;
    }

    private static Version Parse(string text)
    {
        string numeric = new string(text.Trim().TakeWhile(c => char.IsDigit(c) || c == '.').ToArray()).TrimEnd('.');
        if (!numeric.Contains('.')) numeric += ".0";
        return Version.Parse(numeric);
    }
}
