#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks, by purpose:
#   scripts/ensure-tools.sh demo   what ./demo.sh needs: Mono (Debian's mono-complete, the stand-in for Unity's
#                                  Mono; mono-runtime-boehm, its mono-boehm built with the
#                                  Boehm collector that Unity runs) and a C compiler (the C reference receivers)
#   scripts/ensure-tools.sh test   (the default) what ./test.sh needs: the demo's tools, plus valgrind (the native leak
#                                  check and the receive's instruction budget) and Wine (the suite on the win-x64
#                                  runtime: Debian's "wine" package gives the wine command, "wine64" the 64-bit loader),
#                                  and for the no-JIT stage (scripts/no-jit.sh) monodis, mcs and the assembler and
#                                  linker Mono's AOT compiler runs (mono-complete and gcc bring them; checked by name)
# The .NET 10 SDK is not installed here: it is the one prerequisite. Needs root for apt-get; does nothing when all is there.
set -euo pipefail
purpose=${1:-test}
missing=()
demo_tools() {
  command -v mono >/dev/null 2>&1 || missing+=(mono-complete)
  command -v mono-boehm >/dev/null 2>&1 || missing+=(mono-runtime-boehm)
  command -v cc >/dev/null 2>&1 || missing+=(gcc)
}
test_tools() {
  demo_tools
  command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
  { command -v wine >/dev/null 2>&1 && [ -x /usr/lib/wine/wine64 ]; } || missing+=(wine wine64)
  command -v monodis >/dev/null 2>&1 || missing+=(mono-utils)
  command -v mcs >/dev/null 2>&1 || missing+=(mono-mcs)
  { command -v as >/dev/null 2>&1 && command -v ld >/dev/null 2>&1; } || missing+=(binutils)
}
case "$purpose" in
  demo) demo_tools ;;
  test) test_tools ;;
  *) echo "usage: $0 [demo|test]" >&2; exit 2 ;;
esac
command -v dotnet >/dev/null 2>&1 || { echo "ensure-tools: the .NET 10 SDK is needed (https://dot.net); install it first" >&2; exit 1; }
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-tools: missing ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root" >&2
  exit 1
fi
echo "ensure-tools ($purpose): installing ${missing[*]} from Debian's packages" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
