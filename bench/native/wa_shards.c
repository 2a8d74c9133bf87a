/*
 * wa-shards - the C receiver of the shard scenario.
 *
 * Opens N UDP sockets bound to one loopback address and port as a
 * SO_REUSEPORT group (Linux spreads the datagrams over them by a hash of
 * the sender's address and port), waits until every queue has stopped
 * growing (a sender filled them beforehand, from many source ports), then
 * drains all of them at once, one thread per socket, each pinned to its own
 * CPU.  Every datagram is checked as wa-recv checks it; one result line:
 *
 *   method=M batch=B shards=N received=R corrupt=C duplicate=D
 *   out_of_range=O seconds=T datagrams_per_s=X ns_per_datagram=Y
 *   rcvbuf_granted=G kernel_drops=K shard_received=R0,R1,...
 *
 * seconds runs from just before the first receive call of the first shard
 * to start to the return of the last call that got data, on any shard.
 * Exit 0 when it ran, 1 on a runtime error, 2 for bad options.  See README.md.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wa_common.h"
#include "wa_datagram.h"
#include "wa_stats.h"

#ifndef SO_REUSEPORT
#define SO_REUSEPORT 15
#endif

#define MAX_SHARDS 64
#define MAX_BATCH 1024
#define MAX_COUNT 100000000LL   /* one bitmap per shard: at most 12.5 MB each */
#define DRAIN_POLL_MS 5
#define DRAIN_SETTLE_MS 100

struct shard {
    int index;
    int fd;
    long long cpu;              /* < 0: not pinned */
    enum method method;
    size_t batch, size;
    uint8_t *data;
    struct iovec *iov;
    struct mmsghdr *msgs;
    struct stats st;            /* its own bitmap: merged after the drain */
    uint64_t t_start, t_last;   /* before its first call; return of its last call with data */
    uint64_t t_cap;
    int got_any;
    int error;                  /* errno of a failed receive, 0 if none */
    pthread_barrier_t *go;
    pthread_t thread;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: wa-shards --shards N --count N [options]\n"
        "  --shards N                 sockets in the SO_REUSEPORT group, 1..%d\n"
        "  --bind 127.0.0.1|::1       address (default 127.0.0.1)\n"
        "  --port P                   port, 0 = one no socket holds (default 0)\n"
        "  --method recvfrom|recvmmsg (default recvmmsg)\n"
        "  --batch B                  recvmmsg batch, 1..%d (default 64)\n"
        "  --count N                  expected datagrams in all, 1..%lld\n"
        "  --first-seq Q              first expected sequence number (default 0)\n"
        "  --size S                   buffer bytes per datagram, 1..65536 (default 2048)\n"
        "  --cpu K                    shard i on CPU (K + i) mod CPUs (K < 0: no pinning; default -1)\n"
        "  --rcvbuf BYTES             SO_RCVBUF to ask for on every socket (0 = leave; default 0)\n"
        "  --max-seconds S            overall time cap (default 60)\n"
        "  --ready-file PATH          write the bound port there once bound\n"
        "  --no-check                 do not validate datagrams, only count them\n",
        MAX_SHARDS, MAX_BATCH, MAX_COUNT);
}

/* Waits until the queues hold something and none of them (queued bytes,
 * drops) changed for DRAIN_SETTLE_MS.  0 settled, 1 at the cap, -1 error. */
static int wait_for_full_queues(struct shard *shards, int n, uint64_t t_cap)
{
    uint64_t last = 0, t_change = wa_now_ns();
    int first = 1;
    for (;;) {
        uint64_t sig = 0, total = 0;
        for (int i = 0; i < n; i++) {
            uint32_t rmem, drops;
            if (read_meminfo(shards[i].fd, &rmem, &drops) < 0)
                return -1;
            sig = sig * 1000003u + rmem * 31u + drops;
            total += rmem;
        }
        uint64_t now = wa_now_ns();
        if (first || sig != last) {
            last = sig;
            t_change = now;
            first = 0;
        } else if (total > 0 && now - t_change >= DRAIN_SETTLE_MS * 1000000ull) {
            return 0;
        }
        if (now >= t_cap)
            return 1;
        struct timespec pause = { 0, DRAIN_POLL_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
}

static void *drain(void *arg)
{
    struct shard *s = arg;
    if (s->cpu >= 0 && wa_pin_cpu(s->cpu) < 0)
        fprintf(stderr, "wa-shards: shard %d: sched_setaffinity(%lld): %s\n", s->index, s->cpu, strerror(errno));
    pthread_barrier_wait(s->go);
    s->t_start = wa_now_ns();
    for (;;) {
        int n;
        if (s->method == METHOD_RECVFROM) {
            ssize_t r = recvmsg(s->fd, &s->msgs[0].msg_hdr, MSG_DONTWAIT);
            if (r >= 0)
                s->msgs[0].msg_len = (unsigned)r;
            n = r >= 0 ? 1 : -1;
        } else {
            n = recvmmsg(s->fd, s->msgs, (unsigned)s->batch, MSG_DONTWAIT, NULL);
        }
        uint64_t now = wa_now_ns();
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                s->error = errno;
            break; /* an empty queue: this shard is drained */
        }
        s->got_any = 1;
        s->t_last = now;
        s->st.calls++;
        for (int i = 0; i < n; i++)
            account(&s->st, s->data + (size_t)i * s->size, s->msgs[i].msg_len, s->msgs[i].msg_hdr.msg_flags);
        if (now >= s->t_cap)
            break;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct receiver_options opt = receiver_defaults();
    long long nshards = -1;

    static const struct option opts[] = {
        { "shards", required_argument, NULL, 'S' },
        RECEIVER_OPTIONS,
        { "help", no_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 }
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int bad = receiver_option(&opt, o, optarg, NULL, MAX_BATCH, MAX_COUNT);
        if (bad < 0) {
            bad = 0;
            switch (o) {
            case 'S': bad = wa_parse_i64(optarg, 1, MAX_SHARDS, &nshards); break;
            case 'H': usage(stdout); return 0;
            default: usage(stderr); return 2;
            }
        }
        if (bad)
            return wa_reject_option("wa-shards", opts, o, optarg, usage);
    }
    if (optind != argc || opt.count < 0 || nshards < 0)
        return wa_missing_options("wa-shards", "--shards and --count are", usage);
    if (opt.method == METHOD_RECVFROM)
        opt.batch = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;

    /* ---- the group ---- */
    struct sockaddr_storage addr;
    int family = strcmp(opt.bind_to, "127.0.0.1") == 0 ? AF_INET : AF_INET6;
    socklen_t alen = wa_loopback(&addr, family, 0);
    if (opt.port == 0) {
        /* Linux may give a SO_REUSEPORT socket that binds port 0 a port
         * another such socket holds; a socket without it gets a free one. */
        int probe = socket(family, SOCK_DGRAM, 0);
        if (probe < 0 || bind(probe, (struct sockaddr *)&addr, alen) < 0) {
            perror("wa-shards: reserving a port");
            return 1;
        }
        unsigned reserved = 0; /* a failed getsockname leaves 0 */
        (void)wa_bound_port(probe, family, &reserved);
        opt.port = reserved;
        close(probe);
    }
    alen = wa_loopback(&addr, family, (unsigned)opt.port);

    static struct shard shards[MAX_SHARDS];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)nshards + 1);
    int granted = 0;
    size_t nb = (size_t)opt.batch, sz = (size_t)opt.size;
    const uint64_t t_cap = wa_now_ns() + (uint64_t)opt.max_seconds * 1000000000ull;
    for (int i = 0; i < nshards; i++) {
        struct shard *s = &shards[i];
        s->index = i;
        s->method = opt.method;
        s->batch = nb;
        s->size = sz;
        s->cpu = opt.cpu < 0 ? -1 : (opt.cpu + i) % cpus;
        s->go = &go;
        s->t_cap = t_cap;
        s->fd = socket(family, SOCK_DGRAM, 0);
        int one = 1;
        if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
            perror("wa-shards: socket / SO_REUSEPORT");
            return 1;
        }
        if (opt.rcvbuf > 0) {
            int v = (int)opt.rcvbuf;
            if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0) {
                perror("wa-shards: setsockopt(SO_RCVBUF)");
                return 1;
            }
        }
        socklen_t glen = sizeof(granted);
        if (getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &granted, &glen) < 0) {
            perror("wa-shards: getsockopt(SO_RCVBUF)");
            return 1;
        }
        if (bind(s->fd, (struct sockaddr *)&addr, alen) < 0) {
            perror("wa-shards: bind");
            return 1;
        }
        /* buffers, touched now rather than during the measurement */
        s->st.first_seq = opt.first_seq;
        s->st.count = (uint64_t)opt.count;
        s->st.no_check = opt.no_check;
        s->st.seen = calloc((size_t)((opt.count + 7) / 8), 1);
        s->data = malloc(nb * sz);
        s->iov = calloc(nb, sizeof(*s->iov));
        s->msgs = calloc(nb, sizeof(*s->msgs));
        if (!s->st.seen || !s->data || !s->iov || !s->msgs) {
            fprintf(stderr, "wa-shards: out of memory\n");
            return 1;
        }
        memset(s->st.seen, 0, (size_t)((opt.count + 7) / 8));
        memset(s->data, 0, nb * sz);
        for (size_t k = 0; k < nb; k++) {
            s->iov[k].iov_base = s->data + k * sz;
            s->iov[k].iov_len = sz;
            s->msgs[k].msg_hdr.msg_iov = &s->iov[k];
            s->msgs[k].msg_hdr.msg_iovlen = 1;
        }
        if (pthread_create(&s->thread, NULL, drain, s) != 0) {
            fprintf(stderr, "wa-shards: pthread_create failed\n");
            return 1;
        }
    }
    fprintf(stderr, "wa-shards: SO_RCVBUF asked=%lld granted=%d\n", opt.rcvbuf, granted);
    fprintf(stderr, "port=%u\n", (unsigned)opt.port);
    if (opt.ready_file && wa_write_ready_file(opt.ready_file, (unsigned)opt.port) < 0) {
        fprintf(stderr, "wa-shards: cannot write %s: %s\n", opt.ready_file, strerror(errno));
        return 1;
    }

    int w = wait_for_full_queues(shards, (int)nshards, t_cap);
    if (w < 0) {
        perror("wa-shards: getsockopt(SO_MEMINFO)");
        return 1;
    }
    if (w > 0)
        fprintf(stderr, "wa-shards: the queues did not settle before --max-seconds\n");

    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    pthread_barrier_wait(&go);
    for (int i = 0; i < nshards; i++)
        pthread_join(shards[i].thread, NULL);
    getrusage(RUSAGE_SELF, &ru1);

    /* ---- merge the shards ---- */
    struct stats all;
    memset(&all, 0, sizeof(all));
    uint64_t t_start = 0, t_last = 0, drops = 0;
    size_t bytes = (size_t)((opt.count + 7) / 8);
    char per_shard[MAX_SHARDS * 21 + 1];
    size_t used = 0;
    per_shard[0] = '\0';
    for (int i = 0; i < nshards; i++) {
        struct shard *s = &shards[i];
        if (s->error) {
            fprintf(stderr, "wa-shards: shard %d: receive: %s\n", i, strerror(s->error));
            return 1;
        }
        all.received += s->st.received;
        all.corrupt += s->st.corrupt;
        all.out_of_range += s->st.out_of_range;
        all.duplicate += s->st.duplicate;
        all.calls += s->st.calls;
        if (i > 0) {
            /* a sequence seen by two shards is a duplicate too */
            for (size_t b = 0; b < bytes; b++) {
                all.duplicate += (uint64_t)__builtin_popcount(shards[0].st.seen[b] & s->st.seen[b]);
                shards[0].st.seen[b] |= s->st.seen[b];
            }
        }
        if (t_start == 0 || s->t_start < t_start)
            t_start = s->t_start;
        if (s->got_any && s->t_last > t_last)
            t_last = s->t_last;
        uint32_t rmem, d;
        if (read_meminfo(s->fd, &rmem, &d) == 0)
            drops += d;
        used += (size_t)snprintf(per_shard + used, sizeof(per_shard) - used, "%s%llu", i ? "," : "",
                                 (unsigned long long)s->st.received);
        /* signed: a later shard may start before shard 0 */
        fprintf(stderr, "wa-shards: shard %d cpu=%lld received=%llu calls=%llu started_ns=%lld drained_ns=%llu\n", i, s->cpu,
                (unsigned long long)s->st.received, (unsigned long long)s->st.calls,
                (long long)s->t_start - (long long)shards[0].t_start, (unsigned long long)(s->got_any ? s->t_last - s->t_start : 0));
    }

    report_cpu("wa-shards", &ru0, &ru1, all.received);
    fprintf(stderr, "wa-shards: stopped by drained; calls=%llu datagrams_per_call=%.2f\n",
            (unsigned long long)all.calls, all.calls ? (double)all.received / (double)all.calls : 0.0);

    double seconds = t_last > t_start ? (double)(t_last - t_start) / 1e9 : 0.0;
    double per_s, ns_per;
    rates(seconds, all.received, &per_s, &ns_per);
    printf("method=%s batch=%lld shards=%lld received=%llu corrupt=%llu duplicate=%llu "
           "out_of_range=%llu seconds=%.6f datagrams_per_s=%.0f ns_per_datagram=%.1f "
           "rcvbuf_granted=%d kernel_drops=%llu shard_received=%s\n",
           opt.method == METHOD_RECVFROM ? "recvfrom" : "recvmmsg", opt.batch, nshards,
           (unsigned long long)all.received, (unsigned long long)all.corrupt,
           (unsigned long long)all.duplicate, (unsigned long long)all.out_of_range,
           seconds, per_s, ns_per, granted, (unsigned long long)drops, per_shard);
    for (int i = 0; i < nshards; i++)
        close(shards[i].fd);
    return 0;
}
