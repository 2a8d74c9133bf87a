/*
 * wa-burst - bursts of equal datagrams to one peer in C, as a server sends a
 * backlog or a snapshot cut into MTU-size pieces: each burst by one sendmmsg
 * of one message per datagram, or as one segmented send that the kernel cuts
 * into the same datagrams (UDP_SEGMENT, Linux 4.18+: one sendmsg, or one
 * sendmmsg of two messages for a burst over 65 507 bytes), measuring the
 * sending thread's CPU time around the sends only.
 *
 * The arrangement is DatagramServer --mode send's burst table: the sender is
 * bound to 127.0.0.1, the peer to 127.0.0.2 (a socket of this program, with a
 * 4 MiB receive buffer asked for), datagrams of --size bytes (default 1472,
 * an Ethernet MTU's payload), one iovec per datagram in both methods (as the
 * library's batch hands its slots to the kernel). Bursts go in chunks of
 * 256 datagrams; after each chunk the peer is drained and every datagram
 * checked: it carries its burst and its place in the burst, and must come
 * exactly once, in order. On loopback the kernel delivers each datagram to the
 * peer on the sender's CPU, so the time includes that delivery; a network
 * device that segments takes the cutting off the CPU, so a NIC differs.
 *
 * Output: one line on stdout,
 * "datagrams=D cpu_ns=C wall_ns=W lost=L wrong=X method=M burst=B",
 * exit 0 when L = X = 0; 1 on an error (EIO/EINVAL from a device or kernel
 * that cannot segment included), 2 on bad options.
 */
#define _GNU_SOURCE
#include <netinet/udp.h>
#include "wa_common.h"

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define MAX_BURST 64           /* Linux's segment limit since 4.18 */
#define CHUNK 256              /* datagrams between drains */
#define GSO_MAX_BYTES 65507    /* the most payload one segmented send carries (one IPv4 datagram's) */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: wa-burst --burst B --count N [options]\n"
        "  --burst B              datagrams per burst, 1..64\n"
        "  --count N              datagrams in all (a multiple of B is sent)\n"
        "  --size S               datagram bytes, 16..1472 (default 1472)\n"
        "  --method sendmmsg|gso  one message per datagram, or one segmented send (default gso)\n"
        "  --cpu K                pin to CPU K (default -1: do not pin)\n");
}

static int bind_loopback(const char *address, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return -1;
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    if (inet_pton(AF_INET, address, &a.sin_addr) != 1 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    long long burst = 0, count = 0, size = 1472, cpu = -1;
    int gso = 1;
    static const struct option opts[] = {
        { "burst", required_argument, NULL, 'b' },
        { "count", required_argument, NULL, 'n' },
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
        case 'b': bad = wa_parse_i64(optarg, 1, MAX_BURST, &burst); break;
        case 'n': bad = wa_parse_i64(optarg, 1, 100000000, &count); break;
        case 's': bad = wa_parse_i64(optarg, 16, 1472, &size); break;
        case 'p': bad = wa_parse_i64(optarg, -1, 1023, &cpu); break;
        case 'm':
            if (strcmp(optarg, "gso") == 0) gso = 1;
            else if (strcmp(optarg, "sendmmsg") == 0) gso = 0;
            else bad = -1;
            break;
        case 'H': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad)
            return wa_reject_option("wa-burst", opts, o, optarg, usage);
    }
    if (burst == 0 || count == 0)
        return wa_missing_options("wa-burst", "--burst and --count are", usage);
    if (cpu >= 0 && wa_pin_cpu_or_report("wa-burst", cpu) != 0)
        return 1;

    int tx = bind_loopback("127.0.0.1", 0);
    int peer = bind_loopback("127.0.0.2", 4 * 1024 * 1024);
    if (tx < 0 || peer < 0) {
        perror("wa-burst: socket");
        return 1;
    }
    struct sockaddr_in to;
    socklen_t to_len = sizeof to;
    getsockname(peer, (struct sockaddr *)&to, &to_len);

    int b = (int)burst;
    size_t n = (size_t)size;
    uint8_t *data = calloc((size_t)MAX_BURST, n);
    struct iovec iov[MAX_BURST];
    struct mmsghdr msgs[MAX_BURST];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } control[MAX_BURST];
    if (!data) {
        fprintf(stderr, "wa-burst: out of memory\n");
        return 1;
    }
    memset(msgs, 0, sizeof msgs);
    memset(control, 0, sizeof control);
    for (int i = 0; i < MAX_BURST; i++) {
        iov[i].iov_base = data + (size_t)i * n;
        iov[i].iov_len = n;
        memset(iov[i].iov_base, 'x', n);
        msgs[i].msg_hdr.msg_name = &to;
        msgs[i].msg_hdr.msg_namelen = sizeof to;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    /* The segmented send: the datagrams' iovecs in one message, cut at --size by the kernel. One message carries at
     * most 65 507 bytes (one IPv4 datagram's payload), so a longer burst is several messages in one sendmmsg (44 + 20
     * for 64 x 1472 bytes), as the library's batch sends it; a burst that fits goes by one sendmsg. */
    int per_message = (int)(GSO_MAX_BYTES / n) < MAX_BURST ? (int)(GSO_MAX_BYTES / n) : MAX_BURST;
    int segmented = (b + per_message - 1) / per_message;
    struct mmsghdr gso_msgs[MAX_BURST];
    memset(gso_msgs, 0, sizeof gso_msgs);
    for (int m = 0; m < segmented; m++) {
        struct msghdr *h = &gso_msgs[m].msg_hdr;
        int first = m * per_message;
        h->msg_name = &to;
        h->msg_namelen = sizeof to;
        h->msg_iov = &iov[first];
        h->msg_iovlen = (size_t)(b - first < per_message ? b - first : per_message);
        h->msg_control = control[m].buf;
        h->msg_controllen = sizeof control[m].buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(h);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t segment = (uint16_t)n;
        memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }

    long long bursts = count / b;
    long long per_chunk = CHUNK / b > 0 ? CHUNK / b : 1;
    uint8_t in[2048];
    uint64_t cpu_ns = 0, wall_ns = 0, sent = 0, lost = 0, wrong = 0;
    for (long long b0 = 0; b0 < bursts; b0 += per_chunk) {
        long long b1 = b0 + per_chunk < bursts ? b0 + per_chunk : bursts;
        uint64_t c0 = wa_thread_cpu_ns(), w0 = wa_now_ns();
        for (long long k = b0; k < b1; k++) {
            for (int i = 0; i < b; i++) {
                uint32_t burst_no = (uint32_t)k, place = (uint32_t)i;
                memcpy(data + (size_t)i * n, &burst_no, 4);
                memcpy(data + (size_t)i * n + 4, &place, 4);
            }
            if (gso && segmented == 1) {
                ssize_t r;
                while ((r = sendmsg(tx, &gso_msgs[0].msg_hdr, 0)) < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)) { }
                if (r < 0) {
                    perror("wa-burst: sendmsg (UDP_SEGMENT)");
                    return 1;
                }
            } else if (gso) {
                for (int m = 0; m < segmented;) {
                    int r = sendmmsg(tx, gso_msgs + m, (unsigned)(segmented - m), 0);
                    if (r < 0) {
                        if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS) continue;
                        perror("wa-burst: sendmmsg (UDP_SEGMENT)");
                        return 1;
                    }
                    m += r;
                }
            } else {
                for (int i = 0; i < b;) {
                    int r = sendmmsg(tx, msgs + i, (unsigned)(b - i), 0);
                    if (r < 0) {
                        if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS) continue;
                        perror("wa-burst: sendmmsg");
                        return 1;
                    }
                    i += r;
                }
            }
        }
        cpu_ns += wa_thread_cpu_ns() - c0;
        wall_ns += wa_now_ns() - w0;
        sent += (uint64_t)(b1 - b0) * (uint64_t)b;
        /* The peer must hold every datagram of these bursts, in order, and nothing else. */
        for (long long k = b0; k < b1; k++) {
            for (int i = 0; i < b; i++) {
                uint64_t deadline = wa_now_ns() + 1000000000ull;
                ssize_t r;
                while ((r = recv(peer, in, sizeof in, MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EINTR) && wa_now_ns() < deadline) { }
                if (r < 0) {
                    lost++;
                    continue;
                }
                uint32_t burst_no, place;
                memcpy(&burst_no, in, 4);
                memcpy(&place, in + 4, 4);
                if ((size_t)r != n || burst_no != (uint32_t)k || place != (uint32_t)i)
                    wrong++;
            }
        }
        while (recv(peer, in, sizeof in, MSG_DONTWAIT) >= 0)
            wrong++;
    }
    printf("datagrams=%llu cpu_ns=%llu wall_ns=%llu lost=%llu wrong=%llu method=%s burst=%d\n",
           (unsigned long long)sent, (unsigned long long)cpu_ns, (unsigned long long)wall_ns,
           (unsigned long long)lost, (unsigned long long)wrong, gso ? "gso" : "sendmmsg", b);
    return lost == 0 && wrong == 0 ? 0 : 3;
}
