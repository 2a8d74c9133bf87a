/*
 * wa_stats.h - what a receiver counts per datagram, shared by wa-recv and
 * wa-shards: every datagram read is checked (wa_check), its sequence must lie
 * in the expected range, and a bitmap of that range tells duplicates apart.
 * Also what the receivers share besides: their common options, SO_MEMINFO, CPU
 * time and rates.
 */
#ifndef WA_STATS_H
#define WA_STATS_H

#include <getopt.h>
#include <limits.h>
#include <linux/sock_diag.h> /* SK_MEMINFO_DROPS */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "wa_common.h"
#include "wa_datagram.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

enum method { METHOD_RECVFROM, METHOD_RECVMMSG };

/* The options wa-recv and wa-shards both take, with their defaults. */
struct receiver_options {
    const char *bind_to;        /* --bind: 127.0.0.1, ::1, or the program's extra value */
    const char *ready_file;     /* NULL: none */
    enum method method;
    long long port, batch, count, size, cpu, rcvbuf, max_seconds;
    unsigned long long first_seq;
    int no_check;
};

static inline struct receiver_options receiver_defaults(void)
{
    struct receiver_options r = {
        .bind_to = "127.0.0.1", .ready_file = NULL, .method = METHOD_RECVMMSG,
        .port = 0, .batch = 64, .count = -1, .size = 2048, .cpu = -1,
        .rcvbuf = 0, .max_seconds = 60, .first_seq = 0, .no_check = 0,
    };
    return r;
}

/* Their getopt_long entries, for the programs' option tables. */
#define RECEIVER_OPTIONS \
    { "bind", required_argument, NULL, 'b' }, \
    { "port", required_argument, NULL, 'p' }, \
    { "method", required_argument, NULL, 'm' }, \
    { "batch", required_argument, NULL, 'B' }, \
    { "count", required_argument, NULL, 'n' }, \
    { "first-seq", required_argument, NULL, 'q' }, \
    { "size", required_argument, NULL, 's' }, \
    { "cpu", required_argument, NULL, 'c' }, \
    { "rcvbuf", required_argument, NULL, 'r' }, \
    { "max-seconds", required_argument, NULL, 'x' }, \
    { "ready-file", required_argument, NULL, 'f' }, \
    { "no-check", no_argument, NULL, 'N' }

/* Takes option o with value arg into *r if it is one of RECEIVER_OPTIONS
 * (--bind also accepts extra_bind unless it is NULL; --batch goes up to
 * max_batch, --count up to max_count).  Returns 0 when taken, 1 when taken
 * but the value is bad, -1 when o is not one of them. */
static inline int receiver_option(struct receiver_options *r, int o, const char *arg,
                                  const char *extra_bind, long long max_batch,
                                  long long max_count)
{
    switch (o) {
    case 'b':
        r->bind_to = arg;
        return strcmp(arg, "127.0.0.1") != 0 && strcmp(arg, "::1") != 0 &&
               (extra_bind == NULL || strcmp(arg, extra_bind) != 0);
    case 'p': return wa_parse_i64(arg, 0, 65535, &r->port) != 0;
    case 'm':
        if (strcmp(arg, "recvfrom") == 0) r->method = METHOD_RECVFROM;
        else if (strcmp(arg, "recvmmsg") == 0) r->method = METHOD_RECVMMSG;
        else return 1;
        return 0;
    case 'B': return wa_parse_i64(arg, 1, max_batch, &r->batch) != 0;
    case 'n': return wa_parse_i64(arg, 1, max_count, &r->count) != 0;
    case 'q': return wa_parse_u64(arg, WA_MAX_SEQ, &r->first_seq) != 0;
    case 's': return wa_parse_i64(arg, 1, 65536, &r->size) != 0;
    case 'c': return wa_parse_i64(arg, LLONG_MIN, LLONG_MAX, &r->cpu) != 0;
    case 'r': return wa_parse_i64(arg, 0, INT_MAX, &r->rcvbuf) != 0;
    case 'x': return wa_parse_i64(arg, 1, 86400, &r->max_seconds) != 0;
    case 'f': r->ready_file = arg; return 0;
    case 'N': r->no_check = 1; return 0;
    default: return -1;
    }
}

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
