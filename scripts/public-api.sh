#!/usr/bin/env bash
# Brings api/ (the public API files that Microsoft.CodeAnalysis.PublicApiAnalyzers checks each package against,
# for each target framework, at compile time: api/WhereAllocation/ for the sockets package, api/WhereAllocation.Memory/ for the memory package) in
# line with the source, after a deliberate change of a public surface: builds each package, then
#   - adds each member the build reports as undeclared (RS0016) to PublicAPI.Unshipped.txt: the package's api/ folder
#     when both targets report it, its <framework>/ folder when only one does;
#   - takes each declared member the build no longer finds (RS0017) out of the Unshipped file that lists it, or,
#     for a member of a released version (PublicAPI.Shipped.txt), marks it *REMOVED* in the Unshipped file.
# Review the diff and commit it with the change. Without changes to make it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
frameworks=(netstandard2.1 net8.0)

one() { # <project folder> <api folder>
  local project=$1 api=$2
  dotnet build $project -c Release -nologo --no-incremental -v quiet >"$work/build.txt" 2>&1 || true
  for f in "${frameworks[@]}"; do
    for rule in RS0016 RS0017; do
      sed -nE "s/.*error $rule: Symbol '(.*)' is (not part of the declared public API|part of the declared API, but).*TargetFramework=$f\]\$/\1/p" "$work/build.txt" | sort -u >"$work/$rule.$f"
    done
  done
  if grep -E "error " "$work/build.txt" | grep -vqE "error RS001[67]:"; then
    grep -E "error " "$work/build.txt" | grep -vE "error RS001[67]:" | sort -u
    echo "public-api: the library has other build errors; fix them first" >&2
    return 1
  fi

  add() { # file line
    [ -f "$1" ] || printf '#nullable enable\n' >"$1"
    { head -1 "$1"; { tail -n +2 "$1"; echo "$2"; } | sort -u; } >"$work/sorted" && cp "$work/sorted" "$1"

  }
  # RS0016: common to both targets, or one target's own.
  comm -12 "$work/RS0016.${frameworks[0]}" "$work/RS0016.${frameworks[1]}" >"$work/both"
  while IFS= read -r line; do [ -n "$line" ] && add $api/PublicAPI.Unshipped.txt "$line"; done <"$work/both"
  for f in "${frameworks[@]}"; do
    mkdir -p "$api/$f"
    comm -23 "$work/RS0016.$f" "$work/both" | while IFS= read -r line; do add "$api/$f/PublicAPI.Unshipped.txt" "$line"; done
  done
  # RS0017: gone from the source.
  for f in "${frameworks[@]}"; do cat "$work/RS0017.$f"; done | sort -u | while IFS= read -r line; do
    for file in $api/PublicAPI.Unshipped.txt $api/netstandard2.1/PublicAPI.Unshipped.txt $api/net8.0/PublicAPI.Unshipped.txt; do
      if grep -qxF -- "$line" "$file"; then grep -vxF -- "$line" "$file" >"$work/kept" || true; cp "$work/kept" "$file"; fi
    done
    for file in $api/PublicAPI.Shipped.txt $api/netstandard2.1/PublicAPI.Shipped.txt $api/net8.0/PublicAPI.Shipped.txt; do
      if grep -qxF -- "$line" "$file"; then add "$(dirname "$file")/PublicAPI.Unshipped.txt" "*REMOVED*$line"; fi
    done
  done

  if git diff --quiet -- $api && [ -z "$(git ls-files --others --exclude-standard -- $api)" ]; then
    echo "public-api: $api/ already matches $project"
  else
    git --no-pager diff --stat -- $api
    dotnet build $project -c Release -nologo -v quiet >/dev/null 2>&1 && echo "public-api: the library builds against the updated files" \
      || { echo "public-api: the library still does not build; see: dotnet build $project -c Release" >&2; return 1; }
  fi
}
one src/WhereAllocation api/WhereAllocation
one src/WhereAllocation.Memory api/WhereAllocation.Memory
