#!/usr/bin/env bash
# Makes a release of both packages (the sockets package, src/WhereAllocation, and the memory package,
# src/WhereAllocation.Memory) at the version in Directory.Build.props, the one place the version lives:
#   1. checks that the tree is clean and that both CHANGELOGs have a "## <version> — unreleased" section;
#   2. moves each package's declared public API from PublicAPI.Unshipped.txt into PublicAPI.Shipped.txt
#      (api/WhereAllocation/ and api/WhereAllocation.Memory/, and their per-framework files; a "*REMOVED*" line takes
#      its member out of the Shipped file), so that the analyzers treat every later change of that surface as a change
#      of a released API;
#   3. adds the Unity assembly definitions' GUIDs to api/UnityAsmdefGuids.Shipped.txt (scripts/unity-meta.sh --ship), which
#      unity-meta.sh --check then holds every later version to (users reference an asmdef by its GUID);
#   3b. dates both CHANGELOG sections (today, UTC) and copies CHANGELOG.md into the Unity package (scripts/unity-version.sh);
#   4. builds the library against the moved files, then packs (scripts/pack.sh) into artifacts/release-<version>/:
#      both NuGet packages with their symbols and both Unity tarballs;
#   5. commits "Release <version>" and tags it v<version> (annotated).
# Nothing is pushed or published: the script ends by printing the commands that would. --dry-run does steps 1-4 in a
# temporary clone of HEAD and leaves this checkout untouched.
# Usage: scripts/release.sh [--dry-run] [extra pack.sh arguments, e.g. -p:RepositoryUrl=https://github.com/OWNER/where-allocation]
set -euo pipefail
cd "$(dirname "$0")/.."
dry=false
if [ "${1:-}" = --dry-run ]; then dry=true; shift; fi
version=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
[ -n "$version" ] || { echo "release: no <VersionPrefix> in Directory.Build.props" >&2; exit 1; }
today=$(date -u +%Y-%m-%d)
changelogs=(CHANGELOG.md src/WhereAllocation.Memory/CHANGELOG.md)
api_folders=(api/WhereAllocation api/WhereAllocation.Memory)

if [ -n "$(git status --porcelain)" ]; then
  echo "release: the tree has uncommitted changes; commit or stash them first" >&2
  git status --short >&2
  exit 1
fi
if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
  echo "release: v$version is already tagged; raise <VersionPrefix> in Directory.Build.props first" >&2
  exit 1
fi

if $dry; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  git clone -q . "$work/tree"
  cd "$work/tree"
  echo "release: dry run in a clone of HEAD ($work/tree)"
fi

for log in "${changelogs[@]}"; do
  grep -qE "^## $version — unreleased$" "$log" \
    || { echo "release: $log has no '## $version — unreleased' section: write what this release changes there first" >&2; exit 1; }
done

# A declared-API file: its first line ("#nullable enable") stays first, the rest sorted.
move_api() { # <folder>
  local shipped=$1/PublicAPI.Shipped.txt unshipped=$1/PublicAPI.Unshipped.txt kept removed
  [ -f "$unshipped" ] || return 0
  [ -f "$shipped" ] || printf '#nullable enable\n' >"$shipped"
  kept=$(mktemp); removed=$(mktemp)
  tail -n +2 "$unshipped" | sed -n 's/^\*REMOVED\*//p' | sort -u >"$removed"
  { tail -n +2 "$shipped"; tail -n +2 "$unshipped" | grep -v '^\*REMOVED\*' || true; } | grep -v '^$' | sort -u \
    | grep -vxF -f "$removed" >"$kept" || true
  { head -1 "$shipped"; cat "$kept"; } >"$shipped.new" && mv "$shipped.new" "$shipped"
  head -1 "$unshipped" >"$unshipped.new" && mv "$unshipped.new" "$unshipped"
  echo "  $shipped: $(( $(wc -l <"$shipped") - 1 )) members"
  rm -f "$kept" "$removed"
}
echo "== The declared public API moves into PublicAPI.Shipped.txt"
for folder in "${api_folders[@]}"; do
  move_api "$folder"
  for framework in netstandard2.1 net8.0; do move_api "$folder/$framework"; done
done

echo "== The Unity assembly definitions' GUIDs recorded as shipped"
bash scripts/unity-meta.sh --ship

echo "== CHANGELOGs dated $today"
for log in "${changelogs[@]}"; do
  sed -i -E "s/^## $version — unreleased$/## $version — $today/" "$log"
  grep -m1 "^## $version" "$log" | sed "s|^|  $log: |"
done
bash scripts/unity-version.sh

echo "== The packages build against the moved API files"
dotnet build src/WhereAllocation -c Release -nologo -v quiet
dotnet build src/WhereAllocation.Memory -c Release -nologo -v quiet
out=artifacts/release-$version
bash scripts/pack.sh --out "$out" "$@"

if $dry; then
  echo "release: dry run done; this checkout is unchanged (the packages were built in the clone)"
  git --no-pager diff --stat
  exit 0
fi
git add -A "${api_folders[@]}" api/UnityAsmdefGuids.Shipped.txt "${changelogs[@]}" src/WhereAllocation/CHANGELOG.md
git commit -q -m "Release $version"
git tag -a "v$version" -m "where-allocation $version: WhereAllocation and WhereAllocation.Memory"
echo "release: committed and tagged v$version; packages in $out"
echo "next: git push origin HEAD v$version"
echo "      dotnet nuget push \"$out/*.nupkg\" --source https://api.nuget.org/v3/index.json --api-key <key>"
echo "      attach $out/*.tgz to the release (Unity: Add package from tarball), or publish them to a scoped registry"
