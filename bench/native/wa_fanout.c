/*
 * wa-fanout - the send half of a game server in C: per tick one datagram to
 * each of N destinations, by sendto (one call per datagram) or sendmmsg (64
 * per call), measuring the sending thread's CPU time around the sends only.
 *
 * Destination i is a socket of this program bound to 127.1.(i / 250).(i % 250 + 1)
 * on an ephemeral port, so N distinct addresses and ports; the sender is bound to
 * 127.0.0.1. Ticks go in chunks (--chunk ticks, then every receiver is drained
 * and checked: each datagram carries its destination and tick, and must arrive
 * exactly once at its own destination). DatagramServer --mode send lays out
 * its destinations the same way.
 *
 * Output: one line on stdout,
 * "datagrams=D cpu_ns=C wall_ns=W lost=L wrong=X method=M", exit 0 when L = X = 0.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/time.h>
#include "wa_common.h"

#define MMSG_BATCH 64

static void usage(FILE *f)
{
    fprintf(f,
        "usage: wa-fanout --dests N --ticks T [options]\n"
        "  --dests N              destinations, 1..20000\n"
        "  --ticks T              ticks (one datagram to every destination each)\n"
        "  --chunk C              ticks between drains (default 1)\n"
        "  --size S               datagram bytes, 16..1472 (default 64)\n"
        "  --method sendto|sendmmsg (default sendmmsg)\n"
        "  --cpu K                pin to CPU K (default -1: do not pin)\n");
}

static void stamp(uint8_t *buf, uint32_t dest, uint32_t tick)
{
    memcpy(buf, &dest, 4);
    memcpy(buf + 4, &tick, 4);
}

int main(int argc, char **argv)
{
    long long dests = 0, ticks = 0, chunk = 1, size = 64, cpu = -1;
    int use_mmsg = 1;
    static const struct option opts[] = {
        { "dests", required_argument, NULL, 'n' },
        { "ticks", required_argument, NULL, 't' },
        { "chunk", required_argument, NULL, 'c' },
        { "size", required_argument, NULL, 's' },
        { "method", required_argument, NULL, 'm' },
        { "cpu", required_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 },
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int bad = 0;
        switch (o) {
        case 'n': bad = wa_parse_i64(optarg, 1, 20000, &dests); break;
        case 't': bad = wa_parse_i64(optarg, 1, 100000000, &ticks); break;
        case 'c': bad = wa_parse_i64(optarg, 1, 100000, &chunk); break;
        case 's': bad = wa_parse_i64(optarg, 16, 1472, &size); break;
        case 'p': bad = wa_parse_i64(optarg, -1, 1023, &cpu); break;
        case 'm':
            if (strcmp(optarg, "sendto") == 0) use_mmsg = 0;
            else if (strcmp(optarg, "sendmmsg") == 0) use_mmsg = 1;
            else bad = -1;
            break;
        case 'H': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad)
            return wa_reject_option("wa-fanout", opts, o, optarg, usage);
    }
    if (dests == 0 || ticks == 0)
        return wa_missing_options("wa-fanout", "--dests and --ticks are", usage);
    if (cpu >= 0 && wa_pin_cpu_or_report("wa-fanout", cpu) != 0)
        return 1;

    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < (rlim_t)dests + 64) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }

    int n = (int)dests;
    int *fds = calloc((size_t)n, sizeof(int));
    struct sockaddr_in *to = calloc((size_t)n, sizeof(struct sockaddr_in));
    uint8_t *bufs = calloc((size_t)n, (size_t)size);
    struct mmsghdr *msgs = calloc((size_t)n, sizeof(struct mmsghdr));
    struct iovec *iovs = calloc((size_t)n, sizeof(struct iovec));
    if (!fds || !to || !bufs || !msgs || !iovs) {
        fprintf(stderr, "wa-fanout: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        if (fds[i] < 0) {
            perror("wa-fanout: socket (raise ulimit -n)");
            return 1;
        }
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | ((unsigned)(i / 250) << 8) | (unsigned)(i % 250 + 1));
        if (bind(fds[i], (struct sockaddr *)&a, sizeof a) != 0) {
            perror("wa-fanout: bind");
            return 1;
        }
        socklen_t len = sizeof to[i];
        getsockname(fds[i], (struct sockaddr *)&to[i], &len);
        iovs[i].iov_base = bufs + (size_t)i * (size_t)size;
        iovs[i].iov_len = (size_t)size;
        msgs[i].msg_hdr.msg_name = &to[i];
        msgs[i].msg_hdr.msg_namelen = sizeof to[i];
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        memset(iovs[i].iov_base, 'x', (size_t)size);
    }
    int tx = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in self;
    memset(&self, 0, sizeof self);
    self.sin_family = AF_INET;
    self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (tx < 0 || bind(tx, (struct sockaddr *)&self, sizeof self) != 0) {
        perror("wa-fanout: sender socket");
        return 1;
    }
    uint8_t *one = calloc(1, (size_t)size);
    memset(one, 'x', (size_t)size);
    uint8_t in[2048];

    uint64_t cpu_ns = 0, wall_ns = 0, sent = 0, lost = 0, wrong = 0;
    for (long long t0 = 0; t0 < ticks; t0 += chunk) {
        long long t1 = t0 + chunk < ticks ? t0 + chunk : ticks;
        uint64_t c0 = wa_thread_cpu_ns(), w0 = wa_now_ns();
        for (long long t = t0; t < t1; t++) {
            if (use_mmsg) {
                for (int i = 0; i < n; i++)
                    stamp(bufs + (size_t)i * (size_t)size, (uint32_t)i, (uint32_t)t);
                for (int i = 0; i < n;) {
                    int k = n - i < MMSG_BATCH ? n - i : MMSG_BATCH;
                    int r = sendmmsg(tx, msgs + i, (unsigned)k, 0);
                    if (r < 0) {
                        if (errno == EINTR || errno == EAGAIN) continue;
                        perror("wa-fanout: sendmmsg");
                        return 1;
                    }
                    i += r;
                }
            } else {
                for (int i = 0; i < n; i++) {
                    stamp(one, (uint32_t)i, (uint32_t)t);
                    while (sendto(tx, one, (size_t)size, 0, (struct sockaddr *)&to[i], sizeof to[i]) < 0) {
                        if (errno != EINTR && errno != EAGAIN) {
                            perror("wa-fanout: sendto");
                            return 1;
                        }
                    }
                }
            }
        }
        cpu_ns += wa_thread_cpu_ns() - c0;
        wall_ns += wa_now_ns() - w0;
        sent += (uint64_t)(t1 - t0) * (uint64_t)n;
        /* Drain and check: every destination gets exactly its datagrams of these ticks. */
        for (int i = 0; i < n; i++) {
            for (long long t = t0; t < t1; t++) {
                uint64_t deadline = wa_now_ns() + 1000000000ull;
                ssize_t r;
                while ((r = recv(fds[i], in, sizeof in, 0)) < 0 && (errno == EAGAIN || errno == EINTR) && wa_now_ns() < deadline) { }
                if (r < 0) {
                    lost++;
                    continue;
                }
                uint32_t d, k;
                memcpy(&d, in, 4);
                memcpy(&k, in + 4, 4);
                if (r != size || d != (uint32_t)i || k != (uint32_t)t)
                    wrong++;
            }
        }
    }
    for (int i = 0; i < n; i++)
        while (recv(fds[i], in, sizeof in, 0) >= 0)
            wrong++;
    printf("datagrams=%llu cpu_ns=%llu wall_ns=%llu lost=%llu wrong=%llu method=%s\n",
           (unsigned long long)sent, (unsigned long long)cpu_ns, (unsigned long long)wall_ns,
           (unsigned long long)lost, (unsigned long long)wrong, use_mmsg ? "sendmmsg" : "sendto");
    return lost == 0 && wrong == 0 ? 0 : 3;
}
