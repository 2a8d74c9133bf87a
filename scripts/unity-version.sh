#!/usr/bin/env bash
# Stamps (default) or checks (--check) what the Unity package folder copies from the repository root:
# the version in src/WhereAllocation/package.json against <VersionPrefix> in Directory.Build.props (the one
# place the version lives), and LICENSE and CHANGELOG.md as the package's LICENSE.md and CHANGELOG.md (a package
# installed by itself carries its licence and history). --check ends with one "N passed, N failed" line and fails
# when any differs.
set -euo pipefail
cd "$(dirname "$0")/.."
props=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
package=src/WhereAllocation
json=$package/package.json
current=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' "$json")
[ -n "$props" ] || { echo "unity-version: no <VersionPrefix> in Directory.Build.props" >&2; exit 1; }
copies=("LICENSE:$package/LICENSE.md" "CHANGELOG.md:$package/CHANGELOG.md")
if [ "${1:-}" = --check ]; then
  passed=0; failed=0
  if [ "$current" = "$props" ]; then echo "  ok   $json version $current = Directory.Build.props VersionPrefix"; passed=$((passed + 1))
  else echo "  FAIL $json version '$current' but Directory.Build.props says '$props' (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  for pair in "${copies[@]}"; do
    if cmp -s "${pair%%:*}" "${pair#*:}"; then echo "  ok   ${pair#*:} = ${pair%%:*}"; passed=$((passed + 1))
    else echo "  FAIL ${pair#*:} differs from ${pair%%:*} (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  done
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]; exit
fi
sed -i -E "s/^(  \"version\": \")[^\"]*(\",?)$/\1$props\2/" "$json"
for pair in "${copies[@]}"; do cp "${pair%%:*}" "${pair#*:}"; done
echo "unity-version: $json version $props; LICENSE.md and CHANGELOG.md copied into $package"
