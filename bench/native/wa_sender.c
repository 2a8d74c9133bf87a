/*
 * wa-sender - sends N datagrams in the wa_datagram.h format to a loopback
 * address as fast as possible (or at a given rate).
 *
 * Modes:
 *   gso   sendmmsg; every message carries up to 64 datagrams of the same
 *         size as one buffer, cut into segments by the kernel (UDP_SEGMENT
 *         cmsg, Linux UDP GSO).  Falls back to mmsg if the kernel refuses.
 *   mmsg  sendmmsg with batches of 64 plain datagrams.
 *   plain one sendto per datagram.
 *
 * The socket is connected to the destination in every mode (a connected
 * UDP socket skips the route lookup per send), so sendto gets no address.
 * With --sources K there are K such sockets, each on its own source port,
 * taking turns: a SO_REUSEPORT receiver group (wa-shards) spreads senders
 * by their address and port, so one socket would reach one shard only.
 *
 * A datagram is never skipped: ENOBUFS, EAGAIN and EINTR are retried after
 * sched_yield().  If no datagram at all could be sent for 10 seconds the
 * program gives up with exit code 1 so that it always ends.
 *
 * Output: one line on stdout, "sent=N seconds=T mode=M", exit 0.
 * Exit 1 on a runtime error, 2 on bad options.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wa_common.h"
#include "wa_datagram.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define MMSG_BATCH 64          /* datagrams per sendmmsg in mmsg mode */
#define GSO_MAX_SEGS 64        /* datagrams per GSO message */
#define GSO_MSGS 8             /* GSO messages per sendmmsg */
#define GSO_MAX_BYTES 65507    /* largest UDP payload over IPv4, < 64 KiB */
#define STALL_LIMIT_NS (10ull * 1000000000ull)
#define MAX_SOURCES 1024

enum mode { MODE_GSO, MODE_MMSG, MODE_PLAIN };
static const char *const mode_names[] = { "gso", "mmsg", "plain" };

struct sender {
    int fd;                                /* the socket sending now */
    int fds[MAX_SOURCES];                  /* --sources: one socket per source port */
    size_t sources, next_source;
    size_t size;
    enum mode mode;
    uint64_t last_progress_ns;

    /* plain */
    uint8_t *one;

    /* mmsg */
    uint8_t *mbuf;                         /* MMSG_BATCH * size bytes */
    struct iovec miov[MMSG_BATCH];
    struct mmsghdr mhdr[MMSG_BATCH];

    /* gso */
    size_t segs_per_msg;
    uint8_t *gbuf;                         /* GSO_MSGS * segs * size bytes */
    struct iovec giov[GSO_MSGS];
    struct mmsghdr ghdr[GSO_MSGS];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } gctl[GSO_MSGS];
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: wa-sender --port P --count N [options]\n"
        "  --host 127.0.0.1|::1   destination (default 127.0.0.1)\n"
        "  --port P               destination port (1..65535)\n"
        "  --count N              number of datagrams to send\n"
        "  --size S               datagram size, %d..%d (default 64)\n"
        "  --cpu K                pin to CPU K (K < 0: do not pin; default -1)\n"
        "  --mode gso|mmsg|plain  send method (default gso)\n"
        "  --first-seq Q          first sequence number (default 0)\n"
        "  --rate R               datagrams per second, 0 = unlimited (default 0)\n"
        "  --sources K            K sockets (source ports) taking turns, 1..%d (default 1)\n",
        WA_MIN_SIZE, WA_MAX_SIZE, MAX_SOURCES);
}

/* Called after a failed send.  Returns 0 if the error is transient and the
 * send should be retried, -1 if it is fatal (message already printed). */
static int retry_or_fail(struct sender *s, const char *what)
{
    int e = errno;
    if (e == ENOBUFS || e == EAGAIN || e == EWOULDBLOCK || e == EINTR) {
        if (wa_now_ns() - s->last_progress_ns > STALL_LIMIT_NS) {
            fprintf(stderr, "wa-sender: %s: no progress for 10 s (%s), giving up\n",
                    what, strerror(e));
            return -1;
        }
        sched_yield();
        return 0;
    }
    fprintf(stderr, "wa-sender: %s: %s\n", what, strerror(e));
    return -1;
}

static int send_plain(struct sender *s, uint64_t seq, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wa_fill(s->one, s->size, seq + i);
        for (;;) {
            ssize_t r = sendto(s->fd, s->one, s->size, 0, NULL, 0);
            if (r >= 0)
                break;
            if (retry_or_fail(s, "sendto") < 0)
                return -1;
        }
        s->last_progress_ns = wa_now_ns();
    }
    return 0;
}

static int send_mmsg(struct sender *s, uint64_t seq, size_t n)
{
    while (n > 0) {
        size_t k = n < MMSG_BATCH ? n : MMSG_BATCH;
        for (size_t i = 0; i < k; i++)
            wa_fill(s->mbuf + i * s->size, s->size, seq + i);
        size_t done = 0;
        while (done < k) {
            int r = sendmmsg(s->fd, s->mhdr + done, (unsigned)(k - done), 0);
            if (r > 0) {
                done += (size_t)r;
                s->last_progress_ns = wa_now_ns();
                continue;
            }
            if (r == 0)
                errno = EAGAIN; /* not expected; treat as "try again" */
            if (retry_or_fail(s, "sendmmsg") < 0)
                return -1;
        }
        seq += k;
        n -= k;
    }
    return 0;
}

/* Returns 0 on success, -1 on a fatal error, -2 if the kernel refused the
 * very first GSO send (then nothing of this call was sent). */
static int send_gso(struct sender *s, uint64_t seq, size_t n, int first_call)
{
    size_t cap = GSO_MSGS * s->segs_per_msg;
    while (n > 0) {
        size_t k = n < cap ? n : cap;
        size_t msgs = 0;
        size_t left = k;
        uint64_t q = seq;
        while (left > 0) {
            size_t segs = left < s->segs_per_msg ? left : s->segs_per_msg;
            uint8_t *base = s->gbuf + msgs * s->segs_per_msg * s->size;
            for (size_t i = 0; i < segs; i++)
                wa_fill(base + i * s->size, s->size, q + i);
            s->giov[msgs].iov_len = segs * s->size;
            /* msg_controllen is not changed by sendmsg, but set it anyway */
            s->ghdr[msgs].msg_hdr.msg_controllen = sizeof(s->gctl[msgs].buf);
            q += segs;
            left -= segs;
            msgs++;
        }
        size_t done = 0;
        while (done < msgs) {
            int r = sendmmsg(s->fd, s->ghdr + done, (unsigned)(msgs - done), 0);
            if (r > 0) {
                done += (size_t)r;
                first_call = 0;
                s->last_progress_ns = wa_now_ns();
                continue;
            }
            if (r == 0)
                errno = EAGAIN;
            if (first_call && done == 0 &&
                (errno == EINVAL || errno == EIO || errno == EOPNOTSUPP ||
                 errno == ENOPROTOOPT)) {
                return -2;
            }
            if (retry_or_fail(s, "sendmmsg (gso)") < 0)
                return -1;
        }
        seq += k;
        n -= k;
    }
    return 0;
}

static int setup_buffers(struct sender *s)
{
    s->one = malloc(s->size);
    s->mbuf = malloc(MMSG_BATCH * s->size);
    if (!s->one || !s->mbuf)
        return -1;
    memset(s->mhdr, 0, sizeof(s->mhdr));
    for (size_t i = 0; i < MMSG_BATCH; i++) {
        s->miov[i].iov_base = s->mbuf + i * s->size;
        s->miov[i].iov_len = s->size;
        s->mhdr[i].msg_hdr.msg_iov = &s->miov[i];
        s->mhdr[i].msg_hdr.msg_iovlen = 1;
    }

    size_t segs = GSO_MAX_BYTES / s->size;
    if (segs > GSO_MAX_SEGS)
        segs = GSO_MAX_SEGS;
    s->segs_per_msg = segs;
    s->gbuf = malloc(GSO_MSGS * segs * s->size);
    if (!s->gbuf)
        return -1;
    memset(s->ghdr, 0, sizeof(s->ghdr));
    memset(s->gctl, 0, sizeof(s->gctl));
    for (size_t i = 0; i < GSO_MSGS; i++) {
        s->giov[i].iov_base = s->gbuf + i * segs * s->size;
        s->giov[i].iov_len = segs * s->size;
        struct msghdr *m = &s->ghdr[i].msg_hdr;
        m->msg_iov = &s->giov[i];
        m->msg_iovlen = 1;
        m->msg_control = s->gctl[i].buf;
        m->msg_controllen = sizeof(s->gctl[i].buf);
        struct cmsghdr *c = CMSG_FIRSTHDR(m);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t gso_size = (uint16_t)s->size;
        memcpy(CMSG_DATA(c), &gso_size, sizeof(gso_size));
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    long long port = -1, count = -1, size = 64, cpu = -1, rate = 0, sources = 1;
    unsigned long long first_seq = 0;
    enum mode mode = MODE_GSO;

    static const struct option opts[] = {
        { "host", required_argument, NULL, 'h' },
        { "port", required_argument, NULL, 'p' },
        { "count", required_argument, NULL, 'n' },
        { "size", required_argument, NULL, 's' },
        { "cpu", required_argument, NULL, 'c' },
        { "mode", required_argument, NULL, 'm' },
        { "first-seq", required_argument, NULL, 'q' },
        { "rate", required_argument, NULL, 'r' },
        { "sources", required_argument, NULL, 'k' },
        { "help", no_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 }
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case 'h':
            host = optarg;
            bad = strcmp(host, "127.0.0.1") != 0 && strcmp(host, "::1") != 0;
            break;
        case 'p': bad = wa_parse_i64(optarg, 1, 65535, &port); break;
        case 'n': bad = wa_parse_i64(optarg, 0, (long long)WA_MAX_SEQ + 1, &count); break;
        case 's': bad = wa_parse_i64(optarg, WA_MIN_SIZE, WA_MAX_SIZE, &size); break;
        case 'c': bad = wa_parse_i64(optarg, LLONG_MIN, LLONG_MAX, &cpu); break;
        case 'q': bad = wa_parse_u64(optarg, WA_MAX_SEQ, &first_seq); break;
        case 'r': bad = wa_parse_i64(optarg, 0, 1000000000LL, &rate); break;
        case 'k': bad = wa_parse_i64(optarg, 1, MAX_SOURCES, &sources); break;
        case 'm':
            if (strcmp(optarg, "gso") == 0) mode = MODE_GSO;
            else if (strcmp(optarg, "mmsg") == 0) mode = MODE_MMSG;
            else if (strcmp(optarg, "plain") == 0) mode = MODE_PLAIN;
            else bad = 1;
            break;
        case 'H': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad)
            return wa_reject_option("wa-sender", opts, o, optarg, usage);
    }
    if (optind != argc || port < 0 || count < 0)
        return wa_missing_options("wa-sender", "--port and --count are", usage);
    if (count > 0 && first_seq + (unsigned long long)count - 1 > WA_MAX_SEQ) {
        fprintf(stderr, "wa-sender: first-seq + count - 1 exceeds %llu\n",
                (unsigned long long)WA_MAX_SEQ);
        return 2;
    }

    if (wa_pin_cpu_or_report("wa-sender", cpu) < 0)
        return 1;

    struct sockaddr_storage dst;
    int family = strcmp(host, "::1") == 0 ? AF_INET6 : AF_INET;
    socklen_t dlen = wa_loopback(&dst, family, (unsigned)port);

    static struct sender s; /* large; keep it off the stack */
    s.size = (size_t)size;
    s.mode = mode;
    s.sources = (size_t)sources;
    for (size_t i = 0; i < s.sources; i++) {
        s.fds[i] = socket(family, SOCK_DGRAM, 0);
        if (s.fds[i] < 0) {
            perror("wa-sender: socket");
            return 1;
        }
        if (connect(s.fds[i], (struct sockaddr *)&dst, dlen) < 0) {
            perror("wa-sender: connect");
            return 1;
        }
    }
    s.fd = s.fds[0];
    if (setup_buffers(&s) < 0) {
        fprintf(stderr, "wa-sender: out of memory\n");
        return 1;
    }

    if (s.mode == MODE_GSO) {
        /* Probe: does this kernel know UDP_SEGMENT at all?  Set it on the
         * socket, then clear it again; the sends use a cmsg per message. */
        int gso = (int)s.size;
        if (setsockopt(s.fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso)) < 0) {
            fprintf(stderr, "wa-sender: UDP_SEGMENT refused by the kernel (%s); "
                            "falling back to mode mmsg\n", strerror(errno));
            s.mode = MODE_MMSG;
        } else {
            gso = 0;
            (void)setsockopt(s.fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso));
        }
    }

    /* Largest number of datagrams handed to one send_* call. */
    size_t chunk_cap;
    if (s.mode == MODE_GSO)
        chunk_cap = GSO_MSGS * s.segs_per_msg;
    else if (s.mode == MODE_MMSG)
        chunk_cap = MMSG_BATCH;
    else
        chunk_cap = 1024;
    /* With several sources, each turn of a source sends about count/K
     * datagrams (at least 1; at most one GSO message or sendmmsg batch), so
     * that every source sends about as many as the others. */
    if (s.sources > 1) {
        size_t share = (size_t)((uint64_t)count / s.sources);
        if (share < 1)
            share = 1;
        if (s.mode == MODE_GSO && chunk_cap > s.segs_per_msg)
            chunk_cap = s.segs_per_msg;
        if (chunk_cap > share)
            chunk_cap = share;
    }
    /* With a rate: bursts of about 0.5 ms worth of datagrams. */
    size_t burst = chunk_cap;
    if (rate > 0) {
        long long b = rate / 2000;
        if (b < 1)
            b = 1;
        if ((unsigned long long)b < burst)
            burst = (size_t)b;
    }

    uint64_t total = (uint64_t)count;
    uint64_t sent = 0;
    int gso_first = 1;
    uint64_t t0 = wa_now_ns();
    s.last_progress_ns = t0;
    while (sent < total) {
        size_t n = burst;
        if (total - sent < n)
            n = (size_t)(total - sent);
        if (rate > 0) {
            /* datagram number "sent" is due at t0 + sent / rate */
            uint64_t due = t0 + (uint64_t)((long double)sent * 1e9L / (long double)rate);
            if (due > wa_now_ns())
                wa_sleep_until_ns(due);
        }
        uint64_t seq = first_seq + sent;
        int r;
        if (s.mode == MODE_GSO) {
            r = send_gso(&s, seq, n, gso_first);
            gso_first = 0;
            if (r == -2) {
                fprintf(stderr, "wa-sender: UDP GSO send refused by the kernel (%s); "
                                "falling back to mode mmsg\n", strerror(errno));
                s.mode = MODE_MMSG;
                continue; /* nothing of this chunk went out; redo it */
            }
        } else if (s.mode == MODE_MMSG) {
            r = send_mmsg(&s, seq, n);
        } else {
            r = send_plain(&s, seq, n);
        }
        if (r < 0)
            return 1;
        sent += n;
        if (s.sources > 1) {
            s.next_source = (s.next_source + 1) % s.sources;
            s.fd = s.fds[s.next_source];
        }
    }
    uint64_t t1 = wa_now_ns();

    printf("sent=%llu seconds=%.6f mode=%s\n", (unsigned long long)sent,
           (double)(t1 - t0) / 1e9, mode_names[s.mode]);
    for (size_t i = 0; i < s.sources; i++)
        close(s.fds[i]);
    return 0;
}
