#!/usr/bin/env bash
# The AOT check standing in for IL2CPP: publishes samples/AotCheck with NativeAOT (trim and AOT analysis
# warnings are errors there) and runs the native executable, which sends and receives on loopback through
# the library's native path and checks 0 B per call. Ends with the program's "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! dotnet publish samples/AotCheck -c Release -r linux-x64 -o "$out" -nologo -v quiet >"$out/publish.txt" 2>&1; then
  cat "$out/publish.txt"
  echo "aot-check: NativeAOT publish failed"
  echo "0 passed, 1 failed"
  exit 1
fi
"$out/AotCheck"
