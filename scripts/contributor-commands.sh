#!/usr/bin/env bash
# CONTRIBUTING.md's commands for one class, run as written there: the CoreCLR one (dotnet test with its filter) must run
# exactly the tests of the class it names, at least one, all passing; the Mono one (scripts/mono-tests.sh -class ...)
# the same number. And each runner given a filter that matches nothing must fail: dotnet test, scripts/mono-tests.sh,
# and the project's own runner (tests/Shared/SuiteRunner.cs, on Mono). Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "  ok   $2"; else failed=$((failed + 1)); echo "  FAIL $2"; fi; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sh blocks of CONTRIBUTING.md that hold the two commands.
coreclr=$(grep -m1 -E '^dotnet test tests/WhereAllocation.Tests -c Release --filter "FullyQualifiedName~[A-Za-z.]+\."$' CONTRIBUTING.md)
mono=$(grep -m1 -E '^scripts/mono-tests.sh -class [A-Za-z.]+$' CONTRIBUTING.md)
[ -n "$coreclr" ]; check $? "CONTRIBUTING.md's CoreCLR command for one class found: $coreclr"
[ -n "$mono" ]; check $? "CONTRIBUTING.md's Mono command for one class found: $mono"
class=$(sed -nE 's/.*FullyQualifiedName~([A-Za-z.]+)\.".*/\1/p' <<<"$coreclr")
[ "$class" = "${mono##* }" ]; check $? "both name the same class ($class)"

# What the class holds, from the assembly: its cases as dotnet test lists every test of the suite.
dotnet test tests/WhereAllocation.Tests -c Release --list-tests >"$work/all.txt" 2>&1
expected=$(grep -cE "^[[:space:]]+$class\.[A-Za-z0-9_]+(\(|$)" "$work/all.txt")
[ "$expected" -gt 0 ]; check $? "the class $class has $expected test cases"
[ "$expected" -gt 0 ] || tail -20 "$work/all.txt"

eval "$coreclr --logger 'console;verbosity=normal'" >"$work/coreclr.txt" 2>&1; status=$?
ran=$(grep -cE "^\s+Passed $class\." "$work/coreclr.txt")
others=$(grep -E "^\s+(Passed|Failed) " "$work/coreclr.txt" | grep -cvE "^\s+(Passed|Failed) $class\.")
[ $status = 0 ] && [ "$ran" = "$expected" ] && [ "$others" = 0 ]
check $? "the CoreCLR command ran exactly $class: $ran of $expected passed, $others test(s) of other classes"

eval "$mono" >"$work/mono.txt" 2>&1; status=$?
total=$(sed -nE 's/.*Total: ([0-9]+), Errors: 0, Failed: 0, Skipped: 0.*/\1/p' "$work/mono.txt" | tail -1)
[ $status = 0 ] && [ "${total:-0}" -gt 0 ]; check $? "the Mono command ran $class: ${total:-0} test(s), none failed"

echo "== A filter that matches nothing fails"
dotnet test tests/WhereAllocation.Tests -c Release --no-build --filter "FullyQualifiedName~NoSuchClassInTheSuite." >"$work/none-coreclr.txt" 2>&1
[ $? != 0 ]; check $? "dotnet test with a filter matching no test exits non-zero"
bash scripts/mono-tests.sh -class WhereAllocation.Tests.NoSuchClassInTheSuite >"$work/none-mono.txt" 2>&1
[ $? = 3 ]; check $? "scripts/mono-tests.sh with a class that does not exist exits 3"
dotnet build tests/WhereAllocation.Tests.Boehm -c Release -v quiet -nologo >"$work/boehm-build.txt" 2>&1 || cat "$work/boehm-build.txt"
timeout 120 mono tests/WhereAllocation.Tests.Boehm/bin/Release/netstandard2.1/WhereAllocation.Tests.Mono.dll NoSuchTestInTheSuite >"$work/none-runner.txt" 2>&1
[ $? = 3 ] && grep -q "no test matches the filter" "$work/none-runner.txt"; check $? "the project's runner with a filter matching no test exits 3 and says so"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
