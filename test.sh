#!/usr/bin/env bash
# Runs every test of where-allocation: the suite on CoreCLR (.NET 10, xunit), the memory tests again
# against a Debug build of the library, the suite on CoreCLR again against the packages as Unity compiles them for its
# CoreCLR back end (a Linux player, the editor), the same suite on Mono (SGen) and on Mono with the Boehm collector, the same suite
# again on Mono's full AOT with no JIT (the stand-in for IL2CPP's and iOS's refusal of run-time code), the dispose-race tests again on both
# runtimes with glibc unmapping freed blocks at once, the same suite on the win-x64 runtime under Wine (the
# library's Windows branch), the native leak check under valgrind, the receive's and the send's instruction budgets on Mono under callgrind,
# the C reference programs' loopback self-test, the datagram server benchmark's invariants on both
# runtimes, and the packaging checks (Unity package, NuGet package, NativeAOT, ILLink-trimmed on Mono, the library built as
# Unity builds it for each target family and run on Mono as IL2CPP would see the OS). Ends with one
# "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-tools.sh test || exit 1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0; failed=0; broken=()

# Adds a dotnet test run's counts: the minimal logger's "Passed!  - Failed: 0, Passed: 89, Skipped: 0, ..." line, or
# the normal logger's "Total tests:" block ("     Passed: 89" / "     Failed: 1" / "     Skipped: 1"), which has no such
# line. A skipped test counts as failed, as in count_xunit_console below.
count_dotnet_test() {
  local line p f s
  line=$(grep -E "^(Passed|Failed)! " "$1" | tail -1)
  if [ -n "$line" ]; then
    p=$(sed -nE 's/.*Passed: +([0-9]+).*/\1/p' <<<"$line"); f=$(sed -nE 's/.*Failed: +([0-9]+),.*/\1/p' <<<"$line")
    s=$(sed -nE 's/.*Skipped: +([0-9]+),.*/\1/p' <<<"$line")
  else
    p=$(sed -n '/^Total tests:/,$p' "$1" | sed -nE 's/^ +Passed: +([0-9]+).*/\1/p' | tail -1)
    f=$(sed -n '/^Total tests:/,$p' "$1" | sed -nE 's/^ +Failed: +([0-9]+).*/\1/p' | tail -1)
    s=$(sed -n '/^Total tests:/,$p' "$1" | sed -nE 's/^ +Skipped: +([0-9]+).*/\1/p' | tail -1)
  fi
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${s:-0}))
}

# Adds the counts of an xunit console run: its summary line "<assembly>  Total: N, Errors: N, Failed: N, Skipped: N, ...".
# A skipped test counts as failed (the suite has none; one would hide a missing part), and so does an error.
count_xunit_console() {
  local line t e f s
  line=$(grep -E "Total: [0-9]+, Errors: [0-9]+, Failed: [0-9]+, Skipped: [0-9]+" "$1" | tail -1)
  t=$(sed -nE 's/.*Total: ([0-9]+),.*/\1/p' <<<"$line"); e=$(sed -nE 's/.*Errors: ([0-9]+),.*/\1/p' <<<"$line")
  f=$(sed -nE 's/.*Failed: ([0-9]+),.*/\1/p' <<<"$line"); s=$(sed -nE 's/.*Skipped: ([0-9]+),.*/\1/p' <<<"$line")
  passed=$((passed + ${t:-0} - ${f:-0} - ${s:-0})); failed=$((failed + ${e:-0} + ${f:-0} + ${s:-0}))
}

# The Mono test assembly under xunit's console runner (its build copies the runner beside it); options follow.
mono_out=tests/WhereAllocation.Tests.Mono/bin/Release/netstandard2.1
mono_xunit=(mono --debug "$mono_out/xunit.console/xunit.console.exe" "$mono_out/WhereAllocation.Tests.Mono.dll" -noshadow)

# Adds the counts of a stage that ends with a "N passed, N failed" line.
count_summary() {
  local line p f
  line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$1" | tail -1)
  p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
}

echo "== Build everything in the solution (library, tests, samples, benchmarks), so no benchmark rots"
if dotnet build WhereAllocation.slnx -c Release -v quiet -nologo >"$log/build.txt" 2>&1; then
  echo "solution build: 1 passed, 0 failed"; passed=$((passed + 1))
else
  cat "$log/build.txt"; echo "solution build: 0 passed, 1 failed"; failed=$((failed + 1)); broken+=(build)
fi

echo "== CoreCLR: dotnet test"
dotnet test tests/WhereAllocation.Tests -c Release --logger "console;verbosity=normal" 2>&1 | tee "$log/coreclr.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(coreclr)
count_dotnet_test "$log/coreclr.txt"

echo "== CoreCLR, Debug build of the memory package: its tests (debug-only checks: poison at reset, allocation sites)"
dotnet test tests/WhereAllocation.Tests -c Debug --filter "FullyQualifiedName~WhereAllocation.Tests.Memory" --logger "console;verbosity=minimal" 2>&1 | tee "$log/coreclr-debug.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(coreclr-debug)
count_dotnet_test "$log/coreclr-debug.txt"

echo "== Unity's CoreCLR: the same suite on CoreCLR against both packages' netstandard2.1 build compiled with Unity's defines for"
echo "   its CoreCLR back end (Unity 6.7's experimental one, 7.0's), as a Linux player and as the editor (tests/UnityCoreClr)"
for target in Player Editor; do
  dotnet test "tests/UnityCoreClr/$target" -c Release --logger "console;verbosity=normal" 2>&1 | tee "$log/unity-coreclr-$target.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || broken+=("unity-coreclr-$target")
  count_dotnet_test "$log/unity-coreclr-$target.txt"
done

echo "== Mono: the same suite, under xunit's console runner"
dotnet build tests/WhereAllocation.Tests.Mono -c Release -v quiet -nologo >"$log/mono-build.txt" 2>&1 || { cat "$log/mono-build.txt"; broken+=(mono-build); }
timeout 900 "${mono_xunit[@]}" -verbose 2>&1 | tee "$log/mono.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(mono)
count_xunit_console "$log/mono.txt"

echo "== Mono with the Boehm collector (mono-boehm, Unity's collector): the same suite; the thread's allocation counter is"
echo "   dead there, so the allocation claims are checked through the collector's own byte count (tests' Support/AllocationOracle.cs)"
# That count is process-wide, so this stage runs the suite on the project's own runner (tests/WhereAllocation.Tests.Boehm),
# which leaves no other thread allocating beside a test, where xunit's console runner reports from threads of its own.
# Every Boehm collection traces the whole heap with the world stopped, so a test that allocates runs slower than under
# SGen (the managed batch path's "the meter can fail": 11 s under SGen, up to 51 s at load 50): 180 s per test.
dotnet build tests/WhereAllocation.Tests.Boehm -c Release -v quiet -nologo >"$log/boehm-build.txt" 2>&1 || { cat "$log/boehm-build.txt"; broken+=(boehm-build); }
timeout 1200 mono-boehm --debug tests/WhereAllocation.Tests.Boehm/bin/Release/netstandard2.1/WhereAllocation.Tests.Mono.dll --time-limit 180 2>&1 | tee "$log/mono-boehm.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(mono-boehm)
line=$(grep -E "^mono: [0-9]+ passed" "$log/mono-boehm.txt" | tail -1)
p=$(sed -nE 's/^mono: ([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))

echo "== Mono without a JIT: every assembly compiled by mono --aot=full (the framework's once per machine, cached), the suite run"
echo "   under mono --full-aot, a planted run-time instantiation and Reflection.Emit refused, the library's IL free of both (scripts/full-aot.sh)"
timeout -k 30 900 bash scripts/full-aot.sh 2>&1 | tee "$log/full-aot.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(full-aot)
count_summary "$log/full-aot.txt"

echo "== Dispose races again, with MALLOC_MMAP_THRESHOLD_=131072: glibc then maps each block of 128 KiB or more on its own and"
echo "   unmaps it at free, so a write after free faults instead of passing silently (CoreCLR, then Mono)"
MALLOC_MMAP_THRESHOLD_=131072 dotnet test tests/WhereAllocation.Tests -c Release --no-build --filter "Category=DisposeRace" --logger "console;verbosity=minimal" 2>&1 | tee "$log/race-coreclr.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(race-coreclr)
count_dotnet_test "$log/race-coreclr.txt"
MALLOC_MMAP_THRESHOLD_=131072 timeout 600 "${mono_xunit[@]}" -verbose -trait "Category=DisposeRace" 2>&1 | tee "$log/race-mono.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(race-mono)
count_xunit_console "$log/race-mono.txt"

echo "== Windows (Winsock) under Wine: the suite on the win-x64 runtime"
timeout -k 30 1800 bash scripts/wine-tests.sh 2>&1 | tee "$log/wine.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(wine)
count_summary "$log/wine.txt"

echo "== Awaits under stress: 1 000 sockets awaiting at once, sockets replaced meanwhile (bench/AwaitStress, quick: CoreCLR in both"
echo "   continuation modes, Mono in IoThread mode, epoll): nothing lost, every await ends, 0 B per await in the steady state"
AWAIT_STRESS_QUICK=1 timeout 600 bash bench/AwaitStress/run.sh 2>&1 | tee "$log/await-stress.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(await-stress)
count_summary "$log/await-stress.txt"

echo "== Native leak check: 10^6 memory operations on Mono under valgrind (bench/MemoryLeakCheck)"
bash bench/MemoryLeakCheck/valgrind.sh 2>&1 | tee "$log/leak.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(leak-check)
count_summary "$log/leak.txt"

echo "== The library's receive cost on Mono in instructions per datagram, under callgrind (bench/ReceiveCost)"
bash bench/ReceiveCost/cost.sh 2>&1 | tee "$log/receive-cost.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(receive-cost)
count_summary "$log/receive-cost.txt"

echo "== The library's send cost on Mono in instructions per datagram, under callgrind (bench/SendCost)"
bash bench/SendCost/cost.sh --check 2>&1 | tee "$log/send-cost.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(send-cost)
count_summary "$log/send-cost.txt"

echo "== C reference programs: self-test"
bash bench/native/selftest.sh 2>&1 | tee "$log/native.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(native)
count_summary "$log/native.txt"

echo "== DatagramServer (bench/DatagramServer, what ./demo.sh runs): its invariants on CoreCLR and Mono"
bash bench/DatagramServer/invariants.sh 2>&1 | tee "$log/server.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(server)
count_summary "$log/server.txt"

echo "== Contributor commands: CONTRIBUTING.md's one-class commands run exactly that class, and a filter matching nothing fails"
bash scripts/contributor-commands.sh 2>&1 | tee "$log/contributor.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || broken+=(contributor-commands)
count_summary "$log/contributor.txt"

echo "== Packaging checks: Unity .meta files, Unity version and package copies, the install routes (scripts/pack.sh: NuGet into fresh CoreCLR and Mono projects, the README example, the Unity tarball and samples, a clean package folder), NativeAOT publish, trimmed like Unity's stripping Unity's target builds (the public API is checked by the library's build)"
for check in "unity-meta.sh --check" "unity-version.sh --check" "pack-check.sh" "aot-check.sh" "trim-check.sh" "unity-builds.sh"; do
  name=${check%%.sh*}
  bash scripts/$check 2>&1 | tee "$log/$name.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || broken+=("$name")
  count_summary "$log/$name.txt"
done

if [ ${#broken[@]} -gt 0 ]; then
  echo "failing stages: ${broken[*]}"
  [ "$failed" -gt 0 ] || failed=1
fi
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
