#!/usr/bin/env bash
# Builds the packages users install, into artifacts/ (or the folder given with --out), for each of the two packages,
# the sockets package (src/WhereAllocation) and the memory package (src/WhereAllocation.Memory), each one whose folder
# this tree holds:
#   WhereAllocation.<version>.nupkg and .snupkg          the NuGet packages and their symbols (deterministic, CI paths)
#   WhereAllocation.Memory.<version>.nupkg and .snupkg
#   com.where-allocation.core-<version>.tgz               the Unity packages, for "Add package from tarball": a top folder
#   com.where-allocation.memory-<version>.tgz             package/ holding the git-tracked files of the package folder
# The version is <VersionPrefix> in Directory.Build.props. Extra arguments go to dotnet pack, e.g.
# -p:RepositoryUrl=https://github.com/OWNER/where-allocation (docs/INSTALL.md); that address also goes into the
# tarball's package.json (documentationUrl, changelogUrl, licensesUrl, repository).
set -euo pipefail
cd "$(dirname "$0")/.."
out=artifacts
if [ "${1:-}" = --out ]; then out=$2; shift 2; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
url=$(sed -nE 's:.*<RepositoryUrl[^>]*>([^<]+)</RepositoryUrl>.*:\1:p' Directory.Build.props)
for arg in "$@"; do case "$arg" in -p:RepositoryUrl=*) url=${arg#-p:RepositoryUrl=} ;; esac; done
url=${url%/}

# pack_one <package folder> <NuGet id> <Unity name>
pack_one() {
  local package=$1 id=$2 unity=$3 stage file stamp
  rm -f "$out/$id.$version.nupkg" "$out/$id.$version.snupkg" "$out/$unity-$version.tgz"
  dotnet pack "$package" -c Release -nologo -v quiet -o "$out" -p:ContinuousIntegrationBuild=true "${pack_args[@]}"

  # The Unity tarball: the files git tracks in the package folder (so never bin/, obj/ or a stray local file),
  # with the same names, modes cleared, owner root and the time of the last commit, so it is the same on every machine.
  stage=$(mktemp -d)
  mkdir -p "$stage/package"
  git ls-files -z -- "$package" | while IFS= read -r -d '' file; do
    mkdir -p "$stage/package/$(dirname "${file#$package/}")"
    cp "$file" "$stage/package/${file#$package/}"
  done
  if [ -n "$url" ]; then
    local docs=docs/UNITY.md changelog=CHANGELOG.md
    [ "$package" = src/WhereAllocation ] || { docs=$package/README.md; changelog=$package/CHANGELOG.md; }
    sed -i -E "s|^(  \"license\": \"MIT\",)$|\1\n  \"documentationUrl\": \"$url/blob/v$version/$docs\",\n  \"changelogUrl\": \"$url/blob/v$version/$changelog\",\n  \"licensesUrl\": \"$url/blob/v$version/LICENSE\",\n  \"repository\": { \"type\": \"git\", \"url\": \"$url.git\" },|" \
      "$stage/package/package.json"
  fi
  stamp=$(git log -1 --format=%ct 2>/dev/null || echo 0)
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' --mtime="@$stamp" -cf - package \
    | gzip -n -9 >"$out/$unity-$version.tgz"
  rm -rf "$stage"
  echo "pack: $(cd "$out" && ls -1 "$id.$version.nupkg" "$id.$version.snupkg" "$unity-$version.tgz" | tr '\n' ' ')in $out"
}
pack_args=("$@")
# Each package present in this tree (scripts/pack-check.sh packs each in a copy of the tree without the other).
packed=0
for package in "src/WhereAllocation WhereAllocation com.where-allocation.core" "src/WhereAllocation.Memory WhereAllocation.Memory com.where-allocation.memory"; do
  read -r folder id unity <<<"$package"
  if [ -d "$folder" ]; then pack_one "$folder" "$id" "$unity"; packed=$((packed + 1))
  else echo "pack: $folder is not in this tree: $id not packed"; fi
done
[ "$packed" -gt 0 ] || { echo "pack: no package folder in this tree" >&2; exit 1; }
