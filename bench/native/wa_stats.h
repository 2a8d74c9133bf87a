/*
 * wa_stats.h - what a receiver counts per datagram, shared by wa-recv and
 * wa-shards: every datagram read is checked (wa_check), its sequence must lie
 * in the expected range, and a bitmap of that range tells duplicates apart.
 * Also the receivers' shared readings: SO_MEMINFO, CPU time and rates.
 */
#ifndef WA_STATS_H
#define WA_STATS_H

#include <linux/sock_diag.h> /* SK_MEMINFO_DROPS */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "wa_datagram.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

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

/* Reads the socket's SO_MEMINFO counters (queued bytes, drops); returns 0
 * on success, -1 on failure. */
static inline int read_meminfo(int fd, uint32_t *rmem, uint32_t *drops)
{
    uint32_t m[SK_MEMINFO_VARS];
    socklen_t len = sizeof(m);
    memset(m, 0, sizeof(m));
    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, m, &len) < 0 ||
        len < (SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))
        return -1;
    *rmem = m[SK_MEMINFO_RMEM_ALLOC];
    *drops = m[SK_MEMINFO_DROPS];
    return 0;
}

/* Prints the CPU time spent between two getrusage samples as
 * "<prog>: cpu user=U sys=S cpu_ns_per_datagram=X" on stderr. */
static inline void report_cpu(const char *prog, const struct rusage *ru0,
                              const struct rusage *ru1, uint64_t received)
{
    double cpu_user = (double)(ru1->ru_utime.tv_sec - ru0->ru_utime.tv_sec) +
                      (double)(ru1->ru_utime.tv_usec - ru0->ru_utime.tv_usec) / 1e6;
    double cpu_sys = (double)(ru1->ru_stime.tv_sec - ru0->ru_stime.tv_sec) +
                     (double)(ru1->ru_stime.tv_usec - ru0->ru_stime.tv_usec) / 1e6;
    fprintf(stderr, "%s: cpu user=%.6f sys=%.6f cpu_ns_per_datagram=%.1f\n",
            prog, cpu_user, cpu_sys,
            received ? (cpu_user + cpu_sys) * 1e9 / (double)received : 0.0);
}

/* Datagrams per second and nanoseconds per datagram over seconds; both 0
 * when nothing was received or no time passed. */
static inline void rates(double seconds, uint64_t received, double *per_s,
                         double *ns_per)
{
    *per_s = 0.0;
    *ns_per = 0.0;
    if (seconds > 0.0 && received > 0) {
        *per_s = (double)received / seconds;
        *ns_per = seconds * 1e9 / (double)received;
    }
}

#endif /* WA_STATS_H */
