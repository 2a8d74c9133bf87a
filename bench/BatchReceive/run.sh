#!/usr/bin/env bash
# Builds the C reference programs and the harness, then runs the harness on CoreCLR and on Mono.
# Usage: bench/BatchReceive/run.sh [--rounds N] [--count K] [--batches 1,8,32,64] [--rcvbuf BYTES]
set -euo pipefail
cd "$(dirname "$0")"
../native/build.sh >/dev/null
dotnet build -c Release -v q -nologo >/dev/null
echo "== CoreCLR"
dotnet bin/Release/net10.0/BatchReceive.dll "$@"
echo
echo "== Mono"
mono bin/Release/netstandard2.1/BatchReceive.dll "$@"
