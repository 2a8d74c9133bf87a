#!/usr/bin/env bash
# Builds the soak benchmark and runs it on CoreCLR, then on Mono, with the same options; exits non-zero when
# either run lost or damaged a datagram (or failed to run).
# Usage: bench/Soak/run.sh [--total N] [--quick] [--senders K] [--window W] [--max-length L] [--rcvbuf BYTES] [--only SUBSTRING]
set -uo pipefail
cd "$(dirname "$0")"
dotnet build -c Release -v q -nologo >/dev/null || { echo "build failed"; exit 2; }
status=0
echo "== CoreCLR"
start=$(date +%s)
dotnet bin/Release/net10.0/Soak.dll "$@" || status=1
echo "CoreCLR run: $(( $(date +%s) - start )) s"
echo
echo "== Mono"
start=$(date +%s)
mono bin/Release/netstandard2.1/Soak.dll "$@" || status=1
echo "Mono run: $(( $(date +%s) - start )) s"
exit $status
