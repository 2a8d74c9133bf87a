#!/usr/bin/env bash
# Writes (default) or checks (--check) the Unity .meta files of the package folders src/WhereAllocation (the sockets
# package) and src/WhereAllocation.Memory (the memory package): one per file and per folder below each that git tracks
# or would track (bin/ and obj/ are ignored, so they get none and are never part of a package). A file's or folder's
# GUID is the MD5 of the package's seed ("where-allocation/", "where-allocation.memory/") and the path inside the
# package, so it is the same on every machine. An assembly definition's GUID is pinned instead, by its assembly name
# (asmdef_guid below): users' assembly definitions reference it as "GUID:<guid>" (the form Unity's inspector writes), so
# it must survive a moved or renamed .asmdef file. A new .asmdef needs a pin before this script writes its .meta.
# --check fails on a missing, stale or orphaned .meta, on an .asmdef without a pin, on an .asmdef a release shipped
# whose GUID changed or which is gone (api/UnityAsmdefGuids.Shipped.txt, which --ship extends at a release), and on bin/
# or obj/ files committed in the package folder; it ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-write}
package=; seed=

# The pinned GUIDs of the packages' assembly definitions, by assembly name: those of release 0.1.0, never to change.
asmdef_guid() {
  case "$1" in
    WhereAllocation) echo 2d3286a198d016808f55bfbc8b71a34d ;;
    WhereAllocation.Editor) echo d10f484e6eeeae9621c946465a5b6400 ;;
    WhereAllocation.Memory) echo c9242e9ce4042392c8b13707e7f0110b ;;
    *) return 1 ;;
  esac
}
asmdef_name() { sed -nE 's/^ *"name": *"([^"]+)".*/\1/p' "$1" | head -1; }

guid() { # <path inside the package> [the .asmdef file to read the name from, default the package's own]
  if [[ $1 == *.asmdef ]]; then
    local name; name=$(asmdef_name "${2:-$package/$1}")
    asmdef_guid "$name" || { echo "unity-meta: $package/$1 (assembly $name) has no pinned GUID: add one to asmdef_guid in $0 (a new random one, e.g. $(tr -d - </proc/sys/kernel/random/uuid))" >&2; return 1; }
  else
    printf '%s' "$seed$1" | md5sum | cut -c1-32
  fi
}

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
  guid "$3" "${4:-}"; exit 0
fi
[ "$mode" = write ] || [ "$mode" = --check ] || [ "$mode" = --ship ] || { echo "usage: $0 [--check | --ship]" >&2; exit 2; }
passed=0; failed=0
fail() { failed=$((failed + 1)); echo "  FAIL $1"; }
one_package() {
  while read -r path; do
    [[ $path == *.asmdef ]] || continue
    if guid "$path" >/dev/null; then continue; fi
    if [ "$mode" = write ]; then exit 1; fi
    fail "$package/$path: no pinned GUID (asmdef_guid in $0)"
  done < <(assets)
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
# Every .asmdef a release shipped keeps its GUID (by assembly name) and still exists. What each release shipped is written
# by scripts/release.sh into api/UnityAsmdefGuids.Shipped.txt ("<assembly name> <guid>" a line), in the tree itself, so the
# check needs no tag and no history (a clone may come without either).
shipped_guids=api/UnityAsmdefGuids.Shipped.txt
release_guids() {
  [ -f "$shipped_guids" ] || { fail "$shipped_guids is missing (scripts/release.sh writes it)"; return 0; }
  declare -A now=()
  local file
  while read -r file; do
    now[$(asmdef_name "$file")]=$(sed -nE 's/^guid: //p' "$file.meta" 2>/dev/null)
  done < <(find src/WhereAllocation src/WhereAllocation.Memory -name '*.asmdef' -not -path '*/Samples~/*' -not -path '*/bin/*' -not -path '*/obj/*' | sort)
  local checked=0 name old
  while read -r name old; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
    checked=$((checked + 1))
    if [ -z "${now[$name]+set}" ]; then fail "assembly $name (GUID $old, shipped: $shipped_guids) is gone: users' references to it break"
    elif [ "${now[$name]}" != "$old" ]; then fail "assembly $name: GUID ${now[$name]}, but $old shipped ($shipped_guids): every user's GUID:$old reference would be dropped"
    else passed=$((passed + 1)); fi
  done <"$shipped_guids"
  [ "$checked" -gt 0 ] || fail "$shipped_guids names no assembly"
  echo "  asmdef GUIDs: $checked shipped ones compared"
}
# --ship: adds every package asmdef's name and GUID to the shipped list (scripts/release.sh, at a release).
if [ "$mode" = --ship ]; then
  { grep -v '^#' "$shipped_guids" 2>/dev/null || true
    find src/WhereAllocation src/WhereAllocation.Memory -name '*.asmdef' -not -path '*/Samples~/*' -not -path '*/bin/*' -not -path '*/obj/*' | sort \
      | while read -r file; do echo "$(asmdef_name "$file") $(sed -nE 's/^guid: //p' "$file.meta")"; done; } | sort -u >"$shipped_guids.new"
  { echo "# The GUIDs of the Unity assembly definitions every release shipped, by assembly name; scripts/unity-meta.sh --check"
    echo "# fails when one changes or is gone. Written by scripts/release.sh (unity-meta.sh --ship); never edit a line."
    cat "$shipped_guids.new"; } >"$shipped_guids"
  rm -f "$shipped_guids.new"
  echo "unity-meta: $shipped_guids: $(grep -vc '^#' "$shipped_guids") assemblies"
  exit 0
fi
package=src/WhereAllocation; seed=where-allocation/; one_package
package=src/WhereAllocation.Memory; seed=where-allocation.memory/; one_package
if [ "$mode" = --check ]; then
  release_guids
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
fi
