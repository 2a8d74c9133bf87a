#!/usr/bin/env bash
# The library compiled as Unity compiles the package for each target family, and each build checked on this machine's
# Mono (Linux). Unity compiles a package's sources itself, with C# 9, against .NET Standard 2.1, with the defines of the
# build target (UNITY_ANDROID, UNITY_STANDALONE_LINUX, ...; UNITY_EDITOR in the Editor; ENABLE_IL2CPP for IL2CPP); this
# script does the same with the SDK's compiler. WHEREALLOCATION_CHECK_OS_UNKNOWN makes the build's run-time OS question
# answer "unknown" for everything, as IL2CPP's RuntimeInformation does on Android, consoles and WebGL. Each build replaces
# the library beside samples/TrimCheck, which then checks (see its header):
#   android-il2cpp   the Linux calls chosen at compile time; native path, 0 B per receive, send, batch and await
#   linux-il2cpp     the same for a Linux player
#   editor-mono      the Editor (active target Android): the OS from the runtime; native path, 0 B
#   windows-il2cpp   the Windows calls chosen at compile time; on Linux their probe fails (ws2_32 is missing), which must
#                    be reported: the reason names the exception, the first call throws once
#   ps5-il2cpp       a console: no native path; the first call throws PlatformNotSupportedException once, then Managed
#   webgl-il2cpp     WebGL with DatagramPaths.Force(DatagramPath.Managed) first: no exception, the cost printed
#   unknown-il2cpp   a player Unity names with no define the library knows, the runtime answering "unknown": as ps5
#   macos-il2cpp, ios-il2cpp   compiled only (their calls cannot run on Linux; trim-check.sh checks the iOS names)
# Every run also checks that the Managed path never asks for SocketFlags.Truncated (Mono refuses it, as IL2CPP's socket
# layer does) and still reports a cut datagram. Last, the package's Editor assembly compiles against tests/UnityStandIn.
# Ends with one "N passed, N failed" line.
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
target editor-mono "UNITY_EDITOR;UNITY_EDITOR_LINUX;UNITY_ANDROID;ENABLE_MONO" \
  --diagnostic-has "path Native (default)" --diagnostic-has "OS calls Linux (from RuntimeInformation at run time)"
target windows-il2cpp "UNITY_STANDALONE_WIN;UNITY_STANDALONE;ENABLE_IL2CPP;$unknown_os" --closed \
  --diagnostic-has "OS calls Windows (compiled for a Unity Windows player)" --diagnostic-has "ws2_32" --diagnostic-has "DllNotFoundException"
target ps5-il2cpp "UNITY_PS5;ENABLE_IL2CPP;$unknown_os" --closed \
  --diagnostic-has "path Managed (default)" --diagnostic-has "compiled for a Unity WebGL or console player" --diagnostic-has "native unavailable: Unity's WebGL and console players"
target webgl-il2cpp "UNITY_WEBGL;ENABLE_IL2CPP;$unknown_os" --opt-in \
  --diagnostic-has "path Managed (forced; default Managed)" --diagnostic-has "native unavailable"
target unknown-il2cpp "ENABLE_IL2CPP;$unknown_os" --closed \
  --diagnostic-has "path Managed (default)" --diagnostic-has "from RuntimeInformation at run time" --diagnostic-has "The runtime names none of Linux, macOS and Windows"
target macos-il2cpp "UNITY_STANDALONE_OSX;UNITY_STANDALONE;ENABLE_IL2CPP" compile-only
target ios-il2cpp "UNITY_IOS;ENABLE_IL2CPP" compile-only

echo "== the package's Editor assembly against the stand-in of Unity's Editor types"
compile "$work/WhereAllocation.Editor.dll" library "UNITY_EDITOR;$unity" -nullable:disable tests/UnityStandIn/UnityEditorStandIn.cs \
  src/WhereAllocation/Editor/*.cs >"$work/editor.txt" 2>&1
status=$?; [ $status = 0 ] || cat "$work/editor.txt"
check $status "src/WhereAllocation/Editor compiles against tests/UnityStandIn (the documented IUnityLinkerProcessor, BuildReport, UnityLinkerBuildPipelineData, BuildFailedException)"
grep -q '"includePlatforms": \["Editor"\]' src/WhereAllocation/Editor/WhereAllocation.Editor.asmdef
check $? "the Editor assembly's asmdef includes the Editor platform only"
grep -q "\"name\": \"$(sed -nE 's/.*PackageName = "([^"]+)".*/\1/p' src/WhereAllocation/Editor/LinkXmlForUnityLinker.cs)\"" src/WhereAllocation/package.json
check $? "the Editor code names the package as package.json does (the path it hands the linker: Packages/<name>/link.xml)"
finish
