#!/usr/bin/env bash
# A suite on the win-x64 runtime under Wine: the sockets suite (tests/WhereAllocation.Tests.Windows, the library's
# Windows (Winsock) branch), or with "memory" as the argument the memory package's suite (tests/Memory), published
# self-contained for win-x64 and run on the suites' own runner, one fresh Wine process per test class. A process that
# ends without its summary line (a crash, or the outer time limit) is run once more; every such retry is
# printed and counted. A test that outlives the runner's per-test limit fails, its process stops, and the
# class goes on in a new process after it. Classes run two at a time (Wine's socket calls mostly wait, so
# two processes share the machine well). Ends with "N passed, N failed".
#
# Settings (environment): WINE_TEST_TIME_LIMIT  seconds per test (default 180: the allocation tests take
#                                               10-90 s under Wine, where every socket call is slow)
#                         WINE_CLASS_TIME_LIMIT seconds per Wine process (default 600)
#                         WINE_TEST_JOBS        classes run at once (default 2)
#                         WINE_TEST_CLASSES     only these classes (full names, space-separated)
#                         WINE_TESTS_DIR        where the builds and the Wine prefix go (default artifacts/wine; the
#                                               memory suite's build and logs in its memory/ folder, one prefix for both)
# Usage: scripts/wine-tests.sh [sockets|memory]
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
suite=${1:-sockets}
time_limit=${WINE_TEST_TIME_LIMIT:-180}
class_limit=${WINE_CLASS_TIME_LIMIT:-600}
jobs=${WINE_TEST_JOBS:-2}
dir=${WINE_TESTS_DIR:-$repo/artifacts/wine}
# A prefix of this checkout's own: its wineserver is started and stopped here without touching anyone else's.
export WINEPREFIX=$dir/prefix
case "$suite" in
  sockets) project=tests/WhereAllocation.Tests.Windows; exe=WhereAllocation.Tests.exe; host=() ;;
  # The memory suite is a test project: Microsoft.NET.Test.Sdk publishes it without the .exe Wine starts, unless asked.
  memory) project=tests/Memory; exe=WhereAllocation.Memory.Tests.exe; dir=$dir/memory; host=(-p:UseAppHost=true) ;;
  *) echo "usage: $0 [sockets|memory]" >&2; exit 2 ;;
esac
bin=$dir/bin
exe=$bin/$exe
logs=$dir/logs
# shellcheck source=scripts/wine-prefix.sh
. scripts/wine-prefix.sh

fail_setup() {
  echo "wine-tests: $1"
  echo "0 passed, 1 failed"
  exit 1
}

command -v wine >/dev/null 2>&1 || fail_setup "wine is not installed (apt-get install wine wine64; scripts/ensure-tools.sh does it as root)"
mkdir -p "$dir" "$logs"
rm -f "$logs"/*

echo "wine-tests: publishing $project for win-x64 (self-contained)"
if ! dotnet publish "$project" -c Release -r win-x64 --self-contained "${host[@]}" -o "$bin" -nologo -v quiet >"$logs/publish.txt" 2>&1; then
  cat "$logs/publish.txt"
  fail_setup "publish failed"
fi
[ -f "$exe" ] || fail_setup "the publish made no $(basename "$exe") for Wine to start (an app host: UseAppHost)"

wine_prefix_ready "$logs/prefix.txt" wine-tests || fail_setup "could not create the Wine prefix"

# One wineserver for all the per-class processes (it would otherwise start and stop with each), stopped at the end.
wineserver -p >/dev/null 2>&1 </dev/null
trap 'wineserver -k >/dev/null 2>&1' EXIT
trap 'exit 143' TERM INT
# Wine's background services start with the first program and inherit its output: start them here, on
# /dev/null, so that they never hold a pipe of ours open. Wine output always goes to files below, for the same reason.
wine cmd /c exit >/dev/null 2>&1 </dev/null

# Runs the exe under the outer time limit, its output (CRs dropped) in $1; the exit code is returned.
run_wine() {
  local out=$1 rc
  shift
  timeout -k 10 "$class_limit" wine "$exe" "$@" >"$out.raw" 2>&1 </dev/null
  rc=$?
  tr -d '\r' <"$out.raw" >"$out"
  rm -f "$out.raw"
  return $rc
}

why() { # a process's end, for the retry line
  case $1 in
    124|137) echo "no summary: killed after the ${class_limit} s limit" ;;
    *) echo "no summary: exit code $1" ;;
  esac
}

# The listings, each retried once too.
retried=0
for listing in list-classes list; do
  run_wine "$logs/$listing.txt" "--$listing"; rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$logs/$listing.txt" ]; then
    echo "retry: --$listing ($(why $rc)); last lines:"; tail -5 "$logs/$listing.txt" | sed 's/^/    /'
    retried=$((retried + 1))
    run_wine "$logs/$listing.txt" "--$listing" || { cat "$logs/$listing.txt"; fail_setup "--$listing failed twice"; }
  fi
done
mapfile -t classes <"$logs/list-classes.txt"
if [ -n "${WINE_TEST_CLASSES:-}" ]; then
  read -r -a wanted <<<"$WINE_TEST_CLASSES"
  for class in "${wanted[@]}"; do
    grep -qxF "$class" "$logs/list-classes.txt" || fail_setup "no test class named $class"
  done
  classes=("${wanted[@]}")
fi
[ ${#classes[@]} -gt 0 ] || fail_setup "no test classes found"

# Number of tests of class $1 after the test named $2 (all of them when $2 is empty), in the runner's order.
count_tests() {
  awk -v class="$1" -v after="$2" '
    { name = $0; sub(/\(.*/, "", name); sub(/\.[^.]*$/, "", name) }
    name == class { if (started || after == "") n++; if ($0 == after) started = 1 }
    END { print n + 0 }' "$logs/list.txt"
}

# Runs one class (in the background): its output goes to $logs/$class.out, its counts to $logs/$class.result.
run_class() {
  local class=$1 after="" attempt=0 part=0 passed=0 failed=0 retried=0 resumed=0 began rc log summary p f not_run ok expected lost
  local out="$logs/$class.out"
  began=$(date +%s)
  : >"$out"
  while :; do
    part=$((part + 1))
    log="$logs/$class.$part.txt"
    args=(--class "$class" --time-limit "$time_limit")
    [ -n "$after" ] && args+=(--start-after "$after")
    run_wine "$log" "${args[@]}"; rc=$?
    cat "$log" >>"$out"
    summary=$(grep -E '^windows: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    if [ -z "$summary" ]; then
      if [ $attempt -eq 0 ]; then
        { echo "retry: $class${after:+ after $after} ($(why $rc)); last lines:"; tail -5 "$log" | sed 's/^/    /'; } >>"$out"
        retried=$((retried + 1)); attempt=1
        continue
      fi
      ok=$(grep -c '^  ok   ' "$log")
      expected=$(count_tests "$class" "$after")
      lost=$((expected - ok)); [ $lost -ge 1 ] || lost=1
      echo "class $class: the retry failed too ($(why $rc)): $ok tests reported ok, $lost count as failed" >>"$out"
      passed=$((passed + ok)); failed=$((failed + lost))
      break
    fi
    p=$(sed -nE 's/^windows: ([0-9]+) passed.*/\1/p' <<<"$summary")
    f=$(sed -nE 's/.* ([0-9]+) failed$/\1/p' <<<"$summary")
    not_run=$(sed -nE 's/^not run: ([0-9]+).*/\1/p' "$log" | tail -1)
    not_run=${not_run:-0}
    passed=$((passed + p)); failed=$((failed + f - not_run))
    if [ "$not_run" -gt 0 ]; then
      # The runner stopped after a test that timed out: go on after it in a fresh process.
      after=$(grep -B1 -E '^timed out after [0-9]+ s$' "$log" | sed -nE 's/^  FAIL (.*)$/\1/p' | tail -1)
      if [ -z "$after" ]; then
        echo "class $class: $not_run tests not run, and the timed-out test could not be found; they count as failed" >>"$out"
        failed=$((failed + not_run))
        break
      fi
      echo "resume: $class after $after (it timed out; $not_run tests left)" >>"$out"
      resumed=$((resumed + 1)); attempt=0
      continue
    fi
    break
  done
  echo "$passed $failed $retried $resumed $(( $(date +%s) - began ))" >"$logs/$class.result"
}

# The longest classes of the last run start first, so that the workers end together.
ordered=("${classes[@]}")
if [ -f "$dir/seconds.txt" ]; then
  mapfile -t ordered < <(for class in "${classes[@]}"; do
    echo "$(awk -v c="$class" '$1 == c { print $2 }' "$dir/seconds.txt") $class"; done | sort -k1,1nr | awk '{ print $NF }')
fi

start=$(date +%s)
echo "wine-tests: ${#classes[@]} classes, $jobs at a time, each in its own Wine process; limits: $time_limit s per test, $class_limit s per process"
for class in "${ordered[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_class "$class" &
done
wait

passed=0; failed=0; resumed=0
: >"$dir/seconds.txt"
for class in "${classes[@]}"; do
  cat "$logs/$class.out"
  if [ ! -f "$logs/$class.result" ]; then
    echo "class $class: no result (the driver lost it); counted as 1 failure"
    failed=$((failed + 1))
    continue
  fi
  read -r p f r m secs <"$logs/$class.result"
  passed=$((passed + p)); failed=$((failed + f)); retried=$((retried + r)); resumed=$((resumed + m))
  echo "$class $secs" >>"$dir/seconds.txt"
  echo "class $class: $p passed, $f failed in $secs s"
done

echo "wine-tests ($suite): ${#classes[@]} classes in $(( $(date +%s) - start )) s (Wine $(wine --version 2>/dev/null))"
echo "resumed after a timed-out test: $resumed"
echo "retried: $retried"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
