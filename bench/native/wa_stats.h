/*
 * wa_stats.h - what a receiver counts per datagram, shared by wa-recv and
 * wa-shards: every datagram read is checked (wa_check), its sequence must lie
 * in the expected range, and a bitmap of that range tells duplicates apart.
 */
#ifndef WA_STATS_H
#define WA_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "wa_datagram.h"

struct stats {
    uint64_t first_seq;   /* valid range is [first_seq, first_seq + count) */
    uint64_t count;
    uint8_t *seen;        /* bitmap, count bits */
    uint64_t received;    /* every datagram read from the socket */
    uint64_t corrupt;     /* truncated or failed wa_check */
    uint64_t duplicate;   /* valid, in range, already seen */
    uint64_t out_of_range;
    uint64_t unique;      /* valid, in range, first time */
    uint32_t drops_cmsg;  /* SO_RXQ_OVFL value of the last datagram */
    uint64_t calls;       /* receive calls that returned datagrams */
    int no_check;         /* --no-check: count only (truncation still counts as corrupt) */
};

static inline void account(struct stats *st, const uint8_t *buf, size_t len,
                           int flags)
{
    st->received++;
    if (st->no_check) {
        if (flags & MSG_TRUNC)
            st->corrupt++;
        else
            st->unique++;
        return;
    }
    uint64_t seq;
    if ((flags & MSG_TRUNC) || wa_check(buf, len, &seq) != WA_OK) {
        st->corrupt++;
        return;
    }
    if (seq < st->first_seq || seq - st->first_seq >= st->count) {
        st->out_of_range++;
        return;
    }
    uint64_t i = seq - st->first_seq;
    uint8_t bit = (uint8_t)(1u << (i & 7));
    if (st->seen[i >> 3] & bit) {
        st->duplicate++;
    } else {
        st->seen[i >> 3] |= bit;
        st->unique++;
    }
}

#endif /* WA_STATS_H */
