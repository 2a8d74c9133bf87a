#!/usr/bin/env bash
# Without a JIT, as IL2CPP and iOS run: only code compiled ahead of time, nothing made at run time. One mechanism per
# runtime, each the stand-in for IL2CPP that runtime has:
#   Mono (the packages' netstandard2.1 builds, the ones Unity compiles): `mono --aot=full` compiles every assembly a
#     program loads, the framework's included, and `mono --full-aot` runs it, refusing to compile anything at run time
#     (such code fails with ExecutionEngineException). Run that way:
#       - a planted program (tests/Checks/FullAot/RunTimeCode.cs) whose run-time generic instantiation and
#         Reflection.Emit run under the JIT and must be refused here, so that the mechanism is seen to refuse;
#       - the sockets suite: the Mono build on the suites' own runner (tests/WhereAllocation.Tests.Boehm, `--aot-only`:
#         tests called through reflection, whose call stubs are compiled ahead of time, not through compiled
#         expressions, which are made at run time);
#       - tests/Checks/TrimCheck linked first by ILLink with the library and Mono's class libraries, every assembly
#         linked, as Unity's managed code stripping ("High") links a player, then compiled and run the same way; the
#         linked class libraries are the ones it loads (it proves it: a type the link removed is absent at run time).
#         Four links: "shipped", the package's link.xml passed to the linker as Unity passes link.xml files (the
#         getter stays); "no link.xml", the library's own dependency attribute alone keeps Socket.get_SafeHandle;
#         "getter stripped", the library's lookup finds no getter (as after a linker removed it) and the runtime's
#         getter is a stub: the native path stays, through the field that holds the handle; "getter stubbed", only the
#         runtime's getter replaced by the linker's throwing stub: the first call moves to the field. Each asserts the
#         native path, 0 B per receive, per send, per batch of 16 each way and per awaited receive that waits over
#         10 000 calls, ObjectDisposedException on a disposed socket (to an await in progress too), and that the
#         Managed path never asks for SocketFlags.Truncated; the last two on the field route (its cost per datagram:
#         bench/ReceiveCost, the field form);
#       - Boehm (mono-boehm): tried, and run if its runtime can load full-AOT images (Mono 6.8's cannot; the stage says
#         why).
#     Checked without running: the packages' IL references none of the calls that make code at run time (Mono shares
#     generic code over value types, so an instantiation made at run time may run here and still fail on an AOT
#     compiler without that sharing: the IL is the check for those); and the library names its C library
#     "__Internal" when compiled as Unity compiles the package for a statically linked (iOS) player, except for the
#     Linux-only calls, and "libc" otherwise.
#   CoreCLR (the packages' net8.0 builds): NativeAOT, which compiles ahead of time and trims: tests/Checks/AotCheck
#     published (trim and AOT analysis warnings are errors there) and run: it sends and receives on loopback through
#     the library's native path and checks 0 B per call; its own checks are counted.
# --suite memory runs the memory package's suite (tests/Memory/Mono) under Mono's full AOT instead, alone: its stage is
# scripts/memory-tests.sh. The framework's images are compiled once per machine and Mono build, into
# ~/.cache/where-allocation/mono-full-aot (WHERE_ALLOCATION_AOT_CACHE overrides); the programs' own each run.
# See docs/aot.md. Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
suite_name=sockets
if [ "${1:-}" = --suite ]; then suite_name=${2:-}; shift 2; fi
case "$suite_name" in
  sockets) suite_project=tests/WhereAllocation.Tests.Boehm; suite_dll=WhereAllocation.Tests.Mono.dll ;;
  memory) suite_project=tests/Memory/Mono; suite_dll=WhereAllocation.Memory.Tests.Mono.dll ;;
  *) echo "usage: $0 [--suite sockets|memory]" >&2; exit 2 ;;
esac
passed=0; failed=0
ok() { echo "  ok   $1"; passed=$((passed + 1)); }
fail() { echo "  FAIL $1"; failed=$((failed + 1)); }
check() { if [ "$1" = 0 ]; then ok "$2"; else fail "$2"; fi; }
finish() {
  echo "no-jit ($suite_name): $((SECONDS - stage_start)) s in all"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit
}
stage_start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The framework assemblies whose compiled code the suite's images reach (an AOT image loads every assembly its code
# refers to when it is loaded), beside the facades, which are all taken (each compiles in a few milliseconds). One
# missing here makes the run stop with "Failed to load AOT module '.../Name.dll.so' in aot-only mode": add it.
framework=(mscorlib System System.Core System.Xml System.Configuration System.Numerics System.Security Mono.Security)

for tool in mono mcs monodis as ld; do
  command -v "$tool" >/dev/null 2>&1 || { fail "$tool is missing (scripts/ensure-tools.sh test installs it)"; finish; }
done
lib=$(dirname "$(readlink -f "$(command -v mono)")")/../lib/mono/4.5
[ -f "$lib/mscorlib.dll" ] || { fail "no mscorlib.dll in $lib (Mono's 4.5 profile)"; finish; }
lib=$(readlink -f "$lib")
# Every method that needs a trampoline at run time (a call slot resolved on first call) takes one from mscorlib's
# image, which holds 4096 by default: the suite ran out of them once ("Ran out of trampolines of type 0 in
# '.../mscorlib.dll' (limit 4096)", after its last test). 65536 add about 0.5 MB to the image.
mscorlib_options=ntrampolines=65536
key=$( { mono --version | head -1; cksum <"$lib/mscorlib.dll"; echo "$mscorlib_options"; } | cksum | cut -d' ' -f1)
cache=${WHERE_ALLOCATION_AOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/where-allocation/mono-full-aot}/$(mono --version=number)-$key

# aot <runtime> <images dir> <assembly>: compiles <assembly>.so beside it, unless there; the log goes to <assembly>.log.
aot() {
  local options=full
  [ -f "$3.so" ] && return 0
  [ "$(basename "$3")" = mscorlib.dll ] && options=$options,$mscorlib_options
  MONO_PATH=$2 "$1" --aot="$options",outfile="$3.so" "$3" >"$3.log" 2>&1 && return 0
  tail -5 "$3.log"
  return 1
}

# framework_images <runtime> <gc> [assembly...]: the framework's images for that collector (an AOT image is compiled
# for one collector: SGen's refuse to load under Boehm), copied with their assemblies into one directory of the cache
# (the one MONO_PATH names at run time, mscorlib's included) and compiled there once. Prints that directory.
framework_images() {
  local runtime=$1 dir=$cache/$2 name
  shift 2
  mkdir -p "$dir" || return 1
  (
    flock 9
    for name in "$@"; do
      [ -f "$dir/$(basename "$name").dll" ] || cp -L "$lib/$name.dll" "$dir/" || exit 1
      aot "$runtime" "$dir" "$dir/$(basename "$name").dll" >&2 || { echo "no-jit: $runtime --aot=full $name.dll failed" >&2; exit 1; }
    done
  ) 9>"$dir.lock" || return 1
  echo "$dir"
}
facades=()
for file in "$lib"/Facades/*.dll; do facades+=("Facades/$(basename "$file" .dll)"); done

echo "== Mono: the builds (the $suite_name suite on the suites' own runner, $suite_project; the planted program, by mcs)"
if ! dotnet build "$suite_project" -c Release -v quiet -nologo >"$work/build.txt" 2>&1; then
  cat "$work/build.txt"; fail "build of $suite_project"; finish
fi
suite_out=$root/$suite_project/bin/Release/netstandard2.1
mcs -nologo -out:"$work/RunTimeCode.exe" tests/Checks/FullAot/RunTimeCode.cs >"$work/mcs.txt" 2>&1 || { cat "$work/mcs.txt"; fail "mcs tests/Checks/FullAot/RunTimeCode.cs"; finish; }
if [ "$suite_name" = sockets ]; then
  dotnet build src/WhereAllocation.Memory -c Release -f netstandard2.1 -v quiet -nologo >"$work/memory-build.txt" 2>&1 \
    || { cat "$work/memory-build.txt"; fail "build of src/WhereAllocation.Memory (netstandard2.1)"; finish; }
  dotnet build tests/Checks/TrimCheck -c Release -v quiet -nologo >"$work/trim-build.txt" 2>&1 \
    || { cat "$work/trim-build.txt"; fail "build of tests/Checks/TrimCheck"; finish; }
fi

if [ "$suite_name" = sockets ]; then
  echo "== The packages' IL: no call that makes code at run time (checked on the planted program first, which has two)"
  runtime_code='System\.Type\.MakeGenericType|System\.Reflection\.MethodInfo\.MakeGenericMethod|System\.Reflection\.Emit\.|System\.Linq\.Expressions\..*\.Compile'
  run_time_calls() { monodis --memberref "$1" 2>/dev/null | sed -nE 's/^\tResolved: (.*)$/\1/p' | grep -E "$runtime_code" | sed -E 's/^\[[^]]*\]//' | sort -u; }
  planted_calls=$(run_time_calls "$work/RunTimeCode.exe")
  if grep -q MakeGenericMethod <<<"$planted_calls" && grep -q 'Emit\.DynamicMethod' <<<"$planted_calls"; then
    ok "the scan finds the planted program's MakeGenericMethod and DynamicMethod"
  else
    fail "the scan missed the planted program's calls (found: ${planted_calls:-nothing})"
  fi
  for library in "$suite_out/WhereAllocation.dll" artifacts/bin/WhereAllocation.Memory/Release/netstandard2.1/WhereAllocation.Memory.dll; do
    name=$(basename "$library")
    [ -f "$library" ] || { fail "$name (netstandard2.1) not found at $library"; continue; }
    found=$(run_time_calls "$library")
    if [ -z "$found" ]; then ok "$name (netstandard2.1) references no MakeGenericType, MakeGenericMethod, Reflection.Emit or Expression.Compile"
    else fail "$name references code made at run time: $(tr '\n' ' ' <<<"$found")"; fi
  done
fi
cd "$work" || exit 1 # from here on the runtimes run in the scratch directory: a crash report (mono_crash.*.json) stays there

echo "== Mono: the framework's images (SGen), cached in $cache"
t=$SECONDS
images=$(framework_images mono sgen "${framework[@]}" "${facades[@]}") || { fail "the framework's AOT images (SGen)"; finish; }
echo "framework images ready in $((SECONDS - t)) s ($(ls "$images"/*.so | wc -l) images)"

# app_images <runtime> <images> <dir>: the suite's own assemblies (the files of its output folder: the runner's copy of
# CONTRACT.md with them) and the planted program, compiled into <dir>.
app_images() {
  local file
  mkdir -p "$3" && find "$suite_out" -maxdepth 1 -type f -exec cp {} "$3/" \; && cp "$work/RunTimeCode.exe" "$3/" || return 1
  for file in "$3"/*.dll "$3"/*.exe; do aot "$1" "$2" "$file" || { echo "no-jit: $1 --aot=full $(basename "$file") failed"; return 1; }; done
}

# planted <runtime> <images> <dir>: the planted modes with the JIT (all run) and without (two refused).
planted() {
  local runtime=$1 images=$2 dir=$3 mode out
  for mode in shareable unshareable emit; do
    out=$("$runtime" "$dir/RunTimeCode.exe" "$mode" 2>&1)
    if [ $? -eq 0 ] && grep -q "^ran: $mode" <<<"$out"; then ok "$runtime with the JIT runs the planted $mode code"
    else fail "$runtime with the JIT should run the planted $mode code: $out"; fi
  done
  out=$(MONO_PATH=$images timeout 60 "$runtime" --full-aot "$dir/RunTimeCode.exe" shareable 2>&1)
  if [ $? -eq 0 ] && grep -q "^ran: shareable" <<<"$out"; then
    ok "$runtime --full-aot runs a run-time instantiation over a value type whose code it shares (so the IL scan above is the check for those)"
  else fail "$runtime --full-aot on the planted shareable instantiation: $out"; fi
  for mode in unshareable emit; do
    out=$(MONO_PATH=$images timeout 60 "$runtime" --full-aot "$dir/RunTimeCode.exe" "$mode" 2>&1)
    if grep -q "^refused: System.ExecutionEngineException: Attempting to JIT compile method .* while running in aot-only mode" <<<"$out"; then
      ok "$runtime --full-aot refuses the planted $mode code: $(sed -nE "s/^refused: System.ExecutionEngineException: (Attempting to JIT compile method '[^']*').*/\1/p" <<<"$out")"
    else fail "$runtime --full-aot should refuse the planted $mode code with ExecutionEngineException; it gave: $out"; fi
  done
}

# suite <runtime> <images> <dir> <host> <seconds per test>: the whole suite without a JIT; its "mono: N passed, N failed"
# line is counted. Boehm gets 180 s per test as test.sh's Boehm stage (its collections stop the world).
suite() {
  local runtime=$1 images=$2 dir=$3 log=$work/suite-$4.txt limit=$5 line p f missing status
  echo "== Mono: the $suite_name suite under $runtime --full-aot (no JIT)"
  t=$SECONDS
  MONO_PATH=$images timeout -k 30 1500 "$runtime" --full-aot "$dir/$suite_dll" --aot-only --time-limit "$limit" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  line=$(grep -E "^mono: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
  if [ -z "$line" ]; then
    missing=$(sed -nE "s/^Failed to load AOT module '(.*)\.so' in aot-only mode.*/\1/p" "$log" | head -1)
    [ -n "$missing" ] && echo "no-jit: $missing has no AOT image: add $(basename "$missing" .dll) to the framework list in scripts/no-jit.sh"
    fail "the $suite_name suite under $runtime --full-aot ended without its summary (crash or time limit)"
    return
  fi
  p=$(sed -nE 's/^mono: ([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
  passed=$((passed + p)); failed=$((failed + f))
  echo "the $suite_name suite under $runtime --full-aot: $p passed, $f failed in $((SECONDS - t)) s"
  # The runner exits 0 when every test passed; anything else after a clean summary is the runtime failing on its way out.
  [ "$f" -ne 0 ] || [ "$status" -eq 0 ] || fail "the $suite_name suite under $runtime --full-aot exited with status $status after its summary"
}

echo "== Mono: the $suite_name suite's and the planted program's images (SGen)"
t=$SECONDS
app_images mono "$images" "$work/sgen" || { fail "the $suite_name suite's AOT images (SGen)"; finish; }
echo "program images compiled in $((SECONDS - t)) s"
[ "$suite_name" = sockets ] && planted mono "$images" "$work/sgen"
suite mono "$images" "$work/sgen" sgen 120

if [ "$suite_name" = sockets ]; then
  echo "== Mono: tests/Checks/TrimCheck linked by ILLink as Unity strips a player, compiled ahead of time, run with no JIT"
  t=$SECONDS
  app=$root/tests/Checks/TrimCheck/bin/Release/netstandard2.1
  # ILLink comes with the .NET SDK's trimming support: the library's net8.0 build (IsAotCompatible) restores it.
  packages=$(cd "$root" && dotnet msbuild src/WhereAllocation -getProperty:NuGetPackageRoot 2>/dev/null | tr -d '[:space:]')
  illink=$(ls -d "${packages%/}"/microsoft.net.illink.tasks/*/tools/net8.0/illink.dll 2>/dev/null | sort -V | tail -1)
  tools=$failed
  [ -n "$illink" ] && [ -f "$illink" ]; check $? "ILLink found (${illink:-none under $packages})"
  [ -f "$lib/System.dll" ]; check $? "Mono's class libraries found ($lib)"
  # Mono 6.8 embeds in mscorlib the list of members its runtime needs (mscorlib.xml), written for the older linker:
  # ILLink 8 refuses its feature="..." conditions (IL1001). Embedded lists are therefore ignored and this one is
  # passed as a file with the conditions removed (everything it names is kept), as a linker for Mono must.
  monodis --mresources "$lib/mscorlib.dll" >/dev/null 2>&1
  sed -E 's/ feature="[a-z]+"//g' "$work/mscorlib.xml" >"$work/runtime-needs.xml" 2>/dev/null
  grep -q "<linker" "$work/runtime-needs.xml"; check $? "Mono's runtime member list extracted from mscorlib"

  # ILLink substitutions that emulate a linker removing the getter: "remove" on a member something keeps leaves the
  # linker's stub that throws NotSupportedException; "stub" makes the library's lookup return null, as it does when
  # the getter is gone.
  cat >"$work/stub-runtime-getter.xml" <<'XML'
<linker>
  <assembly fullname="System">
    <type fullname="System.Net.Sockets.Socket">
      <method signature="System.Runtime.InteropServices.SafeHandle get_SafeHandle()" body="remove" />
    </type>
  </assembly>
</linker>
XML
  cat >"$work/strip-getter.xml" <<'XML'
<linker>
  <assembly fullname="System">
    <type fullname="System.Net.Sockets.Socket">
      <method signature="System.Runtime.InteropServices.SafeHandle get_SafeHandle()" body="remove" />
    </type>
  </assembly>
  <assembly fullname="WhereAllocation">
    <type fullname="WhereAllocation.SocketHandles">
      <method signature="System.Func`2&lt;System.Net.Sockets.Socket,System.Runtime.InteropServices.SafeHandle&gt; CreateGetter()" body="stub" />
    </type>
  </assembly>
</linker>
XML

  # A type of the installed class library that a link removed: the linked library must lack it at run time.
  removed_type() {
    comm -23 <(monodis --typedef "$lib/$1" | awk '{print $2}' | grep -E '^System\.[A-Za-z.]+$' | sort) \
             <(monodis --typedef "$2/$1" | awk '{print $2}' | sort) | head -1
  }
  # linked <name> <handle access expected> [ILLink options...]: links, compiles every linked assembly ahead of time (the
  # linked set is all the program loads: MONO_PATH names it) and runs the program with no JIT.
  linked() {
    local name=$1 access=$2; shift 2
    local out=$work/$name file status
    echo "== $name"
    dotnet "$illink" -a "$app/TrimCheck.dll" -d "$app" -d "$lib" -d "$lib/Facades" --action link \
      --ignore-descriptors true -x "$work/runtime-needs.xml" --notrimwarn -out "$out" "$@" >"$work/$name.txt" 2>&1
    check $? "$name: ILLink links the program, the library and the class libraries"
    [ -f "$out/System.dll" ] && [ -f "$out/mscorlib.dll" ] || { tail -20 "$work/$name.txt"; return; }
    local sys_type corlib_type
    sys_type=$(removed_type System.dll "$out"); corlib_type=$(removed_type mscorlib.dll "$out")
    [ -n "$sys_type" ] && [ -n "$corlib_type" ]; check $? "$name: the link removed types from System.dll ($sys_type) and mscorlib.dll ($corlib_type)"
    status=0
    for file in "$out"/*.dll; do aot mono "$out" "$file" || { status=1; echo "  mono --aot=full $(basename "$file") failed"; }; done
    check $status "$name: mono --aot=full compiles the $(ls "$out"/*.dll | wc -l) linked assemblies"
    [ $status = 0 ] || return
    MONO_PATH="$out" timeout 300 mono --full-aot "$out/TrimCheck.dll" --access "$access" --absent "$sys_type" --absent "$corlib_type" | tee "$work/$name.run.txt"
    check "${PIPESTATUS[0]}" "$name: the linked program passes under mono --full-aot (native path, 0 B, ObjectDisposedException, $access)"
  }
  if [ "$failed" -eq "$tools" ]; then # (without ILLink or the runtime's list, the failures above say why nothing is linked)
    getter_in() { monodis "$1/System.dll" 2>/dev/null | grep -c "end of method Socket::get_SafeHandle"; }
    linked shipped SafeHandleProperty -x "$root/src/WhereAllocation/link.xml"
    linked no-link-xml SafeHandleProperty
    [ "$(getter_in "$work/no-link-xml")" = 1 ]; check $? "no link.xml: the linked System.dll still has Socket.get_SafeHandle"
    linked getter-stripped SafeHandleField --substitutions "$work/strip-getter.xml"
    linked getter-stubbed SafeHandleField --substitutions "$work/stub-runtime-getter.xml"
  fi
  echo "linked, compiled and run in $((SECONDS - t)) s"

  echo "== The library's C library names, compiled as for a Unity iOS player (IL2CPP links \"__Internal\" statically)"
  implmap() { monodis --implmap "$1" 2>/dev/null; }
  shipped_map=$(implmap "$root/artifacts/bin/WhereAllocation/Release/netstandard2.1/WhereAllocation.dll")
  [ "$(grep -c ' libc)$' <<<"$shipped_map")" -ge 10 ] && ! grep -q '__Internal' <<<"$shipped_map"
  check $? "the shipped netstandard2.1 build names \"libc\" for every C library call"
  if (cd "$root" && dotnet build src/WhereAllocation -c Release -f netstandard2.1 -p:UnityDefines=UNITY_IOS -o "$work/ios" \
       --artifacts-path "$work/ios-artifacts" -nologo -v quiet) >"$work/ios.txt" 2>&1; then
    ios_map=$(implmap "$work/ios/WhereAllocation.dll")
    linux_only='::(RecvMMsg|SendMMsg|RecvMsg|SchedSetAffinity|EpollCreate1|EpollCtl|EpollWait)\('
    ! grep 'Interop.Libc::' <<<"$ios_map" | grep -v -E "$linux_only" | grep -v -q '__Internal)$'
    check $? "compiled as for a Unity iOS player: every call Apple's C library has names \"__Internal\" (linked statically)"
    [ "$(grep -E "$linux_only" <<<"$ios_map" | grep -c ' libc)$')" = 7 ]
    check $? "compiled as for a Unity iOS player: the Linux-only recvmmsg, sendmmsg, recvmsg (with Linux's msghdr), sched_setaffinity and epoll calls still name \"libc\" (no symbol Apple lacks in the link)"
  else
    cat "$work/ios.txt"; check 1 "the library compiles with UNITY_IOS defined"
  fi
fi

echo "== Mono: Boehm (mono-boehm): does its runtime load full-AOT images?"
if ! command -v mono-boehm >/dev/null 2>&1; then
  fail "mono-boehm is missing (scripts/ensure-tools.sh test installs it)"
else
  boehm_images=$(framework_images mono-boehm boehm mscorlib) && mkdir -p "$work/boehm" && cp "$work/RunTimeCode.exe" "$work/boehm/" \
    && aot mono-boehm "$boehm_images" "$work/boehm/RunTimeCode.exe" || { fail "mono-boehm --aot=full of mscorlib and the planted program"; finish; }
  probe=$(MONO_PATH=$boehm_images timeout 60 mono-boehm --full-aot "$work/boehm/RunTimeCode.exe" shareable 2>&1)
  if grep -q "^ran: shareable" <<<"$probe"; then
    boehm_images=$(framework_images mono-boehm boehm "${framework[@]}" "${facades[@]}") || { fail "the framework's AOT images (Boehm)"; finish; }
    app_images mono-boehm "$boehm_images" "$work/boehm" || { fail "the $suite_name suite's AOT images (Boehm)"; finish; }
    [ "$suite_name" = sockets ] && planted mono-boehm "$boehm_images" "$work/boehm"
    suite mono-boehm "$boehm_images" "$work/boehm" boehm 180
  elif grep -q "Assertion: should not be reached at boehm-gc.c" <<<"$probe"; then
    # The known limit (docs/aot.md): accepted only as itself; any other failure of the probe fails the stage.
    echo "mono-boehm --full-aot: NOT RUN. This Mono's Boehm runtime stops at the first full-AOT image it loads, before any"
    echo "managed code: $(grep -m1 "Assertion: should not be reached" <<<"$probe")"
    echo "(docs/aot.md: the image's check asks the collector for its card table, which this Boehm build refuses by assertion)"
  else
    fail "mono-boehm --full-aot on the planted program failed otherwise than the known Boehm limit: $(head -5 <<<"$probe")"
  fi
fi
[ "$suite_name" = sockets ] || finish

echo "== CoreCLR: NativeAOT (tests/Checks/AotCheck published for linux-x64 and run; trim and AOT analysis warnings are errors)"
t=$SECONDS
cd "$root" || exit 1
if dotnet publish tests/Checks/AotCheck -c Release -r linux-x64 -o "$work/native" -nologo -v quiet >"$work/publish.txt" 2>&1; then
  ok "tests/Checks/AotCheck publishes with NativeAOT, no trim or AOT analysis warning"
  timeout 300 "$work/native/AotCheck" 2>&1 | tee "$work/aotcheck.txt"
  status=${PIPESTATUS[0]}
  line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$work/aotcheck.txt" | tail -1)
  if [ -n "$line" ]; then
    p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
    passed=$((passed + p)); failed=$((failed + f))
    [ "$f" -ne 0 ] || [ "$status" -eq 0 ] || fail "the NativeAOT program exited with status $status after its summary"
  else
    fail "the NativeAOT program ended without its summary (status $status)"
  fi
else
  cat "$work/publish.txt"; fail "tests/Checks/AotCheck publishes with NativeAOT"
fi
echo "NativeAOT published and run in $((SECONDS - t)) s"
finish
