#!/usr/bin/env bash
# The datagram server's invariant test, on CoreCLR and on Mono: runs the program (drain mode, two interleaved
# rounds, the shard scenario with 1 and 2 shards) with a small count and 64 corrupted datagrams injected into
# every receiver and every shard group (one per byte position of a 64-byte datagram), then a short stream-mode
# run, and checks what they wrote; first it checks the C# datagram code against bench/native's test vectors
# (--check-format). Speed is not checked. Ends with "N passed, N failed"; exit 0 only if none failed.
#   every row of the runtime present (and the absent ones said why), the exact CSV headers, lost = 0 and
#   sent = count x rounds in every row, every injected datagram counted corrupt, no duplicates or strays,
#   a median and spread per method in summary.csv and a row per method and round in rounds.csv,
#   bytes_per_datagram = 0 and gen0 = 0 for the library rows (library-async included) and the library's shards,
#   the seed's async loop seen allocating, every shard of a group given datagrams, both shard receivers at every
#   shard count, and 0 B/frame in the library tick; then the frame-time mode briefly on CoreCLR, Mono and mono-boehm.
set -uo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-12000}
rounds=2
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
summary_header='runtime,mode,method,rounds,ns_per_datagram_median,ns_per_datagram_min,ns_per_datagram_max,cpu_ns_per_datagram_median,cpu_ns_per_datagram_min,cpu_ns_per_datagram_max,datagrams_per_s_median,ratio_to_c_recvfrom_median,bytes_per_datagram,lost'
shards_header='runtime,receiver,shards,fills,sent,kernel_drops,received,lost,corrupt,duplicate,datagrams_per_s_median,datagrams_per_s_min,datagrams_per_s_max,ratio_to_one_shard,cpu_ns_per_datagram_median,bytes_per_datagram,gen0,smallest_shard_share'
number() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
# shard FILE RECEIVER SHARDS COLUMN: a cell of shards.csv
shard() {
  [ -f "$1" ] || return 0
  awk -F, -v r="$2" -v n="$3" -v col="$4" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    $2 == r && $3 == n && c { print $c; exit }' "$1"
}

echo "building samples/DatagramServer"
if ! dotnet build samples/DatagramServer -c Release -v quiet -nologo >"$out/build.txt" 2>&1; then
  cat "$out/build.txt"
  echo "0 passed, 1 failed"
  exit 1
fi

for runtime in coreclr mono; do
  if [ "$runtime" = coreclr ]; then
    run=(dotnet samples/DatagramServer/bin/Release/net10.0/DatagramServer.dll)
    methods=(alloc-baseline managed-nonalloc library library-batch dotnet-socketaddress seed-async-alloc seed-async-reuse library-async dotnet-socketaddress-async raw-pinvoke raw-pinvoke-held raw-pinvoke-safe raw-recvmmsg c-recvfrom c-recvmmsg)
    absent=()
  else
    run=(mono --debug samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll)
    methods=(alloc-baseline managed-nonalloc library library-batch seed-async-alloc seed-async-reuse library-async raw-pinvoke raw-pinvoke-held raw-pinvoke-safe raw-recvmmsg c-recvfrom c-recvmmsg)
    absent=(dotnet-socketaddress dotnet-socketaddress-async)
  fi
  dir="$out/$runtime"
  "${run[@]}" --check-format >"$out/$runtime-format.txt" 2>&1
  status=$?
  cat "$out/$runtime-format.txt"
  check "$runtime: the datagram check matches bench/native's test vectors and rejects every one-char change" equals "$status" 0
  echo "== $runtime: ${run[*]} --count $count --rounds $rounds --inject-corrupt $inject --shards 1,2"
  timeout 300 "${run[@]}" --count "$count" --rounds "$rounds" --warmup 12000 --inject-corrupt "$inject" --shards 1,2 --shard-fills 2 --shard-fill 3000 \
    --tick-frames 3 --out "$dir" >"$out/$runtime.txt" 2>&1
  status=$?
  tail -n 24 "$out/$runtime.txt"
  check "$runtime: the program ends with exit 0 (every row clean)" equals "$status" 0
  check "$runtime: results.csv has exactly the issue's header" equals "$(head -n 1 "$dir/results.csv" 2>/dev/null)" "$header"
  check "$runtime: summary.csv has exactly its header" equals "$(head -n 1 "$dir/summary.csv" 2>/dev/null)" "$summary_header"
  check "$runtime: shards.csv has exactly its header" equals "$(head -n 1 "$dir/shards.csv" 2>/dev/null)" "$shards_header"
  check "$runtime: rounds.csv has one row per method and round" equals "$(tail -n +2 "$dir/rounds.csv" 2>/dev/null | wc -l)" "$(( ${#methods[@]} * rounds ))"
  check "$runtime: lost = 0 in every round" equals "$(tail -n +2 "$dir/rounds.csv" 2>/dev/null | cut -d, -f8 | sort -u)" 0
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
    s="$dir/summary.csv"
    check "$runtime $m: sent = $count x $rounds" equals "$(field "$r" "$m" sent)" "$((count * rounds))"
    check "$runtime $m: lost = 0" equals "$(field "$r" "$m" lost)" 0
    check "$runtime $m: received > 0" positive "$(field "$r" "$m" received)"
    drops=$(field "$r" "$m" kernel_drops); received=$(field "$r" "$m" received)
    check "$runtime $m: sent = kernel_drops + received" equals "$((${drops:-0} + ${received:-0}))" "$((count * rounds))"
    check "$runtime $m: summary over $rounds rounds" equals "$(field "$s" "$m" rounds)" "$rounds"
    check "$runtime $m: a median ns/datagram and CPU ns/datagram, within their min and max" awk -v m="$m" -F, \
      'NR > 1 && $3 == m { ok = $5 > 0 && $6 <= $5 && $5 <= $7 && $8 > 0 && $9 <= $8 && $8 <= $10 } END { exit !ok }' "$s"
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
  for n in 1 2; do
    for receiver in library-shards c-shards; do
      f="$dir/shards.csv"
      sent=$(shard "$f" $receiver $n sent)
      check "$runtime $receiver $n shards: row present, lost = 0, sent = drops + received" equals \
        "$(shard "$f" $receiver $n lost),$((${sent:-0} > 0)),$(( $(shard "$f" $receiver $n kernel_drops) + $(shard "$f" $receiver $n received) ))" "0,1,${sent:-x}"
      check "$runtime $receiver $n shards: all $inject injected datagrams rejected, no duplicates" equals \
        "$(shard "$f" $receiver $n corrupt),$(shard "$f" $receiver $n duplicate)" "$inject,0"
      check "$runtime $receiver $n shards: a median rate, and every shard got datagrams" awk -v r=$receiver -v n=$n -F, \
        'NR > 1 && $2 == r && $3 == n { ok = $11 > 0 && $18 > 0 } END { exit !ok }' "$f"
    done
    check "$runtime library-shards $n shards: bytes_per_datagram = 0, gen0 = 0" equals \
      "$(shard "$f" library-shards $n bytes_per_datagram),$(shard "$f" library-shards $n gen0)" "0,0"
  done
  t="$dir/tick.csv"
  check "$runtime tick: library 0 B per frame" equals "$(field "$t" library bytes_per_frame 2)" 0
  check "$runtime tick: library gen0 = 0" equals "$(field "$t" library gen0 2)" 0
  check "$runtime tick: allocating way allocates" positive "$(field "$t" allocating gen0 2)$(field "$t" allocating bytes_per_frame 2 | tr -d .)"
  check "$runtime tick: nothing lost" equals "$(field "$t" allocating lost 2),$(field "$t" library lost 2)" "0,0"
  # Stream mode, the view under a saturating sender: one round, the rows that matter, no scenarios.
  sdir="$out/$runtime-stream"
  timeout 300 "${run[@]}" --mode stream --count 40000 --warmup 20000 --methods library,library-batch,c-recvfrom \
    --shards 0 --tick-frames 0 --out "$sdir" >"$out/$runtime-stream.txt" 2>&1
  status=$?
  tail -n 6 "$out/$runtime-stream.txt"
  check "$runtime stream mode: exit 0, three rows, every one lost = 0" equals \
    "$status,$(tail -n +2 "$sdir/results.csv" 2>/dev/null | wc -l),$(tail -n +2 "$sdir/results.csv" 2>/dev/null | cut -d, -f2,7 | sort -u)" "0,3,stream,0"
  for m in library library-batch; do
    check "$runtime stream $m: bytes_per_datagram = 0, gen0 = 0" equals "$(field "$sdir/results.csv" $m bytes_per_datagram),$(field "$sdir/results.csv" $m gen0)" "0,0"
  done
done

# The frame-time mode, briefly, on the three runtimes (Boehm included): the structure of what it writes, nothing lost,
# no collection in the library's frames and, where the runtime has an allocation counter, 0 B per library frame.
# Speed and the percentiles are not checked (a benchmark's figures).
frames_header='runtime,rate,way,frames,p50_ms,p99_ms,p999_ms,max_ms,over_budget,collections,frames_with_collection,longest_pause_ms,pause_source,bytes_per_frame,p99_over_p50,slow_frames,slow_preempted,slow_collecting,live_heap_mb,cpu_p50_ms,cpu_p99_ms'
for runtime in coreclr mono mono-boehm; do
  case $runtime in
    coreclr) run=(dotnet samples/DatagramServer/bin/Release/net10.0/DatagramServer.dll) ;;
    mono) run=(mono --debug samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll) ;;
    mono-boehm) run=(mono-boehm --debug samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll) ;;
  esac
  fdir="$out/$runtime-frames"
  timeout 120 "${run[@]}" --frame-times --frames 20 --frame-rates 60,0 --live-heap-mb 8 --frame-clients 2 --frame-entities 16 --frame-warmup 5 \
    --out "$fdir" >"$out/$runtime-frames.txt" 2>&1
  status=$?
  tail -n 6 "$out/$runtime-frames.txt"
  f="$fdir/frametimes.csv"
  check "$runtime frame times: exit 0 (nothing lost)" equals "$status" 0
  check "$runtime frame times: frametimes.csv has exactly its header" equals "$(head -n 1 "$f" 2>/dev/null)" "$frames_header"
  check "$runtime frame times: one row per way and rate, labelled $runtime" equals "$(tail -n +2 "$f" 2>/dev/null | cut -d, -f1-4 | sort | tr '\n' ' ')" \
    "$runtime,0,allocating,20 $runtime,0,library,20 $runtime,60,allocating,20 $runtime,60,library,20 "
  check "$runtime frame times: frames.csv has every frame" equals "$(tail -n +2 "$fdir/frames.csv" 2>/dev/null | wc -l)" 80
  check "$runtime frame times: the chart marks the 16.7 ms budget" grep -q "16.7 ms" "$fdir/frametimes.svg"
  check "$runtime frame times: no collection in the library's frames" equals \
    "$(awk -F, '$3 == "library" { print $10 }' "$f" 2>/dev/null | sort -u)" 0
  if [ "$runtime" = mono-boehm ]; then
    check "$runtime frame times: says it has no allocation counter, and leaves B/frame empty rather than 0" equals \
      "$(grep -c "no allocation counter on this runtime" "$out/$runtime-frames.txt"),$(awk -F, 'NR > 1 { print $14 }' "$f" | sort -u | tr -d '\n')" "1,"
  else
    check "$runtime frame times: library 0 B per frame, the allocating way more" awk -F, \
      'NR > 1 && $3 == "library" && $14 != "0" { bad = 1 } NR > 1 && $3 == "allocating" && !($14 > 0) { bad = 1 } NR > 1 { n++ } END { exit bad || n != 4 }' "$f"
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
