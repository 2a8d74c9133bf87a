#!/usr/bin/env bash
# Writes (default) or checks (--check) the Unity .meta files of the package folders src/WhereAllocation (the sockets
# package) and src/WhereAllocation.Memory (the memory package): one per file and per folder below each that git tracks
# or would track (bin/ and obj/ are ignored, so they get none and are never part of a package). Each GUID is the MD5 of
# the package's seed ("where-allocation/", "where-allocation.memory/") and the path inside the package, so it is the
# same on every machine and never changes for a given path.
# --check fails on a missing, stale or orphaned .meta and on bin/ or obj/ files committed in the
# package folder; it ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-write}
package=; seed=

guid() { printf '%s' "$seed$1" | md5sum | cut -c1-32; }

# The .meta text Unity itself writes for this kind of asset (trailing spaces included, as Unity has them).
meta() {
  local path=$1 kind importer
  printf 'fileFormatVersion: 2\nguid: %s\n' "$(guid "$path")"
  if [ -d "$package/$path" ]; then
    printf 'folderAsset: yes\nDefaultImporter:\n  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n'
    return
  fi
  case "$path" in
    *.cs) printf 'MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n' ;;
    *.asmdef) printf 'AssemblyDefinitionImporter:\n  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n' ;;
    *.json|*.md|*.txt|*.xml) printf 'TextScriptImporter:\n  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n' ;;
    *) printf 'DefaultImporter:\n  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n' ;;
  esac
}

# Assets: files git tracks or would track, minus .meta files and what Unity skips (dot-names, names ending in ~),
# plus every folder that holds one, below the package root.
assets() {
  { git ls-files -- "$package"; git ls-files --others --exclude-standard -- "$package"; } \
    | sed "s:^$package/::" | grep -v '\.meta$' | grep -Ev '(^|/)\.|~(/|$)' | sort -u \
    | awk -F/ '{ path=""; for (i = 1; i < NF; i++) { path = path (i > 1 ? "/" : "") $i; print path } print $0 }' \
    | sort -u | while read -r p; do [ -e "$package/$p" ] && echo "$p"; done
}

# --guid <package folder> <path inside it> [<.asmdef file to read the name from>]: the GUID this script writes for that
# path (scripts/unity-builds.sh asks it what a moved or renamed file's .meta would say).
if [ "$mode" = --guid ]; then
  package=$2; case "$package" in src/WhereAllocation) seed=where-allocation/ ;; src/WhereAllocation.Memory) seed=where-allocation.memory/ ;; *) exit 2 ;; esac
  guid "$3"; exit 0
fi
[ "$mode" = write ] || [ "$mode" = --check ] || { echo "usage: $0 [--check]" >&2; exit 2; }
passed=0; failed=0
one_package() {
  if [ "$mode" = write ]; then
    n=0
    while read -r path; do
      target="$package/$path.meta"
      if [ ! -f "$target" ] || [ "$(cat "$target")" != "$(meta "$path")" ]; then meta "$path" >"$target"; n=$((n + 1)); fi
    done < <(assets)
    while read -r orphan; do
      [ -e "${orphan%.meta}" ] || { rm -f "$orphan"; echo "removed $orphan"; }
    done < <(find "$package" -name '*.meta' -not -path '*/bin/*' -not -path '*/obj/*')
    echo "unity-meta: $n .meta file(s) written in $package"
    return 0
  fi

  fail() { failed=$((failed + 1)); echo "  FAIL $1"; }
  while read -r path; do
    target="$package/$path.meta"
    if [ ! -f "$target" ]; then fail "missing $target"
    elif [ "$(cat "$target")" != "$(meta "$path")" ]; then fail "stale $target (run scripts/unity-meta.sh)"
    else passed=$((passed + 1)); fi
  done < <(assets)
  while read -r orphan; do
    if [ -e "${orphan%.meta}" ]; then continue; fi
    fail "orphaned $orphan"
  done < <(find "$package" -name '*.meta' -not -path '*/bin/*' -not -path '*/obj/*')
  built=$(git ls-files -- "$package" | grep -E "^$package/(.*/)?(bin|obj)/" || true)
  if [ -n "$built" ]; then fail "build output committed in the package folder: $(head -3 <<<"$built" | tr '\n' ' ')"; else passed=$((passed + 1)); fi
  echo "  meta: $passed checks passed in $package"
}
package=src/WhereAllocation; seed=where-allocation/; one_package
package=src/WhereAllocation.Memory; seed=where-allocation.memory/; one_package
if [ "$mode" = --check ]; then
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
fi
