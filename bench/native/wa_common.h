/*
 * wa_common.h - small helpers shared by wa-sender, wa-recv and wa-shards:
 * strict number parsing, option errors, CPU pinning, the monotonic clock,
 * loopback addresses and the ready file.
 */
#ifndef WA_COMMON_H
#define WA_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Parses a whole decimal string into *out.  Returns 0 on success, -1 if
 * the text is empty, has trailing junk, or lies outside [lo, hi]. */
static inline int wa_parse_i64(const char *s, long long lo, long long hi,
                               long long *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Same for values that need the full unsigned 64-bit range. */
static inline int wa_parse_u64(const char *s, unsigned long long hi,
                               unsigned long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1; /* strtoull would accept "-1" and a leading blank */
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Reports a bad option value the same way in every program:
 * "<prog>: bad value for --<name>: <value>" on stderr, where <name> is the
 * long option of opts whose val is `val`. */
static inline void wa_bad_option(const char *prog, const struct option *opts,
                                 int val, const char *value)
{
    const char *name = "?";
    for (const struct option *x = opts; x->name; x++)
        if (x->val == val)
            name = x->name;
    fprintf(stderr, "%s: bad value for --%s: %s\n", prog, name, value);
}

/* wa_bad_option followed by the usage on stderr.  Returns 2, the exit code
 * for bad options. */
static inline int wa_reject_option(const char *prog, const struct option *opts,
                                   int val, const char *value,
                                   void (*usage)(FILE *))
{
    wa_bad_option(prog, opts, val, value);
    usage(stderr);
    return 2;
}

/* Reports missing required options ("<prog>: <what> required") and the
 * usage on stderr.  Returns 2. */
static inline int wa_missing_options(const char *prog, const char *what,
                                     void (*usage)(FILE *))
{
    fprintf(stderr, "%s: %s required\n", prog, what);
    usage(stderr);
    return 2;
}

/* Pins the calling thread to CPU k; k < 0 means "do not pin".
 * Returns 0 on success or when not asked, -1 on failure (errno set). */
static inline int wa_pin_cpu(long long k)
{
    if (k < 0)
        return 0;
    if (k >= CPU_SETSIZE) {
        errno = EINVAL;
        return -1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)k, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

/* wa_pin_cpu, reporting a failure as "<prog>: sched_setaffinity(k): ..."
 * on stderr.  Returns 0 or -1. */
static inline int wa_pin_cpu_or_report(const char *prog, long long k)
{
    if (wa_pin_cpu(k) == 0)
        return 0;
    fprintf(stderr, "%s: sched_setaffinity(%lld): %s\n", prog, k, strerror(errno));
    return -1;
}

static inline uint64_t wa_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time the calling thread has used, in ns (CLOCK_THREAD_CPUTIME_ID). */
static inline uint64_t wa_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleeps until the CLOCK_MONOTONIC time t_ns (absolute). */
static inline void wa_sleep_until_ns(uint64_t t_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t_ns / 1000000000ull);
    ts.tv_nsec = (long)(t_ns % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Fills *addr with the loopback address of family (AF_INET: 127.0.0.1,
 * otherwise ::1) and port.  Returns the length of the address. */
static inline socklen_t wa_loopback(struct sockaddr_storage *addr, int family,
                                    unsigned port)
{
    memset(addr, 0, sizeof(*addr));
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)addr;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sizeof(*a);
    }
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    a->sin6_addr = in6addr_loopback;
    return sizeof(*a);
}

/* The local port socket fd of family is bound to, into *port.  Returns 0,
 * or -1 if getsockname failed (errno set, *port unchanged). */
static inline int wa_bound_port(int fd, int family, unsigned *port)
{
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) < 0)
        return -1;
    *port = family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port)
                              : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    return 0;
}

/* Writes port as decimal text to path: a temporary file first, then a
 * rename, so a reader never sees a half-written number.  Returns 0, or -1
 * (errno set). */
static inline int wa_write_ready_file(const char *path, unsigned port)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return -1;
    }
    int bad = fprintf(f, "%u", port) < 0;
    bad |= fclose(f) != 0;
    if (!bad)
        bad = rename(tmp, path) != 0;
    if (bad)
        unlink(tmp);
    free(tmp);
    return bad ? -1 : 0;
}

#endif /* WA_COMMON_H */
