#!/usr/bin/env bash
# The library compiled as Unity compiles the package for each target family, and each build checked on this machine's
# Mono (Linux). Unity compiles a package's sources itself, with C# 9, against .NET Standard 2.1, with the defines of the
# build target (UNITY_ANDROID, UNITY_STANDALONE_LINUX, ...; UNITY_EDITOR in the Editor; ENABLE_IL2CPP for IL2CPP); this
# script does the same with the SDK's compiler. WHEREALLOCATION_CHECK_OS_UNKNOWN makes the build's run-time OS question
# answer "unknown" for everything, as IL2CPP's RuntimeInformation does on Android, consoles and WebGL. Each build replaces
# the library beside samples/TrimCheck, which then checks (see its header):
#   android-il2cpp   the Linux calls chosen at compile time; native path, 0 B per receive, send, batch and await
#   linux-il2cpp     the same for a Linux player
#   linux-server-il2cpp   the same for a Linux dedicated server (UNITY_SERVER)
#   editor-mono      the Editor (active target Android): the OS from the runtime; native path, 0 B
#   windows-il2cpp   the Windows calls chosen at compile time; on Linux their probe fails (ws2_32 is missing), which must
#                    be reported: the reason names the exception, the first call throws once
#   ps5-il2cpp       a console: no native path; the first call throws PlatformNotSupportedException once, then Managed;
#                    after DatagramPathSettings.Reset (the Editor assembly's Play Mode start) the next call reports once again
#   webgl-il2cpp     WebGL with DatagramPathSettings.Force(DatagramPath.Managed) first: no exception, the cost printed
#   unknown-il2cpp   a player Unity names with no define the library knows, the runtime answering "unknown": as ps5
#   macos-il2cpp, ios-il2cpp   compiled only (their calls cannot run on Linux; trim-check.sh checks the iOS names)
# Every run also checks that the Managed path never asks for SocketFlags.Truncated (Mono refuses it, as IL2CPP's socket
# layer does) and still reports a cut datagram.
#
# Then the package compiled as Unity's editor compiles it (tests/UnityCompile, which says in detail what it models): a
# Unity project with the package embedded under Packages/, its sample imported where the Package Manager imports it
# (PackageManager.UI.Sample.importPath: Assets/Samples/<package displayName>/<version>/<sample displayName>/), a copy of
# an older release's sample left beside it, and a stray System.Memory.dll among the project's plugins. Every .asmdef is
# an assembly of its own, compiled with C# 9 for the editor and for each player target (Android, iOS, Linux dedicated
# server with UNITY_SERVER, Linux, Windows and macOS players, WebGL, PS5) at both API compatibility levels (.NET
# Standard 2.1: the netstandard.library.ref reference assemblies; ".NET Framework": Mono's 4.x profile in
# /usr/lib/mono/4.5 and its Facades, NET_4_6 and NET_UNITY_4_8 defined), against stand-ins of UnityEngine.dll and
# UnityEditor.dll that are assemblies of their own (tests/UnityStandIn), with only the references Unity's rules give
# each assembly. The rules, from Unity's C# reference source (Unity-Technologies/UnityCsReference):
#   Editor/Mono/Scripting/ScriptCompilation/EditorBuildRules.cs: UnityEngine for every assembly and UnityEditor for every
#     assembly of an editor compile and for Editor-only ones, unless the assembly sets noEngineReferences; every
#     auto-referenced precompiled DLL unless the assembly sets overrideReferences, then only its precompiledReferences;
#     an assembly is compiled for a target only when its includePlatforms / excludePlatforms and defineConstraints
#     allow it (includePlatforms ["Editor"]: the editor only); references by name or GUID; scripts under Assets/ in no
#     .asmdef's folder go to the predefined assemblies (Assembly-CSharp, -firstpass, -Editor, -Editor-firstpass), which
#     reference every custom assembly left autoReferenced (EditorCompilation.cs, GetPredefinedAssemblyReferences): the
#     project holds a user's scripts of that kind (Assets/Scripts, Assets/Editor);
#   Editor/Mono/Scripting/ScriptCompilation/ResponseFileProvider.cs: a csc.rsp beside the .asmdef adds its options;
#   two assemblies with one name stop the compilation.
# Stricter than Unity: warnings are errors. Planted violations prove the compilation can fail: each is a copy of the
# project with one mistake, which must fail with the compiler's (or Unity's) own message; "planted violation
# rejected" counts as a pass. The kcp2k sample (Samples~/Kcp2kServer) is checked both ways: skipped in that project,
# which has neither Mirror nor kcp2k (its defineConstraints need Mirror's MIRROR_89_OR_NEWER), and compiled in a project
# with the kcp2k stand-in (tests/Kcp2kStandIn) where Mirror keeps kcp2k and Mirror's define symbols given, in both of
# kcp2k's forms (V1.41's, and Mirror 90's with MIRROR_90_OR_NEWER).
#
# Last, the NuGet package's netstandard2.1 assembly (compiled without Unity's defines) beside the UnityEngine stand-in,
# whose Application.platform answers what the check sets, run by samples/TrimCheck on Mono: Android takes the Linux
# calls (native path, 0 B), iOS and a console refuse loudly once (iOS naming the Unity package as the fix), the
# Editor and a process without Unity take the runtime's answer. Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "  ok   $2"; else failed=$((failed + 1)); echo "  FAIL $2"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

csc=$(ls /usr/share/dotnet/sdk/*/Roslyn/bincore/csc.dll "$(dirname "$(readlink -f "$(command -v dotnet)")")"/sdk/*/Roslyn/bincore/csc.dll 2>/dev/null | sort -V | tail -1)
packages=$(dotnet msbuild src/WhereAllocation -getProperty:NuGetPackageRoot 2>/dev/null | tr -d '[:space:]')
refs=$(ls -d "${packages%/}"/netstandard.library.ref/2.1.0/ref/netstandard2.1 2>/dev/null)
[ -n "$csc" ] && [ -n "$refs" ]; check $? "the SDK's C# compiler and the .NET Standard 2.1 reference assemblies found"
[ "$failed" -eq 0 ] || finish
references=(); for f in "$refs"/*.dll; do references+=("-reference:$f"); done
compile() { # <out.dll> <target: library|exe> <defines> <sources...>
  local out=$1 target=$2 defines=$3; shift 3
  dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:"$target" -langversion:9 -unsafe -nullable:enable -warnaserror \
    -optimize -deterministic -nowarn:1701,1702 ${defines:+"-define:$defines"} "${references[@]}" "$@" -out:"$out"
}
mapfile -t library < <(find src/WhereAllocation -name '*.cs' -not -path '*/Editor/*' -not -path '*/Samples~/*' -not -path '*/obj/*' -not -path '*/bin/*' | sort)
unity="UNITY_5_3_OR_NEWER;UNITY_2021_2_OR_NEWER;UNITY_2021_3_OR_NEWER;NET_STANDARD_2_1;NET_STANDARD;CSHARP_7_3_OR_NEWER"
unknown_os="WHEREALLOCATION_CHECK_OS_UNKNOWN"

# The check program, compiled once against the plain build; each run puts a target's library beside it.
mkdir -p "$work/plain" "$work/app"
compile "$work/plain/WhereAllocation.dll" library "$unity" "${library[@]}" >"$work/plain.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/plain.txt"; check $status "the library compiles with Unity's common defines only"
compile "$work/app/TrimCheck.dll" exe "" -reference:"$work/plain/WhereAllocation.dll" samples/TrimCheck/Program.cs >"$work/app.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/app.txt"; check $status "samples/TrimCheck compiles against it"
[ $status = 0 ] || finish

target() { # <name> <defines> [TrimCheck arguments...]; "compile-only" as the first argument: no run
  local name=$1 defines=$2; shift 2
  echo "== $name ($defines)"
  mkdir -p "$work/$name"
  if ! compile "$work/$name/WhereAllocation.dll" library "$unity;$defines" "${library[@]}" >"$work/$name.txt" 2>&1; then
    cat "$work/$name.txt"; check 1 "$name: compiles (C# 9, .NET Standard 2.1, warnings as errors)"; return
  fi
  check 0 "$name: compiles (C# 9, .NET Standard 2.1, warnings as errors)"
  [ "${1:-}" = compile-only ] && return
  cp "$work/app/TrimCheck.dll" "$work/$name/"
  timeout 300 mono "$work/$name/TrimCheck.dll" "$@" | tee "$work/$name.run.txt" | sed 's/^/  /'
  check "${PIPESTATUS[0]}" "$name: its checks pass on Mono ($*)"
}

target android-il2cpp "UNITY_ANDROID;ENABLE_IL2CPP;$unknown_os" \
  --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (compiled for a Unity Android player)" --diagnostic-has "native available"
target linux-il2cpp "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;ENABLE_IL2CPP;$unknown_os" \
  --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (compiled for a Unity Linux player)"
target linux-server-il2cpp "UNITY_STANDALONE_LINUX;UNITY_STANDALONE;UNITY_SERVER;ENABLE_IL2CPP;$unknown_os" \
  --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (compiled for a Unity Linux player)"
target editor-mono "UNITY_EDITOR;UNITY_EDITOR_LINUX;UNITY_ANDROID;ENABLE_MONO" \
  --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (from RuntimeInformation at run time)"
target windows-il2cpp "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_IL2CPP;$unknown_os" --closed \
  --diagnostic-has "OS calls Windows (compiled for a Unity Windows player)" --diagnostic-has "ws2_32" --diagnostic-has "DllNotFoundException"
target ps5-il2cpp "UNITY_PS5;ENABLE_IL2CPP;$unknown_os" --closed --reset-rearms \
  --diagnostic-has "path Managed (default)" --diagnostic-has "compiled for a Unity WebGL or console player" --diagnostic-has "native unavailable: Unity's WebGL and console players"
target webgl-il2cpp "UNITY_WEBGL;ENABLE_IL2CPP;$unknown_os" --opt-in \
  --diagnostic-has "path Managed (forced; default Managed)" --diagnostic-has "native unavailable"
target unknown-il2cpp "ENABLE_IL2CPP;$unknown_os" --closed \
  --diagnostic-has "path Managed (default)" --diagnostic-has "from RuntimeInformation at run time" --diagnostic-has "The runtime names none of Linux, macOS and Windows"
target macos-il2cpp "UNITY_STANDALONE_OSX;UNITY_STANDALONE;ENABLE_IL2CPP" compile-only
target ios-il2cpp "UNITY_IOS;ENABLE_IL2CPP" compile-only

echo "== The package compiled as Unity's editor compiles it: each .asmdef an assembly of its own, with only the references Unity's rules give it"
# The stand-ins of Unity's assemblies, each a DLL of its own as in Unity: UnityEngine, and UnityEditor referencing it.
mkdir -p "$work/unity"
dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:library -langversion:9 -deterministic -nowarn:1701,1702 "${references[@]}" \
  tests/UnityStandIn/UnityEngine/UnityEngineStandIn.cs -out:"$work/unity/UnityEngine.dll" >"$work/standin.txt" 2>&1 \
&& dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:library -langversion:9 -deterministic -nowarn:1701,1702 "${references[@]}" \
  -reference:"$work/unity/UnityEngine.dll" tests/UnityStandIn/UnityEditor/UnityEditorStandIn.cs -out:"$work/unity/UnityEditor.dll" >>"$work/standin.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/standin.txt"
check $status "the stand-ins compile as assemblies of their own: UnityEngine.dll, and UnityEditor.dll referencing it"
framework=/usr/lib/mono/4.5
[ -f "$framework/mscorlib.dll" ] && [ -f "$framework/Facades/netstandard.dll" ]
check $? "Mono's 4.x profile found ($framework and its Facades, netstandard.dll among them): the stand-in of Unity's .NET Framework level"
dotnet build tests/UnityCompile -c Release -nologo -v quiet -o "$work/tool" >"$work/tool.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/tool.txt"
check $status "tests/UnityCompile builds (the compilation that follows Unity's assembly rules)"
[ "$failed" -eq 0 ] || finish
tool() { dotnet "$work/tool/UnityCompile.dll" "$@"; }
unity_compile() { # <project> <target> <api> <out> [scripting define symbols]: prints the tool's lines; its status
  tool compile --project "$1" --target "$2" --api "$3" --out "$4" --csc "$csc" --standard "$refs" --framework "$framework" \
    --engine "$work/unity/UnityEngine.dll" --editor "$work/unity/UnityEditor.dll" ${5:+--defines "$5"} --warnaserror
}
# A Unity project with the packages embedded (Packages/<name>: the files git tracks or would track, as a user's copy
# holds them): the sockets package, its samples imported where the Package Manager puts them
# (Assets/Samples/<displayName>/<version>/...), and the memory package beside it (a user may install either or both;
# neither references the other).
new_project() { # <folder> [sockets package folder, default src/WhereAllocation]
  local from=${2:-src/WhereAllocation} to="$1/Packages/$(sed -nE 's/^  "name": "([^"]+)",?$/\1/p' src/WhereAllocation/package.json)"
  local memory="$1/Packages/$(sed -nE 's/^  "name": "([^"]+)",?$/\1/p' src/WhereAllocation.Memory/package.json)"
  embed "$from" "$to"
  embed src/WhereAllocation.Memory "$memory"
  mkdir -p "$1/Assets"
  tool import-samples --package "$to" --project "$1" >/dev/null
}
# The imported Echo sample's folder (this version's) in a project.
echo_sample() { find "$1/Assets/Samples" -mindepth 3 -maxdepth 3 -type d -name 'Echo*' -path "*/$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' src/WhereAllocation/package.json)/*" | head -1; }
embed() { # <package folder> <Packages/name>
  mkdir -p "$2"
  (cd "$1" && { git ls-files; git ls-files --others --exclude-standard; } 2>/dev/null | sort -u | while read -r f; do
     [ -f "$f" ] && mkdir -p "$2/$(dirname "$f")" && cp "$f" "$2/$f"; done)
}
# A System.Memory.dll as SDKs and NuGetForUnity leave in Assets/Plugins: its own Span<T>, beside the one .NET Standard 2.1 has.
mkdir -p "$work/stray"
cat >"$work/stray/Span.cs" <<'CS'
namespace System
{
    public readonly ref struct Span<T> { }
    public readonly ref struct ReadOnlySpan<T> { }
}
CS
dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:library "${references[@]}" "$work/stray/Span.cs" -out:"$work/stray/System.Memory.dll" >"$work/stray.txt" 2>&1
check $? "a stray System.Memory.dll with its own Span<T> builds (the planted plugin)"

# A user's own scripts with no .asmdef, as most Unity projects have them: Assets/Scripts/ goes to Assembly-CSharp, which
# sees every auto-referenced assembly (both packages' runtime assemblies) with no reference to add; Assets/Editor/ goes
# to Assembly-CSharp-Editor, which also sees Assembly-CSharp and UnityEditor (EditorBuildRules.cs, above).
with_user_scripts() { # <project>
  mkdir -p "$1/Assets/Scripts" "$1/Assets/Editor"
  cat >"$1/Assets/Scripts/UserServer.cs" <<'CS'
using System.Net;
using System.Net.Sockets;
using UnityEngine;
using WhereAllocation;
using WhereAllocation.Memory;

public sealed class UserServer : MonoBehaviour
{
    private readonly byte[] _buffer = new byte[1500];
    private readonly IPEndPointNonAlloc _from = new IPEndPointNonAlloc(IPAddress.Any, 0);
    private Socket _socket;

    private void OnEnable()
    {
        Debug.Log(DatagramPathSettings.Diagnostic);
        _socket = DatagramSockets.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _socket.Blocking = false;
    }

    private void Update()
    {
        while (_socket.TryReceiveFrom_NonAlloc(_buffer, 0, _buffer.Length, SocketFlags.None, _from, out ReceivedDatagram datagram))
            _socket.TrySendTo_NonAlloc(_buffer, 0, datagram.Length, SocketFlags.None, _from);
    }

    private void OnDisable() => _socket.Dispose();

    public static int ArenaBytes(int frames) => frames * FrameAllocator.DefaultBlockSize;
}
CS
  cat >"$1/Assets/Editor/UserEditorCheck.cs" <<'CS'
using UnityEditor;
using WhereAllocation;

internal static class UserEditorCheck
{
    internal static string Describe(BuildTarget target) => target + ": " + DatagramPathSettings.Diagnostic + ", " + UserServer.ArenaBytes(1);
}
CS
}

# The user's project: the package, this version's sample and a copy of an older release's sample left in the project
# (Unity's import removes an earlier import only where it was put; a moved or copied one stays), and the stray
# System.Memory.dll among the project's plugins.
version=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' src/WhereAllocation/package.json)
project=$work/project
new_project "$project"
mkdir -p "$work/older"; cp -r src/WhereAllocation/. "$work/older/"
bash scripts/unity-version.sh --stamp "$work/older" 0.0.9
tool import-samples --package "$work/older" --project "$project" >/dev/null
mkdir -p "$project/Assets/Plugins"; cp "$work/stray/System.Memory.dll" "$project/Assets/Plugins/"
with_user_scripts "$project"
echo "   project: $(cd "$project" && find . -name '*.asmdef' -o -name '*.dll' | sort | tr '\n' ' ')"
mkdir -p "$work/build"
for target in editor android-il2cpp ios-il2cpp linux-server-il2cpp linux-mono windows-mono windows-il2cpp macos-il2cpp webgl-il2cpp ps5-il2cpp; do
  for api in standard framework; do
    out=$work/build/$target-$api
    unity_compile "$project" "$target" "$api" "$out" >"$out.txt" 2>&1; status=$?
    sed 's/^/  /' "$out.txt"
    check $status "$target, API level $api: every assembly of the target compiles (C# 9, warnings as errors)"
    if [ "$target" = editor ]; then [ -f "$out/WhereAllocation.Editor.dll" ]
    else grep -q "WhereAllocation.Editor: not compiled for $target (includePlatforms Editor)" "$out.txt" && [ ! -f "$out/WhereAllocation.Editor.dll" ]; fi
    check $? "$target, API level $api: the Editor assembly is compiled $([ "$target" = editor ] && echo "for the editor" || echo "for no player")"
    [ -f "$out/WhereAllocation.Memory.dll" ] && [ -f "$out/WhereAllocation.dll" ]
    check $? "$target, API level $api: both packages' runtime assemblies (WhereAllocation, WhereAllocation.Memory) are compiled"
    grep -q "WhereAllocation.Samples.Kcp2kServer.$version: not compiled for $target (defineConstraints MIRROR_89_OR_NEWER)" "$out.txt" \
      && [ ! -f "$out/WhereAllocation.Samples.Kcp2kServer.$version.dll" ]
    check $? "$target, API level $api: the kcp2k sample, imported into a project without Mirror, is skipped (its defineConstraints)"
    grep -q "compiled Assembly-CSharp (.*references WhereAllocation, WhereAllocation.Memory, UnityEngine" "$out.txt" && [ -f "$out/Assembly-CSharp.dll" ]
    check $? "$target, API level $api: the user's scripts under Assets/ with no .asmdef (Assembly-CSharp) compile, seeing both packages with no reference added"
    if [ "$target" = editor ]; then grep -q "compiled Assembly-CSharp-Editor (.*references Assembly-CSharp, WhereAllocation, WhereAllocation.Memory, UnityEngine, UnityEditor" "$out.txt"
    else grep -q "Assembly-CSharp-Editor: not compiled for $target" "$out.txt" && [ ! -f "$out/Assembly-CSharp-Editor.dll" ]; fi
    check $? "$target, API level $api: the user's Assets/Editor scripts (Assembly-CSharp-Editor) compile $([ "$target" = editor ] && echo "for the editor, seeing Assembly-CSharp and both packages" || echo "for no player")"
  done
done
grep -q "\"name\": \"$(sed -nE 's/.*PackageName = "([^"]+)".*/\1/p' src/WhereAllocation/Editor/LinkXmlForUnityLinker.cs)\"" src/WhereAllocation/package.json
check $? "the Editor code names the package as package.json does (the path it hands the linker: Packages/<name>/link.xml)"

echo "== The kcp2k sample where Mirror is: the kcp2k stand-in (tests/Kcp2kStandIn) where Mirror keeps kcp2k, Mirror's define symbols"
# Mirror 89 and later define MIRROR_89_OR_NEWER (the sample's constraint); Mirror 90 and later also MIRROR_90_OR_NEWER,
# and their kcp2k's server reports a connection as Action<int, IPEndPoint> (the stand-in follows the same symbol).
with_kcp2k() { mkdir -p "$1/Assets/Mirror/Transports/KCP/kcp2k"; cp tests/Kcp2kStandIn/kcp2k.asmdef tests/Kcp2kStandIn/Kcp2kStandIn.cs "$1/Assets/Mirror/Transports/KCP/kcp2k/"; }
kcp_project=$work/kcp2k-project
new_project "$kcp_project"; with_kcp2k "$kcp_project"
for defines in "MIRROR;MIRROR_89_OR_NEWER" "MIRROR;MIRROR_89_OR_NEWER;MIRROR_90_OR_NEWER"; do
  for build in editor:standard linux-server-il2cpp:standard linux-server-il2cpp:framework windows-mono:standard android-il2cpp:standard; do
    target=${build%%:*}; api=${build#*:}; out=$work/build/kcp2k-$target-$api-${defines##*;}
    unity_compile "$kcp_project" "$target" "$api" "$out" "$defines" >"$out.txt" 2>&1; status=$?
    [ $status = 0 ] || sed 's/^/  /' "$out.txt"
    grep -q "compiled WhereAllocation.Samples.Kcp2kServer.$version .*references WhereAllocation, kcp2k" "$out.txt"
    check $(( status || $? )) "$target, API level $api, defines $defines: every assembly compiles, the kcp2k sample among them (references WhereAllocation, kcp2k)"
  done
done

echo "== Planted violations: each must fail that compilation (a pass here is a violation rejected)"
planted() { # <name> <target> <the compiler's or Unity's message expected> <mutation command...>
  local name=$1 target=$2 expect=$3; shift 3
  local dir=$work/planted/$name
  new_project "$dir"
  "$@" "$dir" "$dir/Packages/com.where-allocation.core" "$(echo_sample "$dir")"
  unity_compile "$dir" "$target" standard "$dir.out" >"$dir.txt" 2>&1; status=$?
  if [ $status != 0 ] && grep -q -- "$expect" "$dir.txt"; then
    grep -m2 -E "error" "$dir.txt" | sed 's/^/  /'
    check 0 "planted violation rejected: $name ($target: $expect)"
  else
    sed 's/^/  /' "$dir.txt"; check 1 "planted violation rejected: $name ($target: expected a failure with $expect)"
  fi
}
editor_without_engine() { sed -i 's/"noEngineReferences": false/"noEngineReferences": true/' "$2/Editor/WhereAllocation.Editor.asmdef"; }
editor_any_platform() { sed -i 's/"includePlatforms": \["Editor"\]/"includePlatforms": []/' "$2/Editor/WhereAllocation.Editor.asmdef"; }
editor_api_in_runtime() { printf 'using UnityEditor;\n\nnamespace WhereAllocation.Samples\n{\n    internal static class EditorUseOutsideUnityEditor\n    {\n        internal static BuildTarget Target = BuildTarget.NoTarget;\n    }\n}\n' >"$3/EditorUse.cs"; }
sample_without_reference() { sed -i 's/"references": \["WhereAllocation"\]/"references": []/' "$3"/*.asmdef; }
csharp_10() { printf 'namespace WhereAllocation;\n\ninternal static class FileScopedNamespace\n{\n}\n' >"$2/Sockets/FileScoped.cs"; }
stray_dll_unisolated() { mkdir -p "$1/Assets/Plugins"; cp "$work/stray/System.Memory.dll" "$1/Assets/Plugins/"; sed -i 's/"overrideReferences": true/"overrideReferences": false/' "$2/WhereAllocation.asmdef"; }
stray_dll_named() { mkdir -p "$1/Assets/Plugins"; cp "$work/stray/System.Memory.dll" "$1/Assets/Plugins/"; sed -i 's/"precompiledReferences": \[\]/"precompiledReferences": ["System.Memory.dll"]/' "$2/WhereAllocation.asmdef"; }
no_unsafe() { sed -i 's/"allowUnsafeCode": true/"allowUnsafeCode": false/' "$2/WhereAllocation.asmdef"; }
no_rsp() { rm "$2/csc.rsp"; }
fixed_sample_name() { # two imported versions whose sample assembly has one fixed name
  local older=$work/planted/older-fixed; rm -rf "$older"; mkdir -p "$older"; cp -r "$2/." "$older/"
  bash scripts/unity-version.sh --stamp "$older" 0.0.9
  tool import-samples --package "$older" --project "$1" >/dev/null
  sed -i -E 's/^(    "name": ")[^"]*(",?)$/\1WhereAllocation.Samples.Echo\2/' "$1"/Assets/Samples/*/*/*/*.asmdef
}
planted editor-asmdef-noEngineReferences editor "CS0246" editor_without_engine
planted editor-asmdef-any-platform android-il2cpp "CS0246" editor_any_platform
planted editor-api-outside-UNITY_EDITOR android-il2cpp "CS0246" editor_api_in_runtime
# The same file compiles in the editor: Unity gives every assembly UnityEditor in an editor compile, so only the player build shows it.
unity_compile "$work/planted/editor-api-outside-UNITY_EDITOR" editor standard "$work/planted/editor-api-editor.out" >"$work/planted/editor-api-editor.txt" 2>&1
check $? "the same file compiles for the editor (every assembly gets UnityEditor there): only a player build shows the mistake"
planted sample-without-WhereAllocation-reference android-il2cpp "CS0246" sample_without_reference
planted csharp-10-file-scoped-namespace android-il2cpp "CS8773" csharp_10
planted stray-System.Memory-with-overrideReferences-false android-il2cpp "CS0433" stray_dll_unisolated
planted stray-System.Memory-named-in-precompiledReferences android-il2cpp "CS0433" stray_dll_named
planted allowUnsafeCode-false android-il2cpp "CS0227" no_unsafe
planted csc.rsp-removed android-il2cpp "CS8632" no_rsp
planted two-imported-versions-one-sample-name editor "already exists" fixed_sample_name
# The runtime assembly not auto-referenced: a user's script with no .asmdef (Assembly-CSharp) no longer sees it.
not_auto_referenced() { with_user_scripts "$1"; sed -i 's/"autoReferenced": true/"autoReferenced": false/' "$2/WhereAllocation.asmdef"; }
planted runtime-asmdef-autoReferenced-false android-il2cpp "CS0246" not_auto_referenced
# The kcp2k sample: an override whose signature is not kcp2k's (CS0115), the guard removed in a project without Mirror
# (CS0246: the guard is what keeps such a project compiling), and kcp2k's Mirror 90 form without MIRROR_90_OR_NEWER, as
# Mirror 89.11 to 89.x have it (CS1503).
planted_kcp2k() { # <name> <expected message> <define symbols> <kcp2k: yes|no> <mutation of the imported sample folder...>
  local name=$1 expect=$2 defines=$3 kcp=$4; shift 4
  local dir=$work/planted/$name
  new_project "$dir"; [ "$kcp" = yes ] && with_kcp2k "$dir"
  "$@" "$(find "$dir/Assets/Samples" -mindepth 3 -maxdepth 3 -type d -name 'kcp2k*' -path "*/$version/*" | head -1)" "$dir"
  unity_compile "$dir" linux-server-il2cpp standard "$dir.out" "$defines" >"$dir.txt" 2>&1; status=$?
  if [ $status != 0 ] && grep -q -- "$expect" "$dir.txt"; then grep -m2 -E "error" "$dir.txt" | sed 's/^/  /'; check 0 "planted violation rejected: $name (linux-server-il2cpp: $expect)"
  else sed 's/^/  /' "$dir.txt"; check 1 "planted violation rejected: $name (linux-server-il2cpp: expected a failure with $expect)"; fi
}
wrong_override() { sed -i 's/protected override void RawSend(int connectionId, ArraySegment<byte> data)/protected override void RawSend(int connectionId, byte[] data)/' "$1/WhereAllocationKcpServer.cs"; }
no_guard() { sed -i 's/"defineConstraints": \["MIRROR_89_OR_NEWER"\]/"defineConstraints": []/' "$1"/*.asmdef; }
mirror_89_11() { sed -i 's/^#if MIRROR_90_OR_NEWER$/#if true/' "$2/Assets/Mirror/Transports/KCP/kcp2k/Kcp2kStandIn.cs"; }
planted_kcp2k kcp2k-sample-override-with-wrong-signature "CS0115" "MIRROR;MIRROR_89_OR_NEWER" yes wrong_override
planted_kcp2k kcp2k-sample-without-its-guard-no-Mirror "CS0246" "" no no_guard
planted_kcp2k kcp2k-Mirror-90-form-without-MIRROR_90_OR_NEWER "CS1503" "MIRROR;MIRROR_89_OR_NEWER" yes mirror_89_11
# And the model's own reference rules, both ways: a reference by GUID (the .asmdef.meta's) resolves; a GUID that names
# nothing is dropped, as Unity drops it, and the compiler then misses the assembly.
guid=$(sed -nE 's/^guid: //p' src/WhereAllocation/WhereAllocation.asmdef.meta)
by_guid() { sed -i "s/\"references\": \[\"WhereAllocation\"\]/\"references\": [\"GUID:$guid\"]/" "$3"/*.asmdef; }
by_wrong_guid() { sed -i "s/\"references\": \[\"WhereAllocation\"\]/\"references\": [\"GUID:00000000000000000000000000000000\"]/" "$3"/*.asmdef; }
new_project "$work/planted/by-guid"
by_guid "$work/planted/by-guid" "" "$(echo_sample "$work/planted/by-guid")"
unity_compile "$work/planted/by-guid" android-il2cpp standard "$work/planted/by-guid.out" >"$work/planted/by-guid.txt" 2>&1; status=$?
[ $status = 0 ] || cat "$work/planted/by-guid.txt"; grep -q "WhereAllocation.Samples.*references WhereAllocation," "$work/planted/by-guid.txt"
check $(( status || $? )) "the sample referencing WhereAllocation by GUID:$guid compiles and gets the reference"
planted sample-reference-by-unknown-GUID android-il2cpp "CS0246" by_wrong_guid

echo "== The NuGet package's netstandard2.1 assembly in a Unity player (as NuGetForUnity installs it): no UNITY_* define,"
echo "   Unity's Application.platform answered by the UnityEngine stand-in beside it, run on Mono"
dotnet build src/WhereAllocation -c Release -f netstandard2.1 -nologo -v quiet >"$work/nuget.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/nuget.txt"
nuget=artifacts/bin/WhereAllocation/Release/netstandard2.1/WhereAllocation.dll
check $status "the NuGet package's netstandard2.1 assembly builds ($nuget)"
nuget_run() { # <name> <RuntimePlatform name, or none: no UnityEngine beside it> [TrimCheck arguments...]
  local name=$1 platform=$2; shift 2
  echo "== nuget-$name (Application.platform: $platform)"
  mkdir -p "$work/nuget-$name"
  cp "$nuget" "$work/app/TrimCheck.dll" "$work/nuget-$name/"
  [ "$platform" = none ] || cp "$work/unity/UnityEngine.dll" "$work/nuget-$name/"
  WHEREALLOCATION_STANDIN_PLATFORM=$([ "$platform" = none ] || echo "$platform") timeout 300 mono "$work/nuget-$name/TrimCheck.dll" "$@" | sed 's/^/  /'
  check "${PIPESTATUS[0]}" "nuget-$name: its checks pass on Mono ($*)"
}
nuget_run android Android --diagnostic-has "path Native (default)" \
  --diagnostic-has "OS calls Linux (from Unity's Application.platform at run time: Android)" --diagnostic-has "native available"
nuget_run ios IPhonePlayer --closed --reset-rearms --diagnostic-has "path Managed (default)" \
  --diagnostic-has "Unity names this player IPhonePlayer" --diagnostic-has "__Internal" --diagnostic-has "Install the Unity package com.where-allocation.core"
nuget_run ps5 PS5 --closed --diagnostic-has "path Managed (default)" --diagnostic-has "Unity names this player PS5"
nuget_run editor LinuxEditor --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (from RuntimeInformation at run time)"
nuget_run no-unity none --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (from RuntimeInformation at run time)"
finish
