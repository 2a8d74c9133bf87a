/*
 * wa-pingpong - the clients of the ping-pong benchmark: N client sockets on
 * one thread (epoll), each with one datagram in flight to an echo server.
 * When a client's echo comes back it checks it (its own index and the
 * sequence number it sent), records the round trip, and sends the next.
 * After --millis it stops sending, waits up to --grace-ms for the echoes
 * still in flight, sends the 4-byte datagram "STOP" to the server (unless
 * --no-stop), and prints one line:
 *
 *   clients=N millis=T echoes=E sent=S lost=L wrong=W p50_ns=.. p99_ns=.. p999_ns=.. max_ns=..
 *
 * echoes counts the round trips completed within --millis (the rate is
 * echoes / millis); lost = datagrams sent whose echo never came; wrong =
 * echoes whose bytes were not what that client sent (the caller judges
 * both: the exit code is 0 whenever the run itself worked). The round trip
 * is from just before send to just after the echo's recv, on this thread.
 *
 * --start-delay-ms D waits D ms after the sockets are set up before the
 * first send (time for a tracer to attach to the server after this
 * process was started, so that it does not follow this one).
 *
 * Usage: wa-pingpong --port P [--family 4|6] [--clients N] [--millis T]
 *                    [--size S] [--cpu K] [--grace-ms G] [--start-delay-ms D]
 *                    [--no-stop]
 */
#define _GNU_SOURCE
#include "wa_common.h"

#include <sys/epoll.h>

static const char *prog = "wa-pingpong";

#define MAGIC 0x57415050u /* "WAPP" */
#define MAX_CLIENTS 4096
#define MAX_SAMPLES (16u * 1024u * 1024u)

struct client {
    int fd;
    uint64_t seq;      /* sequence of the datagram in flight */
    uint64_t sent_ns;  /* when it was sent */
    int in_flight;
};

struct header {
    uint32_t magic;
    uint32_t index;
    uint64_t seq;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: %s --port P [--family 4|6] [--clients N] [--millis T] [--size S] [--cpu K] [--grace-ms G] [--start-delay-ms D] [--no-stop]\n", prog);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t percentile(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

static int send_next(struct client *c, uint32_t index, unsigned char *buffer, size_t size)
{
    struct header h = {MAGIC, index, c->seq};
    memcpy(buffer, &h, sizeof(h));
    c->sent_ns = wa_now_ns();
    for (;;) {
        ssize_t n = send(c->fd, buffer, size, 0);
        if (n == (ssize_t)size) {
            c->in_flight = 1;
            return 0;
        }
        if (n < 0 && errno == EINTR)
            continue;
        fprintf(stderr, "%s: send: %s\n", prog, n < 0 ? strerror(errno) : "short send");
        return -1;
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"port", required_argument, 0, 'p'},
        {"family", required_argument, 0, 'f'},
        {"clients", required_argument, 0, 'n'},
        {"millis", required_argument, 0, 't'},
        {"size", required_argument, 0, 's'},
        {"cpu", required_argument, 0, 'c'},
        {"grace-ms", required_argument, 0, 'g'},
        {"start-delay-ms", required_argument, 0, 'd'},
        {"no-stop", no_argument, 0, 'x'},
        {0, 0, 0, 0},
    };
    long long port = -1, family = 4, clients = 1, millis = 1000, size = 64, cpu = -1, grace = 2000, delay = 0;
    int stop = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (wa_parse_i64(optarg, 1, 65535, &port) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'f':
            if (wa_parse_i64(optarg, 4, 6, &family) < 0 || family == 5)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'n':
            if (wa_parse_i64(optarg, 1, MAX_CLIENTS, &clients) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 't':
            if (wa_parse_i64(optarg, 1, 600000, &millis) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 's':
            if (wa_parse_i64(optarg, (long long)sizeof(struct header), 1400, &size) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'c':
            if (wa_parse_i64(optarg, -1, CPU_SETSIZE - 1, &cpu) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'g':
            if (wa_parse_i64(optarg, 0, 60000, &grace) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'd':
            if (wa_parse_i64(optarg, 0, 60000, &delay) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'x':
            stop = 0;
            break;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "%s: unexpected argument %s\n", prog, argv[optind]);
        usage(stderr);
        return 2;
    }
    if (port < 0)
        return wa_missing_options(prog, "--port", usage);
    if (wa_pin_cpu_or_report(prog, cpu) < 0)
        return 1;

    int af = family == 4 ? AF_INET : AF_INET6;
    struct sockaddr_storage server, local;
    socklen_t slen = wa_loopback(&server, af, (unsigned)port);
    int ep = epoll_create1(0);
    struct client *cl = calloc((size_t)clients, sizeof(*cl));
    uint64_t *samples = malloc(MAX_SAMPLES * sizeof(uint64_t));
    if (ep < 0 || !cl || !samples) {
        fprintf(stderr, "%s: setup: %s\n", prog, strerror(errno));
        return 1;
    }
    for (long long i = 0; i < clients; i++) {
        int fd = socket(af, SOCK_DGRAM, 0);
        socklen_t llen = wa_loopback(&local, af, 0);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (fd < 0 || bind(fd, (struct sockaddr *)&local, llen) < 0 || connect(fd, (struct sockaddr *)&server, slen) < 0
            || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
            fprintf(stderr, "%s: client socket %lld: %s\n", prog, i, strerror(errno));
            return 1;
        }
        cl[i].fd = fd;
    }

    unsigned char out[1400], in[2048];
    memset(out, 'p', sizeof(out));
    uint64_t echoes = 0, sent = 0, wrong = 0, received = 0;
    size_t nsamples = 0;
    if (delay > 0)
        wa_sleep_until_ns(wa_now_ns() + (uint64_t)delay * 1000000ull);
    uint64_t start = wa_now_ns();
    uint64_t end = start + (uint64_t)millis * 1000000ull;
    for (long long i = 0; i < clients; i++) {
        if (send_next(&cl[i], (uint32_t)i, out, (size_t)size) < 0)
            return 1;
        sent++;
    }
    int sending = 1;
    uint64_t deadline = end;
    struct epoll_event events[256];
    for (;;) {
        uint64_t now = wa_now_ns();
        if (sending && now >= end) {
            sending = 0;
            deadline = now + (uint64_t)grace * 1000000ull;
        }
        if (!sending && (received == sent || now >= deadline))
            break;
        int timeout = (int)((( sending ? end : deadline) - now) / 1000000ull) + 1;
        int ready = epoll_wait(ep, events, 256, timeout);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "%s: epoll_wait: %s\n", prog, strerror(errno));
            return 1;
        }
        for (int k = 0; k < ready; k++) {
            uint32_t i = events[k].data.u32;
            struct client *x = &cl[i];
            for (;;) {
                ssize_t n = recv(x->fd, in, sizeof(in), MSG_DONTWAIT);
                if (n < 0) {
                    if (errno == EAGAIN || errno == EINTR)
                        break;
                    fprintf(stderr, "%s: recv: %s\n", prog, strerror(errno));
                    return 1;
                }
                uint64_t t = wa_now_ns();
                struct header h;
                if (n != size || (memcpy(&h, in, sizeof(h)), h.magic != MAGIC || h.index != i || !x->in_flight || h.seq != x->seq)
                    || memcmp(in + sizeof(h), out + sizeof(h), (size_t)size - sizeof(h)) != 0) {
                    wrong++;
                    continue;
                }
                x->in_flight = 0;
                received++;
                if (t <= end) {
                    echoes++;
                    if (nsamples < MAX_SAMPLES)
                        samples[nsamples++] = t - x->sent_ns;
                }
                if (sending && t < end) {
                    x->seq++;
                    if (send_next(x, i, out, (size_t)size) < 0)
                        return 1;
                    sent++;
                }
            }
        }
    }
    if (stop) {
        for (;;) {
            ssize_t n = send(cl[0].fd, "STOP", 4, 0);
            if (n == 4)
                break;
            if (n < 0 && errno == EINTR)
                continue;
            fprintf(stderr, "%s: send STOP: %s\n", prog, n < 0 ? strerror(errno) : "short send");
            return 1;
        }
    }
    qsort(samples, nsamples, sizeof(uint64_t), cmp_u64);
    printf("clients=%lld millis=%lld echoes=%llu sent=%llu lost=%llu wrong=%llu p50_ns=%llu p99_ns=%llu p999_ns=%llu max_ns=%llu\n",
           clients, millis, (unsigned long long)echoes, (unsigned long long)sent, (unsigned long long)(sent - received),
           (unsigned long long)wrong, (unsigned long long)percentile(samples, nsamples, 0.50),
           (unsigned long long)percentile(samples, nsamples, 0.99), (unsigned long long)percentile(samples, nsamples, 0.999),
           (unsigned long long)(nsamples ? samples[nsamples - 1] : 0));
    return 0;
}
