#!/usr/bin/env bash
# The datagram server demo: builds bench/DatagramServer, runs it on CoreCLR and then on Mono (each run
# about a minute on a 2-core machine), and prints both result tables: drain mode, every method in 5
# interleaved rounds (median and spread), then 1..N shards on one port, then the game-frame scenario; then on each
# runtime the send half (--mode send: one datagram per tick to N peers against C, bursts with and without segmentation
# offload against C's), many peers (--mode scale: receive + PeerTable lookup from 1 to 10 000 senders) and the ping-pong
# (--mode pingpong: 1, 100 and 500 clients with one datagram each in flight against one echo thread, the library's servers
# beside the runtime's own calls and C's, round trips and system calls per echo; PINGPONG=0 skips it); then the
# frame-time benchmark on CoreCLR, Mono and mono-boehm (frametimes.md, frametimes.svg; results/mono-boehm/ too). It ends
# with a summary: one line per table (send, offload, many peers, pingpong) and runtime, each ratio against its target.
# Results: results/coreclr/ and results/mono/ (results.md, summary.csv, rounds.csv, shards.csv, results.csv,
# details.csv, tick.csv, results.svg; send.md, send.csv, scale.md, scale.csv, pingpong.md, pingpong.csv and their *-summary.txt). Extra arguments
# go to both default runs, e.g. ./demo.sh --mode stream (the view under a saturating sender; the send and scale runs are
# then left out, as with SEND_SCALE=0), ./demo.sh --rounds 9, or ./demo.sh --help.
set -uo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-tools.sh demo || exit 1
dotnet build bench/DatagramServer -c Release -v quiet -nologo || exit 1
status=0
echo "== CoreCLR"
dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll --out results/coreclr "$@" || status=$?
case " $* " in *" --help "*|*" -h "*) exit "$status" ;; esac
# A --mode given to the default runs (send, scale, stream) replaces them: then no other table, and no send and scale runs.
case " $* " in *" --mode "*) skip_results=1; send_scale=0 ;; *) skip_results=0; send_scale=${SEND_SCALE:-1} ;; esac
# The send half and many peers, on the runtime given: their own options (none of the extra arguments above go to them).
send_and_scale() {
  local label=$1; shift
  [ "$send_scale" != 0 ] || return 0
  echo
  echo "== $label: the send half (--mode send), many peers (--mode scale) and the ping-pong (--mode pingpong)"
  "$@" --mode send --out "results/${label,,}" || status=$?
  "$@" --mode scale --out "results/${label,,}" || status=$?
  [ "${PINGPONG:-1}" = 0 ] || "$@" --mode pingpong --out "results/${label,,}" || status=$?
}
send_and_scale CoreCLR dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll
echo
echo "== Mono"
mono bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --out results/mono "$@" || status=$?
send_and_scale Mono mono bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll
echo
# Frame times: a game server's frames over a 256 MB live heap, the allocating way and the library's, on CoreCLR, Mono
# (SGen) and Mono with the Boehm collector that Unity runs (mono-boehm). Its own options (--frame-times --help); none
# of the extra arguments above go to it. FRAME_TIMES=0 skips it.
if [ "${FRAME_TIMES:-1}" != 0 ]; then
  echo "== Frame times: CoreCLR, Mono (SGen), Mono with Boehm"
  dotnet bench/DatagramServer/bin/Release/net10.0/DatagramServer.dll --frame-times --out results/coreclr || status=$?
  mono bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --frame-times --out results/mono || status=$?
  mono-boehm bench/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --frame-times --out results/mono-boehm || status=$?
  echo
fi
for runtime in coreclr mono; do
  [ "$skip_results" = 0 ] && [ -f "results/$runtime/results.md" ] && cat "results/$runtime/results.md" && echo
done
for runtime in coreclr mono mono-boehm; do
  [ -f "results/$runtime/frametimes.md" ] && cat "results/$runtime/frametimes.md" && echo
done
if [ "$send_scale" != 0 ]; then
  for runtime in coreclr mono; do
    for table in send scale pingpong; do
      [ -f "results/$runtime/$table.md" ] && cat "results/$runtime/$table.md" && echo
    done
  done
  # One line per table (send, offload, many peers, pingpong) and runtime, from this run: what the README's headline quotes.
  echo "== Summary of this run: the send half, bursts with offload, many peers, ping-pong (machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs)"
  for table in "send," "offload," "many peers," "pingpong,"; do
    for runtime in coreclr mono; do
      cat "results/$runtime/send-summary.txt" "results/$runtime/scale-summary.txt" "results/$runtime/pingpong-summary.txt" 2>/dev/null | grep "^$table" || true
    done
  done
fi
exit "$status"
