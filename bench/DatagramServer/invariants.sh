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
#   shard count, and 0 B/frame in the library tick; then --mode sweep briefly on CoreCLR and Mono (every row, nothing lost, the
#   injected datagrams rejected by the rows that check content, 0 B/datagram in the library's rows, each row's ratio); then
#   --mode send and --mode scale briefly on CoreCLR and Mono (every row,
#   nothing lost, no wrong peer, 0 B/datagram in the library's rows, the summary lines with their ratios); then --mode pingpong
#   briefly on CoreCLR and Mono (every server, nothing lost, 0 B/echo in the library's rows, system calls counted, the summary
#   line); then the frame-time mode briefly on CoreCLR, Mono and mono-boehm.
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

echo "building bench/DatagramServer"
if ! dotnet build bench/DatagramServer -c Release -v quiet -nologo >"$out/build.txt" 2>&1; then
  cat "$out/build.txt"
  echo "0 passed, 1 failed"
  exit 1
fi

for runtime in coreclr mono; do
  if [ "$runtime" = coreclr ]; then
    run=(dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll)
    methods=(alloc-baseline managed-nonalloc library library-batch dotnet-socketaddress seed-async-alloc seed-async-reuse library-async dotnet-socketaddress-async raw-pinvoke raw-pinvoke-held raw-pinvoke-safe raw-recvmmsg c-recvfrom c-recvmmsg)
    absent=()
  else
    run=(mono --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll)
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

# The sweep (--mode sweep), briefly, on CoreCLR and Mono: every row present (dotnet-socketaddress-count absent on Mono, with
# its reason), lost = 0 in every row, the injected corrupt datagrams rejected by every row that checks content and none sent to
# the count-only rows (which could not tell them), 0 B and gen0 = 0 in the library's rows, the runtime's ReceiveFrom(ref
# EndPoint) seen allocating, and each row's ratio to its C receiver in results.md. Speed is not checked.
sweep_count=3000
for runtime in coreclr mono; do
  case $runtime in
    coreclr) run=(dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll); extra=dotnet-socketaddress-count ;;
    mono) run=(mono --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll); extra= ;;
  esac
  checked="c-recvmmsg library-batch-1 library-batch-64 library-batch-64-single-calls"
  counted="c-recvmmsg-count library-batch-64-count c-recvfrom-count raw-pinvoke-count library-count library-key-count library-span-count library-try-span-count managed-nonalloc-count $extra"
  wdir="$out/$runtime-sweep"
  timeout 300 "${run[@]}" --mode sweep --batches 1,64 --count $sweep_count --drain-round $sweep_count --rounds 2 --warmup $sweep_count \
    --inject-corrupt "$inject" --out "$wdir" >"$out/$runtime-sweep.txt" 2>&1
  status=$?
  tail -n 3 "$out/$runtime-sweep.txt"
  r="$wdir/results.csv"
  d="$wdir/details.csv"
  check "$runtime sweep: exit 0 (every row clean)" equals "$status" 0
  check "$runtime sweep: results.csv has exactly its header, every row in mode sweep" equals \
    "$(head -n 1 "$r" 2>/dev/null),$(tail -n +2 "$r" 2>/dev/null | cut -d, -f2 | sort -u)" "$header,sweep"
  check "$runtime sweep: one row per sweep row that runs here" equals "$(tail -n +2 "$r" 2>/dev/null | cut -d, -f3 | LC_ALL=C sort | tr '\n' ' ')" \
    "$(printf '%s\n' $checked $counted | LC_ALL=C sort | tr '\n' ' ')"
  if [ -z "$extra" ]; then
    check "$runtime sweep: dotnet-socketaddress-count is reported absent with a reason" grep -q "^absent: dotnet-socketaddress-count: " "$out/$runtime-sweep.txt"
  fi
  for m in $checked $counted; do
    check "$runtime sweep $m: sent = $sweep_count x 2, lost = 0" equals "$(field "$r" "$m" sent),$(field "$r" "$m" lost)" "$((sweep_count * 2)),0"
  done
  for m in $checked; do
    check "$runtime sweep $m: all $inject injected datagrams rejected as corrupt, no duplicates" equals \
      "$(field "$d" "$m" injected_corrupt),$(field "$d" "$m" corrupt),$(field "$d" "$m" duplicate)" "$inject,$inject,0"
  done
  for m in $counted; do
    check "$runtime sweep $m: count only, none injected, none wrong" equals "$(field "$d" "$m" injected_corrupt),$(field "$d" "$m" corrupt)" "0,0"
  done
  for m in $checked $counted; do
    case "$m" in
      library*) check "$runtime sweep $m: bytes_per_datagram = 0, gen0 = 0" equals "$(field "$r" "$m" bytes_per_datagram),$(field "$r" "$m" gen0)" "0,0" ;;
      c-*) ;;
      *) check "$runtime sweep $m: in a ratio of results.md" grep -q "| \`$m\` ÷ \`" "$wdir/results.md" ;;
    esac
    case "$m" in
      library*) check "$runtime sweep $m: in a ratio of results.md" grep -q "| \`$m\` ÷ \`c-recv" "$wdir/results.md" ;;
    esac
  done
  check "$runtime sweep managed-nonalloc-count: allocates (the byte count can see it)" positive "$(field "$d" managed-nonalloc-count allocated_bytes)"
done

# The send half and many peers (--mode send, --mode scale), briefly, on CoreCLR and Mono: the structure of what they write,
# every row present, nothing lost, no wrong peer, 0 B per datagram in the library's rows, and the summary lines with their
# ratios. Speed is not checked.
send_header='runtime,table,sender,n,rounds,cpu_ns_per_datagram_median,bytes_per_datagram,lost'
scale_header='runtime,receiver,n,rounds,cpu_ns_per_datagram_median,growth_to_first_n,bytes_per_datagram,lost,wrong_peer'
for runtime in coreclr mono; do
  case $runtime in
    coreclr) run=(dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll); senders="runtime-sendto runtime-sendto-socketaddress" ;;
    mono) run=(mono --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll); senders="runtime-sendto" ;;
  esac
  senders="c-sendmmsg c-sendto library-batch library-sendto-endpoint library-sendto-key raw-sendmmsg raw-sendto $senders"
  sdir="$out/$runtime-send"
  timeout 180 "${run[@]}" --mode send --peers 1,100 --rounds 2 --out "$sdir" >"$out/$runtime-send.txt" 2>&1
  status=$?
  tail -n 4 "$out/$runtime-send.txt"
  f="$sdir/send.csv"
  check "$runtime send: exit 0 (nothing lost)" equals "$status" 0
  check "$runtime send: send.csv has exactly its header" equals "$(head -n 1 "$f" 2>/dev/null)" "$send_header"
  check "$runtime send: the fan-out rows, $(echo $senders | wc -w) senders at N = 1 and 100" equals "$(awk -F, '$2 == "fanout"' "$f" 2>/dev/null | cut -d, -f3,4 | LC_ALL=C sort | tr '\n' ' ')" \
    "$(for s in $senders; do printf '%s,1\n%s,100\n' "$s" "$s"; done | LC_ALL=C sort | tr '\n' ' ')"
  check "$runtime send: the burst rows, library with and without offload and C's two, at 8, 16 and 64" equals \
    "$(awk -F, '$2 == "burst"' "$f" 2>/dev/null | cut -d, -f3,4 | LC_ALL=C sort -t, -k1,1 -k2,2n | tr '\n' ' ')" \
    "c-gso,8 c-gso,16 c-gso,64 c-sendmmsg,8 c-sendmmsg,16 c-sendmmsg,64 library-offload,8 library-offload,16 library-offload,64 library-plain,8 library-plain,16 library-plain,64 "
  check "$runtime send: lost = 0 in every row, a CPU figure in every row" awk -F, -v rows=$(( $(echo $senders | wc -w) * 2 + 12 )) \
    'NR > 1 && ($8 != "0" || !($6 > 0)) { bad = 1 } NR > 1 { n++ } END { exit bad || n != rows }' "$f"
  check "$runtime send: 0 B per datagram in every library row" awk -F, 'NR > 1 && $3 ~ /^library/ && $7 != "0" { bad = 1 } END { exit bad }' "$f"
  check "$runtime send: the runtime's SendTo(EndPoint) allocates (the byte count can see it)" awk -F, '$3 == "runtime-sendto" && $7 > 0 { seen = 1 } END { exit !seen }' "$f"
  check "$runtime send: the summary's send and offload lines, with their ratios and targets" grep -Eq \
    "^send, .*DatagramBatch [0-9]+\.[0-9]+x C sendmmsg.*target >= 0\.9.*SendTo_NonAlloc [0-9]+\.[0-9]+x .*0 B/datagram, 0 lost" "$sdir/send-summary.txt"
  check "$runtime send: the offload line has the library's, C's and the library-against-C ratios per burst" grep -Eq \
    "^offload, .*library [0-9.]+/[0-9.]+/[0-9.]+ \(target >= 2\), C's own \(sendmmsg / UDP_SEGMENT\) [0-9.]+/[0-9.]+/[0-9.]+; .*offload [0-9.]+/[0-9.]+/[0-9.]+, without [0-9.]+/[0-9.]+/[0-9.]+; 0 B/datagram, 0 lost" "$sdir/send-summary.txt"
  check "$runtime send: the coalesced receive gave back every datagram" grep -q " 0 wrong, 0 missing" "$sdir/send.md"

  cdir="$out/$runtime-scale"
  timeout 180 "${run[@]}" --mode scale --peers 1,100 --rounds 2 --drain-round 2000 --out "$cdir" >"$out/$runtime-scale.txt" 2>&1
  status=$?
  tail -n 3 "$out/$runtime-scale.txt"
  f="$cdir/scale.csv"
  check "$runtime scale: exit 0 (nothing lost, no wrong peer)" equals "$status" 0
  check "$runtime scale: scale.csv has exactly its header" equals "$(head -n 1 "$f" 2>/dev/null)" "$scale_header"
  check "$runtime scale: every receiver at N = 1 and 100" equals "$(tail -n +2 "$f" 2>/dev/null | cut -d, -f2,3 | LC_ALL=C sort | tr '\n' ' ')" \
    "c-recvfrom+lookup,1 c-recvfrom+lookup,100 c-recvfrom,1 c-recvfrom,100 c-recvmmsg+lookup,1 c-recvmmsg+lookup,100 c-recvmmsg,1 c-recvmmsg,100 library+lookup,1 library+lookup,100 library-batch+bare-lookup,1 library-batch+bare-lookup,100 library-batch+lookup,1 library-batch+lookup,100 library-batch+lookup-many,1 library-batch+lookup-many,100 library-batch,1 library-batch,100 raw-recvfrom,1 raw-recvfrom,100 raw-recvmmsg+lookup,1 raw-recvmmsg+lookup,100 raw-recvmmsg,1 raw-recvmmsg,100 "
  check "$runtime scale: lost = 0 and no wrong peer in every row, a CPU figure and a growth in every row" awk -F, \
    'NR > 1 && ($8 != "0" || $9 != "0" || !($5 > 0) || !($6 > 0)) { bad = 1 } END { exit bad }' "$f"
  check "$runtime scale: 0 B per datagram in every library row" awk -F, 'NR > 1 && $2 ~ /^library/ && $7 != "0" { bad = 1 } END { exit bad }' "$f"
  check "$runtime scale: the summary's many-peers line, with its ratios (beyond C, and beyond C with the same lookup) and target" grep -Eq \
    "^many peers, .*grows [0-9]+\.[0-9]+x beyond C recvmmsg's growth \(target <= 1\.15; .*\) and [0-9]+\.[0-9]+x beyond C recvmmsg \+ the same lookup's .*[0-9]+\.[0-9]+x beyond C recvfrom's and [0-9]+\.[0-9]+x beyond C recvfrom \+ lookup's; 0 B/datagram, 0 lost, 0 wrong peer" "$cdir/scale-summary.txt"
  check "$runtime scale: scale.md gives the library's growth beyond C with the same lookup" grep -Eq \
    "library-batch\+lookup / c-recvmmsg\+lookup [0-9]+\.[0-9]+" "$cdir/scale.md"
done

# The ping-pong mode (--mode pingpong), briefly, on CoreCLR and Mono: every server at 1 and 20 clients, nothing lost and no
# wrong echo, 0 B per echo in the library's rows, the system calls per echo counted for every row where perf or strace can
# count them (and said so where neither can), and the summary line with its ratios. Speed is not checked.
pingpong_header='runtime,server,clients,rounds,echoes_per_second_median,cpu_ns_per_echo_median,bytes_per_echo,syscalls_per_echo,p50_us,p99_us,p999_us,lost,wrong'
for runtime in coreclr mono; do
  case $runtime in
    coreclr) run=(dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll); servers="c-echo library library-async library-batch runtime runtime-async runtime-socketaddress" ;;
    mono) run=(mono --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll); servers="c-echo library library-async library-batch runtime" ;;
  esac
  pdir="$out/$runtime-pingpong"
  timeout 300 "${run[@]}" --mode pingpong --clients 1,20 --rounds 1 --pingpong-ms 300 --out "$pdir" >"$out/$runtime-pingpong.txt" 2>&1
  status=$?
  tail -n 2 "$out/$runtime-pingpong.txt"
  f="$pdir/pingpong.csv"
  check "$runtime pingpong: exit 0 (nothing lost, no wrong echo)" equals "$status" 0
  check "$runtime pingpong: pingpong.csv has exactly its header" equals "$(head -n 1 "$f" 2>/dev/null)" "$pingpong_header"
  check "$runtime pingpong: every server at 1 and 20 clients" equals "$(tail -n +2 "$f" 2>/dev/null | cut -d, -f2,3 | LC_ALL=C sort | tr '\n' ' ')" \
    "$(for s in $servers; do printf '%s,1 %s,20 ' "$s" "$s"; done)"
  # The awaits' loop may move between threads (seen rarely, under load: it then counts on the thread it moved to, and where
  # it moved at its last datagram its CPU and bytes are unknown, "–"); their 0 B is asserted by the unit tests (AsyncAllocationTests).
  check "$runtime pingpong: lost = 0 and wrong = 0 in every row, an echo rate, a CPU figure (the awaits': or unknown) and a p50 in every row" awk -F, \
    'NR > 1 && ($12 != "0" || $13 != "0" || !($5 > 0) || !($6 > 0 || ($2 == "library-async" && $6 == "–")) || !($9 > 0)) { bad = 1 } END { exit bad }' "$f"
  check "$runtime pingpong: 0 B per echo in the library's one-call and batch rows (the awaits': 0 or unknown)" awk -F, \
    'NR > 1 && ($2 == "library" || $2 == "library-batch") && $7 != "0" { bad = 1 } NR > 1 && $2 == "library-async" && $7 != "0" && $7 != "" { bad = 1 } END { exit bad }' "$f"
  if command -v perf >/dev/null 2>&1 || command -v strace >/dev/null 2>&1; then
    check "$runtime pingpong: system calls per echo counted for every server at 1 and 20 clients" awk -F, \
      'NR > 1 && !($8 > 0) { bad = 1 } END { exit bad }' "$f"
  else
    check "$runtime pingpong: says that nothing can count system calls here" grep -q "neither perf nor strace" "$out/$runtime-pingpong.txt"
  fi
  check "$runtime pingpong: the summary line, with its ratios and targets" grep -Eq \
    "^pingpong, .*one-call syscalls/echo [0-9.]+ vs runtime's [0-9.]+ at 1, [0-9.]+ vs runtime's [0-9.]+ at 20 clients \(target <=\); one-call echoes/s vs runtime 1: [0-9]+\.[0-9]+x, 20: [0-9]+\.[0-9]+x \(target >= 1\.[05]\); p50/p99 vs C at 20 clients [0-9.]+x/[0-9.]+x \(target <= 1\.1\); .*library 0 B/echo, 0 lost" "$pdir/pingpong-summary.txt"
done

# The frame-time mode, briefly, on the three runtimes (Boehm included): the structure of what it writes, nothing lost,
# no collection in the library's frames and, where the runtime has an allocation counter, 0 B per library frame.
# Speed and the percentiles are not checked (a benchmark's figures).
frames_header='runtime,rate,way,frames,p50_ms,p99_ms,p999_ms,max_ms,over_budget,collections,frames_with_collection,longest_pause_ms,pause_source,bytes_per_frame,p99_over_p50,slow_frames,slow_preempted,slow_collecting,live_heap_mb,cpu_p50_ms,cpu_p99_ms'
for runtime in coreclr mono mono-boehm; do
  case $runtime in
    coreclr) run=(dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll) ;;
    mono) run=(mono --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll) ;;
    mono-boehm) run=(mono-boehm --debug bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll) ;;
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
