#!/usr/bin/env bash
# Rewrites the public-API snapshots in tests/WhereAllocation.Tests/Api/ from the library as built:
# PublicApi.net8.0.txt by the CoreCLR suite (which loads the net8.0 build) and
# PublicApi.netstandard2.1.txt by the Mono runner (which loads the netstandard2.1 build).
# Run it after a deliberate change to the public surface, review the diff, commit it with the change.
set -euo pipefail
cd "$(dirname "$0")/.."
export WHEREALLOCATION_API_WRITE=1
dotnet test tests/WhereAllocation.Tests -c Release --filter "FullyQualifiedName~WhereAllocation.Tests.Api" --logger "console;verbosity=minimal"
dotnet build tests/WhereAllocation.Tests.Mono -c Release -v quiet -nologo
mono --debug tests/WhereAllocation.Tests.Mono/bin/Release/netstandard2.1/WhereAllocation.Tests.Mono.dll WhereAllocation.Tests.Api
git --no-pager diff --stat -- tests/WhereAllocation.Tests/Api/
