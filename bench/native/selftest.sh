#!/bin/bash
# Builds the C reference programs and checks them on loopback.
# Every run is bounded: wa-recv stops 3 s after the last datagram (generous: a descheduled sender on a loaded machine once tripped 500 ms) (or
# after --max-seconds 30), and every program runs under "timeout 60".
# Ends with "N passed, M failed"; exits 1 if anything failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin="$here/build"
RCVBUF=8388608   # asked for; the kernel caps it at net.core.rmem_max (x2)

echo "== build"
if ! "$here/build.sh"; then
    echo "build failed"
    echo "0 passed, 1 failed"
    exit 1
fi

tmp=$(mktemp -d /tmp/wa-selftest.XXXXXX)
recv_pid=""
cleanup() {
    if [ -n "$recv_pid" ] && kill -0 "$recv_pid" 2>/dev/null; then
        kill "$recv_pid" 2>/dev/null
        wait "$recv_pid" 2>/dev/null
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$(nproc)" -ge 2 ]; then
    RCPU=0; SCPU=1      # receiver and sender on different CPUs
else
    RCPU=-1; SCPU=-1
fi

passed=0
failed=0
ok()  { passed=$((passed + 1)); echo "PASS $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# key VALUE out of a "k=v k=v" line
key() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }

# run_pair NAME "recv args" "sender args" EXTRA_CHECK
#   Starts wa-recv, waits for its ready file, runs wa-sender, waits for
#   wa-recv, then checks: both exit 0, received + kernel_drops == sent,
#   corrupt = 0, duplicate = 0, and (unless EXTRA_CHECK says otherwise)
#   out_of_range = 0.  EXTRA_CHECK is a shell expression evaluated with
#   the variables received, drops, oor, sent, rseconds, sseconds set.
#   A fifth argument names another receiver (wa-shards, which has no --idle-ms).
run_pair() {
    local name=$1 rargs=$2 sargs=$3 extra=${4:-'[ "$oor" = 0 ]'} prog=${5:-wa-recv}
    local ready="$tmp/$name.ready" idle="--idle-ms 3000"
    [ "$prog" = wa-recv ] || idle=""
    echo "== $name"
    # shellcheck disable=SC2086  # argument lists are split on purpose
    timeout 60 "$bin/$prog" $rargs --cpu "$RCPU" --rcvbuf "$RCVBUF" \
        $idle --max-seconds 30 --ready-file "$ready" \
        >"$tmp/$name.rout" 2>"$tmp/$name.rerr" &
    recv_pid=$!
    local i=0
    while [ ! -s "$ready" ] && [ $i -lt 100 ] && kill -0 "$recv_pid" 2>/dev/null; do
        sleep 0.05; i=$((i + 1))
    done
    if [ ! -s "$ready" ]; then
        wait "$recv_pid" 2>/dev/null; recv_pid=""
        bad "$name" "$prog did not get ready: $(cat "$tmp/$name.rerr")"
        return
    fi
    local port; port=$(cat "$ready")
    # shellcheck disable=SC2086
    timeout 60 "$bin/wa-sender" --port "$port" --cpu "$SCPU" $sargs \
        >"$tmp/$name.sout" 2>"$tmp/$name.serr"
    local src=$?
    wait "$recv_pid"; local rrc=$?; recv_pid=""

    local rline sline
    rline=$(cat "$tmp/$name.rout"); sline=$(cat "$tmp/$name.sout")
    sed 's/^/   recv stderr: /' "$tmp/$name.rerr"
    sed 's/^/   send stderr: /' "$tmp/$name.serr"
    echo "   sender: $sline"
    echo "   recv:   $rline"
    if [ $src -ne 0 ] || [ $rrc -ne 0 ]; then
        bad "$name" "exit codes sender=$src recv=$rrc"; return
    fi
    local received corrupt dup oor drops sent rseconds sseconds
    received=$(key "$rline" received); corrupt=$(key "$rline" corrupt)
    dup=$(key "$rline" duplicate); oor=$(key "$rline" out_of_range)
    drops=$(key "$rline" kernel_drops); rseconds=$(key "$rline" seconds)
    sent=$(key "$sline" sent); sseconds=$(key "$sline" seconds)
    if [ -z "$received" ] || [ -z "$drops" ] || [ -z "$sent" ]; then
        bad "$name" "could not parse the output lines"; return
    fi
    if [ $((received + drops)) -ne "$sent" ]; then
        bad "$name" "received($received) + kernel_drops($drops) != sent($sent)"; return
    fi
    if [ "$corrupt" != 0 ] || [ "$dup" != 0 ]; then
        bad "$name" "corrupt=$corrupt duplicate=$dup"; return
    fi
    if ! eval "$extra"; then
        bad "$name" "check failed: $extra"; return
    fi
    ok "$name"
}

# -- 1. the datagram format against itself (no sockets)
echo "== format"
if "$bin/wa-vectors" >"$tmp/vectors.out" 2>"$tmp/vectors.err"; then
    ok "format"
else
    bad "format" "$(cat "$tmp/vectors.err")"
fi

# -- 2. bad options give exit code 2
echo "== options"
opt_fail=""
for args in "--count 10 --method foo" "--count 10 --bind 0.0.0.0" "--count 0" \
            "--count 10 --batch 1025" "--count 10 --size 0" "--count 10 --idle-ms x"; do
    # shellcheck disable=SC2086
    timeout 10 "$bin/wa-recv" $args >/dev/null 2>&1
    rc=$?; [ $rc -eq 2 ] || opt_fail="$opt_fail [wa-recv $args -> $rc]"
done
for args in "--count 10" "--shards 0 --count 10" "--shards 65 --count 10" "--shards 2" \
            "--shards 2 --count 10 --bind dual" "--shards 2 --count 10 --drain"; do
    # shellcheck disable=SC2086
    timeout 10 "$bin/wa-shards" $args >/dev/null 2>&1
    rc=$?; [ $rc -eq 2 ] || opt_fail="$opt_fail [wa-shards $args -> $rc]"
done
for args in "--port 9 --count 1 --sources 0" "--port 9 --count 1 --sources 1025" \
            "--port 9 --count 1 --host 10.0.0.1" "--port 9 --count 1 --size 23" \
            "--port 9 --count 1 --size 1401" "--port 9 --count 1 --mode x" \
            "--port 0 --count 1" "--count 1" "--port 9 --count 2 --first-seq 9999999999"; do
    # shellcheck disable=SC2086
    timeout 10 "$bin/wa-sender" $args >/dev/null 2>&1
    rc=$?; [ $rc -eq 2 ] || opt_fail="$opt_fail [wa-sender $args -> $rc]"
done
if [ -z "$opt_fail" ]; then ok "options"; else bad "options" "$opt_fail"; fi

# -- 3. the runs the brief asks for
run_pair recvfrom-plain-v4 \
    "--bind 127.0.0.1 --method recvfrom --count 20000" \
    "--host 127.0.0.1 --mode plain --count 20000"
run_pair recvmmsg64-gso-v4 \
    "--bind 127.0.0.1 --method recvmmsg --batch 64 --count 200000" \
    "--host 127.0.0.1 --mode gso --count 200000"
run_pair recvfrom-gso-v4 \
    "--bind 127.0.0.1 --method recvfrom --count 200000" \
    "--host 127.0.0.1 --mode gso --count 200000"
run_pair dual-recvmmsg-gso-v4sender \
    "--bind dual --method recvmmsg --count 200000" \
    "--host 127.0.0.1 --mode gso --count 200000"
run_pair v6-recvmmsg-gso \
    "--bind ::1 --method recvmmsg --count 200000" \
    "--host ::1 --mode gso --count 200000"

# -- 4. a few more corners
run_pair v6-recvmmsg1024-mmsg-1400B \
    "--bind ::1 --method recvmmsg --batch 1024 --count 50000 --size 2048" \
    "--host ::1 --mode mmsg --count 50000 --size 1400"
# rate limit: 20000 datagrams at 100000/s take about 0.2 s
run_pair rate-100k-first-seq \
    "--bind 127.0.0.1 --method recvmmsg --count 20000 --first-seq 1000000" \
    "--host 127.0.0.1 --mode gso --count 20000 --rate 100000 --first-seq 1000000" \
    '[ "$oor" = 0 ] && awk "BEGIN { exit !($sseconds >= 0.18 && $sseconds < 1.0) }"'
# sequence numbers 10..1009 against an expected range 0..999: ten are out
# of range (needs no drops, which 1000 datagrams into 8 MiB do not cause)
run_pair out-of-range-detected \
    "--bind 127.0.0.1 --method recvfrom --count 1000" \
    "--host 127.0.0.1 --mode plain --count 1000 --first-seq 10" \
    '[ "$drops" = 0 ] && [ "$oor" = 10 ]'

# --drain: the queue is filled first (5000 x 64 B fit in the receive buffer),
# then emptied without blocking; every datagram must come out intact
run_pair drain-recvmmsg64-gso-v4 \
    "--bind 127.0.0.1 --method recvmmsg --batch 64 --count 5000 --drain" \
    "--host 127.0.0.1 --mode gso --count 5000" \
    '[ "$oor" = 0 ] && [ "$drops" = 0 ] && [ "$received" = 5000 ]'
run_pair drain-recvfrom-plain-v6 \
    "--bind ::1 --method recvfrom --count 2000 --drain" \
    "--host ::1 --mode plain --count 2000" \
    '[ "$oor" = 0 ] && [ "$drops" = 0 ] && [ "$received" = 2000 ]'

# wa-shards: a SO_REUSEPORT group drained in parallel; the sender's 256 source
# ports spread the datagrams over every shard, and each shard's share must be
# there (received + drops = sent over the group, no shard left empty)
for args in "2 ::1" "3 127.0.0.1"; do
    set -- $args
    run_pair "shards-$1-recvmmsg-$2" \
        "--shards $1 --bind $2 --method recvmmsg --batch 64 --count 9000" \
        "--host $2 --mode gso --count 9000 --sources 256" \
        '[ "$oor" = 0 ] && [ "$drops" = 0 ] && [ "$received" = 9000 ] && [ "$(key "$rline" shards)" = '"$1"' ] && [ "$(key "$rline" shard_received | tr , "\n" | grep -c "^[1-9]")" = '"$1"' ]' \
        wa-shards
done
run_pair shards-2-recvfrom-mmsg-sender \
    "--shards 2 --method recvfrom --count 4000" \
    "--mode mmsg --count 4000 --sources 64" \
    '[ "$oor" = 0 ] && [ "$drops" = 0 ] && [ "$received" = 4000 ] && [ "$(key "$rline" shard_received | tr , "\n" | grep -c "^[1-9]")" = 2 ]' \
    wa-shards

# --peers: every datagram's sender looked up in a table read from a file and
# checked against the int at payload offset 4.  wa-sender's ports are
# ephemeral, so the file lists every port of 127.0.0.1; offset 4..7 of a
# datagram whose sequence number is below 100000 is "0000", the int
# 0x30303030 = 808464432, which is every listed peer's index.  Received on a
# dual socket the senders are IPv4-mapped and must be found as IPv4 peers.
seq 1 65535 | awk '{ print "127.0.0.1", $1, 808464432 }' >"$tmp/peers-all.txt"
seq 1 100 | awk 'BEGIN { print "# not the sender" } { print "127.9.9.9", $1, 7 }' >"$tmp/peers-other.txt"
run_pair peers-dual-recvmmsg-mapped \
    "--bind dual --method recvmmsg --batch 64 --count 5000 --drain --no-check --peers $tmp/peers-all.txt" \
    "--host 127.0.0.1 --mode gso --count 5000" \
    '[ "$drops" = 0 ] && [ "$received" = 5000 ] && [ "$(key "$rline" wrong_peer)" = 0 ]'
run_pair peers-recvfrom-not-listed \
    "--bind 127.0.0.1 --method recvfrom --count 2000 --peers $tmp/peers-other.txt" \
    "--host 127.0.0.1 --mode plain --count 2000" \
    '[ "$oor" = 0 ] && [ "$drops" = 0 ] && [ "$(key "$rline" wrong_peer)" = 2000 ]'
echo "== peers-bad-file"
printf '127.0.0.1 80 1\nnot-an-address 80 2\n' >"$tmp/peers-bad.txt"
timeout 10 "$bin/wa-recv" --count 10 --peers "$tmp/peers-bad.txt" >/dev/null 2>"$tmp/peers-bad.err"; rc=$?
timeout 10 "$bin/wa-recv" --count 10 --peers "$tmp/no-such-file" >/dev/null 2>&1; rc2=$?
if [ $rc = 1 ] && [ $rc2 = 1 ] && grep -q "peers-bad.txt:2" "$tmp/peers-bad.err"; then
    ok "peers-bad-file"
else
    bad "peers-bad-file" "exit $rc and $rc2: $(cat "$tmp/peers-bad.err")"
fi

# wa-fanout and wa-burst check every datagram at its destination themselves and exit 3 when one is missing or wrong:
# each method once, small, with the counts they report checked too
for args in "fanout sendto" "fanout sendmmsg"; do
    set -- $args
    echo "== fanout-$2"
    line=$(timeout 60 "$bin/wa-fanout" --dests 50 --ticks 20 --chunk 4 --method "$2" 2>"$tmp/fanout.err"); status=$?
    if [ "$status" = 0 ] && [ "$(key "$line" datagrams)" = 1000 ] && [ "$(key "$line" lost)" = 0 ] && [ "$(key "$line" wrong)" = 0 ]; then
        ok "fanout-$2"
    else
        bad "fanout-$2" "exit $status: $line $(cat "$tmp/fanout.err")"
    fi
done
for args in "8 gso" "8 sendmmsg" "64 gso" "64 sendmmsg"; do
    set -- $args
    echo "== burst-$1-$2"
    line=$(timeout 60 "$bin/wa-burst" --burst "$1" --count 1024 --method "$2" 2>"$tmp/burst.err"); status=$?
    if [ "$status" = 0 ] && [ "$(key "$line" datagrams)" = 1024 ] && [ "$(key "$line" lost)" = 0 ] && [ "$(key "$line" wrong)" = 0 ] \
        && [ "$(key "$line" burst)" = "$1" ] && [ "$(key "$line" cpu_ns)" -gt 0 ]; then
        ok "burst-$1-$2"
    else
        bad "burst-$1-$2" "exit $status: $line $(cat "$tmp/burst.err")"
    fi
done
# bad options are refused with exit 2
timeout 10 "$bin/wa-burst" --burst 65 --count 10 >/dev/null 2>&1; [ $? = 2 ] && ok "burst-refuses-65" || bad "burst-refuses-65" "not exit 2"

# wa-echo and wa-pingpong: every echo comes back and is checked by the client; wa-echo served exactly what the clients
# sent; a server that never answers shows as every client's datagram lost
start_server() {   # start_server NAME PROGRAM ARGS...: starts it with a ready file, sets recv_pid and port (empty on failure)
    local name=$1 prog=$2; shift 2
    local ready="$tmp/$name.ready"
    timeout 60 "$bin/$prog" "$@" --ready-file "$ready" >"$tmp/$name.sout" 2>"$tmp/$name.serr" &
    recv_pid=$!
    local i=0
    while [ ! -s "$ready" ] && [ $i -lt 100 ] && kill -0 "$recv_pid" 2>/dev/null; do
        sleep 0.05; i=$((i + 1))
    done
    port=$(cat "$ready" 2>/dev/null)
}
for clients in 1 50; do
    echo "== pingpong-$clients"
    start_server "echo$clients" wa-echo --cpu "$RCPU" --rcvbuf "$RCVBUF"
    line=$(timeout 60 "$bin/wa-pingpong" --port "${port:-1}" --clients "$clients" --millis 300 --cpu "$SCPU" 2>"$tmp/pingpong.err"); status=$?
    wait "$recv_pid"; estatus=$?; recv_pid=""
    served=$(cat "$tmp/echo$clients.sout")
    if [ "$status" = 0 ] && [ "$estatus" = 0 ] && [ "$(key "$line" lost)" = 0 ] && [ "$(key "$line" wrong)" = 0 ] \
        && [ "$(key "$line" echoes)" -gt 0 ] && [ "$(key "$served" echoes)" = "$(key "$line" sent)" ] && [ "$(key "$line" p50_ns)" -gt 0 ] \
        && [ "$(key "$served" cpu_ns)" -gt 0 ]; then
        ok "pingpong-$clients"
    else
        bad "pingpong-$clients" "exit $status/$estatus: $line / $served $(cat "$tmp/pingpong.err" "$tmp/echo$clients.serr")"
    fi
done
echo "== pingpong-lost"
start_server silent wa-recv --bind 127.0.0.1 --count 1000000 --idle-ms 1000 --max-seconds 10
line=$(timeout 60 "$bin/wa-pingpong" --port "${port:-1}" --clients 10 --millis 200 --grace-ms 200 --no-stop 2>"$tmp/pingpong.err"); status=$?
wait "$recv_pid" 2>/dev/null; recv_pid=""
if [ "$status" = 0 ] && [ "$(key "$line" lost)" = 10 ] && [ "$(key "$line" echoes)" = 0 ]; then
    ok "pingpong-lost"
else
    bad "pingpong-lost" "exit $status: $line $(cat "$tmp/pingpong.err")"
fi
timeout 10 "$bin/wa-pingpong" --port 1 --clients 0 >/dev/null 2>&1; [ $? = 2 ] && ok "pingpong-refuses-0-clients" || bad "pingpong-refuses-0-clients" "not exit 2"
timeout 10 "$bin/wa-echo" --port 70000 >/dev/null 2>&1; [ $? = 2 ] && ok "echo-refuses-port-70000" || bad "echo-refuses-port-70000" "not exit 2"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
