#!/usr/bin/env bash
# The datagram server demo: builds samples/DatagramServer, runs it on CoreCLR and then on Mono (each run
# about a minute on a 2-core machine), and prints both result tables: drain mode, every method in 5
# interleaved rounds (median and spread), then 1..N shards on one port, then the game-frame scenario.
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
echo
echo "== Mono"
mono samples/DatagramServer/bin/Release/netstandard2.1/DatagramServer.dll --out results/mono "$@" || status=$?
echo
for runtime in coreclr mono; do
  [ -f "results/$runtime/results.md" ] && cat "results/$runtime/results.md" && echo
done
exit "$status"
