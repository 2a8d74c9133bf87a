#!/usr/bin/env bash
# PeerTable lookups alone at 1, 100, 1 000 and 10 000 peers on CoreCLR and on Mono; arguments go to both runs
# (--peers, --rounds, --groups, --sweep-bytes). See Program.cs for what is measured.
set -euo pipefail
cd "$(dirname "$0")"
dotnet build -c Release -v q -nologo >/dev/null
echo "== CoreCLR"
dotnet bin/Release/net10.0/PeerLookup.dll "$@"
echo
echo "== Mono"
mono bin/Release/netstandard2.1/PeerLookup.dll "$@"
