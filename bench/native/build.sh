#!/bin/sh
# Builds the C reference programs into bench/native/build/.
# Usage: bench/native/build.sh   (CC and EXTRA_CFLAGS may be set)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out="$here/build"
cc=${CC:-cc}
flags="-std=gnu11 -O2 -Wall -Wextra -Werror ${EXTRA_CFLAGS:-}"

mkdir -p "$out"
for prog in wa-sender:wa_sender.c wa-recv:wa_recv.c wa-shards:wa_shards.c wa-vectors:wa_vectors.c wa-fanout:wa_fanout.c wa-burst:wa_burst.c wa-echo:wa_echo.c wa-pingpong:wa_pingpong.c; do
    name=${prog%%:*}
    src=${prog#*:}
    # shellcheck disable=SC2086  # flags is a word list on purpose
    if ! $cc $flags -o "$out/$name" "$here/$src" -pthread; then
        echo "build.sh: failed to build $name" >&2
        exit 1
    fi
    echo "$out/$name"
done
