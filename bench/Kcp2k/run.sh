#!/usr/bin/env bash
# Builds bench/Kcp2k against a kcp2k source folder and prints, for CoreCLR and Mono, IPv4 and dual-mode, the bytes the
# server thread allocated per received datagram: stock KcpServer, then the WhereAllocationKcpServer sample.
# Usage: bench/Kcp2k/run.sh <kcp2k checkout>/kcp2k/kcp2k [Program options, e.g. --clients 50 --seconds 5]
set -uo pipefail
source=$(readlink -f "${1:?usage: run.sh <kcp2k source folder> [options]}"); shift
cd "$(dirname "$0")"
dotnet build -c Release -v q -nologo -p:Kcp2kSource="$source" >/tmp/kcp2k-bench-build.txt 2>&1 || { cat /tmp/kcp2k-bench-build.txt; echo "build failed"; exit 2; }
status=0
for runtime in net10.0 mono; do
  for family in "" --dual; do
    for server in stock where-allocation; do
      if [ $runtime = mono ]; then timeout 120 mono bin/Release/netstandard2.1/Kcp2k.dll --server $server $family "$@" || status=1
      else timeout 120 dotnet bin/Release/net10.0/Kcp2k.dll --server $server $family "$@" || status=1; fi
    done
  done
done
exit $status
