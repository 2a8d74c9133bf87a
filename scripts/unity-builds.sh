#!/usr/bin/env bash
# The library compiled as Unity compiles the package for each target family, and each build checked on this machine's
# Mono (Linux). Unity compiles a package's sources itself, with C# 9, against .NET Standard 2.1, with the defines of the
# build target (UNITY_ANDROID, UNITY_STANDALONE_LINUX, ...; UNITY_EDITOR in the Editor; ENABLE_IL2CPP for IL2CPP); this
# script does the same with the SDK's compiler. WHEREALLOCATION_CHECK_OS_UNKNOWN makes the build's run-time OS question
# answer "unknown" for everything, as IL2CPP's RuntimeInformation does on Android, consoles and WebGL. Each build replaces
# the library beside tests/Checks/TrimCheck, which then checks (see its header):
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
#   macos-il2cpp, ios-il2cpp   compiled only (their calls cannot run on Linux; no-jit.sh checks the iOS names)
# Every run also checks that the Managed path never asks for SocketFlags.Truncated (Mono refuses it, as IL2CPP's socket
# layer does) and still reports a cut datagram.
#
# Then the package compiled as Unity's editor compiles it (tests/Unity/Compile, which says in detail what it models and
# where each rule was read in Unity's C# reference source, Unity-Technologies/UnityCsReference): every .asmdef an
# assembly of its own, compiled with C# 9 against stand-ins of UnityEngine.dll and UnityEditor.dll that are assemblies
# of their own (tests/Unity/StandIns), with only the references Unity's rules give it (EditorBuildRules.cs,
# EditorCompilation.cs), the defines of the build target and the project's Scripting Define Symbols for that target's
# NamedBuildTarget (a Dedicated Server: Server's list; NamedBuildTarget.cs), and the csc.rsp ResponseFileProvider.cs
# finds (Editor/Mono/Scripting/Compilers/). The projects:
#   - the user's project: both packages embedded under Packages/, the Echo sample imported where the Package Manager
#     puts it (PackageManager.UI.Sample.importPath) with an older release's import left beside it, NuGet's
#     System.Memory.dll among the plugins (tests/Unity/StandIns/StraySystemMemory), a user's scripts with no .asmdef
#     (Assets/Scripts: Assembly-CSharp; Assets/Editor: Assembly-CSharp-Editor); compiled for the editor and nine
#     players (Android, iOS, Linux Dedicated Server, Linux, Windows Mono and IL2CPP, macOS, WebGL, PS5) at both API
#     compatibility levels (.NET Standard 2.1: the netstandard.library.ref reference assemblies; ".NET Framework":
#     Mono's 4.x profile in /usr/lib/mono/4.5 and its Facades). The Editor assembly's linker callback is then called as
#     Unity calls it, and must return the package's link.xml;
#   - a cached install: both packages in Library/PackageCache/<name>@<hash> (a registry, git or tarball install),
#     whose own csc.rsp Unity 2021.3-6000.4 never find, and the user's Assets/csc.rsp saying -warnaserror, which they
#     get instead; compiled as Unity compiles (warnings are errors only by that csc.rsp); the linker callback must find
#     link.xml in the cache (FileUtil.GetPhysicalPath, modelled in the UnityEditor stand-in);
#   - Mirror projects: stand-ins of Mirror's Transport and KcpTransport (tests/Unity/StandIns/Mirror) and of its kcp2k
#     (tests/Unity/StandIns/Kcp2k), in Mirror 89.7's or 90's surface; the kcp2k sample imported; the user's transport taken from
#     the sample's README (Assembly-CSharp); the Standalone and Android lists holding Mirror's symbols as its
#     PreprocessorDefine.cs writes them (MirrorNetworking/Mirror: releases 89.x, 90-92, 96, and a projected next
#     rotation), the Server and WebGL lists none, as Mirror leaves them. Compiled for the Dedicated Server, Linux,
#     Windows, Android, WebGL and the editor: the sample and the transport must compile on each;
#   - the kcp2k sample imported without Mirror: it must fail loudly (CS0246 naming kcp2k).
#   - the Mirage socket sample imported with a stand-in of Mirage's SocketLayer (tests/Unity/StandIns/Mirage) installed as
#     the package com.miragenet.mirage (158.3.5, and 156.2.0, its guard's lower bound): it compiles for each target family;
#     with Mirage 156.1.0 and without Mirage its guard (versionDefines on that package) skips it and the project compiles.
# Stricter than Unity elsewhere: warnings are errors. Planted violations prove the compilation can fail: each is a copy
# of a project with one mistake, which must fail with the compiler's (or Unity's) own message; "planted violation
# rejected" counts as a pass. And: every .cs file the packages compile begins with #nullable enable (a csc.rsp is not
# found in every install); a user's asmdef referencing the package by its released GUID survives a renamed .asmdef.
#
# Last, the NuGet package's netstandard2.1 assembly (compiled without Unity's defines) beside the UnityEngine stand-in,
# whose Application.platform answers what the check sets, run by tests/Checks/TrimCheck on Mono: Android takes the Linux
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
# Every source file the packages compile (their runtime and Editor assemblies; the samples are the user's code, compiled
# as Unity's default, nullable off) turns nullable on itself: a csc.rsp is not found in every install (below).
missing=$({ git ls-files -- 'src/WhereAllocation/*.cs' 'src/WhereAllocation.Memory/*.cs'; git ls-files --others --exclude-standard -- 'src/WhereAllocation/*.cs' 'src/WhereAllocation.Memory/*.cs'; } \
  | grep -v '/Samples~/' | sort -u | while read -r f; do [ ! -f "$f" ] || [ "$(head -1 "$f")" = '#nullable enable' ] || echo "$f"; done)
[ -z "$missing" ]; check $? "every .cs file of both packages (not the samples) begins with #nullable enable${missing:+; missing in: $(echo $missing)}"
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
compile "$work/app/TrimCheck.dll" exe "" -reference:"$work/plain/WhereAllocation.dll" tests/Checks/TrimCheck/Program.cs >"$work/app.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/app.txt"; check $status "tests/Checks/TrimCheck compiles against it"
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
  tests/Unity/StandIns/UnityEngine/UnityEngineStandIn.cs -out:"$work/unity/UnityEngine.dll" >"$work/standin.txt" 2>&1 \
&& dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:library -langversion:9 -deterministic -nowarn:1701,1702 "${references[@]}" \
  -reference:"$work/unity/UnityEngine.dll" tests/Unity/StandIns/UnityEditor/UnityEditorStandIn.cs -out:"$work/unity/UnityEditor.dll" >>"$work/standin.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/standin.txt"
check $status "the stand-ins compile as assemblies of their own: UnityEngine.dll, and UnityEditor.dll referencing it"
framework=/usr/lib/mono/4.5
[ -f "$framework/mscorlib.dll" ] && [ -f "$framework/Facades/netstandard.dll" ]
check $? "Mono's 4.x profile found ($framework and its Facades, netstandard.dll among them): the stand-in of Unity's .NET Framework level"
dotnet build tests/Unity/Compile -c Release -nologo -v quiet -o "$work/tool" >"$work/tool.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/tool.txt"
check $status "tests/Unity/Compile builds (the compilation that follows Unity's assembly rules)"
[ "$failed" -eq 0 ] || finish
tool() { dotnet "$work/tool/UnityCompile.dll" "$@"; }
unity_compile() { # <project> <target> <api> <out> [as-unity]: prints the tool's lines; its status. Warnings are errors
  # (stricter than Unity) unless "as-unity" is given: then only a csc.rsp saying -warnaserror makes them errors.
  tool compile --project "$1" --target "$2" --api "$3" --out "$4" --csc "$csc" --standard "$refs" --framework "$framework" \
    --engine "$work/unity/UnityEngine.dll" --editor "$work/unity/UnityEditor.dll" $([ "${5:-}" = as-unity ] || echo --warnaserror)
}
linker_callback() { # <project> <an editor compile's output>: the Editor assembly's linker callback, called as Unity calls it
  tool linker-callback --project "$1" --assemblies "$2" --engine "$work/unity/UnityEngine.dll" --editor "$work/unity/UnityEditor.dll"
}
sockets_name=$(sed -nE 's/^  "name": "([^"]+)",?$/\1/p' src/WhereAllocation/package.json)
memory_name=$(sed -nE 's/^  "name": "([^"]+)",?$/\1/p' src/WhereAllocation.Memory/package.json)
version=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' src/WhereAllocation/package.json)
# A Unity project with the packages embedded (Packages/<name>: the files git tracks or would track, as a user's copy
# holds them): the sockets package, its Echo sample imported where the Package Manager puts it
# (Assets/Samples/<displayName>/<version>/...), and the memory package beside it (a user may install either or both;
# neither references the other). "cached" instead puts both where a registry, git or tarball install puts them, the
# project's package cache (Library/PackageCache/<name>@<hash>), with the manifest entry a tarball install writes.
new_project() { # <folder> [sockets package folder, default src/WhereAllocation] [embedded|cached]
  local from=${2:-src/WhereAllocation} mode=${3:-embedded} to memory
  if [ "$mode" = cached ]; then
    to="$1/Library/PackageCache/$sockets_name@0f3c9a1e27"; memory="$1/Library/PackageCache/$memory_name@5be04d7c81"
    mkdir -p "$1/Packages"
    printf '{\n  "dependencies": {\n    "%s": "file:../%s-%s.tgz",\n    "%s": "file:../%s-%s.tgz"\n  }\n}\n' \
      "$sockets_name" "$sockets_name" "$version" "$memory_name" "$memory_name" "$version" >"$1/Packages/manifest.json"
  else
    to="$1/Packages/$sockets_name"; memory="$1/Packages/$memory_name"
  fi
  embed "$from" "$to"
  embed src/WhereAllocation.Memory "$memory"
  mkdir -p "$1/Assets"
  tool import-samples --package "$to" --project "$1" --only Echo >/dev/null
}
# The package folder of the sockets package in a project, wherever the mode put it.
sockets_package() { find "$1/Packages" "$1/Library/PackageCache" -maxdepth 1 -mindepth 1 -type d -name "$sockets_name*" 2>/dev/null | head -1; }
# The imported Echo sample's folder (this version's) in a project.
echo_sample() { find "$1/Assets/Samples" -mindepth 3 -maxdepth 3 -type d -name 'Echo*' -path "*/$version/*" | head -1; }
embed() { # <package folder> <Packages/name>
  mkdir -p "$2"
  (cd "$1" && { git ls-files; git ls-files --others --exclude-standard; } 2>/dev/null | sort -u | while read -r f; do
     [ -f "$f" ] && mkdir -p "$2/$(dirname "$f")" && cp "$f" "$2/$f"; done)
}
# A System.Memory.dll as NuGetForUnity and older SDKs leave in Assets/Plugins: NuGet's System.Memory 4.5.x, whose own
# Span<T>, MemoryExtensions.AsSpan and MemoryMarshal sit beside .NET Standard 2.1's (tests/Unity/StandIns/StraySystemMemory).
mkdir -p "$work/stray"
dotnet "$csc" -shared -nologo -noconfig -nostdlib -target:library -langversion:9 -nowarn:0436,1701,1702 "${references[@]}" \
  tests/Unity/StandIns/StraySystemMemory/SystemMemoryStandIn.cs -out:"$work/stray/System.Memory.dll" >"$work/stray.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/stray.txt"
check $status "a stray System.Memory.dll as NuGet's 4.5.x has it (Span<T>, MemoryExtensions, MemoryMarshal) builds (the planted plugin)"

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

# The user's project: the package, this version's Echo sample and a copy of an older release's import left in the
# project (Unity's import removes an earlier import only where it was put; a moved or copied one stays), and the stray
# System.Memory.dll among the project's plugins.
project=$work/project
new_project "$project"
mkdir -p "$work/older"; cp -r src/WhereAllocation/. "$work/older/"
bash scripts/unity-version.sh --stamp "$work/older" 0.0.9
tool import-samples --package "$work/older" --project "$project" --only Echo >/dev/null
mkdir -p "$project/Assets/Plugins"; cp "$work/stray/System.Memory.dll" "$project/Assets/Plugins/"
with_user_scripts "$project"
echo "   project: $(cd "$project" && find . -name '*.asmdef' -o -name '*.dll' | sort | tr '\n' ' ')"
mkdir -p "$work/build"
for target in editor android-il2cpp ios-il2cpp linux-server-il2cpp linux-mono windows-mono windows-il2cpp macos-il2cpp webgl-il2cpp ps5-il2cpp; do
  for api in standard framework; do
    out=$work/build/$target-$api
    unity_compile "$project" "$target" "$api" "$out" >"$out.txt" 2>&1; status=$?
    sed 's/^/  /' "$out.txt"
    check $status "$target, API level $api: every assembly of the target compiles (C# 9, warnings as errors), the samples isolated from the stray System.Memory.dll"
    if [ "$target" = editor ]; then [ -f "$out/WhereAllocation.Editor.dll" ]
    else grep -q "WhereAllocation.Editor: not compiled for $target (includePlatforms Editor)" "$out.txt" && [ ! -f "$out/WhereAllocation.Editor.dll" ]; fi
    check $? "$target, API level $api: the Editor assembly is compiled $([ "$target" = editor ] && echo "for the editor" || echo "for no player")"
    [ -f "$out/WhereAllocation.Memory.dll" ] && [ -f "$out/WhereAllocation.dll" ]
    check $? "$target, API level $api: both packages' runtime assemblies (WhereAllocation, WhereAllocation.Memory) are compiled"
    grep -q "compiled Assembly-CSharp (.*references WhereAllocation, WhereAllocation.Memory, UnityEngine" "$out.txt" && [ -f "$out/Assembly-CSharp.dll" ]
    check $? "$target, API level $api: the user's scripts under Assets/ with no .asmdef (Assembly-CSharp) compile, seeing both packages with no reference added"
    if [ "$target" = editor ]; then grep -q "compiled Assembly-CSharp-Editor (.*references Assembly-CSharp, WhereAllocation, WhereAllocation.Memory, UnityEngine, UnityEditor" "$out.txt"
    else grep -q "Assembly-CSharp-Editor: not compiled for $target" "$out.txt" && [ ! -f "$out/Assembly-CSharp-Editor.dll" ]; fi
    check $? "$target, API level $api: the user's Assets/Editor scripts (Assembly-CSharp-Editor) compile $([ "$target" = editor ] && echo "for the editor, seeing Assembly-CSharp and both packages" || echo "for no player")"
  done
done
grep -q "\"name\": \"$(sed -nE 's/.*PackageName = "([^"]+)".*/\1/p' src/WhereAllocation/Editor/LinkXmlForUnityLinker.cs)\"" src/WhereAllocation/package.json
check $? "the Editor code names the package as package.json does (the logical path it resolves: Packages/<name>/link.xml)"
linker_callback "$project" "$work/build/editor-standard" >"$work/linker-embedded.txt" 2>&1; status=$?
sed 's/^/  /' "$work/linker-embedded.txt"
grep -q "returned $project/Packages/$sockets_name/link.xml (exists)" "$work/linker-embedded.txt"
check $(( status || $? )) "embedded install: the Editor assembly's linker callback, called as Unity calls it, returns the package's link.xml"

echo "== A cached install (registry, git or tarball: Library/PackageCache/<name>@<hash>) in a project whose Assets/csc.rsp says -warnaserror"
# Unity 2021.3 to 6000.4 look for a package's csc.rsp at its logical folder joined to the project's (Packages/<name>/),
# where a cached package is not, and then take Assets/csc.rsp: the package compiles with the user's options and
# without its own (ResponseFileProvider.cs). Compiled as Unity compiles, warnings errors only where a csc.rsp says so.
cached=$work/cached
new_project "$cached" src/WhereAllocation cached
with_user_scripts "$cached"
printf -- '-warnaserror -define:USER_RSP_SYMBOL\n' >"$cached/Assets/csc.rsp"
# A user's assembly compiled only where that csc.rsp defines its symbol (CustomScriptAssembly.IsCompatibleWith merges
# the response file's defines into what defineConstraints see).
mkdir -p "$cached/Assets/RspGated"
printf '{\n    "name": "RspGated",\n    "defineConstraints": ["USER_RSP_SYMBOL"]\n}\n' >"$cached/Assets/RspGated/RspGated.asmdef"
printf 'namespace RspGated\n{\n    internal static class Gated\n    {\n    }\n}\n' >"$cached/Assets/RspGated/Gated.cs"
for target in editor android-il2cpp linux-server-il2cpp; do
  out=$work/build/cached-$target
  unity_compile "$cached" "$target" standard "$out" as-unity >"$out.txt" 2>&1; status=$?
  sed 's/^/  /' "$out.txt"
  check $status "cached, $target: every assembly compiles under the project's Assets/csc.rsp (-warnaserror), the package's own csc.rsp not found"
  grep -q "compiled WhereAllocation (.*Assets/csc.rsp -warnaserror" "$out.txt"
  check $? "cached, $target: the package's runtime assembly got Assets/csc.rsp, as ResponseFileProvider gives it"
done
grep -q "compiled RspGated (.*Assets/csc.rsp" "$work/build/cached-android-il2cpp.txt"
check $? "cached: a user's assembly constrained on a symbol of Assets/csc.rsp is compiled (the response file's defines count)"
# The same project without the user's csc.rsp: the package compiles with no warning at all, whichever csc.rsp is found.
rm "$cached/Assets/csc.rsp"
unity_compile "$cached" editor standard "$work/build/cached-no-rsp" as-unity >"$work/build/cached-no-rsp.txt" 2>&1; status=$?
sed 's/^/  /' "$work/build/cached-no-rsp.txt"
grep -E "compiled WhereAllocation(\.Memory|\.Editor)? " "$work/build/cached-no-rsp.txt" | grep -q "warning(s)"; [ $? != 0 ]
check $(( status || $? )) "cached, no csc.rsp at all: the packages' assemblies compile with no warning (nothing depends on a csc.rsp being found)"
grep -q "RspGated: not compiled for editor (defineConstraints USER_RSP_SYMBOL)" "$work/build/cached-no-rsp.txt"
check $? "cached, no csc.rsp: the same user assembly is skipped (its symbol is gone with the response file)"
linker_callback "$cached" "$work/build/cached-no-rsp" >"$work/linker-cached.txt" 2>&1; status=$?
sed 's/^/  /' "$work/linker-cached.txt"
grep -q "returned .*/Library/PackageCache/$sockets_name@[0-9a-f]*/link.xml (exists)" "$work/linker-cached.txt"
check $(( status || $? )) "cached install: the linker callback returns the package's link.xml where the package really is (FileUtil.GetPhysicalPath)"

echo "== The kcp2k sample where Mirror is: stand-ins of Mirror (tests/Unity/StandIns/Mirror) and its kcp2k (tests/Unity/StandIns/Kcp2k),"
echo "   the project's define symbols per build target as Mirror writes them, the user's transport from the sample's README"
# Mirror's editor script adds its MIRROR_* symbols to the list of EditorUserBuildSettings.selectedBuildTargetGroup, through
# NamedBuildTarget.FromBuildTargetGroup (Assets/Mirror/CompilerSymbols/PreprocessorDefine.cs): for a Dedicated Server
# that is Standalone, never Server, whose list a Dedicated Server build compiles with. It keeps "a rolling 12 months":
# the symbols each release writes into a fresh project's list (read at the tags named).
mirror_symbols() { # <era>
  case "$1" in
    m89) echo "MIRROR;MIRROR_79_OR_NEWER;MIRROR_81_OR_NEWER;MIRROR_82_OR_NEWER;MIRROR_83_OR_NEWER;MIRROR_84_OR_NEWER;MIRROR_85_OR_NEWER;MIRROR_86_OR_NEWER;MIRROR_89_OR_NEWER" ;;  # v89.0.0 to v89.15.7
    m90) echo "MIRROR;MIRROR_81_OR_NEWER;MIRROR_82_OR_NEWER;MIRROR_83_OR_NEWER;MIRROR_84_OR_NEWER;MIRROR_85_OR_NEWER;MIRROR_86_OR_NEWER;MIRROR_89_OR_NEWER;MIRROR_90_OR_NEWER" ;;  # v90.0.0 to v92.4.1
    m96) echo "MIRROR;MIRROR_89_OR_NEWER;MIRROR_90_OR_NEWER;MIRROR_93_OR_NEWER;MIRROR_96_OR_NEWER" ;;  # v96.0.0 to v96.11.0 (96.0.0 dropped 81-86)
    # A projection, not a release: the next rotation dropping 89 and 90 as 96.0.0 dropped 81-86.
    projected) echo "MIRROR;MIRROR_93_OR_NEWER;MIRROR_96_OR_NEWER;MIRROR_99_OR_NEWER" ;;
  esac
}
mirror_settings() { # <project> <era>: ProjectSettings.asset's scriptingDefineSymbols as Mirror leaves them (Standalone and
  # Android, the groups a user selected; Server and the rest untouched)
  mkdir -p "$1/ProjectSettings"
  printf 'PlayerSettings:\n  scriptingDefineSymbols:\n    Android: %s\n    Standalone: %s\n  additionalCompilerArguments: {}\n' \
    "$(mirror_symbols "$2")" "$(mirror_symbols "$2")" >"$1/ProjectSettings/ProjectSettings.asset"
}
with_mirror() { # <project> <89.7|90>: Mirror's core, its transports and its kcp2k as Mirror lays them out, in the
  # surface of that version (a csc.rsp beside each stand-in's .asmdef fixes it, as the installed Mirror fixes its code)
  local m=$1/Assets/Mirror
  mkdir -p "$m/Core" "$m/Transports/KCP/kcp2k"
  cp tests/Unity/StandIns/Mirror/Core/* "$m/Core/"; cp tests/Unity/StandIns/Mirror/Transports/* "$m/Transports/"
  cp tests/Unity/StandIns/Kcp2k/kcp2k.asmdef tests/Unity/StandIns/Kcp2k/kcp2k.asmdef.meta tests/Unity/StandIns/Kcp2k/Kcp2kStandIn.cs "$m/Transports/KCP/kcp2k/"
  [ "$2" = 90 ] && for f in "$m/Core" "$m/Transports" "$m/Transports/KCP/kcp2k"; do printf -- '-define:STANDIN_MIRROR_90\n' >"$f/csc.rsp"; done
  return 0
}
# The user's transport, as the sample's README gives it (its C# blocks in order: Mirror 89.11 and later, then Mirror
# 89.7 to 89.10), as a script with no .asmdef (Assembly-CSharp).
readme=src/WhereAllocation/Samples~/Kcp2kServer/README.md
user_transport() { # <project> <block number>
  mkdir -p "$1/Assets/Scripts"
  awk -v want="$2" '/^```csharp/{n++; on=(n==want); next} /^```/{on=0} on' "$readme" >"$1/Assets/Scripts/WhereAllocationKcpTransport.cs"
  [ -s "$1/Assets/Scripts/WhereAllocationKcpTransport.cs" ]
}
mirror_project() { # <folder> <Mirror surface 89.7|90> <era> <README block>
  new_project "$1"; with_mirror "$1" "$2"; mirror_settings "$1" "$3"
  tool import-samples --package "$(sockets_package "$1")" --project "$1" --only Kcp2kServer >/dev/null
  user_transport "$1" "$4"
}
mirror_build() { # <project> <target> <api> <what>: the sample and the user's transport compile for the target
  local out=$work/build/$(basename "$1")-$2-$3
  unity_compile "$1" "$2" "$3" "$out" >"$out.txt" 2>&1; local status=$?
  [ $status = 0 ] || sed 's/^/  /' "$out.txt"
  grep -m1 "scripting define symbols" "$out.txt" | sed 's/^/  /'
  grep -q "class WhereAllocation.*KcpTransport" "$1/Assets/Scripts/WhereAllocationKcpTransport.cs" \
    && grep -q "compiled WhereAllocation.Samples.Kcp2kServer.$version .*references WhereAllocation, kcp2k" "$out.txt" \
    && grep -q "compiled Assembly-CSharp (.*references .*WhereAllocation.Samples.Kcp2kServer.$version" "$out.txt"
  check $(( status || $? )) "$4, $2, API level $3: the kcp2k sample and the user's transport (Assembly-CSharp, the README's code) compile"
}
mirror_project "$work/mirror89" 89.7 m89 2 \
  && check 0 "Mirror 89.7 project: the README's Mirror 89.7-89.10 transport found" || check 1 "Mirror 89.7 project: the README's Mirror 89.7-89.10 transport found"
for build in linux-server-il2cpp:standard linux-mono:standard android-il2cpp:standard editor:standard; do
  mirror_build "$work/mirror89" "${build%%:*}" "${build#*:}" "Mirror 89.7, its symbols in Standalone and Android"
done
mirror_project "$work/mirror96" 90 m96 1 \
  && check 0 "Mirror 96 project: the README's Mirror 89.11-and-later transport found" || check 1 "Mirror 96 project: the README's Mirror 89.11-and-later transport found"
for build in linux-server-il2cpp:standard linux-server-il2cpp:framework windows-il2cpp:standard webgl-il2cpp:standard editor:standard; do
  mirror_build "$work/mirror96" "${build%%:*}" "${build#*:}" "Mirror 96, its symbols in Standalone and Android"
done
mirror_project "$work/mirror89-11" 90 m89 1
mirror_build "$work/mirror89-11" linux-mono standard "Mirror 89.11-89.15 (kcp2k's new form, MIRROR_89_OR_NEWER without MIRROR_90_OR_NEWER)"
mirror_project "$work/mirror90" 90 m90 1
mirror_build "$work/mirror90" linux-server-il2cpp standard "Mirror 90, its symbols in Standalone and Android"
mirror_project "$work/mirror-rotated" 90 projected 1
for target in linux-mono linux-server-il2cpp; do
  mirror_build "$work/mirror-rotated" "$target" standard "Mirror after the next rotation (projected: no MIRROR_89/90_OR_NEWER)"
done
# The sample imported where there is no kcp2k: no guard hides it, so it fails loudly, naming kcp2k.
nomirror=$work/kcp2k-without-mirror
new_project "$nomirror"; tool import-samples --package "$(sockets_package "$nomirror")" --project "$nomirror" --only Kcp2kServer >/dev/null
unity_compile "$nomirror" linux-mono standard "$work/build/no-mirror" >"$work/build/no-mirror.txt" 2>&1; status=$?
grep -m3 "error" "$work/build/no-mirror.txt" | sed 's/^/  /'
[ $status != 0 ] && grep -q "error CS0246: The type or namespace name 'kcp2k'" "$work/build/no-mirror.txt"
check $? "the kcp2k sample imported into a project without Mirror fails loudly (CS0246 naming kcp2k), never skipped in silence"

echo "== The Mirage socket sample: with Mirage (a stand-in of its SocketLayer at 158.3.5, tests/Unity/StandIns/Mirage, installed"
echo "   as the package com.miragenet.mirage) and without; its asmdef's versionDefines on that package is its guard"
mirage_sample=src/WhereAllocation/Samples~/MirageSocket
with_mirage() { # <project> [version]: the stand-in where a UPM install puts Mirage (its package root is Mirage's Assets/Mirage)
  local m=$1/Packages/com.miragenet.mirage
  mkdir -p "$m"; cp tests/Unity/StandIns/Mirage/package.json "$m/"; cp -r tests/Unity/StandIns/Mirage/Runtime "$m/"
  [ -z "${2:-}" ] || sed -i -E "s/(\"version\": \")[^\"]*/\1$2/" "$m/package.json"
}
# The user's side as the sample's README gives it: a script with no .asmdef (Assembly-CSharp) holding the factory.
user_factory() { # <project>
  mkdir -p "$1/Assets/Scripts"
  printf 'using UnityEngine;\nusing WhereAllocation.Samples;\n\npublic sealed class GameSockets : MonoBehaviour\n{\n    public WhereAllocationSocketFactory Factory;\n\n    public int PacketSize() => Factory.MaxPacketSize;\n}\n' >"$1/Assets/Scripts/GameSockets.cs"
}
mirage_project() { # <folder> [Mirage version]: Mirage installed (unless the version is "none"), the sample imported
  new_project "$1"; [ "${2:-}" = none ] || with_mirage "$1" "${2:-}"
  tool import-samples --package "$(sockets_package "$1")" --project "$1" --only MirageSocket >/dev/null
}
mirage_project "$work/mirage"; user_factory "$work/mirage"
for build in linux-server-il2cpp:standard linux-mono:standard android-il2cpp:standard ios-il2cpp:standard macos-il2cpp:standard windows-il2cpp:framework editor:standard; do
  target=${build%%:*} api=${build#*:} out=$work/build/mirage-${build%%:*}-${build#*:}
  unity_compile "$work/mirage" "$target" "$api" "$out" >"$out.txt" 2>&1; status=$?
  [ $status = 0 ] || sed 's/^/  /' "$out.txt"
  grep -q "compiled WhereAllocation.Samples.MirageSocket.$version .*references WhereAllocation, Mirage.SocketLayer, UnityEngine" "$out.txt" \
    && grep -q "compiled Assembly-CSharp (.*references .*WhereAllocation.Samples.MirageSocket.$version" "$out.txt"
  check $(( status || $? )) "Mirage 158.3.5, $target, API level $api: the Mirage sample compiles (WHEREALLOCATION_MIRAGE_SOCKET from versionDefines) and a user's script sees its factory"
done
mirage_project "$work/mirage-156.2.0" 156.2.0
unity_compile "$work/mirage-156.2.0" linux-mono standard "$work/build/mirage-156.2.0" >"$work/build/mirage-156.2.0.txt" 2>&1; status=$?
grep -q "compiled WhereAllocation.Samples.MirageSocket.$version " "$work/build/mirage-156.2.0.txt"
check $(( status || $? )) "Mirage 156.2.0 (the guard's lower bound): the Mirage sample compiles"
for mirage in 156.1.0 none; do
  mirage_project "$work/mirage-$mirage" "$mirage"
  unity_compile "$work/mirage-$mirage" linux-mono standard "$work/build/mirage-$mirage" >"$work/build/mirage-$mirage.txt" 2>&1; status=$?
  [ $status = 0 ] || sed 's/^/  /' "$work/build/mirage-$mirage.txt"
  grep "MirageSocket" "$work/build/mirage-$mirage.txt" | sed 's/^/  /'
  grep -q "WhereAllocation.Samples.MirageSocket.$version: not compiled for linux-mono (defineConstraints WHEREALLOCATION_MIRAGE_SOCKET)" "$work/build/mirage-$mirage.txt" \
    && [ ! -f "$work/build/mirage-$mirage/WhereAllocation.Samples.MirageSocket.$version.dll" ]
  check $(( status || $? )) "$([ $mirage = none ] && echo "no Mirage in the project" || echo "Mirage $mirage (older than the push-based ISocket with Flush)"): the Mirage sample is skipped by its guard and the project compiles"
done

echo "== Planted violations: each must fail that compilation (a pass here is a violation rejected)"
planted() { # <name> <target> <the compiler's or Unity's message expected> <mutation command...>; PLANTED_MODE=cached, PLANTED_AS_UNITY=1
  local name=$1 target=$2 expect=$3; shift 3
  local dir=$work/planted/$name
  new_project "$dir" src/WhereAllocation "${PLANTED_MODE:-embedded}"
  "$@" "$dir" "$(sockets_package "$dir")" "$(echo_sample "$dir")"
  unity_compile "$dir" "$target" standard "$dir.out" $([ -n "${PLANTED_AS_UNITY:-}" ] && echo as-unity) >"$dir.txt" 2>&1; status=$?
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
stray_dll_sample() { mkdir -p "$1/Assets/Plugins"; cp "$work/stray/System.Memory.dll" "$1/Assets/Plugins/"; sed -i 's/"overrideReferences": true/"overrideReferences": false/' "$3"/*.asmdef; }
no_unsafe() { sed -i 's/"allowUnsafeCode": true/"allowUnsafeCode": false/' "$2/WhereAllocation.asmdef"; }
fixed_sample_name() { # two imported versions whose sample assembly has one fixed name
  local older=$work/planted/older-fixed; rm -rf "$older"; mkdir -p "$older"; cp -r "$2/." "$older/"
  bash scripts/unity-version.sh --stamp "$older" 0.0.9
  tool import-samples --package "$older" --project "$1" --only Echo >/dev/null
  sed -i -E 's/^(    "name": ")[^"]*(",?)$/\1WhereAllocation.Samples.Echo\2/' "$1"/Assets/Samples/*/*/*/*.asmdef
}
# An old source copy of the library among the user's plugins, its asmdef named as the package's but for the case.
name_taken_case() { mkdir -p "$1/Assets/Plugins/OldCopy"; printf '{\n    "name": "whereallocation"\n}\n' >"$1/Assets/Plugins/OldCopy/whereallocation.asmdef"
  printf 'namespace OldCopy\n{\n    internal static class Old\n    {\n    }\n}\n' >"$1/Assets/Plugins/OldCopy/Old.cs"; }
memory_named_as_sockets() { sed -i -E 's/^(    "name": ")WhereAllocation.Memory(",?)$/\1WhereAllocation\2/' "$1/Packages/$memory_name/WhereAllocation.Memory.asmdef"; }
reserved_name() { sed -i -E 's/^(    "name": ")[^"]*(",?)$/\1System.Memory\2/' "$3"/*.asmdef; }
two_in_one_folder() { cp "$3"/*.asmdef "$3/Second.asmdef"; sed -i -E 's/^(    "name": ")[^"]*(",?)$/\1Second\2/' "$3/Second.asmdef"; }
invalid_constraint() { sed -i 's/"noEngineReferences": false/"defineConstraints": ["9LIVES"],\n    "noEngineReferences": false/' "$3"/*.asmdef; }
# A package source without its own "#nullable enable", in a cached install whose Assets/csc.rsp says -warnaserror.
no_nullable_directive() { printf -- '-warnaserror\n' >"$1/Assets/csc.rsp"; f=$(grep -l '?' "$2"/Peers/PeerTable.cs); sed -i '/^#nullable enable$/d' "$f"; rm -f "$2/csc.rsp"; }
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
planted stray-System.Memory-Echo-sample-overrideReferences-false android-il2cpp "CS0121" stray_dll_sample
planted allowUnsafeCode-false android-il2cpp "CS0227" no_unsafe
planted two-imported-versions-one-sample-name editor "already exists" fixed_sample_name
planted asmdef-name-taken-but-for-case android-il2cpp "Assembly with name 'WhereAllocation' already exists\|Assembly with name 'whereallocation' already exists" name_taken_case
planted two-packages-one-asmdef-name android-il2cpp "already exists" memory_named_as_sockets
planted asmdef-reserved-name android-il2cpp "Assembly cannot be have reserved name 'System.Memory'" reserved_name
planted two-asmdefs-in-one-folder android-il2cpp "contains multiple assembly definition files" two_in_one_folder
planted invalid-define-constraint android-il2cpp "Invalid Define Constraint" invalid_constraint
PLANTED_MODE=cached PLANTED_AS_UNITY=1 planted cached-package-file-without-nullable-directive android-il2cpp "CS8632" no_nullable_directive
# The runtime assembly not auto-referenced: a user's script with no .asmdef (Assembly-CSharp) no longer sees it.
not_auto_referenced() { with_user_scripts "$1"; sed -i 's/"autoReferenced": true/"autoReferenced": false/' "$2/WhereAllocation.asmdef"; }
planted runtime-asmdef-autoReferenced-false android-il2cpp "CS0246" not_auto_referenced
# The kcp2k sample in a Mirror project: an override whose signature is not kcp2k's (CS0115); a guard on Mirror's symbols
# put back, which the Dedicated Server build (Server's list, where Mirror writes none) and a list after Mirror's
# rotation do not satisfy: the sample is skipped and the user's transport misses it (CS0246).
planted_kcp2k() { # <name> <target> <expected message> <Mirror surface> <era> <README block> <mutation of the imported sample folder...>
  local name=$1 target=$2 expect=$3 surface=$4 era=$5 block=$6; shift 6
  local dir=$work/planted/$name
  mirror_project "$dir" "$surface" "$era" "$block"
  "$@" "$(find "$dir/Assets/Samples" -mindepth 3 -maxdepth 3 -type d -name 'kcp2k*' -path "*/$version/*" | head -1)" "$dir"
  unity_compile "$dir" "$target" standard "$dir.out" >"$dir.txt" 2>&1; status=$?
  if [ $status != 0 ] && grep -q -- "$expect" "$dir.txt"; then grep -m2 -E "error" "$dir.txt" | sed 's/^/  /'; check 0 "planted violation rejected: $name ($target: $expect)"
  else sed 's/^/  /' "$dir.txt"; check 1 "planted violation rejected: $name ($target: expected a failure with $expect)"; fi
}
missing_sample="error CS0234: The type or namespace name 'Samples' does not exist\|error CS0246: The type or namespace name 'WhereAllocationKcpServer'"
wrong_override() { sed -i 's/protected override void RawSend(int connectionId, ArraySegment<byte> data)/protected override void RawSend(int connectionId, byte[] data)/' "$1/WhereAllocationKcpServer.cs"; }
guard_89() { sed -i 's/"noEngineReferences": true/"defineConstraints": ["MIRROR_89_OR_NEWER"],\n    "noEngineReferences": true/' "$1"/*.asmdef; }
guard_89_or_90() { sed -i 's/"noEngineReferences": true/"defineConstraints": ["MIRROR_89_OR_NEWER || MIRROR_90_OR_NEWER"],\n    "noEngineReferences": true/' "$1"/*.asmdef; }
planted_kcp2k kcp2k-sample-override-with-wrong-signature linux-mono "CS0115" 90 m96 1 wrong_override
# The README's Mirror 89.7-89.10 form on Mirror 90, where OnServerConnected is obsolete: the split by version matters.
planted_kcp2k README-Mirror-89.7-form-on-Mirror-90 linux-mono "CS0618" 90 m96 2 true
planted_kcp2k kcp2k-sample-guarded-by-MIRROR_89_OR_NEWER-Dedicated-Server linux-server-il2cpp "$missing_sample" 90 m96 1 guard_89
planted_kcp2k kcp2k-sample-guarded-by-MIRROR_89-or-90-after-rotation linux-mono "$missing_sample" 90 projected 1 guard_89_or_90
# The Mirage sample: a member named otherwise than Mirage's ISocket names it (CS0535), in a project with Mirage; its
# guard removed (no versionDefines, no defineConstraints), in a project without Mirage: no longer skipped, it fails.
planted_mirage() { # <name> <Mirage version or none> <expected message> <mutation of the imported sample folder>
  local name=$1 mirage=$2 expect=$3 mutate=$4 dir=$work/planted/$1
  mirage_project "$dir" "$mirage"
  "$mutate" "$(find "$dir/Assets/Samples" -mindepth 3 -maxdepth 3 -type d -name 'Mirage*' -path "*/$version/*" | head -1)"
  unity_compile "$dir" linux-mono standard "$dir.out" >"$dir.txt" 2>&1; status=$?
  if [ $status != 0 ] && grep -q -- "$expect" "$dir.txt"; then grep -m2 -E "error" "$dir.txt" | sed 's/^/  /'; check 0 "planted violation rejected: $name (linux-mono: $expect)"
  else sed 's/^/  /' "$dir.txt"; check 1 "planted violation rejected: $name (linux-mono: expected a failure with $expect)"; fi
}
mirage_wrong_member() { sed -i 's/public void Send(IConnectionHandle handle, ReadOnlySpan<byte> packet)/public void SendTo(IConnectionHandle handle, ReadOnlySpan<byte> packet)/' "$1/WhereAllocationSocket.cs"; }
mirage_unguarded() { python3 - "$1"/*.asmdef <<'PY'
import json, sys
path = sys.argv[1]
asmdef = json.load(open(path))
asmdef.pop("versionDefines"); asmdef.pop("defineConstraints")
json.dump(asmdef, open(path, "w"), indent=4)
PY
}
planted_mirage mirage-sample-member-not-in-ISocket 158.3.5 "error CS0535: 'WhereAllocationSocket' does not implement interface member 'ISocket.Send" mirage_wrong_member
planted_mirage mirage-sample-guard-removed-no-Mirage none "error CS0246: The type or namespace name 'Mirage'" mirage_unguarded
# The Editor code finding link.xml with System.IO on the Packages/ literal, as it did: a cached install's player build
# stops with BuildFailedException (the file is not under the project's Packages/ folder).
literal_path() { sed -i 's|Path.GetFullPath(FileUtil.GetPhysicalPath("Packages/" + PackageName + "/link.xml"))|Path.GetFullPath("Packages/" + PackageName + "/link.xml")|' "$2/Editor/LinkXmlForUnityLinker.cs"; }
dir=$work/planted/link-xml-on-the-literal-path
new_project "$dir" src/WhereAllocation cached; literal_path "$dir" "$(sockets_package "$dir")"
grep -q 'Path.GetFullPath("Packages/" + PackageName + "/link.xml")' "$(sockets_package "$dir")/Editor/LinkXmlForUnityLinker.cs" \
  && unity_compile "$dir" editor standard "$dir.out" >"$dir.txt" 2>&1 && { linker_callback "$dir" "$dir.out" >"$dir.linker.txt" 2>&1; [ $? != 0 ]; } \
  && grep -q "BuildFailedException" "$dir.linker.txt"; status=$?
cat "$dir.linker.txt" 2>/dev/null | sed 's/^/  /'
check $status "planted violation rejected: link-xml-on-the-literal-path (cached install: the linker callback throws BuildFailedException)"
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
# Unity's inspector writes an asmdef's references as GUID:<guid> by default. A user's asmdef holding the released
# package's GUID must keep compiling when a later version renames the runtime .asmdef file (its assembly name kept) and
# scripts/unity-meta.sh writes the .meta for the new path.
renamed=$work/renamed-asmdef
new_project "$renamed"; pkg=$(sockets_package "$renamed")
mv "$pkg/WhereAllocation.asmdef" "$pkg/WhereAllocation.Runtime.asmdef"; rm "$pkg/WhereAllocation.asmdef.meta"
printf 'fileFormatVersion: 2\nguid: %s\n' "$(bash scripts/unity-meta.sh --guid src/WhereAllocation WhereAllocation.Runtime.asmdef "$pkg/WhereAllocation.Runtime.asmdef")" >"$pkg/WhereAllocation.Runtime.asmdef.meta"
mkdir -p "$renamed/Assets/Game"
printf '{\n    "name": "Game",\n    "references": ["GUID:%s"]\n}\n' "$guid" >"$renamed/Assets/Game/Game.asmdef"
printf 'using WhereAllocation;\n\nnamespace Game\n{\n    internal static class Uses\n    {\n        internal static string Path() => DatagramPathSettings.Diagnostic;\n    }\n}\n' >"$renamed/Assets/Game/Uses.cs"
unity_compile "$renamed" linux-mono standard "$work/build/renamed" >"$work/build/renamed.txt" 2>&1; status=$?
grep -E "Game|error" "$work/build/renamed.txt" | sed 's/^/  /'
check $status "a user's asmdef referencing the package by its released GUID ($guid) compiles after the runtime .asmdef file is renamed and its .meta rewritten"

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
