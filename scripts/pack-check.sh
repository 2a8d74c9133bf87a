#!/usr/bin/env bash
# Proof that the NuGet package works as users install it: packs the library (deterministic, CI paths),
# checks what the .nupkg holds (both frameworks, XML docs, README, LICENSE, link.xml for Unity, the version from
# Directory.Build.props) and that a clean rebuild gives the same bytes, then installs it into a fresh console project from a local folder source
# (no other source, an empty package cache) and runs samples/AotCheck/Program.cs there on CoreCLR.
# Ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "  ok   $2"; else failed=$((failed + 1)); echo "  FAIL $2"; fi; }

version=$(sed -nE 's:.*<VersionPrefix>([^<]+)</VersionPrefix>.*:\1:p' Directory.Build.props)
dotnet pack src/WhereAllocation -c Release -nologo -v quiet -o "$work/feed" --artifacts-path "$work/artifacts" \
  -p:ContinuousIntegrationBuild=true >"$work/pack.txt" 2>&1
check $? "dotnet pack"
nupkg="$work/feed/WhereAllocation.$version.nupkg"
[ -f "$nupkg" ]; check $? "package named for version $version from Directory.Build.props"
listing=$(unzip -Z1 "$nupkg" 2>/dev/null)
for entry in README.md LICENSE link.xml lib/netstandard2.1/WhereAllocation.dll lib/netstandard2.1/WhereAllocation.xml \
             lib/net8.0/WhereAllocation.dll lib/net8.0/WhereAllocation.xml; do
  grep -qx "$entry" <<<"$listing"; check $? "package holds $entry"
done
unzip -p "$nupkg" WhereAllocation.nuspec 2>/dev/null | grep -q "<version>$version</version>"; check $? "nuspec version $version"
unzip -p "$nupkg" LICENSE 2>/dev/null | grep -q "where-allocation contributors"; check $? "LICENSE names where-allocation contributors"

# Deterministic: a clean rebuild from the same tree gives the same bytes as the packed assemblies.
mkdir -p "$work/packed"
(cd "$work/packed" && unzip -q "$nupkg" 'lib/*' 2>/dev/null)
dotnet build src/WhereAllocation -c Release -nologo -v quiet --no-incremental --artifacts-path "$work/artifacts" \
  -p:ContinuousIntegrationBuild=true >"$work/rebuild.txt" 2>&1
for tfm in netstandard2.1 net8.0; do
  cmp -s "$work/packed/lib/$tfm/WhereAllocation.dll" "$work/artifacts/bin/WhereAllocation/release_$tfm/WhereAllocation.dll"
  check $? "deterministic: rebuilt $tfm assembly is byte-identical to the packed one"
done

mkdir -p "$work/app"
cat >"$work/app/nuget.config" <<XML
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <clear />
    <add key="local" value="$work/feed" />
  </packageSources>
  <config>
    <add key="globalPackagesFolder" value="$work/packages" />
  </config>
</configuration>
XML
cat >"$work/app/App.csproj" <<XML
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <Nullable>enable</Nullable>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
  </PropertyGroup>
</Project>
XML
cp samples/AotCheck/Program.cs "$work/app/Program.cs"
(cd "$work/app" && dotnet add package WhereAllocation --version "$version" >"$work/add.txt" 2>&1)
check $? "dotnet add package WhereAllocation $version from the local folder source"
(cd "$work/app" && dotnet build -c Release -nologo -v quiet >"$work/build.txt" 2>&1)
check $? "the fresh console project builds against the package"
[ "$failed" -eq 0 ] || cat "$work/pack.txt" "$work/add.txt" "$work/build.txt" 2>/dev/null | tail -30
if [ -f "$work/app/bin/Release/net10.0/App.dll" ]; then
  dotnet "$work/app/bin/Release/net10.0/App.dll" | tee "$work/run.txt"
  check "${PIPESTATUS[0]}" "the sample runs from the package (loopback send/receive, 0 B per call)"
else
  check 1 "the sample runs from the package"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
