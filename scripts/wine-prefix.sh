#!/usr/bin/env bash
# Sourced, not run: the Wine settings and prefix this project runs .NET programs in (docs/testing-under-wine.md), shared by
# scripts/wine-tests.sh and bench/AwaitStress/run.sh. Before sourcing, set WINEPREFIX (each caller keeps a prefix of its
# own, so that neither stops the other's wineserver). Then call: wine_prefix_ready <log file> <who>  (0 when ready).
export WINEARCH=win64
# Wine's own messages off; the programs' output is kept.
export WINEDEBUG=-all
# The .NET runtime's W^X double mapping of JIT code, under Wine 8: the finalizer thread's release of a
# dynamic method's code crashes with "Internal CLR error (0x80131506)" (see docs/testing-under-wine.md).
export DOTNET_EnableWriteXorExecute=0

# Creates the prefix once (about 10 s), reporting Windows 10 (.NET 10 supports Windows 10 and later; Wine 8's new
# prefixes say Windows 7). Wine's offers to install its own Mono and Gecko are turned off meanwhile.
wine_prefix_ready() { # log who
  [ -f "$WINEPREFIX/.where-allocation-ready" ] && return 0
  echo "$2: creating the Wine prefix $WINEPREFIX"
  rm -rf "$WINEPREFIX"
  if ! WINEDLLOVERRIDES="mscoree,mshtml=" wine wineboot --init >"$1" 2>&1 </dev/null \
     || ! wine reg add 'HKEY_CURRENT_USER\Software\Wine' /v Version /t REG_SZ /d win10 /f >>"$1" 2>&1 </dev/null \
     || ! wineserver -w; then
    cat "$1"
    return 1
  fi
  touch "$WINEPREFIX/.where-allocation-ready"
}
