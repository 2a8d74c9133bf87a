/*
 * wa-echo - the floor of the ping-pong benchmark: one thread, a blocking
 * recvfrom into one buffer, a sendto of the same bytes back to the sender.
 * A 4-byte datagram "STOP" ends it; it then prints what it served and the
 * CPU time its thread used from its first receive to the STOP:
 *
 *   echoes=N bytes=B cpu_ns=C
 *
 * Usage: wa-echo [--family 4|6] [--port P] [--ready-file F] [--cpu K] [--rcvbuf B]
 *   --port 0 (default) binds an ephemeral port; with --ready-file the port is
 *   written there (atomically) once the socket is bound.
 */
#define _GNU_SOURCE
#include "wa_common.h"

static const char *prog = "wa-echo";

static void usage(FILE *out)
{
    fprintf(out, "usage: %s [--family 4|6] [--port P] [--ready-file FILE] [--cpu K] [--rcvbuf BYTES]\n", prog);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"family", required_argument, 0, 'f'},
        {"port", required_argument, 0, 'p'},
        {"ready-file", required_argument, 0, 'r'},
        {"cpu", required_argument, 0, 'c'},
        {"rcvbuf", required_argument, 0, 'b'},
        {0, 0, 0, 0},
    };
    long long family = 4, port = 0, cpu = -1, rcvbuf = 0;
    const char *ready = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (wa_parse_i64(optarg, 4, 6, &family) < 0 || family == 5)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'p':
            if (wa_parse_i64(optarg, 0, 65535, &port) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'r':
            ready = optarg;
            break;
        case 'c':
            if (wa_parse_i64(optarg, -1, CPU_SETSIZE - 1, &cpu) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
            break;
        case 'b':
            if (wa_parse_i64(optarg, 4096, INT_MAX / 2, &rcvbuf) < 0)
                return wa_reject_option(prog, opts, c, optarg, usage);
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
    if (wa_pin_cpu_or_report(prog, cpu) < 0)
        return 1;

    int af = family == 4 ? AF_INET : AF_INET6;
    int fd = socket(af, SOCK_DGRAM, 0);
    if (fd < 0) {
        fprintf(stderr, "%s: socket: %s\n", prog, strerror(errno));
        return 1;
    }
    int size = (int)rcvbuf;
    if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0) {
        fprintf(stderr, "%s: SO_RCVBUF: %s\n", prog, strerror(errno));
        return 1;
    }
    struct sockaddr_storage local;
    socklen_t llen = wa_loopback(&local, af, (unsigned)port);
    if (bind(fd, (struct sockaddr *)&local, llen) < 0) {
        fprintf(stderr, "%s: bind: %s\n", prog, strerror(errno));
        return 1;
    }
    unsigned bound = 0;
    if (wa_bound_port(fd, af, &bound) < 0) {
        fprintf(stderr, "%s: getsockname: %s\n", prog, strerror(errno));
        return 1;
    }
    if (ready && wa_write_ready_file(ready, bound) < 0) {
        fprintf(stderr, "%s: ready file %s: %s\n", prog, ready, strerror(errno));
        return 1;
    }

    unsigned char buffer[2048];
    unsigned long long echoes = 0, bytes = 0;
    uint64_t cpu0 = wa_thread_cpu_ns();
    for (;;) {
        struct sockaddr_storage from;
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(fd, buffer, sizeof(buffer), 0, (struct sockaddr *)&from, &flen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "%s: recvfrom: %s\n", prog, strerror(errno));
            return 1;
        }
        if (n == 4 && memcmp(buffer, "STOP", 4) == 0)
            break;
        if (sendto(fd, buffer, (size_t)n, 0, (struct sockaddr *)&from, flen) < 0) {
            fprintf(stderr, "%s: sendto: %s\n", prog, strerror(errno));
            return 1;
        }
        echoes++;
        bytes += (unsigned long long)n;
    }
    uint64_t used = wa_thread_cpu_ns() - cpu0;
    printf("echoes=%llu bytes=%llu cpu_ns=%llu\n", echoes, bytes, (unsigned long long)used);
    close(fd);
    return 0;
}
