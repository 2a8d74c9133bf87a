#!/usr/bin/env bash
# Proof that the packages install and run the way docs/INSTALL.md and the README tell users:
#  - each package stands alone: in a copy of the tree's tracked files without the other package's folders (its package
#    folder, its API files, its suites), the package builds, its suite passes (the memory package's whole suite, the
#    sockets package's CONTRIBUTING class, on CoreCLR) and scripts/pack.sh packs it; a clean rebuild there gives the same
#    assembly bytes, and the package folder holds only tracked files after it. Those packs are the ones checked below;
#  - the NuGet package, its symbols and the Unity tarball: the .nupkg holds both frameworks, XML docs, README (no
#    repository-relative link), LICENSE, icon, link.xml, an SPDX licence expression and the version from
#    Directory.Build.props;
#  - the README's C# blocks compile, and its example runs in fresh consumer projects outside the tree that restore the
#    package through the README's project-local nuget.config: net10.0 on CoreCLR, and on Mono a fresh
#    `dotnet new console` whose project file is docs/INSTALL.md's whole netstandard2.1 .csproj; INSTALL.md's SDK-less
#    route (unzip, mcs, mono) with its program; each printing 0 B, and that program refusing to measure under
#    mono-boehm, whose allocation counter reads 0 (its canary);
#  - the Unity tarball holds exactly the package folder's tracked files under package/, every asset with its .meta,
#    LICENSE/README/CHANGELOG, a valid package.json; the Unity samples compile as C# 9 against the library;
#  - the memory package (src/WhereAllocation.Memory) the same way: its .nupkg (both frameworks, XML docs, README with no
#    relative link, LICENSE, deterministic), its README's C# blocks compiled against it alone, its tarball (tracked files,
#    .meta files, package.json); and the sockets package's NuGet package names no dependency on it;
#  - the two packages together: their public type names, none one letter from another (tests/Checks/PublicNames), and
#    the one internal file both carry, the same in both but for its namespace;
#  - after those builds the package folders hold only tracked files (no bin/, obj/ or other build output).
# Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "  ok   $2"; else failed=$((failed + 1)); echo "  FAIL $2"; fi; }
show() { [ "$1" = 0 ] || tail -30 "$2"; }

package=src/WhereAllocation
mpackage=src/WhereAllocation.Memory
version=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
feed=$work/feed

# The folders that are each package's own: its package folder, its declared API, its suites.
sockets_folders=(src/WhereAllocation api/WhereAllocation tests/WhereAllocation.Tests tests/WhereAllocation.Tests.Mono
                 tests/WhereAllocation.Tests.Boehm tests/WhereAllocation.Tests.Windows tests/Unity/CoreClr/Player tests/Unity/CoreClr/Editor)
memory_folders=(src/WhereAllocation.Memory api/WhereAllocation.Memory tests/Memory tests/Unity/CoreClr/Memory)
# alone <name> <folders to leave out...>: a copy of the tree's tracked files as they are now (a git repository of one
# commit, dated as HEAD, as pack.sh needs one) without those folders, in $work/alone-<name>. Prints its path.
alone() {
  local dir=$work/alone-$1; shift
  mkdir -p "$dir"
  git ls-files -z | while IFS= read -r -d '' file; do
    [ -f "$file" ] && mkdir -p "$dir/$(dirname "$file")" && cp -p "$file" "$dir/$file"
  done
  (cd "$dir" && rm -rf "$@" && git init -q && git add -A \
     && GIT_AUTHOR_DATE=$(git -C "$root" log -1 --format=%cI) GIT_COMMITTER_DATE=$(git -C "$root" log -1 --format=%cI) \
        git -c user.name=pack-check -c user.email=pack-check@localhost commit -q -m "alone") >/dev/null 2>&1 || return 1
  echo "$dir"
}
# in_alone <dir> <package folder> <NuGet id> <suite command...>: builds, tests, packs and rebuilds the package in the copy.
in_alone() {
  local dir=$1 folder=$2 id=$3 rc tfm; shift 3
  echo "== $id alone ($(cd "$dir" && ls -d src/* | tr '\n' ' ')in the copy)"
  (cd "$dir" && bash scripts/pack.sh --out "$feed") >"$dir.pack.txt" 2>&1; rc=$?
  check $rc "$id alone: scripts/pack.sh builds and packs it"; show $rc "$dir.pack.txt"
  grep -q "not packed" "$dir.pack.txt"; check $? "$id alone: pack.sh packs it and says the other package is not in the tree ($(grep "not packed" "$dir.pack.txt"))"
  (cd "$dir" && "$@") >"$dir.test.txt" 2>&1; rc=$?
  grep -E "^(Passed|Failed)!|^ +(Passed|Failed): +[0-9]+|passed, [0-9]+ failed" "$dir.test.txt" | tail -3 | sed 's/^/  /'
  check $rc "$id alone: its suite builds and passes ($*)"; show $rc "$dir.test.txt"
  # MSBuild only warns of a reference to a project the copy lacks (MSB9008), and NuGet of one it cannot restore.
  warned=$(grep -hoE "warning (MSB|NU)[0-9]+:[^[]*" "$dir.pack.txt" "$dir.test.txt" | sort -u)
  [ -z "$warned" ]; check $? "$id alone: its builds name nothing the copy lacks (no MSBuild or NuGet warning)${warned:+: $warned}"
  # Deterministic: a clean rebuild (same paths, CI mode) gives the same bytes as the packed assemblies.
  mkdir -p "$dir.packed"
  (cd "$dir.packed" && unzip -q "$feed/$id.$version.nupkg" 'lib/*' 2>/dev/null)
  (cd "$dir" && dotnet build "$folder" -c Release -nologo -v quiet --no-incremental -p:ContinuousIntegrationBuild=true) >"$dir.rebuild.txt" 2>&1
  for tfm in netstandard2.1 net8.0; do
    cmp -s "$dir.packed/lib/$tfm/$id.dll" "$dir/artifacts/bin/$id/Release/$tfm/$id.dll"
    check $? "$id alone, deterministic: the rebuilt $tfm assembly is byte-identical to the packed one"
  done
  extra=$(cd "$dir" && git status --porcelain --ignored --untracked-files=all -- "$folder" | grep -E '^(\?\?|!!)' || true)
  [ -z "$extra" ]; check $? "$id alone: no untracked or ignored file in $folder after its builds (stays importable from disk)"
  [ -z "$extra" ] || head -5 <<<"$extra"
}
sockets_alone=$(alone sockets "${memory_folders[@]}"); check $? "a copy of the tree without the memory package's folders (${memory_folders[*]})"
memory_alone=$(alone memory "${sockets_folders[@]}"); check $? "a copy of the tree without the sockets package's folders (${sockets_folders[*]})"
in_alone "$sockets_alone" $package WhereAllocation \
  dotnet test tests/WhereAllocation.Tests -c Release --filter "FullyQualifiedName~WhereAllocation.Tests.AllocationTests." --logger "console;verbosity=minimal"
in_alone "$memory_alone" $mpackage WhereAllocation.Memory bash scripts/memory-tests.sh coreclr
nupkg=$feed/WhereAllocation.$version.nupkg
tgz=$feed/com.where-allocation.core-$version.tgz
for f in "$nupkg" "$feed/WhereAllocation.$version.snupkg" "$tgz"; do [ -s "$f" ]; check $? "artifact $(basename "$f") (version $version from Directory.Build.props)"; done

echo "== NuGet package"
listing=$(unzip -Z1 "$nupkg" 2>/dev/null)
for entry in README.md LICENSE icon.png link.xml lib/netstandard2.1/WhereAllocation.dll lib/netstandard2.1/WhereAllocation.xml \
             lib/net8.0/WhereAllocation.dll lib/net8.0/WhereAllocation.xml; do
  grep -qx "$entry" <<<"$listing"; check $? "package holds $entry"
done
nuspec=$(unzip -p "$nupkg" WhereAllocation.nuspec 2>/dev/null)
grep -q "<version>$version</version>" <<<"$nuspec"; check $? "nuspec version $version"
grep -q '<license type="expression">MIT</license>' <<<"$nuspec"; check $? "nuspec licence as an SPDX expression (MIT)"
grep -q '<icon>icon.png</icon>' <<<"$nuspec" && grep -q '<readme>README.md</readme>' <<<"$nuspec"; check $? "nuspec names its icon and readme"
grep -q "where-allocation contributors" <<<"$(unzip -p "$nupkg" LICENSE 2>/dev/null)"; check $? "LICENSE names where-allocation contributors"
! grep -qE '\]\((\.\.?/|[A-Za-z][^:)]*\))' <<<"$(unzip -p "$nupkg" README.md 2>/dev/null)"; check $? "package readme has no relative link (nuget.org would break it)"
# (listings go through a variable: with pipefail, grep -q closing a pipe early would fail the check at random)
symbols=$(unzip -Z1 "$feed/WhereAllocation.$version.snupkg" 2>/dev/null)
grep -qx 'lib/net8.0/WhereAllocation.pdb' <<<"$symbols" && grep -qx 'lib/netstandard2.1/WhereAllocation.pdb' <<<"$symbols"
check $? "symbols package holds the PDBs of both frameworks"

echo "== README: its C# blocks compile; its example runs from the package on CoreCLR and Mono at 0 B"
# The C# blocks of a markdown file, one file per block: block-1.cs, block-2.cs, ...
blocks() { awk -v dir="$2" '/^```csharp/{n++; on=1; next} /^```/{on=0} on{print > (dir "/block-" n ".cs")}' "$1"; }
# The README's nuget.config, pointed at the packed folder.
mkdir -p "$work/recipe"
awk '/^```xml/{on=1; next} /^```/{if (on) exit} on' README.md | sed "s|/path/to/where-allocation/artifacts|$feed|" >"$work/recipe/nuget.config"
grep -q "globalPackagesFolder" "$work/recipe/nuget.config"; check $? "README's nuget.config recipe found (a project-local package cache)"
consumer() {   # name framework extra-properties program [package id]
  local dir=$work/$1 id=${5:-WhereAllocation}
  mkdir -p "$dir"; cp "$work/recipe/nuget.config" "$dir/"; cp "$4" "$dir/Program.cs"
  cat >"$dir/$1.csproj" <<XML
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>$2</TargetFramework>
    <Nullable>enable</Nullable>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
    $3
  </PropertyGroup>
</Project>
XML
  (cd "$dir" && dotnet add package "$id" --version "$version" >"$dir/add.txt" 2>&1 && dotnet build -c Release -nologo -v quiet >"$dir/build.txt" 2>&1)
}
mkdir -p "$work/readme" "$work/pkgreadme"
blocks README.md "$work/readme"
n=$(ls "$work/readme" | wc -l); [ "$n" -ge 1 ]; check $? "README has $n C# block(s)"
blocks $package/README.md "$work/pkgreadme"
# The README's first block is the example, built and run below; every other block (and the package readme's) is compiled.
i=0
for block in "$work"/readme/block-*.cs "$work"/pkgreadme/block-*.cs; do
  [ "$block" != "$work/readme/block-1.cs" ] || continue
  i=$((i + 1))
  consumer "snippet$i" net10.0 "" "$block"; rc=$?
  check $rc "C# block compiles as copied: ${block#$work/}"; show $rc "$work/snippet$i/build.txt"
done
main=$work/readme/block-1.cs
# The newcomer's check: the README's first C# block (the example run below) starts within its first 40 lines.
first=$(grep -n '^```csharp' README.md | head -1 | cut -d: -f1)
[ -n "$first" ] && [ "$first" -le 40 ]; check $? "the README's first C# block starts at line ${first:-none} (within the first 40)"
consumer coreclr net10.0 "" "$main"; rc=$?
check $rc "README example compiles as copied; the net10.0 consumer restores WhereAllocation $version through the project-local nuget.config"
show $rc "$work/coreclr/add.txt"; show $rc "$work/coreclr/build.txt"
[ -d "$work/coreclr/.packages/whereallocation/$version" ]; check $? "the package came into the project's own cache (.packages), not the user-wide one"
timeout 120 dotnet "$work/coreclr/bin/Release/net10.0/coreclr.dll" 2>&1 | tee "$work/coreclr/run.txt"
grep -qx "0 B allocated by 10 000 round trips" "$work/coreclr/run.txt"; check $? "README example on CoreCLR (net10.0): 0 B allocated by 10 000 round trips"
# docs/INSTALL.md's Mono recipe as a user follows it: today's console template, its project file replaced by the
# recipe's whole .csproj (the one <TargetFramework>netstandard2.1 block), the README's example as Program.cs.
recipe=$(awk '/^```xml/{on=1; block=""; next} /^```/{if (on && block ~ /netstandard2.1/) {printf "%s", block; exit} on=0; next} on{block = block $0 "\n"}' docs/INSTALL.md)
grep -q "<ImplicitUsings>disable</ImplicitUsings>" <<<"$recipe"; check $? "docs/INSTALL.md's Mono recipe found (a whole .csproj)"
mkdir -p "$work/mono"
(cd "$work/mono" && dotnet new console -n mono -o . >"$work/mono/new.txt" 2>&1); rc=$?
check $rc "dotnet new console (today's template)"; show $rc "$work/mono/new.txt"
cp "$work/recipe/nuget.config" "$work/mono/"; cp "$main" "$work/mono/Program.cs"
printf '%s\n' "$recipe" | sed "s|<PackageReference Include=\"WhereAllocation\" Version=\"[^\"]*\" />|<PackageReference Include=\"WhereAllocation\" Version=\"$version\" />|" >"$work/mono/mono.csproj"
(cd "$work/mono" && dotnet build -c Release -nologo -v quiet >"$work/mono/build.txt" 2>&1); rc=$?
check $rc "the template with INSTALL.md's Mono .csproj restores and builds (netstandard2.1, C# 9)"; show $rc "$work/mono/build.txt"
timeout 120 mono "$work/mono/bin/Release/netstandard2.1/mono.dll" 2>&1 | tee "$work/mono/run.txt"
grep -qx "0 B allocated by 10 000 round trips" "$work/mono/run.txt"; check $? "README example on Mono through INSTALL.md's recipe: 0 B allocated by 10 000 round trips"
# And without the SDK: INSTALL.md's mcs commands, its program, the library taken out of the .nupkg.
mkdir -p "$work/mcs"
awk '/^```csharp/{n++; on=1; next} /^```/{on=0} on && n==1' docs/INSTALL.md >"$work/mcs/Echo.cs"
grep -qE "static (void|int) Main" "$work/mcs/Echo.cs"; check $? "docs/INSTALL.md's mcs program found"
commands=$(awk '/^```sh/{on=1; block=""; next} /^```/{if (on && block ~ /mcs /) {printf "%s", block; exit} on=0; next} on{block = block $0 "\n"}' docs/INSTALL.md)
cp "$nupkg" "$work/mcs/WhereAllocation.$version.nupkg"
(cd "$work/mcs" && printf '%s\n' "$commands" | sed "s|WhereAllocation\.[0-9][0-9.]*\.nupkg|WhereAllocation.$version.nupkg|" | timeout 300 bash -e) >"$work/mcs/run.txt" 2>&1; rc=$?
cat "$work/mcs/run.txt" | tail -3
grep -qx "0 B allocated by 10 000 round trips" "$work/mcs/run.txt"; check $(( rc || $? )) "INSTALL.md's SDK-less route (unzip, mcs, mono) prints 0 B allocated by 10 000 round trips"
# Its canary: under mono-boehm the thread's allocation counter reads 0, so the same program must refuse to measure.
(cd "$work/mcs" && timeout 120 mono-boehm Echo.exe) >"$work/mcs/boehm.txt" 2>&1; rc=$?
head -1 "$work/mcs/boehm.txt"
[ $rc = 1 ] && grep -q "cannot measure on this runtime" "$work/mcs/boehm.txt" && ! grep -q "round trips" "$work/mcs/boehm.txt"
check $? "the same program under mono-boehm (a counter that reads 0) refuses to measure, exit 1: its canary is alive"

echo "== Unity tarball"
mkdir -p "$work/unity"
tar -xzf "$tgz" -C "$work/unity"; check $? "the tarball unpacks"
(cd "$work/unity" && find package -type f | sort) >"$work/tar-files.txt"
git ls-files -- $package | sed "s:^$package/:package/:" | sort >"$work/git-files.txt"
diff "$work/git-files.txt" "$work/tar-files.txt" >"$work/tar-diff.txt"; rc=$?
check $rc "package/ holds exactly the $(wc -l <"$work/git-files.txt") tracked files of $package"; show $rc "$work/tar-diff.txt"
[ "$(ls "$work/unity")" = package ]; check $? "one top folder, package/"
! grep -qE '(^|/)(bin|obj)/' "$work/tar-files.txt"; check $? "no bin/ or obj/ in the tarball"
missing=0
while read -r asset; do
  case "$asset" in *.meta) continue ;; esac
  [ -e "$work/unity/$asset.meta" ] || { echo "    no .meta: $asset"; missing=$((missing + 1)); }
done < <(cd "$work/unity" && find package -mindepth 1 | grep -v '\.meta$' | grep -Ev '(^|/)\.|~(/|$)')
[ "$missing" = 0 ]; check $? "every file and folder Unity imports has its .meta (folders ending in ~ are not imported)"
# Links that leave the package (../) are dead where the tarball is read (the Package Manager, the project's Packages/).
outside=$(grep -rlE '\]\(\.\./' "$work/unity/package" --include='*.md' || true)
[ -z "$outside" ]; check $? "no markdown file in the tarball links outside the package${outside:+: $outside}"
# Every relative link of a markdown file in a tarball names a file the tarball holds (a copied page can link a sibling left behind).
dead_links() {   # folder: prints "file -> target" for each relative markdown link whose target is not in the folder
  local f target
  while IFS= read -r f; do
    while IFS= read -r target; do
      target=${target%%#*}
      case "$target" in ''|*://*|mailto:*) continue ;; esac
      [ -e "$(dirname "$f")/$target" ] || echo "${f#$1/} -> $target"
    done < <(grep -oE '\]\([^) ]+\)' "$f" | sed -E 's/^\]\((.*)\)$/\1/')
  done < <(find "$1" -name '*.md')
}
dead=$(dead_links "$work/unity/package")
[ -z "$dead" ]; check $? "every relative link in the tarball's markdown files resolves inside the tarball${dead:+: $dead}"
for f in package.json LICENSE.md README.md CHANGELOG.md WhereAllocation.asmdef link.xml; do
  [ -s "$work/unity/package/$f" ]; check $? "package/$f present"
done
# The Package Manager's "Documentation" link, with no documentationUrl (none is set without a repository address): the
# package's Documentation~ (else Documentation) folder's index.md, else its tableofcontents.md, else the first .md the
# folder lists; later editors open README.md when there is no such folder (UnityCsReference,
# Modules/PackageManagerUI/Editor/Services/Upm/UpmPackageDocs.cs). The listing order is the file system's, so the
# folder holds one .md: the Unity guide.
docs_md=$(cd "$work/unity/package" && find Documentation~ Documentation -maxdepth 1 -iname '*.md' 2>/dev/null | sort)
[ "$docs_md" = "Documentation~/UNITY.md" ]; check $? "the Package Manager's documentation link opens Documentation~/UNITY.md (its only .md: ${docs_md//$'\n'/ })"
cmp -s "$work/unity/package/Documentation~/UNITY.md" docs/UNITY.md; check $? "Documentation~/UNITY.md is docs/UNITY.md as it stands"
mkdir -p "$work/json"
cat >"$work/json/check.cs" <<'CS'
using System;
using System.IO;
using System.Text.Json;
using System.Text.RegularExpressions;
// Checks a Unity package.json: the fields the Package Manager requires, in the forms it accepts, and the samples' paths.
string dir = args[0], version = args[1];
bool wantSamples = args.Length < 3 || args[2] != "no-samples";
var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(dir, "package.json"))).RootElement;
int bad = 0;
void Need(bool ok, string what) { Console.WriteLine((ok ? "  ok   " : "  FAIL ") + what); if (!ok) bad++; }
string Str(string name) => json.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString()! : "";
Need(Regex.IsMatch(Str("name"), @"^com\.[a-z0-9-]+(\.[a-z0-9-]+)+$") && Str("name").Length <= 214, "package.json name is reverse-domain, lower case: " + Str("name"));
Need(Str("version") == version, "package.json version " + Str("version") + " = " + version);
Need(Regex.IsMatch(Str("unity"), @"^[0-9]{4}\.[0-9]+$"), "package.json unity is a major.minor release: " + Str("unity"));
Need(Str("displayName").Length > 0 && Str("description").Length > 0, "package.json has a displayName and a description");
Need(Str("license") == "MIT", "package.json licence is the SPDX id MIT");
int samples = 0;
if (json.TryGetProperty("samples", out var list))
    foreach (var s in list.EnumerateArray())
    {
        string path = s.GetProperty("path").GetString()!;
        Need(path.EndsWith("~") || path.Contains("~/"), "sample path " + path + " is inside a folder Unity does not import");
        Need(Directory.Exists(Path.Combine(dir, path)) && Directory.GetFiles(Path.Combine(dir, path), "*.cs").Length > 0, "sample " + path + " exists and holds C# files");
        Need(s.TryGetProperty("displayName", out _) && s.TryGetProperty("description", out _), "sample " + path + " has a displayName and a description");
        samples++;
    }
if (wantSamples) Need(samples > 0, samples + " sample(s) listed");
return bad == 0 ? 0 : 1;
CS
cat >"$work/json/json.csproj" <<'XML'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework><Nullable>enable</Nullable></PropertyGroup>
</Project>
XML
(cd "$work/json" && dotnet build -c Release -nologo -v quiet >build.txt 2>&1) || cat "$work/json/build.txt"
dotnet "$work/json/bin/Release/net10.0/json.dll" "$work/unity/package" "$version" >"$work/json/out.txt" 2>&1; rc=$?
cat "$work/json/out.txt"; check $rc "package.json fields valid"

echo "== The memory package (src/WhereAllocation.Memory): NuGet package, README blocks, Unity tarball"
# The one internal file both packages carry (so that neither depends on the other): the copies differ in their namespace only.
sed 's/^namespace WhereAllocation.Memory$/namespace WhereAllocation/' src/WhereAllocation.Memory/DisposeGuard.cs | cmp -s - src/WhereAllocation/Sockets/Batch/DisposeGuard.cs
check $? "the two packages' DisposeGuard.cs differ in their namespace only"
mnupkg=$feed/WhereAllocation.Memory.$version.nupkg
mtgz=$feed/com.where-allocation.memory-$version.tgz
for f in "$mnupkg" "$feed/WhereAllocation.Memory.$version.snupkg" "$mtgz"; do [ -s "$f" ]; check $? "artifact $(basename "$f")"; done
listing=$(unzip -Z1 "$mnupkg" 2>/dev/null)
for entry in README.md LICENSE icon.png lib/netstandard2.1/WhereAllocation.Memory.dll lib/netstandard2.1/WhereAllocation.Memory.xml \
             lib/net8.0/WhereAllocation.Memory.dll lib/net8.0/WhereAllocation.Memory.xml; do
  grep -qx "$entry" <<<"$listing"; check $? "memory package holds $entry"
done
! grep -qE '\]\((\.\.?/|[A-Za-z][^:)]*\))' <<<"$(unzip -p "$mnupkg" README.md 2>/dev/null)"; check $? "memory package readme has no relative link"
! grep -qi "WhereAllocation.Memory" <<<"$nuspec"; check $? "the sockets package's nuspec names no dependency on the memory package"
mkdir -p "$work/memreadme"
blocks $mpackage/README.md "$work/memreadme"
n=$(ls "$work/memreadme" | wc -l); [ "$n" -ge 1 ]; check $? "memory README has $n C# block(s)"
i=0
for block in "$work"/memreadme/block-*.cs; do
  i=$((i + 1))
  consumer "memsnippet$i" net10.0 "<AllowUnsafeBlocks>true</AllowUnsafeBlocks>" "$block" WhereAllocation.Memory; rc=$?
  check $rc "C# block compiles against WhereAllocation.Memory alone: ${block#$work/}"; show $rc "$work/memsnippet$i/build.txt"
done
mkdir -p "$work/unity-memory"
tar -xzf "$mtgz" -C "$work/unity-memory"; check $? "the memory tarball unpacks"
(cd "$work/unity-memory" && find package -type f | sort) >"$work/mtar-files.txt"
git ls-files -- $mpackage | sed "s:^$mpackage/:package/:" | sort >"$work/mgit-files.txt"
diff "$work/mgit-files.txt" "$work/mtar-files.txt" >"$work/mtar-diff.txt"; rc=$?
check $rc "package/ holds exactly the $(wc -l <"$work/mgit-files.txt") tracked files of $mpackage"; show $rc "$work/mtar-diff.txt"
missing=0
while read -r asset; do
  [ -e "$work/unity-memory/$asset.meta" ] || { echo "    no .meta: $asset"; missing=$((missing + 1)); }
done < <(cd "$work/unity-memory" && find package -mindepth 1 | grep -v '\.meta$' | grep -Ev '(^|/)\.|~(/|$)')
[ "$missing" = 0 ]; check $? "every file and folder of the memory tarball has its .meta"
outside=$(grep -rlE '\]\(\.\./' "$work/unity-memory/package" --include='*.md' || true)
[ -z "$outside" ]; check $? "no markdown file in the memory tarball links outside the package${outside:+: $outside}"
dead=$(dead_links "$work/unity-memory/package")
[ -z "$dead" ]; check $? "every relative link in the memory tarball's markdown files resolves inside it${dead:+: $dead}"
for f in package.json LICENSE.md README.md CHANGELOG.md WhereAllocation.Memory.asmdef; do
  [ -s "$work/unity-memory/package/$f" ]; check $? "memory package/$f present"
done
# The memory package has no documentation folder: later editors' link opens its README.md (see above), earlier ones offer none.
[ ! -e "$work/unity-memory/package/Documentation~" ] && [ ! -e "$work/unity-memory/package/Documentation" ] && [ -s "$work/unity-memory/package/README.md" ]
check $? "the memory package's documentation link opens its README.md (no documentation folder)"
dotnet "$work/json/bin/Release/net10.0/json.dll" "$work/unity-memory/package" "$version" no-samples >"$work/json/mout.txt" 2>&1; rc=$?
cat "$work/json/mout.txt"; check $rc "memory package.json fields valid"

echo "== The two packages together: their public type names (tests/Checks/PublicNames, on the packed assemblies)"
mkdir -p "$work/names"
(cd "$work/names" && unzip -q "$nupkg" 'lib/*' && unzip -q -o "$mnupkg" 'lib/*') 2>/dev/null
dotnet build tests/Checks/PublicNames -c Release -nologo -v quiet >"$work/names.txt" 2>&1 \
  && dotnet tests/Checks/PublicNames/bin/Release/net10.0/PublicNames.dll "$work"/names/lib/*/*.dll >>"$work/names.txt" 2>&1; rc=$?
sed 's/^/  /' "$work/names.txt" | grep -E "ok|FAIL|error"
check $rc "no two public types of the two packages (both frameworks) one letter apart, the check seen to flag planted names"

echo "== Unity samples compile as C# 9 against the library (tests/Unity/Samples, with a stand-in of UnityEngine)"
dotnet build tests/Unity/Samples -c Release -nologo -v quiet >"$work/samples.txt" 2>&1; rc=$?
check $rc "src/WhereAllocation/Samples~ compiles (netstandard2.1, C# 9, nullable off, warnings as errors)"; show $rc "$work/samples.txt"
dotnet build tests/Unity/Samples -c Release -nologo -v quiet -p:Mirror90=true >"$work/samples90.txt" 2>&1; rc=$?
check $rc "the same with kcp2k's stand-in in the form Mirror 89.11 and later ship (-p:Mirror90=true: the stand-in's STANDIN_MIRROR_90)"; show $rc "$work/samples90.txt"

echo "== The package folders after building: only tracked files"
extra=$(git status --porcelain --ignored --untracked-files=all -- $package $mpackage | grep -E '^(\?\?|!!)' || true)
[ -z "$extra" ]; check $? "no untracked or ignored file in $package or $mpackage after the builds (stays importable from disk)"
[ -z "$extra" ] || head -5 <<<"$extra"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
