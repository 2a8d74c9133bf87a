#!/usr/bin/env bash
# Where one send's user-mode instructions go on Mono, method by method: the form runs under callgrind as in cost.sh, with
# Mono writing a map of its JIT-compiled methods (MONO_ENV_OPTIONS=--jitmap, /tmp/perf-<pid>.map); each instruction of the
# measured round is charged to the method whose code holds its address (callgrind itself sees JIT code as nameless), or to
# the native function callgrind names. Self cost only, per datagram, largest first. Needs python3.
# Usage: bash bench/SendCost/methods.sh <form>   (forms as in cost.sh: sendto key endpoint sendmmsg1 batch1 ... batchgso8)
set -euo pipefail
cd "$(dirname "$0")/../.."
form=${1:?usage: methods.sh <form>}
n=2560
out=$(mktemp -d /tmp/send-methods.XXXXXX)
trap 'rm -rf "$out"' EXIT
dotnet build bench/SendCost -c Release -v quiet -nologo >"$out/build.txt" 2>&1 || { cat "$out/build.txt"; exit 1; }
MONO_ENV_OPTIONS=--jitmap valgrind --tool=callgrind --separate-threads=yes --dump-instr=yes --dump-before=getpgrp \
  --callgrind-out-file="$out/cg" mono bench/SendCost/bin/Release/netstandard2.1/SendCost.dll "$n" "$form" >"$out/log" 2>&1 \
  || { cat "$out/log"; exit 1; }
pid=$(awk '/^pid:/ { print $2; exit }' "$out/cg.2-01")
map=/tmp/perf-$pid.map
trap 'rm -rf "$out" "$map"' EXIT
python3 - "$out/cg.2-01" "$map" "$n" <<'PY'
import bisect, re, sys
profile, jitmap, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
methods = []
for line in open(jitmap):
    start, size, name = line.rstrip("\n").split(" ", 2)
    methods.append((int(start, 16), int(size, 16), name))
methods.sort()
starts = [m[0] for m in methods]
names = {"ob": {}, "fn": {}}
current = {"ob": "?", "fn": "?"}
cost, address, after_call = {}, 0, False

def step(token, value):
    if token == "*": return value
    if token[0] in "+-": return value + int(token, 0)
    return int(token, 0)

for line in open(profile):
    line = line.rstrip("\n")
    if not line: continue
    m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?", line)
    if m:
        if m.group(4): names[m.group(2)][m.group(3)] = m.group(4)
        if not m.group(1): current[m.group(2)] = names[m.group(2)].get(m.group(3), "?")
        continue
    if line.startswith("calls="):
        after_call = True  # the next cost line is the call's inclusive cost, not this function's own
        continue
    if line[0] not in "0123456789+-*": continue
    parts = line.split()
    address = step(parts[0], address)
    if after_call:
        after_call = False
        continue
    name = current["ob"].split("/")[-1] + ": " + current["fn"]
    if current["ob"] == "???":
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < methods[i][0] + methods[i][1]: name = methods[i][2]
    cost[name] = cost.get(name, 0) + (int(parts[2]) if len(parts) > 2 else 0)
total = sum(cost.values())
for name, c in sorted(cost.items(), key=lambda kv: -kv[1]):
    if c / n >= 2: print("%8.1f  %s" % (c / n, name))
print("%8.1f  in all, per datagram" % (total / n))
PY
