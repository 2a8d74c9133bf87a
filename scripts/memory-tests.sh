#!/usr/bin/env bash
# The memory package's suite (tests/Memory), apart from the sockets package, on every runtime the sockets suite runs on:
#   coreclr        CoreCLR, dotnet test, against the package's net8.0 build (Release)
#   debug          the same against the Debug build: the package's debug-only checks (poison at reset, allocation sites)
#   races          the dispose races again with MALLOC_MMAP_THRESHOLD_=131072 (glibc then unmaps each block of 128 KiB or
#                  more at free, so a write after free faults), on CoreCLR and on Mono, as test.sh's race stage does
#   unity-coreclr  CoreCLR against the netstandard2.1 build compiled with the defines of a Unity Linux player on Unity's
#                  CoreCLR back end (tests/Unity/CoreClr/Memory). One target is enough: the package reads no Unity
#                  symbol, so every target compiles the same code; that is checked here first
#   mono           Mono (SGen) under xunit's console runner (scripts/mono-tests.sh --memory)
#   boehm          mono-boehm on the suites' own runner: the allocation claims through the collector's own byte count
#   full-aot       Mono's full AOT, no JIT (scripts/no-jit.sh --suite memory)
#   wine           the win-x64 runtime under Wine (scripts/wine-tests.sh memory)
# Usage: scripts/memory-tests.sh [runtime...] (default: all, in the order above). Prints each run's counts and time and
# ends with one "N passed, N failed" line (a run that fails without counting a test counts one failure).
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/counts.sh
. scripts/counts.sh
all=(coreclr debug races unity-coreclr mono boehm full-aot wine)
runtimes=("$@"); [ $# -gt 0 ] || runtimes=("${all[@]}")
for r in "${runtimes[@]}"; do
  [[ " ${all[*]} " == *" $r "* ]] || { echo "memory-tests: no runtime named $r (${all[*]})" >&2; exit 2; }
done
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0; failed=0
mono_out=tests/Memory/Mono/bin/Release/netstandard2.1

# run <name> <counter> <command...>: the command's output shown and kept, its counts added; a failing command that
# counted no failure counts one.
run() {
  local name=$1 counter=$2 before_p=$passed before_f=$failed start=$SECONDS status
  shift 2
  echo "== memory, $name"
  "$@" 2>&1 | tee "$log/$name.txt"
  status=${PIPESTATUS[0]}
  "$counter" "$log/$name.txt"
  if [ "$status" -ne 0 ] && [ "$failed" -eq "$before_f" ]; then failed=$((failed + 1)); echo "memory, $name: exit status $status"; fi
  echo "memory, $name: $((passed - before_p)) passed, $((failed - before_f)) failed in $((SECONDS - start)) s"
}

# The symbols the memory package's sources test: every Unity target compiles the same code only while none is Unity's.
unity_symbols() {
  grep -hE '^\s*#\s*(if|elif)\b' src/WhereAllocation.Memory/*.cs | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | grep -vxE 'if|elif|defined' \
    | grep -vxE 'NET8_0_OR_GREATER|DEBUG' | sort -u
}

for r in "${runtimes[@]}"; do
  case "$r" in
    coreclr) run coreclr count_dotnet_test dotnet test tests/Memory -c Release --logger "console;verbosity=normal" ;;
    debug) run debug count_dotnet_test dotnet test tests/Memory -c Debug --logger "console;verbosity=minimal" ;;
    races)
      run races-coreclr count_dotnet_test env MALLOC_MMAP_THRESHOLD_=131072 dotnet test tests/Memory -c Release --filter "Category=DisposeRace" --logger "console;verbosity=minimal"
      run races-mono count_xunit_console env MALLOC_MMAP_THRESHOLD_=131072 timeout 600 bash scripts/mono-tests.sh --memory -verbose -trait "Category=DisposeRace" ;;
    unity-coreclr)
      symbols=$(unity_symbols)
      if [ -n "$symbols" ]; then
        echo "  FAIL the memory package's sources test symbols other than NET8_0_OR_GREATER and DEBUG ($(echo $symbols)): one Unity"
        echo "       target no longer stands for all; give tests/Unity/CoreClr a memory project per target that differs"
        failed=$((failed + 1))
      else
        echo "  ok   the memory package's sources test no symbol but NET8_0_OR_GREATER and DEBUG: every Unity target compiles the same code"
        passed=$((passed + 1))
      fi
      run unity-coreclr count_dotnet_test dotnet test tests/Unity/CoreClr/Memory -c Release --logger "console;verbosity=normal" ;;
    mono) run mono count_xunit_console timeout 900 bash scripts/mono-tests.sh --memory -verbose ;;
    boehm)
      dotnet build tests/Memory/Mono -c Release -v quiet -nologo >"$log/mono-build.txt" 2>&1 || cat "$log/mono-build.txt"
      run boehm count_runner timeout 1200 mono-boehm --debug "$mono_out/WhereAllocation.Memory.Tests.Mono.dll" --time-limit 180 ;;
    full-aot) run full-aot count_summary timeout -k 30 900 bash scripts/no-jit.sh --suite memory ;;
    wine) run wine count_summary timeout -k 30 1200 bash scripts/wine-tests.sh memory ;;
  esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
