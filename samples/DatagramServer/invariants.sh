#!/usr/bin/env bash
# The datagram server's invariant test, on CoreCLR and on Mono: runs the program with a small count and
# 64 corrupted datagrams injected into every receiver (one per byte position of a 64-byte datagram), then
# checks what it wrote; first it checks the C# datagram code against bench/native's test vectors
# (--check-format). Speed is not checked. Ends with "N passed, N failed"; exit 0 only if none failed.
#   every row of the runtime present (and the absent ones said why), the exact results.csv header,
#   lost = 0 and sent = count in every row, every injected datagram counted corrupt, no duplicates or
#   strays, bytes_per_datagram = 0 and gen0 = 0 for the library rows (library-async included), the seed's async
#   loop seen allocating, and 0 B/frame in the library tick.
set -uo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-40000}
inject=64
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0
failed=0

check() { # name, then a command that succeeds when the check holds
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "  ok   $name"; else failed=$((failed + 1)); echo "  FAIL $name"; fi
}

# field FILE METHOD-OR-WAY COLUMN-NAME: prints that cell of the row whose 3rd (or 2nd, for tick.csv) column matches
field() {
  [ -f "$1" ] || return 0
  awk -F, -v key="$2" -v col="$3" -v keycol="${4:-3}" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    $keycol == key && c { print $c; exit }' "$1"
}

equals() { [ "$1" = "$2" ]; }
positive() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; }

header='runtime,mode,method,sent,kernel_drops,received,lost,seconds,datagrams_per_s,ns_per_datagram,bytes_per_datagram,gen0,gen1,gen2,ratio_to_c_recvfrom'

echo "building samples/DatagramServer"
if ! dotnet build samples/DatagramServer -c Release -v quiet -nologo >"$out/build.txt" 2>&1; then
  cat "$out/build.txt"
  echo "0 passed, 1 failed"
  exit 1
fi

for runtime in coreclr mono; do
  if [ "$runtime" = coreclr ]; then
    run=(dotnet samples/DatagramServer/bin/Release/net10.0/DatagramServer.dll)
    methods=(alloc-baseline managed-nonalloc library library-batch dotnet-socketaddress seed-async-alloc seed-async-reuse library-async dotnet-socketaddress-async raw-pinvoke c-recvfrom c-recvmmsg)
    absent=()
  else
    run=(mono --debug samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll)
    methods=(alloc-baseline managed-nonalloc library library-batch seed-async-alloc seed-async-reuse library-async raw-pinvoke c-recvfrom c-recvmmsg)
    absent=(dotnet-socketaddress dotnet-socketaddress-async)
  fi
  dir="$out/$runtime"
  "${run[@]}" --check-format >"$out/$runtime-format.txt" 2>&1
  status=$?
  cat "$out/$runtime-format.txt"
  check "$runtime: the datagram check matches bench/native's test vectors and rejects every one-char change" equals "$status" 0
  echo "== $runtime: ${run[*]} --count $count --inject-corrupt $inject"
  timeout 300 "${run[@]}" --count "$count" --warmup 20000 --inject-corrupt "$inject" --tick-frames 3 --out "$dir" >"$out/$runtime.txt" 2>&1
  status=$?
  tail -n 12 "$out/$runtime.txt"
  check "$runtime: the program ends with exit 0 (every row clean)" equals "$status" 0
  check "$runtime: results.csv has exactly the issue's header" equals "$(head -n 1 "$dir/results.csv" 2>/dev/null)" "$header"
  rows=$(tail -n +2 "$dir/results.csv" 2>/dev/null | wc -l)
  check "$runtime: one row per method that runs here" equals "$rows" "${#methods[@]}"
  check "$runtime: the runtime column says $runtime" equals "$(cut -d, -f1 "$dir/results.csv" 2>/dev/null | sort -u | grep -v runtime)" "$runtime"
  for m in "${absent[@]}"; do
    check "$runtime: $m is reported absent with a reason" grep -q "^absent: $m: " "$out/$runtime.txt"
  done
  for m in "${methods[@]}"; do
    r="$dir/results.csv"
    d="$dir/details.csv"
    check "$runtime $m: row present" positive "$(field "$r" "$m" sent)"
    check "$runtime $m: sent = $count" equals "$(field "$r" "$m" sent)" "$count"
    check "$runtime $m: lost = 0" equals "$(field "$r" "$m" lost)" 0
    check "$runtime $m: received > 0" positive "$(field "$r" "$m" received)"
    drops=$(field "$r" "$m" kernel_drops); received=$(field "$r" "$m" received)
    check "$runtime $m: sent = kernel_drops + received" equals "$((${drops:-0} + ${received:-0}))" "$count"
    check "$runtime $m: all $inject injected datagrams rejected as corrupt" equals "$(field "$d" "$m" corrupt)" "$inject"
    check "$runtime $m: no duplicates, none out of range" equals "$(field "$d" "$m" duplicate),$(field "$d" "$m" out_of_range)" "0,0"
    case "$m" in
      library*)
        check "$runtime $m: bytes_per_datagram = 0" equals "$(field "$r" "$m" bytes_per_datagram)" 0
        check "$runtime $m: gen0 = 0" equals "$(field "$r" "$m" gen0)" 0
        ;;
      alloc-baseline)
        check "$runtime $m: allocates (the measurement can see bytes)" positive "$(field "$d" "$m" allocated_bytes)"
        ;;
      seed-async-alloc)
        # The whole process's bytes where the runtime counts them (CoreCLR); Mono 6.8 has no such counter: the
        # column stays empty there and the collections show the cost.
        if [ "$runtime" = coreclr ]; then
          check "$runtime $m: allocates (whole-process bytes)" positive "$(field "$d" "$m" allocated_bytes)"
        else
          check "$runtime $m: no whole-process byte count on Mono (empty), and it collects (gen0 > 0)" equals "$(field "$r" "$m" bytes_per_datagram),$( [ "$(field "$r" "$m" gen0)" -gt 0 ] 2>/dev/null && echo collects)" ",collects"
        fi
        ;;
    esac
  done
  t="$dir/tick.csv"
  check "$runtime tick: library 0 B per frame" equals "$(field "$t" library bytes_per_frame 2)" 0
  check "$runtime tick: library gen0 = 0" equals "$(field "$t" library gen0 2)" 0
  check "$runtime tick: allocating way allocates" positive "$(field "$t" allocating gen0 2)$(field "$t" allocating bytes_per_frame 2 | tr -d .)"
  check "$runtime tick: nothing lost" equals "$(field "$t" allocating lost 2),$(field "$t" library lost 2)" "0,0"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
