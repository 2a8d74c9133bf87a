#!/usr/bin/env bash
# Builds bench/Mirage against a Mirage source folder and prints, for CoreCLR and Mono, IPv4 and dual-mode, what the
# server thread allocated per received datagram (the socket's share and Mirage's): Mirage's stock UdpSocket (dual-mode
# only), then the Unity package's WhereAllocationSocket.
# Usage: bench/Mirage/run.sh <Mirage checkout>/Assets/Mirage/Runtime [--syscalls | --flush-rounds N] [Program options, e.g. --clients 50 --seconds 5]
#   --flush-rounds N: the sample's socket against the same with its sends held for Flush in a DatagramBatch
#   (BatchedSendSocket.cs), N interleaved rounds per runtime, IPv4; the server thread's CPU time per tick, and its median.
#   --syscalls: each run under strace -f; the receive and poll calls the server thread made between the program's window
#   markers (a 997-byte sendto from that thread at the window's start and end) are counted and divided by the datagrams
#   received in the window.
# The Mono build is compiled here with the SDK's C# compiler against .NET Standard 2.1's reference assemblies, as the
# library's netstandard2.1 build is, and then one signature in it is rewritten: Mirage's code reads spans through
# ReadOnlySpan<T>'s indexer, which .NET Standard 2.1 declares returning "!0& modreq(InAttribute)" and Mono 6.8's corlib
# "!0&" with [IsReadOnly] (read with ikdasm in /usr/lib/mono/4.5/mscorlib.dll), so Mono throws MissingMethodException at
# the first call; Roslyn refuses to compile against Mono's own (CS0570). The program is disassembled (monodis), the
# modreq dropped at those call sites, and reassembled (ilasm), with two fixes monodis's output needs for Mono's ilasm: the
# framework assemblies it names declared, and its "agressive-inlining" flag (which ilasm cannot parse) dropped. Unity
# compiles Mirage against its own class libraries, where none of this happens.
set -uo pipefail
source=$(readlink -f "${1:?usage: run.sh <Mirage Runtime folder> [--syscalls] [options]}"); shift
syscalls=; [ "${1:-}" = --syscalls ] && { syscalls=1; shift; }
rounds=; [ "${1:-}" = --flush-rounds ] && { rounds=$2; shift 2; }
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
dotnet build -c Release -v q -nologo -p:MirageSource="$source" >"$work/build.txt" 2>&1 || { cat "$work/build.txt"; echo "build failed (CoreCLR)"; exit 2; }
dotnet build "$root/src/WhereAllocation" -c Release -f netstandard2.1 -v q -nologo >"$work/lib.txt" 2>&1 || { cat "$work/lib.txt"; echo "build failed (library)"; exit 2; }
csc=$(ls "$(dirname "$(readlink -f "$(command -v dotnet)")")"/sdk/*/Roslyn/bincore/csc.dll /usr/share/dotnet/sdk/*/Roslyn/bincore/csc.dll 2>/dev/null | sort -V | tail -1)
packages=$(dotnet msbuild "$root/src/WhereAllocation" -getProperty:NuGetPackageRoot 2>/dev/null | tr -d '[:space:]')
refs=${packages%/}/netstandard.library.ref/2.1.0/ref/netstandard2.1
mkdir -p "$work/mono"
cp "$root/artifacts/bin/WhereAllocation/Release/netstandard2.1/WhereAllocation.dll" "$work/mono/"
mapfile -t sources < <(ls Program.cs UnityEngineStandIn.cs MeteredSocket.cs ServerThreadCalls.cs BatchedSendSocket.cs "$root"/tests/Shared/AllocationOracle.cs "$root"/tests/Shared/Runtime.cs \
  "$root"/src/WhereAllocation/Samples~/MirageSocket/*.cs; find "$source/SocketLayer" -name '*.cs'; ls "$source"/Sockets/Udp/*.cs)
references=(); for f in "$refs"/*.dll; do references+=("-reference:$f"); done
dotnet "$csc" -nologo -noconfig -nostdlib -target:exe -langversion:9 -optimize -unsafe -nowarn:1701,1702,8632,0168,0219,0414,0649,0169,0067,0618 \
  -define:EXCLUDE_NANOSOCKETS "${references[@]}" -reference:"$work/mono/WhereAllocation.dll" "${sources[@]}" -out:"$work/mono/Mirage.ns.exe" >"$work/mono.txt" 2>&1 \
  && monodis "$work/mono/Mirage.ns.exe" >"$work/mono/Mirage.il" 2>>"$work/mono.txt" \
  && sed -i -e 's/!0&  modreq (\[netstandard\]System\.Runtime\.InteropServices\.InAttribute)  valuetype \(\[[a-z]*\]\)System\.ReadOnlySpan`1/!0\& valuetype \1System.ReadOnlySpan`1/g' \
       -e 's/ cil managed agressive-inlining/ cil managed/' "$work/mono/Mirage.il" \
  && { for name in mscorlib System System.Core; do printf '.assembly extern %s\n{\n  .ver 4:0:0:0\n  .publickeytoken = (B7 7A 5C 56 19 34 E0 89 )\n}\n' "$name"; done; cat "$work/mono/Mirage.il"; } >"$work/mono/Mirage.fixed.il" \
  && ilasm -exe -output:"$work/mono/Mirage.exe" "$work/mono/Mirage.fixed.il" >>"$work/mono.txt" 2>&1 && [ -f "$work/mono/Mirage.exe" ] \
  || { cat "$work/mono.txt"; echo "build failed (Mono)"; exit 2; }
echo "Mono build: $(grep -c 'ReadOnlySpan`1<[^>]*>::get_Item' "$work/mono/Mirage.fixed.il") ReadOnlySpan<T> indexer call sites, $(grep -c 'modreq (\[netstandard\]System.Runtime.InteropServices.InAttribute)  valuetype \[[a-z]*\]System.ReadOnlySpan' "$work/mono/Mirage.fixed.il") of them left with the modreq (0 expected)"
run() { # <runtime> <options...>
  local runtime=$1; shift
  local command; if [ "$runtime" = mono ]; then command=(mono "$work/mono/Mirage.exe"); else command=(dotnet bin/Release/net10.0/Mirage.dll); fi
  if [ -z "$syscalls" ]; then timeout 180 "${command[@]}" "$@"; return; fi
  timeout 300 strace -f -qq -o "$work/trace.txt" -e trace=recvfrom,recvmsg,recvmmsg,poll,ppoll,select,pselect6,epoll_wait,epoll_pwait,sendto,sendmsg "${command[@]}" "$@" | tee "$work/out.txt"
  local status=${PIPESTATUS[0]}
  local received ticks
  received=$(sed -nE 's/.* ([0-9]+) datagrams received.*/\1/p' "$work/out.txt"); ticks=$(sed -nE 's/.*: ([0-9]+) ticks,.*/\1/p' "$work/out.txt")
  # The window: between the two marker sends (sendto with 997 bytes on Mono, sendmsg with iov_len=997 on .NET), on the
  # thread that made them. The receiving socket: the descriptor most of that thread's receives in the window used.
  awk -v received="$received" -v ticks="$ticks" '
    function marker() { return (index($0, "sendto(") && index($0, ", 997, ")) || (index($0, "sendmsg(") && index($0, "iov_len=997")) }
    marker() { if (!tid) { tid = $1; inside = 1; next } else if ($1 == tid) { inside = 0; next } }
    inside && $1 == tid && $2 ~ /^recv/ { split($2, a, /[(,]/); fd = a[2]; recv[fd]++; if ($0 ~ /EAGAIN/) empty[fd]++ }
    inside && $1 == tid && $2 == "<..." && $3 ~ /^recv/ && $0 ~ /EAGAIN/ { empty[fd]++ }   # a call strace split in two lines
    inside && $1 == tid && $2 ~ /^(poll|ppoll)/ { match($0, /fd=[0-9]+/); fd = substr($0, RSTART + 3, RLENGTH - 3); polls[fd]++ }
    inside && $1 == tid && $2 ~ /^(select|pselect6|epoll)/ { other++ }
    END { for (fd in recv) if (recv[fd] > best) { best = recv[fd]; socket = fd }
          for (fd in polls) if (fd != socket) other += polls[fd]
          r = recv[socket]; e = empty[socket]; p = polls[socket]
          printf "  system calls on the server thread in the window, on its socket (fd %s): %d receives (%d of them EAGAIN), %d polls; other waits: %d\n", socket, r, e, p, other
          printf "  per received datagram: %.3f receives + %.3f polls = %.3f calls; per tick: %.2f EAGAIN receives, %.2f polls\n", r / received, p / received, (r + p) / received, e / ticks, p / ticks
          printf "  less one empty receive and one poll per tick: %.3f calls per received datagram\n", (r + p - e - (p < ticks ? p : ticks)) / received }' "$work/trace.txt"
  return "$status"
}
status=0
if [ -n "$rounds" ]; then
  for runtime in net10.0 mono; do
    : >"$work/cpu.txt"
    for round in $(seq "$rounds"); do
      for kind in where-allocation where-allocation-batch; do
        run "$runtime" --socket "$kind" "$@" >"$work/round.txt" || status=1
        sed -n '1p' "$work/round.txt" | cut -d'|' -f1; grep 'server thread CPU' "$work/round.txt"
        printf '%s %s\n' "$kind" "$(sed -nE 's/.*server thread CPU: ([0-9.]+) us per tick.*/\1/p' "$work/round.txt")" >>"$work/cpu.txt"
      done
    done
    for kind in where-allocation where-allocation-batch; do
      echo "  $runtime, $kind: median of $rounds rounds: $(awk -v k="$kind" '$1 == k { print $2 }' "$work/cpu.txt" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }') us of server-thread CPU per tick"
    done
  done
  exit $status
fi
for runtime in net10.0 mono; do
  run "$runtime" --socket stock --dual "$@" || status=1
  run "$runtime" --socket where-allocation "$@" || status=1
  run "$runtime" --socket where-allocation --dual "$@" || status=1
done
exit $status
