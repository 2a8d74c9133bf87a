#!/usr/bin/env bash
# Builds the packages users install, into artifacts/ (or the folder given with --out):
#   WhereAllocation.<version>.nupkg and .snupkg   the NuGet package and its symbols (deterministic, CI paths)
#   com.where-allocation.core-<version>.tgz        the Unity package, for "Add package from tarball": a top folder
#                                                 package/ holding the git-tracked files of src/WhereAllocation
# The version is <VersionPrefix> in Directory.Build.props. Extra arguments go to dotnet pack, e.g.
# -p:RepositoryUrl=https://github.com/OWNER/where-allocation (docs/INSTALL.md); that address also goes into the
# tarball's package.json (documentationUrl, changelogUrl, licensesUrl, repository).
set -euo pipefail
cd "$(dirname "$0")/.."
out=artifacts
if [ "${1:-}" = --out ]; then out=$2; shift 2; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
package=src/WhereAllocation
version=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
url=$(sed -nE 's:.*<RepositoryUrl[^>]*>([^<]+)</RepositoryUrl>.*:\1:p' Directory.Build.props)
for arg in "$@"; do case "$arg" in -p:RepositoryUrl=*) url=${arg#-p:RepositoryUrl=} ;; esac; done
url=${url%/}

rm -f "$out/WhereAllocation.$version.nupkg" "$out/WhereAllocation.$version.snupkg" "$out/com.where-allocation.core-$version.tgz"
dotnet pack "$package" -c Release -nologo -v quiet -o "$out" -p:ContinuousIntegrationBuild=true "$@"

# The Unity tarball: the files git tracks in the package folder (so never bin/, obj/ or a stray local file),
# with the same names, modes cleared, owner root and the time of the last commit, so it is the same on every machine.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/package"
git ls-files -z -- "$package" | while IFS= read -r -d '' file; do
  mkdir -p "$stage/package/$(dirname "${file#$package/}")"
  cp "$file" "$stage/package/${file#$package/}"
done
if [ -n "$url" ]; then
  sed -i -E "s|^(  \"license\": \"MIT\",)$|\1\n  \"documentationUrl\": \"$url/blob/v$version/docs/UNITY.md\",\n  \"changelogUrl\": \"$url/blob/v$version/CHANGELOG.md\",\n  \"licensesUrl\": \"$url/blob/v$version/LICENSE\",\n  \"repository\": { \"type\": \"git\", \"url\": \"$url.git\" },|" \
    "$stage/package/package.json"
fi
stamp=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mode='u+rw,go+r,go-w' --mtime="@$stamp" -cf - package \
  | gzip -n -9 >"$out/com.where-allocation.core-$version.tgz"
echo "pack: $(cd "$out" && ls -1 WhereAllocation.$version.nupkg WhereAllocation.$version.snupkg com.where-allocation.core-$version.tgz | tr '\n' ' ')in $out"
