#!/usr/bin/env bash
# The datagram server demo: builds samples/DatagramServer, runs it on CoreCLR and then on Mono (each run
# about a minute on a 2-core machine), and prints both result tables: drain mode, every method in 5
# interleaved rounds (median and spread), then 1..N shards on one port, then the game-frame scenario; then the
# frame-time benchmark on CoreCLR, Mono and mono-boehm (frametimes.md, frametimes.svg; results/mono-boehm/ too).
# Results: results/coreclr/ and results/mono/ (results.md, summary.csv, rounds.csv, shards.csv, results.csv,
# details.csv, tick.csv, results.svg). Extra arguments go to both runs, e.g. ./demo.sh --mode stream (the
# view under a saturating sender), ./demo.sh --rounds 9, or ./demo.sh --help.
set -uo pipefail
cd "$(dirname "$0")"
bash scripts/ensure-tools.sh demo || exit 1
dotnet build samples/DatagramServer -c Release -v quiet -nologo || exit 1
status=0
echo "== CoreCLR"
dotnet samples/DatagramServer/bin/Release/net10.0/DatagramServer.dll --out results/coreclr "$@" || status=$?
case " $* " in *" --help "*|*" -h "*) exit "$status" ;; esac
# --mode send and --mode scale print their own tables (send.md, scale.md) and take minutes each: not in the default run.
case " $* " in *" --mode send "*|*" --mode scale "*) skip_results=1 ;; *) skip_results=0 ;; esac
echo
echo "== Mono"
mono samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --out results/mono "$@" || status=$?
echo
# Frame times: a game server's frames over a 256 MB live heap, the allocating way and the library's, on CoreCLR, Mono
# (SGen) and Mono with the Boehm collector that Unity runs (mono-boehm). Its own options (--frame-times --help); none
# of the extra arguments above go to it. FRAME_TIMES=0 skips it.
if [ "${FRAME_TIMES:-1}" != 0 ]; then
  echo "== Frame times: CoreCLR, Mono (SGen), Mono with Boehm"
  dotnet samples/DatagramServer/bin/Release/net10.0/DatagramServer.dll --frame-times --out results/coreclr || status=$?
  mono samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --frame-times --out results/mono || status=$?
  mono-boehm samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --frame-times --out results/mono-boehm || status=$?
  echo
fi
for runtime in coreclr mono; do
  [ "$skip_results" = 0 ] && [ -f "results/$runtime/results.md" ] && cat "results/$runtime/results.md" && echo
done
for runtime in coreclr mono mono-boehm; do
  [ -f "results/$runtime/frametimes.md" ] && cat "results/$runtime/frametimes.md" && echo
done
exit "$status"
