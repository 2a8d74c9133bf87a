#!/usr/bin/env bash
# The library's receive cost on Mono in user-mode instructions per datagram, from callgrind: the number that does not
# move with this shared machine's load (timings do, by ±25% per round). Each form runs twice, with 2000 and with 20000
# datagrams; the difference of the two totals over the difference of the datagrams is one datagram's send and receive.
# Forms: raw (bare recvfrom P/Invoke), held (the same holding the socket's SafeHandle reference), safe (the least a
# receive with the library's checks, handle reference and sender compare can be, in one method), compat, compat5
# (ReceiveFrom_NonAlloc's 2- and 5-argument forms), field (compat5 through the field that holds the handle, as with the getter
# stripped). Checks that the measure sees the work (raw < held < safe < compat5), that the library stays within its budget over safe
# and that the field route costs at most 5% more per datagram than the property route. The budgets are taken over safe, not raw:
# raw's own count moves with the CPU (1283 here, 1257 on CI's machine, same Mono, same build: its JIT code differs), while
# safe, compat and compat5 moved by at most 4 between the two; a budget over raw failed CI by 7 with the library unchanged.
# Figures over raw are still printed.
# Usage: bash bench/ReceiveCost/cost.sh [--no-check]
set -uo pipefail
cd "$(dirname "$0")/../.."
budget_compat5=180   # over safe: 164 here, 160 on CI's machine on 2026-11-27 (Mono 6.8.0.105, x86-64, AMD EPYC); 141 on 2026-11-23; each budget is its figure here plus 10%
budget_compat=155    # over safe: 140 here, 136 on CI's machine
n1=2000; n2=20000
out=$(mktemp -d /tmp/receive-cost.XXXXXX)
dotnet build bench/ReceiveCost -c Release -v quiet -nologo >"$out/build.txt" 2>&1 || { cat "$out/build.txt"; echo "0 passed, 1 failed"; exit 1; }
exe=bench/ReceiveCost/bin/Release/netstandard2.1/ReceiveCost.dll
declare -A cost
for form in raw held safe compat compat5 field; do
  totals=()
  for n in $n1 $n2; do
    # Only the main thread is counted (--separate-threads: its file ends in -01); Mono's other threads do not take part.
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/$form.$n" mono "$exe" "$n" "$form" >"$out/$form.$n.log" 2>&1 \
      || { echo "FAILED: $form with $n datagrams (see $out/$form.$n.log)"; echo "0 passed, 1 failed"; exit 1; }
    totals+=("$(grep -m1 '^summary:' "$out/$form.$n-01" | awk '{print $2}')")
  done
  cost[$form]=$(( (totals[1] - totals[0]) / (2 * (n2 - n1)) ))
  echo "$form: ${cost[$form]} instructions per datagram sent and received"
done
echo "over the bare P/Invoke: held +$(( cost[held] - cost[raw] )), safe +$(( cost[safe] - cost[raw] )), compat +$(( cost[compat] - cost[raw] )), compat5 +$(( cost[compat5] - cost[raw] )), field +$(( cost[field] - cost[raw] ))"
echo "over safe (the budgets' base): compat +$(( cost[compat] - cost[safe] )), compat5 +$(( cost[compat5] - cost[safe] ))"
echo "field route over the property route (compat5): +$(( cost[field] - cost[compat5] )) instructions per datagram, $(( (cost[field] - cost[compat5]) * 1000 / cost[compat5] )) per mille of the whole"
rm -rf "$out"
[ "${1:-}" = "--no-check" ] && exit 0
passed=0; failed=0
check() { if eval "$2"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi; }
check "the measure sees the work: raw < held < safe < compat5" '[ "${cost[raw]}" -gt 0 ] && [ "${cost[raw]}" -lt "${cost[held]}" ] && [ "${cost[held]}" -lt "${cost[safe]}" ] && [ "${cost[safe]}" -lt "${cost[compat5]}" ]'
check "compat5 costs at most $budget_compat5 instructions over safe (the least safe receive)" '[ $(( cost[compat5] - cost[safe] )) -le $budget_compat5 ]'
check "compat costs at most $budget_compat instructions over safe (the least safe receive)" '[ $(( cost[compat] - cost[safe] )) -le $budget_compat ]'
check "the field route (no SafeHandle getter) costs at most 5% more per datagram than the property route" '[ $(( cost[field] * 100 )) -le $(( cost[compat5] * 105 )) ]'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
