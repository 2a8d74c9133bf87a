#!/usr/bin/env bash
# A test suite on Mono under xunit's console runner, built first: the sockets suite (tests/WhereAllocation.Tests.Mono), or
# with --memory first the memory package's (tests/Memory/Mono). The other arguments go to the runner (-class <FullName>,
# -method <FullName>, -namespace <Name>, -trait "Category=DisposeRace", -verbose; full names: this runner version takes
# no wildcards). xunit's console runner exits 0 when its filter matches no test; this script fails then (exit 3), so a
# mistyped or renamed class is seen at once.
# Usage: scripts/mono-tests.sh [--memory] [-class WhereAllocation.Tests.AllocationTests] [...]
set -uo pipefail
cd "$(dirname "$0")/.."
project=tests/WhereAllocation.Tests.Mono; assembly=WhereAllocation.Tests.Mono.dll
if [ "${1:-}" = --memory ]; then project=tests/Memory/Mono; assembly=WhereAllocation.Memory.Tests.Mono.dll; shift; fi
dotnet build "$project" -c Release -v quiet -nologo >/dev/null || { echo "mono-tests: the Mono test project does not build: dotnet build $project -c Release" >&2; exit 2; }
out=$project/bin/Release/netstandard2.1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mono --debug "$out/xunit.console/xunit.console.exe" "$out/$assembly" -noshadow "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
total=$(sed -nE 's/.*Total: ([0-9]+).*/\1/p' "$log" | tail -1)
if [ "${total:-0}" = 0 ]; then
  echo "mono-tests: no test matches the filter ($*): nothing ran" >&2
  exit 3
fi
exit "$status"
