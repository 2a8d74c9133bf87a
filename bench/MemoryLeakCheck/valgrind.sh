#!/usr/bin/env bash
# Runs the native-leak check of the memory package (src/WhereAllocation.Memory) under valgrind, on Mono (the library's
# netstandard2.1 build, whose native memory all comes from Marshal.AllocHGlobal).
#
# 1. Canary: a short run that loses one 12345-byte block through Marshal.AllocHGlobal on purpose. Its
#    stack gives the two mono-sgen frames under malloc that every AllocHGlobal call goes through (Debian's
#    mono is stripped, so they are addresses; valgrind loads it at the same address every run). The check
#    has to find that block, or it proves nothing.
# 2. The real run: 10^6 mixed operations (first argument changes it). Every leak record whose stack holds
#    those frames is memory the library (or the program) took from AllocHGlobal. Lost ones (definitely,
#    indirectly, possibly) must be 0; still-reachable ones are listed (PersistentAllocator.Shared's table
#    and free ring live as long as the process).
# Mono's own blocks (thread info, JIT data) are reported by valgrind too; they do not hold those frames.
# Prints "N passed, N failed" (2 checks) and exits non-zero on a leak.
set -uo pipefail
cd "$(dirname "$0")"
operations=${1:-1000000}
out=${VALGRIND_OUT:-$(mktemp -d)}
dotnet build -c Release -f netstandard2.1 -v quiet -nologo >"$out/build.txt" 2>&1 || { cat "$out/build.txt"; echo "0 passed, 2 failed"; exit 1; }
exe=bin/Release/netstandard2.1/MemoryLeakCheck.dll
vg=(valgrind --leak-check=full --show-leak-kinds=all --num-callers=40 --error-limit=no)

# Sums the records of a valgrind log whose stack holds both frames: "kind blocks bytes" per kind.
library_records() {
  awk -v f1="$2" -v f2="$3" '
    function flush() { if (kind != "" && has1 && has2) { blocks[kind] += b; bytes[kind] += n } kind = ""; has1 = has2 = 0 }
    / bytes in [0-9,]+ blocks are / {
      flush()
      line = $0; sub(/^==[0-9]+== /, "", line)
      match(line, /[0-9,]+ bytes in [0-9,]+ blocks/); part = substr(line, RSTART, RLENGTH)
      split(part, p, " "); n = p[1]; gsub(",", "", n); b = p[4]; gsub(",", "", b)
      match(line, /are (definitely|indirectly|possibly) lost|are still reachable/); kind = substr(line, RSTART + 4, RLENGTH - 4)
      next
    }
    index($0, f1) { has1 = 1 }
    index($0, f2) { has2 = 1 }
    /^==[0-9]+== $/ { flush() }
    END { flush(); for (k in blocks) print k "|" blocks[k] "|" bytes[k] }' "$1"
}

echo "== canary run: 10000 operations and one block lost on purpose"
"${vg[@]}" --log-file="$out/canary.txt" mono "$exe" 10000 --canary
frames=$(grep -A3 "12,345 bytes in 1 blocks are definitely lost" "$out/canary.txt" | grep -oE "by 0x[0-9A-F]+: \?\?\? \(in [^)]*mono[^)]*\)" | head -2 | grep -oE "0x[0-9A-F]+")
f1=$(sed -n 1p <<<"$frames"); f2=$(sed -n 2p <<<"$frames")
passed=0; failed=0
if [ -n "$f1" ] && [ -n "$f2" ]; then
  canary=$(library_records "$out/canary.txt" "$f1:" "$f2:" | grep "^definitely lost|" || true)
  echo "AllocHGlobal path frames: $f1 $f2; canary run, lost on that path: ${canary:-nothing}"
  if [ "$canary" = "definitely lost|1|12345" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: the canary block was not found alone"; fi
else
  echo "FAILED: no canary record in $out/canary.txt"; failed=$((failed + 1))
fi

echo "== leak run: $operations operations"
"${vg[@]}" --log-file="$out/run.txt" mono "$exe" "$operations"
status=$?
sed -n '/LEAK SUMMARY/,/suppressed/p' "$out/run.txt" | sed 's/^==[0-9]*== /  valgrind (whole process, Mono included): /'
records=$(library_records "$out/run.txt" "${f1:-none}:" "${f2:-none}:")
echo "blocks from Marshal.AllocHGlobal at exit, by kind:"; echo "${records:-  none}" | sed 's/^/  /; s/|/: /; s/|/ blocks, /; s/$/ bytes/'
lost=$(grep -E "^(definitely|indirectly|possibly)" <<<"$records" | wc -l)
if [ "$status" -eq 0 ] && [ "$lost" -eq 0 ] && [ -n "$f1" ]; then passed=$((passed + 1)); echo "no block lost by the library"; else failed=$((failed + 1)); echo "FAILED: exit $status, lost records on the AllocHGlobal path: $lost"; fi
echo "logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
