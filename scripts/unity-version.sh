#!/usr/bin/env bash
# Stamps (default) or checks (--check) the Unity package version in src/WhereAllocation/package.json
# against <VersionPrefix> in Directory.Build.props, the one place the version lives. --check ends with
# one "N passed, N failed" line and fails when they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
props=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
json=src/WhereAllocation/package.json
current=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' "$json")
[ -n "$props" ] || { echo "unity-version: no <VersionPrefix> in Directory.Build.props" >&2; exit 1; }
if [ "${1:-}" = --check ]; then
  if [ "$current" = "$props" ]; then echo "  ok   $json version $current = Directory.Build.props VersionPrefix"; echo "1 passed, 0 failed"; exit 0; fi
  echo "  FAIL $json version '$current' but Directory.Build.props says '$props' (run scripts/unity-version.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
sed -i -E "s/^(  \"version\": \")[^\"]*(\",?)$/\1$props\2/" "$json"
echo "unity-version: $json version $props"
