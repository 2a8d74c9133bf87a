#!/usr/bin/env bash
# AwaitStress on every runtime and poller the library has on this machine, with one summary table:
#   CoreCLR (Linux):  epoll (native path) and Socket.Select (SocketAddress path), ThreadPool and IoThread continuations;
#                     Socket.Select also at 32 sockets, below the runtime's own allocation (checked for 0 B there)
#   Mono 6.8 (SGen):  epoll, IoThread (its default) and ThreadPool; Socket.Select (Managed path, the only runtime path
#                     on Mono, which allocates per datagram by design)
#   mono-boehm:       epoll, IoThread (Unity's collector)
#   win-x64 .NET, self-contained, under Wine: WSAPoll (native path) in both modes; Socket.Select (SocketAddress path)
# Each configuration is one process: a steady phase (the same sockets throughout, bytes per await measured) and a churn
# phase (sockets disposed and made anew at random meanwhile); see bench/AwaitStress/Program.cs.
# Exits non-zero on any loss, wrong datagram, await that did not end (or ended otherwise than it must), process that
# did not finish in time, and on steady-state bytes per await above what is promised (0, or under Wine the runtime's
# own cost of a bare await). Outputs: artifacts/await-stress/logs/<configuration>.txt and summary.md.
#
# Settings (environment): AWAIT_STRESS_SOCKETS  sockets per configuration (default 1000)
#                         AWAIT_STRESS_WINE     0 to leave the Wine configurations out (default 1)
#                         AWAIT_STRESS_QUICK    1: CoreCLR and Mono only, fewer rounds (well under a minute here)
#                         AWAIT_STRESS_DIR      where builds, the Wine prefix and logs go (default artifacts/await-stress)
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
sockets=${AWAIT_STRESS_SOCKETS:-1000}
quick=${AWAIT_STRESS_QUICK:-0}
with_wine=${AWAIT_STRESS_WINE:-1}
[ "$quick" = 1 ] && with_wine=0
dir=${AWAIT_STRESS_DIR:-$repo/artifacts/await-stress}
logs=$dir/logs
bin=$repo/bench/AwaitStress/bin/Release
module_dir=$dir/mono
started=$(date +%s)
load_start=$(uptime | sed -E 's/.*load average: *//')
status=0
rows=()

fail_setup() {
  echo "await-stress: $1"
  exit 1
}

mkdir -p "$logs" "$module_dir"
rm -f "$logs"/*.txt "$dir/summary.md"
if [ "$with_wine" = 1 ]; then bash scripts/ensure-tools.sh test || exit 1; else bash scripts/ensure-tools.sh demo || exit 1; fi

echo "await-stress: $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -nE 's/^Model name: +//p'), $(nproc) CPUs; load average at the start: $load_start"
echo "await-stress: building bench/AwaitStress (netstandard2.1 for Mono, net10.0 for CoreCLR)"
dotnet build bench/AwaitStress -c Release -nologo -v quiet >"$logs/build.txt" 2>&1 || { cat "$logs/build.txt"; fail_setup "build failed"; }
# Mono's whole-process allocation counter (Mono 6.8 has none of its own): a profiler module, loaded with --profile.
mono_include=$(pkg-config --cflags-only-I mono-2 2>/dev/null || echo -I/usr/include/mono-2.0)
# shellcheck disable=SC2086
cc -O2 -Wall -Wextra -Werror -shared -fPIC $mono_include -o "$module_dir/libmono-profiler-alloccount.so" \
  bench/AwaitStress/native/alloccount.c >"$logs/module.txt" 2>&1 \
  || { cat "$logs/module.txt"; fail_setup "could not build the Mono allocation counter (Mono's headers: Debian's libmono-2.0-dev)"; }

# A row of the table for something that failed outside the program (its 13 fields, as the program prints them).
fail_row() { # name phase reason
  rows+=("row|$1|||$2||||||||FAIL: $3")
}

# A row for each phase a configuration did not report (it ended before printing it).
missing_rows() { # name reason
  local name=$1 reason=$2 phase
  for phase in steady churn; do
    grep -q "^row|[^|]*|[^|]*|[^|]*|$phase|" "$logs/$name.txt" || fail_row "$name" "$phase" "$reason"
  done
}

# run NAME LIMIT-SECONDS COMMAND...: one configuration; its output in $logs/NAME.txt, printed without its row lines.
run() {
  local name=$1 limit=$2 rc
  shift 2
  echo
  echo "== $name"
  timeout -k 10 "$limit" "$@" </dev/null 2>&1 | tr -d '\r' >"$logs/$name.txt"
  rc=${PIPESTATUS[0]}
  grep -v '^row|' "$logs/$name.txt"
  mapfile -t found < <(grep '^row|' "$logs/$name.txt")
  rows+=("${found[@]}")
  case $rc in
    0) ;;
    124|137) status=1; missing_rows "$name" "killed (the ${limit} s limit, or its wineserver died)"; echo "await-stress: $name killed (the ${limit} s limit, or its wineserver died)" ;;
    *) status=1; missing_rows "$name" "exit code $rc" ;;
  esac
  return 0
}

coreclr=(dotnet "$bin/net10.0/AwaitStress.dll" --sockets "$sockets")
# Mono with its allocation counter loaded (the program finds the same file through LD_LIBRARY_PATH).
with_module=(env "LD_LIBRARY_PATH=$module_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
mono_sgen=("${with_module[@]}" mono --profile=alloccount "$bin/netstandard2.1/AwaitStress.dll" --sockets "$sockets")
mono_boehm=("${with_module[@]}" mono-boehm --profile=alloccount "$bin/netstandard2.1/AwaitStress.dll" --sockets "$sockets")

if [ "$quick" = 1 ]; then
  short=(--rounds 10 --churn-rounds 30 --warmup-ms 500)
  run coreclr-epoll-threadpool 120 "${coreclr[@]}" --mode ThreadPool "${short[@]}"
  run coreclr-epoll-iothread 120 "${coreclr[@]}" --mode IoThread "${short[@]}"
  run mono-epoll-iothread 120 "${mono_sgen[@]}" --mode IoThread "${short[@]}"
else
  run coreclr-epoll-threadpool 300 "${coreclr[@]}" --mode ThreadPool
  run coreclr-epoll-iothread 300 "${coreclr[@]}" --mode IoThread
  run coreclr-select-threadpool 300 "${coreclr[@]}" --path SocketAddress --mode ThreadPool
  run coreclr-select-iothread 300 "${coreclr[@]}" --path SocketAddress --mode IoThread
  # 32 sockets: 65 entries in Socket.Select's lists (the wake-up socket, and each socket for reading and for errors),
  # under the 80 from which .NET's Select allocates its own array: here the library's Select poller must cost 0 B.
  run coreclr-select-iothread-32 300 dotnet "$bin/net10.0/AwaitStress.dll" --sockets 32 --path SocketAddress --mode IoThread --expect-zero
  run mono-epoll-iothread 300 "${mono_sgen[@]}" --mode IoThread
  run mono-epoll-threadpool 300 "${mono_sgen[@]}" --mode ThreadPool
  run mono-select-iothread 300 "${mono_sgen[@]}" --path Managed --mode IoThread
  run mono-boehm-epoll-iothread 300 "${mono_boehm[@]}" --mode IoThread
fi

if [ "$with_wine" = 1 ]; then
  echo
  echo "await-stress: publishing bench/AwaitStress for win-x64 (self-contained) for Wine"
  if ! dotnet publish bench/AwaitStress -c Release -f net10.0 -r win-x64 --self-contained -o "$dir/win-x64" -nologo -v quiet >"$logs/publish.txt" 2>&1; then
    cat "$logs/publish.txt"
    fail_setup "publish for win-x64 failed"
  fi
  # The Wine prefix and settings of scripts/wine-tests.sh (docs/testing-under-wine.md), in a prefix of this benchmark's
  # own, so that neither run stops the other's wineserver.
  export WINEPREFIX=$dir/wine-prefix
  # shellcheck source=scripts/wine-prefix.sh
  . scripts/wine-prefix.sh
  wine_prefix_ready "$logs/prefix.txt" await-stress || fail_setup "could not create the Wine prefix"
  # Processes of this prefix (found by their environment), for the cleanup after a wineserver that died.
  prefix_processes() {
    # Wine's processes (their command names Wine or a .exe) and zombies whose threads live on, with this prefix in the
    # environment of any of their threads (a zombie's own environment can no longer be read).
    local d t state command
    for d in /proc/[0-9]*; do
      state=$(cut -d' ' -f3 "$d/stat" 2>/dev/null) || continue
      command=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
      [[ $state == Z || $command =~ wine|\.exe ]] || continue
      for t in "$d"/task/*; do
        if { tr '\0' '\n' <"$t/environ"; } 2>/dev/null | grep -qxF "WINEPREFIX=$WINEPREFIX"; then
          echo "${d##*/}"
          break
        fi
      done
    done
  }
  # Kills this prefix's processes, again until none is left (5 s at most): a Wine program whose server died can be left
  # a zombie whose other threads still wait on pipes of their own (and keep our output pipe open).
  end_prefix_processes() {
    local p t i found
    for i in 1 2 3 4 5 6 7 8 9 10; do
      found=$(prefix_processes)
      [ -n "$found" ] || return 0
      for p in $found; do
        kill -9 "$p" 2>/dev/null
        for t in /proc/"$p"/task/*; do kill -9 "${t##*/}" 2>/dev/null; done
      done
      sleep 0.5
    done
  }
  start_wineserver() {
    wineserver -p >>"$logs/wineserver.txt" 2>&1 </dev/null
    wine cmd /c exit >/dev/null 2>&1 </dev/null # Wine's background services, started on /dev/null (see wine-tests.sh)
  }
  wineserver_alive() {
    local p
    for p in $(pgrep wineserver); do
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "WINEPREFIX=$WINEPREFIX" && return 0
    done
    return 1
  }
  trap 'wineserver -k >/dev/null 2>&1' EXIT
  trap 'exit 143' TERM INT
  : >"$logs/wineserver.txt"
  start_wineserver
  wine_run() { # name args...: one configuration under Wine; a wineserver that died is reported and started again
    local name=$1 died watcher
    shift
    # A program whose wineserver died hangs (Wine 8's server can die on an assertion while sockets are closed under a
    # poll: docs/testing-under-wine.md): a watcher ends this prefix's processes within a second of that, rather than
    # leaving the run to its time limit.
    ( while sleep 1; do wineserver_alive || { end_prefix_processes; exit 0; }; done ) &
    watcher=$!
    run "$name" 600 wine "$dir/win-x64/AwaitStress.exe" --sockets "$sockets" --rounds 10 --churn-rounds 30 --deadline 30 "$@"
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
    if ! wineserver_alive; then
      status=1
      died=$(tail -1 "$logs/wineserver.txt")
      echo "await-stress: the wineserver died during $name${died:+: $died}"
      fail_row "$name" "-" "the wineserver died${died:+ ($died)}"
      end_prefix_processes
      start_wineserver
    fi
  }
  wine_run wine-wsapoll-threadpool --mode ThreadPool
  wine_run wine-wsapoll-iothread --mode IoThread
  wine_run wine-select-threadpool --path SocketAddress --mode ThreadPool
  wineserver -k >/dev/null 2>&1
fi

echo
load_end=$(uptime | sed -E 's/.*load average: *//')
{
  echo "AwaitStress, $(date -u '+%Y-%m-%d %H:%M UTC'), $(lscpu | sed -nE 's/^Model name: +//p'), $(nproc) CPUs, load average $load_start at the start, $load_end at the end;"
  echo "$(dotnet --list-runtimes | sed -nE 's/^Microsoft.NETCore.App ([0-9.]+).*/.NET \1/p' | tail -1), $(mono --version | head -1 | sed -E 's/ \(.*//')$([ "$with_wine" = 1 ] && echo ", $(wine --version)"); $(( $(date +%s) - started )) s in all."
  echo "awaits: datagrams received by awaits in the phase (warm-up included); p50/p99: from each datagram's send to the code after its await;"
  echo "B/await: bytes the whole process allocated per await in the steady state (steady phase, measured rounds)."
  echo
  echo "| runtime | poller | mode | phase | sockets | awaits | lost/wrong | p50 µs | p99 µs | B/await | churned | verdict |"
  echo "|---|---|---|---|--:|--:|--:|--:|--:|---|--:|---|"
  for row in "${rows[@]}"; do
    IFS='|' read -r -a f <<<"$row"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${f[1]}" "${f[2]}" "${f[3]}" "${f[4]}" "${f[5]}" "${f[6]}" "${f[7]}" "${f[8]}" "${f[9]}" "${f[10]}" "${f[11]}" "${f[12]}"
    [[ ${f[12]} == ok ]] || status=1
  done
} | tee "$dir/summary.md"
[ ${#rows[@]} -gt 0 ] || status=1
echo
echo "await-stress: $([ "$status" = 0 ] && echo passed || echo FAILED) ($dir/summary.md, logs in $logs)"
# One line for ./test.sh's count: each row (a configuration's phase) is a check.
ok_rows=0
for row in "${rows[@]}"; do [[ $row == *"|ok" ]] && ok_rows=$((ok_rows + 1)); done
failed_rows=$(( ${#rows[@]} - ok_rows ))
[ "$status" = 0 ] || [ "$failed_rows" -gt 0 ] || failed_rows=1
echo "$ok_rows passed, $failed_rows failed"
exit "$status"
