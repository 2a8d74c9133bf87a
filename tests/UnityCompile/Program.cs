using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text.Json;

// Compiles a Unity project's scripts the way Unity's editor does, without Unity: every assembly definition (.asmdef)
// under Assets/ and Packages/ becomes an assembly of its own, compiled by the SDK's C# compiler with only the references
// Unity's rules give it, for one build target and one API compatibility level. scripts/unity-builds.sh runs it; the
// rules and their sources are listed in that script's header and in docs/UNITY.md. Commands:
//
//   import-samples --package <folder> --project <folder>
//       copies each sample listed in the package's package.json to where the Package Manager imports it:
//       Assets/Samples/<package displayName>/<package version>/<sample displayName>/ (PackageManager.UI.Sample.importPath).
//   compile --project <folder> --target <name> --api <standard|framework> --out <folder> --csc <csc.dll>
//           --standard <.NET Standard 2.1 reference folder> --framework <Mono 4.x folder with Facades/>
//           --engine <UnityEngine.dll> --editor <UnityEditor.dll> [--defines <A;B>] [--warnaserror]
//       prints one line per assembly (compiled, or why not, with the compiler's errors) and exits 0 only when every
//       assembly of the target compiled. --defines: the project's scripting define symbols (Player Settings), which
//       Unity adds to every assembly's defines and which defineConstraints see (Mirror, for one, adds MIRROR_*).
//
// What is modelled (Unity 2021.2 to 6000.x):
//  - an assembly's scripts: the .cs files in its .asmdef's folder and below, except those under a deeper .asmdef;
//    folders Unity skips (a name starting with '.' or ending with '~') are skipped;
//  - the predefined assemblies (EditorBuildRules.CreatePredefinedTargetAssemblies and GetPredefinedTargetAssembly): a
//    script under Assets/ and under no .asmdef goes to Assembly-CSharp-firstpass when its path starts with
//    Assets/Plugins/, Assets/Standard Assets/, Assets/Pro Standard Assets/ or Assets/iPhone Standard Assets/, to
//    Assembly-CSharp-Editor(-firstpass) when its path has a folder named Editor (the deeper match wins, case
//    ignored), else to Assembly-CSharp. Assembly-CSharp references the runtime firstpass one, the Editor firstpass one
//    the runtime firstpass one, Assembly-CSharp-Editor the other three; each references every compiled custom assembly
//    whose .asmdef leaves autoReferenced true (EditorCompilation.GetPredefinedAssemblyReferences: not
//    ExplicitlyReferenced) and every auto-referenced precompiled DLL; no unsafe code (Player Settings' default); a
//    csc.rsp in Assets/ adds its options. The Editor ones are Editor-only assemblies. A script outside Assets/ under no
//    .asmdef is not compiled by Unity ("will not be compiled because it exists outside the Assets folder"): an error
//    here, since a package's script that Unity drops is a defect of the package;
//  - two .asmdef files with one name: Unity refuses the whole compilation ("Assembly with name ... already exists");
//  - includePlatforms / excludePlatforms against the target's platform ("Editor" in the editor); an assembly whose
//    includePlatforms is ["Editor"] alone is an Editor-only assembly;
//  - defineConstraints (each "A", "!A" or "A || B" against the target's defines and the assembly's versionDefines);
//  - versionDefines whose "name" is a package in Packages/ or "Unity" (expressions: "1.2.3" for that version or later,
//    intervals such as "[1.0,2.0)");
//  - references by name or "GUID:<the .asmdef.meta guid>"; a reference that names no assembly compatible with the target
//    is dropped, as Unity drops it (the compiler then reports what it misses);
//  - UnityEngine.dll for every assembly, and UnityEditor.dll for every assembly in an editor compile and for Editor-only
//    assemblies, unless the assembly sets noEngineReferences (EditorBuildRules.cs);
//  - precompiled DLLs under Assets/ and Packages/: every auto-referenced one (its .meta does not say
//    isExplicitlyReferenced: 1) for an assembly with overrideReferences false; only those named in precompiledReferences
//    when it is true; two DLLs with one file name are refused, as Unity refuses them;
//  - allowUnsafeCode (-unsafe); a csc.rsp in the .asmdef's folder, its options added (ResponseFileProvider.cs);
//  - C# 9 (-langversion:9), the target's and the API level's defines, and the API level's reference assemblies: .NET
//    Standard 2.1, or the ".NET Framework" level (Unity's 4.8 profile; Editor-only assemblies always compile at this
//    level, as the editor compiles them against its own profile).
// Not modelled: .asmref files (refused), the test runner's assemblies, Roslyn analyzers and
// source generators, a project-wide csc.rsp under Assets/, scripting define symbols per build target (--defines gives
// one set for every target).
internal static class Program
{
    private sealed record Target(string Platform, bool Editor, string Defines);

    // Build targets: the asmdef platform name, whether it is an editor compile, and Unity's defines for it. The editor's
    // active build target is Android (its defines name the target, not the OS the editor runs on).
    private static readonly Dictionary<string, Target> Targets = new Dictionary<string, Target>
    {
        ["editor"] = new Target("Editor", true, "UNITY_EDITOR;UNITY_EDITOR_64;UNITY_EDITOR_LINUX;UNITY_ANDROID;ENABLE_MONO"),
        ["android-il2cpp"] = new Target("Android", false, "UNITY_ANDROID;ENABLE_IL2CPP"),
        ["ios-il2cpp"] = new Target("iOS", false, "UNITY_IOS;UNITY_IPHONE;ENABLE_IL2CPP"),
        ["linux-server-il2cpp"] = new Target("LinuxStandalone64", false, "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;UNITY_SERVER;ENABLE_IL2CPP"),
        ["linux-mono"] = new Target("LinuxStandalone64", false, "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;ENABLE_MONO"),
        ["windows-mono"] = new Target("WindowsStandalone64", false, "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_MONO"),
        ["windows-il2cpp"] = new Target("WindowsStandalone64", false, "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_IL2CPP"),
        ["macos-il2cpp"] = new Target("macOSStandalone", false, "UNITY_STANDALONE_OSX;UNITY_STANDALONE;ENABLE_IL2CPP"),
        ["webgl-il2cpp"] = new Target("WebGL", false, "UNITY_WEBGL;ENABLE_IL2CPP"),
        ["ps5-il2cpp"] = new Target("PS5", false, "UNITY_PS5;ENABLE_IL2CPP"),
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

    private sealed class Asmdef
    {
        public string Name = "", Path = "", Folder = "", Guid = "";
        public List<string> References = new(), Include = new(), Exclude = new(), Precompiled = new(), Constraints = new();
        public List<(string Package, string Expression, string Define)> VersionDefines = new();
        public bool Unsafe, Override, NoEngine, AutoReferenced = true, Predefined;
        public List<string> Sources = new();
        public bool EditorOnly => Include.Count == 1 && Include[0] == "Editor";
    }

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
            if (args.Length > 0 && args[0] == "import-samples") return ImportSamples(options["package"], options["project"]);
            if (args.Length > 0 && args[0] == "compile") return Compile(options);
        }
        catch (KeyNotFoundException e)
        {
            Console.Error.WriteLine("unity-compile: a required option is missing (" + e.Message + ")");
            return 2;
        }
        Console.Error.WriteLine("usage: UnityCompile import-samples|compile [options] (see Program.cs)");
        return 2;
    }

    private static int ImportSamples(string package, string project)
    {
        var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(package, "package.json"))).RootElement;
        string displayName = json.GetProperty("displayName").GetString()!, version = json.GetProperty("version").GetString()!;
        foreach (var sample in json.GetProperty("samples").EnumerateArray())
        {
            string to = Path.Combine(project, "Assets", "Samples", displayName, version, sample.GetProperty("displayName").GetString()!);
            CopyFolder(Path.Combine(package, sample.GetProperty("path").GetString()!), to);
            Console.WriteLine("  imported sample to " + Path.GetRelativePath(project, to));
        }
        return 0;
    }

    private static void CopyFolder(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (string file in Directory.GetFiles(from)) File.Copy(file, Path.Combine(to, Path.GetFileName(file)), true);
        foreach (string folder in Directory.GetDirectories(from)) CopyFolder(folder, Path.Combine(to, Path.GetFileName(folder)));
    }

    // Files Unity imports: below Assets/ and each package folder in Packages/, skipping hidden folders and those ending in '~'.
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
            if (line.StartsWith("guid: ")) return line.Substring(6).Trim();
        return "";
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

        var roots = new List<string>();
        if (Directory.Exists(Path.Combine(project, "Assets"))) roots.Add(Path.Combine(project, "Assets"));
        if (Directory.Exists(Path.Combine(project, "Packages"))) roots.AddRange(Directory.GetDirectories(Path.Combine(project, "Packages")).OrderBy(f => f, StringComparer.Ordinal));
        var files = roots.SelectMany(ProjectFiles).ToList();

        int errors = 0;
        void Error(string text) { Console.WriteLine("  error: " + text); errors++; }

        // Packages' versions, for versionDefines.
        var packageVersions = new Dictionary<string, string> { ["Unity"] = UnityVersion };
        foreach (string json in files.Where(f => Path.GetFileName(f) == "package.json" && Path.GetDirectoryName(Path.GetDirectoryName(f)) == Path.Combine(project, "Packages")))
        {
            var root = JsonDocument.Parse(File.ReadAllText(json)).RootElement;
            packageVersions[root.GetProperty("name").GetString()!] = root.GetProperty("version").GetString()!;
        }

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
            if (json.TryGetProperty("versionDefines", out var versionDefines))
                foreach (var v in versionDefines.EnumerateArray())
                    asmdef.VersionDefines.Add((v.GetProperty("name").GetString()!, v.GetProperty("expression").GetString()!, v.GetProperty("define").GetString()!));
            asmdefs.Add(asmdef);
        }
        foreach (string asmref in files.Where(f => f.EndsWith(".asmref"))) Error(Rel(project, asmref) + ": .asmref files are not modelled here");
        foreach (var group in asmdefs.GroupBy(a => a.Name).Where(g => g.Count() > 1))
            Error("Assembly with name '" + group.Key + "' already exists (" + string.Join(", ", group.Select(a => Rel(project, a.Path))) + ")");

        var predefined = new Dictionary<string, Asmdef>();
        foreach (string source in files.Where(f => f.EndsWith(".cs")))
        {
            var owner = asmdefs.Where(a => source.StartsWith(a.Folder + Path.DirectorySeparatorChar)).OrderByDescending(a => a.Folder.Length).FirstOrDefault();
            if (owner == null && source.StartsWith(Path.Combine(project, "Assets") + Path.DirectorySeparatorChar))
            {
                string name = PredefinedAssembly("/" + Rel(project, source).Replace('\\', '/').ToLowerInvariant());
                if (!predefined.TryGetValue(name, out owner))
                {
                    owner = new Asmdef { Name = name, Path = source, Folder = Path.Combine(project, "Assets"), Predefined = true };
                    if (name.Contains("-Editor")) owner.Include.Add("Editor");
                    predefined[name] = owner;
                }
            }
            if (owner == null) Error("Script '" + Rel(project, source) + "' will not be compiled because it exists outside the Assets folder and does not belong to any assembly definition file");
            else owner.Sources.Add(source);
        }

        var dlls = files.Where(f => f.EndsWith(".dll", StringComparison.OrdinalIgnoreCase)).ToList();
        foreach (var group in dlls.GroupBy(d => Path.GetFileName(d), StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
            Error("Multiple precompiled assemblies with the same name " + group.Key + " (" + string.Join(", ", group.Select(d => Rel(project, d))) + ")");
        var autoReferenced = dlls.Where(d => !File.Exists(d + ".meta") || !File.ReadAllText(d + ".meta").Contains("isExplicitlyReferenced: 1")).ToList();
        if (errors > 0) return 1;

        string baseDefines = CommonDefines + ";" + target.Defines + (options.TryGetValue("defines", out string? scripting) ? ";" + scripting : "");
        var compatible = new Dictionary<string, Asmdef>();
        foreach (var asmdef in asmdefs)
        {
            string why = Incompatible(asmdef, target, Defines(asmdef, baseDefines, packageVersions));
            if (why.Length > 0) Console.WriteLine("  " + asmdef.Name + ": not compiled for " + options["target"] + " (" + why + ")");
            else if (asmdef.Sources.Count == 0) Console.WriteLine("  " + asmdef.Name + ": no scripts, not compiled");
            else compatible[asmdef.Name] = asmdef;
        }

        // The predefined assemblies that have scripts: each references the predefined ones before it (as Unity orders them)
        // and every custom assembly compiled for the target that is auto-referenced.
        string[] order = { "Assembly-CSharp-firstpass", "Assembly-CSharp", "Assembly-CSharp-Editor-firstpass", "Assembly-CSharp-Editor" };
        var before = new Dictionary<string, string[]>
        {
            ["Assembly-CSharp-firstpass"] = new string[0],
            ["Assembly-CSharp"] = new[] { "Assembly-CSharp-firstpass" },
            ["Assembly-CSharp-Editor-firstpass"] = new[] { "Assembly-CSharp-firstpass" },
            ["Assembly-CSharp-Editor"] = new[] { "Assembly-CSharp-firstpass", "Assembly-CSharp", "Assembly-CSharp-Editor-firstpass" },
        };
        var custom = compatible.Values.Where(a => a.AutoReferenced).Select(a => a.Name).OrderBy(n => n, StringComparer.Ordinal).ToList();
        foreach (string name in order)
        {
            if (!predefined.TryGetValue(name, out var assembly)) continue;
            string why = Incompatible(assembly, target, baseDefines);
            if (why.Length > 0) { Console.WriteLine("  " + name + ": not compiled for " + options["target"] + " (an editor assembly)"); continue; }
            assembly.References.AddRange(before[name].Where(compatible.ContainsKey));
            assembly.References.AddRange(custom);
            compatible[name] = assembly;
        }

        // Compile in reference order; an assembly whose reference failed is not compiled.
        var done = new Dictionary<string, bool>();
        bool Build(Asmdef asmdef, HashSet<string> visiting)
        {
            if (done.TryGetValue(asmdef.Name, out bool ok)) return ok;
            if (!visiting.Add(asmdef.Name)) { Error("reference cycle through " + asmdef.Name); return false; }
            var references = new List<string>();
            var named = new List<string>();
            foreach (string reference in asmdef.References)
            {
                var to = reference.StartsWith("GUID:")
                    ? compatible.Values.FirstOrDefault(a => a.Guid.Length > 0 && a.Guid == reference.Substring(5))
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
            string rsp = Path.Combine(asmdef.Folder, "csc.rsp");
            var rspOptions = File.Exists(rsp) ? File.ReadAllLines(rsp).SelectMany(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries)).ToList() : new List<string>();
            arguments.AddRange(rspOptions);
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
            string summary = asmdef.Name + " (" + (atFramework ? ".NET Framework" : ".NET Standard 2.1") + (asmdef.Unsafe ? ", unsafe" : "")
                + (rspOptions.Count > 0 ? ", csc.rsp " + string.Join(" ", rspOptions) : "") + "; references " + (named.Count > 0 ? string.Join(", ", named) : "no Unity or package assembly") + ")";
            if (ok) Console.WriteLine("  compiled " + summary);
            else
            {
                Error("failed to compile " + summary);
                foreach (string line in text.Split('\n').Where(l => l.Contains(": error ")).Distinct().Take(12))
                    Console.WriteLine("    " + line.Trim().Replace(project + Path.DirectorySeparatorChar, ""));
            }
            visiting.Remove(asmdef.Name);
            done[asmdef.Name] = ok;
            return ok;
        }
        foreach (var asmdef in compatible.Values.OrderBy(a => a.Name, StringComparer.Ordinal)) Build(asmdef, new HashSet<string>());
        return errors == 0 ? 0 : 1;
    }

    private static string Rel(string project, string path) => Path.GetRelativePath(project, path);

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
        var set = new HashSet<string>(defines.Split(';'));
        foreach (string constraint in asmdef.Constraints)
        {
            bool any = constraint.Split("||").Select(c => c.Trim()).Any(c => c.StartsWith("!") ? !set.Contains(c.Substring(1)) : set.Contains(c));
            if (!any) return "defineConstraints " + constraint;
        }
        return "";
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
