/*
 * wa_common.h - small helpers shared by wa-sender and wa-recv:
 * strict number parsing, option errors, CPU pinning and the monotonic clock.
 */
#ifndef WA_COMMON_H
#define WA_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Sleeps until the CLOCK_MONOTONIC time t_ns (absolute). */
static inline void wa_sleep_until_ns(uint64_t t_ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t_ns / 1000000000ull);
    ts.tv_nsec = (long)(t_ns % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

#endif /* WA_COMMON_H */
