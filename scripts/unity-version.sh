#!/usr/bin/env bash
# Stamps (default) or checks (--check) what the Unity package folder copies from the repository root:
# the version in src/WhereAllocation/package.json against <VersionPrefix> in Directory.Build.props (the one
# place the version lives), and LICENSE and CHANGELOG.md as the package's LICENSE.md and CHANGELOG.md (a package
# installed by itself carries its licence and history), docs/UNITY.md as the package's Documentation~/UNITY.md (the
# Unity guide, readable where the package is installed; Unity imports nothing from a folder ending in ~), and the version in each sample's assembly name
# (Samples~/<Sample>/*.asmdef: "WhereAllocation.Samples.<Sample>.<version>"), because Unity imports a sample under a
# versioned folder and a copy of an older import left in the project would otherwise define a second assembly of the
# same name, which stops every compilation. The memory package (src/WhereAllocation.Memory) gets the same version and
# LICENSE.md; its CHANGELOG.md is its own, kept in its folder. --check ends with one "N passed, N failed" line and fails when any differs.
# --stamp <package folder> <version> stamps a copy of the package folder as that version (scripts/unity-builds.sh
# uses it to model an older release's sample beside this one's).
set -euo pipefail
cd "$(dirname "$0")/.."
props=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
package=src/WhereAllocation
json=$package/package.json
current=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' "$json")
[ -n "$props" ] || { echo "unity-version: no <VersionPrefix> in Directory.Build.props" >&2; exit 1; }
memory=src/WhereAllocation.Memory
copies=("LICENSE:$package/LICENSE.md" "LICENSE:$memory/LICENSE.md" "CHANGELOG.md:$package/CHANGELOG.md" "docs/UNITY.md:$package/Documentation~/UNITY.md")
# The name each sample's asmdef must have: WhereAllocation.Samples.<its folder>.<version>.
sample_name() { printf 'WhereAllocation.Samples.%s.%s' "$(basename "$(dirname "$1")")" "$2"; }
stamp() { # <package folder> <version>
  local asmdef
  sed -i -E "s/^(  \"version\": \")[^\"]*(\",?)$/\1$2\2/" "$1/package.json"
  for asmdef in "$1"/Samples~/*/*.asmdef; do
    sed -i -E "s/^(    \"name\": \")[^\"]*(\",?)$/\1$(sample_name "$asmdef" "$2")\2/" "$asmdef"
  done
}
if [ "${1:-}" = --stamp ]; then stamp "$2" "$3"; exit; fi
if [ "${1:-}" = --check ]; then
  passed=0; failed=0
  if [ "$current" = "$props" ]; then echo "  ok   $json version $current = Directory.Build.props VersionPrefix"; passed=$((passed + 1))
  else echo "  FAIL $json version '$current' but Directory.Build.props says '$props' (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  memory_version=$(sed -nE 's/^  "version": "([^"]*)",?$/\1/p' "$memory/package.json")
  if [ "$memory_version" = "$props" ]; then echo "  ok   $memory/package.json version $memory_version = Directory.Build.props VersionPrefix"; passed=$((passed + 1))
  else echo "  FAIL $memory/package.json version '$memory_version' but Directory.Build.props says '$props' (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  for pair in "${copies[@]}"; do
    if cmp -s "${pair%%:*}" "${pair#*:}"; then echo "  ok   ${pair#*:} = ${pair%%:*}"; passed=$((passed + 1))
    else echo "  FAIL ${pair#*:} differs from ${pair%%:*} (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  done
  for asmdef in "$package"/Samples~/*/*.asmdef; do
    want=$(sample_name "$asmdef" "$props")
    if grep -qE "^    \"name\": \"$want\",?$" "$asmdef"; then echo "  ok   $asmdef names the assembly $want"; passed=$((passed + 1))
    else echo "  FAIL $asmdef does not name the assembly $want (run scripts/unity-version.sh)"; failed=$((failed + 1)); fi
  done
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]; exit
fi
stamp "$package" "$props"
sed -i -E "s/^(  \"version\": \")[^\"]*(\",?)$/\1$props\2/" "$memory/package.json"
for pair in "${copies[@]}"; do mkdir -p "$(dirname "${pair#*:}")"; cp "${pair%%:*}" "${pair#*:}"; done
echo "unity-version: $json version $props, the samples' assembly names stamped; LICENSE.md, CHANGELOG.md and Documentation~/UNITY.md copied into $package; $memory/package.json version $props"
