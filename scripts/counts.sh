# Sourced by test.sh and scripts/memory-tests.sh: each function reads one runner's log and adds its counts to the
# caller's $passed and $failed. A skipped test counts as failed (the suites have none; one would hide a missing part).

# A dotnet test run: the minimal logger's "Passed!  - Failed: 0, Passed: 89, Skipped: 0, ..." line, or the normal
# logger's "Total tests:" block ("     Passed: 89" / "     Failed: 1" / "     Skipped: 1"), which has no such line.
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

# An xunit console run: its summary line "<assembly>  Total: N, Errors: N, Failed: N, Skipped: N, ...". An error counts as failed.
count_xunit_console() {
  local line t e f s
  line=$(grep -E "Total: [0-9]+, Errors: [0-9]+, Failed: [0-9]+, Skipped: [0-9]+" "$1" | tail -1)
  t=$(sed -nE 's/.*Total: ([0-9]+),.*/\1/p' <<<"$line"); e=$(sed -nE 's/.*Errors: ([0-9]+),.*/\1/p' <<<"$line")
  f=$(sed -nE 's/.*Failed: ([0-9]+),.*/\1/p' <<<"$line"); s=$(sed -nE 's/.*Skipped: ([0-9]+),.*/\1/p' <<<"$line")
  passed=$((passed + ${t:-0} - ${f:-0} - ${s:-0})); failed=$((failed + ${e:-0} + ${f:-0} + ${s:-0}))
}

# The suites' own runner (tests/Shared/SuiteRunner.cs) on Mono: its "mono: N passed, N failed" line.
count_runner() {
  local line p f
  line=$(grep -E "^mono: [0-9]+ passed" "$1" | tail -1)
  p=$(sed -nE 's/^mono: ([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
}

# A script that ends with a "N passed, N failed" line.
count_summary() {
  local line p f
  line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$1" | tail -1)
  p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line"); f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
}
