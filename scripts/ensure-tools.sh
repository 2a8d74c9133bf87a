#!/usr/bin/env bash
# Installs what a fresh machine lacks for the tests and the demo: Mono (Debian's mono-complete, the
# stand-in for Unity's Mono; and mono-runtime-boehm, its mono-boehm built with the Boehm collector that Unity
# runs), a C compiler, valgrind (the memory leak check) and Wine (the suite on the
# win-x64 runtime: Debian's "wine" package gives the wine command, "wine64" the 64-bit loader it needs).
# Needs root for apt-get; does nothing when all is there.
set -euo pipefail
missing=()
command -v mono >/dev/null 2>&1 || missing+=(mono-complete)
command -v mono-boehm >/dev/null 2>&1 || missing+=(mono-runtime-boehm)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
{ command -v wine >/dev/null 2>&1 && [ -x /usr/lib/wine/wine64 ]; } || missing+=(wine wine64)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-tools: missing ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root" >&2
  exit 1
fi
echo "ensure-tools: installing ${missing[*]} from Debian's packages" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
