#!/usr/bin/env bash
# Runs every test of where-allocation. The sockets package's suite on CoreCLR (.NET 10, xunit), on CoreCLR again against
# the package as Unity compiles it for its CoreCLR back end (a Linux player, the editor), on Mono (SGen) and on Mono with
# the Boehm collector; everything that runs without a JIT, as IL2CPP does (Mono's full AOT: the suite, a planted
# program, the program linked as Unity strips a player; CoreCLR's NativeAOT); the dispose-race tests again on both
# runtimes with glibc unmapping freed blocks at once; the suite on the win-x64 runtime under Wine (the library's Windows
# branch). The memory package's suite, apart, on each of those runtimes. Then the awaits under stress, the native leak
# check under valgrind, the receive's and the send's instruction budgets on Mono under callgrind, the C reference
# programs' loopback self-test, the datagram server benchmark's invariants on both runtimes, the contributor commands,
# the docs' link check and the packaging checks (Unity package, NuGet packages, each package without the other, the
# library built as Unity builds it for each target family). Each stage says its time; the run ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-tools.sh test || exit 1
# shellcheck source=scripts/counts.sh
. scripts/counts.sh
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0; failed=0; broken=()

# stage <title>: the stage's header, after the time of the one before.
stage_title=; stage_began=$SECONDS
stage() {
  [ -z "$stage_title" ] || echo "-- ${stage_title%%$'\n'*}: $((SECONDS - stage_began)) s"
  stage_title=$1; stage_began=$SECONDS
  [ -z "$1" ] || echo "== $1"
}

# The Mono test assembly under xunit's console runner (its build copies the runner beside it); options follow.
mono_out=tests/WhereAllocation.Tests.Mono/bin/Release/netstandard2.1
mono_xunit=(mono --debug "$mono_out/xunit.console/xunit.console.exe" "$mono_out/WhereAllocation.Tests.Mono.dll" -noshadow)

stage "Build everything in the solution (both packages, their tests, checks, samples, benchmarks), so no benchmark rots"
if dotnet build WhereAllocation.slnx -c Release -v quiet -nologo >"$log/build.txt" 2>&1; then
  echo "solution build: 1 passed, 0 failed"; passed=$((passed + 1))
else
  cat "$log/build.txt"; echo "solution build: 0 passed, 1 failed"; failed=$((failed + 1)); broken+=(build)
fi

stage "CoreCLR: the sockets package's suite, dotnet test"
dotnet test tests/WhereAllocation.Tests -c Release --logger "console;verbosity=normal" 2>&1 | tee "$log/coreclr.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(coreclr)
count_dotnet_test "$log/coreclr.txt"

stage "Unity's CoreCLR: the same suite on CoreCLR against the package's netstandard2.1 build compiled with Unity's defines for
   its CoreCLR back end (Unity 6.7's experimental one, 7.0's), as a Linux player and as the editor (tests/Unity/CoreClr)"
for target in Player Editor; do
  dotnet test "tests/Unity/CoreClr/$target" -c Release --logger "console;verbosity=normal" 2>&1 | tee "$log/unity-coreclr-$target.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || broken+=("unity-coreclr-$target")
  count_dotnet_test "$log/unity-coreclr-$target.txt"
done

stage "Mono: the same suite, under xunit's console runner"
dotnet build tests/WhereAllocation.Tests.Mono -c Release -v quiet -nologo >"$log/mono-build.txt" 2>&1 || { cat "$log/mono-build.txt"; broken+=(mono-build); }
timeout 900 "${mono_xunit[@]}" -verbose 2>&1 | tee "$log/mono.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(mono)
count_xunit_console "$log/mono.txt"

stage "Mono with the Boehm collector (mono-boehm, Unity's collector): the same suite; the thread's allocation counter is
   dead there, so the allocation claims are checked through the collector's own byte count (tests/Shared/AllocationOracle.cs)"
# That count is process-wide, so this stage runs the suite on the suites' own runner (tests/WhereAllocation.Tests.Boehm),
# which leaves no other thread allocating beside a test, where xunit's console runner reports from threads of its own.
# Every Boehm collection traces the whole heap with the world stopped, so a test that allocates runs slower than under
# SGen (the managed batch path's "the meter can fail": 11 s under SGen, up to 51 s at load 50): 180 s per test.
dotnet build tests/WhereAllocation.Tests.Boehm -c Release -v quiet -nologo >"$log/boehm-build.txt" 2>&1 || { cat "$log/boehm-build.txt"; broken+=(boehm-build); }
timeout 1200 mono-boehm --debug tests/WhereAllocation.Tests.Boehm/bin/Release/netstandard2.1/WhereAllocation.Tests.Mono.dll --time-limit 180 2>&1 | tee "$log/mono-boehm.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(mono-boehm)
count_runner "$log/mono-boehm.txt"

stage "Without a JIT, as IL2CPP runs: on Mono, every assembly compiled by mono --aot=full (the framework's once per machine,
   cached) and run under mono --full-aot: the suite, a planted run-time instantiation and Reflection.Emit refused, the
   program linked by ILLink as Unity strips a player; the packages' IL free of run-time code; on CoreCLR, NativeAOT
   (scripts/no-jit.sh)"
timeout -k 30 1200 bash scripts/no-jit.sh 2>&1 | tee "$log/no-jit.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(no-jit)
count_summary "$log/no-jit.txt"

stage "Dispose races again, with MALLOC_MMAP_THRESHOLD_=131072: glibc then maps each block of 128 KiB or more on its own and
   unmaps it at free, so a write after free faults instead of passing silently (CoreCLR, then Mono)"
MALLOC_MMAP_THRESHOLD_=131072 dotnet test tests/WhereAllocation.Tests -c Release --no-build --filter "Category=DisposeRace" --logger "console;verbosity=minimal" 2>&1 | tee "$log/race-coreclr.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(race-coreclr)
count_dotnet_test "$log/race-coreclr.txt"
MALLOC_MMAP_THRESHOLD_=131072 timeout 600 "${mono_xunit[@]}" -verbose -trait "Category=DisposeRace" 2>&1 | tee "$log/race-mono.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(race-mono)
count_xunit_console "$log/race-mono.txt"

stage "Windows (Winsock) under Wine: the suite on the win-x64 runtime"
timeout -k 30 1800 bash scripts/wine-tests.sh 2>&1 | tee "$log/wine.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(wine)
count_summary "$log/wine.txt"

stage "The memory package alone: its suite (tests/Memory) on each runtime above: CoreCLR (Release, then Debug for the debug-only
   checks), the dispose races with MALLOC_MMAP_THRESHOLD_, Unity's CoreCLR, Mono, mono-boehm, full AOT, Wine (scripts/memory-tests.sh)"
timeout -k 30 2400 bash scripts/memory-tests.sh 2>&1 | tee "$log/memory.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(memory)
count_summary "$log/memory.txt"

stage "Awaits under stress: 1 000 sockets awaiting at once, sockets replaced meanwhile (bench/AwaitStress, quick: CoreCLR in both
   continuation modes, Mono in IoThread mode, epoll): nothing lost, every await ends, 0 B per await in the steady state"
AWAIT_STRESS_QUICK=1 timeout 600 bash bench/AwaitStress/run.sh 2>&1 | tee "$log/await-stress.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(await-stress)
count_summary "$log/await-stress.txt"

stage "Native leak check: 10^6 memory operations on Mono under valgrind (bench/MemoryLeakCheck)"
bash bench/MemoryLeakCheck/valgrind.sh 2>&1 | tee "$log/leak.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(leak-check)
count_summary "$log/leak.txt"

stage "The library's receive cost on Mono in instructions per datagram, under callgrind (bench/ReceiveCost)"
bash bench/ReceiveCost/cost.sh 2>&1 | tee "$log/receive-cost.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(receive-cost)
count_summary "$log/receive-cost.txt"

stage "The library's send cost on Mono in instructions per datagram, under callgrind (bench/SendCost)"
bash bench/SendCost/cost.sh --check 2>&1 | tee "$log/send-cost.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(send-cost)
count_summary "$log/send-cost.txt"

stage "C reference programs: self-test"
bash bench/native/selftest.sh 2>&1 | tee "$log/native.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(native)
count_summary "$log/native.txt"

stage "DatagramServer (bench/DatagramServer, what ./demo.sh runs): its invariants on CoreCLR and Mono"
bash bench/DatagramServer/invariants.sh 2>&1 | tee "$log/server.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(server)
count_summary "$log/server.txt"

stage "Contributor commands: CONTRIBUTING.md's one-class commands run exactly that class, and a filter matching nothing fails"
bash scripts/contributor-commands.sh 2>&1 | tee "$log/contributor.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(contributor-commands)
count_summary "$log/contributor.txt"

stage "Docs: every relative link and anchor of every markdown page resolves (scripts/link-check.sh)"
bash scripts/link-check.sh 2>&1 | tee "$log/link-check.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(link-check)
count_summary "$log/link-check.txt"

for check in "unity-meta.sh --check" "unity-version.sh --check" "pack-check.sh" "unity-builds.sh"; do
  case "$check" in
    unity-meta*) stage "Packaging: the Unity .meta files of both package folders" ;;
    unity-version*) stage "Packaging: the Unity packages' version and the copies they carry" ;;
    pack-check*) stage "Packaging: the install routes (scripts/pack.sh: both NuGet packages into fresh CoreCLR and Mono projects, the README
   example, the Unity tarballs and samples, clean package folders), and each package built, tested and packed without the other" ;;
    unity-builds*) stage "Packaging: the packages compiled as Unity's editor compiles them, for each target family, and the library's
   Unity builds run on Mono as IL2CPP would see the OS (tests/Unity)" ;;
  esac
  name=${check%%.sh*}
  bash scripts/$check 2>&1 | tee "$log/$name.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || broken+=("$name")
  count_summary "$log/$name.txt"
done
stage ""

if [ ${#broken[@]} -gt 0 ]; then
  # The failures again, last: a run whose log is read from its end (CI keeps the tail) still names each failed test.
  # Markers: dotnet test's normal logger "  Failed Name [t]", xunit's console "[FAIL]", the scripts' and runner's "  FAIL".
  echo "failed tests and checks (first 40):"
  grep -hE "^ +Failed [A-Za-z_]|\[FAIL\]|^ +FAIL " "$log"/*.txt | sed -E 's/^ +/  /' | cut -c1-240 | head -40
  # And what each failed test said: dotnet test's "Error Message:" block (up to 6 lines), xunit's console runner's lines
  # after "[FAIL]" up to its "Stack Trace:" (up to 6), the suites' own runner's "FAILED: name: exception" summary line and
  # the 2 after it. A failure that does not come back on a rerun is then still diagnosable from the tail alone.
  echo "their messages (first 20):"
  awk '/^ +Failed [A-Za-z_]/ { name = $0; sub(/^ +/, "", name); n = 0; next }
       /^ +Error Message:/ { if (name != "" && shown < 20) { print "  " substr(name, 1, 200); n = 6; shown++ } next }
       /\[FAIL\]/ { if (shown < 20) { line = $0; sub(/^ +/, "", line); print "  " substr(line, 1, 200); n = 6; shown++ } next }
       /^ +Stack Trace:/ { n = 0; name = ""; next }
       /^FAILED: / { if (shown < 20) { print "  " substr($0, 1, 240); n = 2; shown++ } next }
       n > 0 { print "      " substr($0, 1, 200); n-- }' "$log"/*.txt
  echo "failing stages: ${broken[*]}"
  [ "$failed" -gt 0 ] || failed=1
fi
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
