/*
 * wa-recv - the C reference receiver.
 *
 * Receives datagrams in the wa_datagram.h format on a loopback socket,
 * validates every one of them (checksum, sequence range, duplicates) and
 * prints one result line:
 *
 *   method=M batch=B received=R corrupt=C duplicate=D out_of_range=O
 *   seconds=T datagrams_per_s=X ns_per_datagram=Y rcvbuf_granted=G
 *   kernel_drops=K
 *
 * (all on one line, separated by single spaces).  See README.md.
 *
 * With --drain it first waits until the socket's receive queue stops
 * growing (a sender filled it beforehand), then times only the loop that
 * empties it, so that the sender cannot set the pace.
 *
 * With --peers FILE it also finds the peer of every datagram, as a server
 * does: a table of the senders listed in FILE ("address port index" lines;
 * see wa_peers.h, built as the library's PeerTable is), looked up by each
 * datagram's sender address; the peer found must be the index the sender
 * wrote as the int at offset 4 of its payload (DatagramServer --mode
 * scale's senders do), and the result line ends with wrong_peer=W (not
 * found, or another index).
 *
 * Exit 0 when it ran, 1 on a runtime error, 2 for bad options.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "wa_common.h"
#include "wa_datagram.h"
#include "wa_peers.h"
#include "wa_stats.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

#define MAX_BATCH 1024
#define MAX_COUNT 1000000000LL  /* bitmap of at most 125 MB */
#define RCV_TIMEOUT_MS 50
#define CTL_SPACE 64            /* room for SO_RXQ_OVFL (and a spare cmsg) */
#define DRAIN_POLL_MS 5         /* --drain: how often the queue is looked at */
#define DRAIN_SETTLE_MS 100     /* --drain: unchanged this long = stopped growing */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: wa-recv --count N [options]\n"
        "  --bind 127.0.0.1|::1|dual  address (dual: IPv6 socket, V6ONLY=0,\n"
        "                             bound to ::ffff:127.0.0.1; default 127.0.0.1)\n"
        "  --port P                   port, 0 = ephemeral (default 0)\n"
        "  --method recvfrom|recvmmsg (default recvmmsg)\n"
        "  --batch B                  recvmmsg batch, 1..%d (default 64)\n"
        "  --count N                  expected datagrams, 1..%lld\n"
        "  --first-seq Q              first expected sequence number (default 0)\n"
        "  --size S                   buffer bytes per datagram, 1..65536 (default 2048)\n"
        "  --cpu K                    pin to CPU K (K < 0: do not pin; default -1)\n"
        "  --rcvbuf BYTES             SO_RCVBUF to ask for (0 = leave; default 0)\n"
        "  --idle-ms M                stop M ms after the last datagram (default 500)\n"
        "  --max-seconds S            overall time cap (default 60)\n"
        "  --ready-file PATH          write the bound port there once bound\n"
        "  --drain                    wait until the receive queue stops growing,\n"
        "                             then time only the loop that empties it\n"
        "  --no-check                 do not validate datagrams, only count them\n"
        "  --read-sender              take each datagram's sender address too (msg_name)\n"
        "  --peers FILE               find each datagram's sender in a table of the\n"
        "                             \"address port index\" lines of FILE and check it\n"
        "                             against the int at payload offset 4 (takes the\n"
        "                             sender address; adds wrong_peer=W to the result)\n",
        MAX_BATCH, MAX_COUNT);
}

/* Reads the SO_RXQ_OVFL counter out of a received message's control data.
 * The kernel adds the cmsg only when the counter is not zero, so "absent"
 * means zero drops at the time this datagram was queued. */
static uint32_t drops_from_cmsg(struct msghdr *m)
{
    uint32_t v = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
            c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
            memcpy(&v, CMSG_DATA(c), sizeof(v));
        }
    }
    return v;
}


/* --drain: waits until the receive queue holds something and has not
 * changed (queued bytes and drop counter) for DRAIN_SETTLE_MS, or until
 * t_cap.  Linux reports the queue in bytes, not datagrams, so "the
 * expected count is queued" cannot be seen before receiving; a queue
 * that stopped growing is the signal (received + kernel_drops tells the
 * count afterwards).  Returns 0 when settled, 1 at the cap, -1 on error. */
static int wait_for_full_queue(int fd, uint64_t t_cap)
{
    uint32_t rmem = 0, drops = 0, last_rmem = 0, last_drops = 0;
    uint64_t t_start = wa_now_ns(), t_change = t_start;
    int first = 1;
    for (;;) {
        if (read_meminfo(fd, &rmem, &drops) < 0)
            return -1;
        uint64_t now = wa_now_ns();
        if (first || rmem != last_rmem || drops != last_drops) {
            last_rmem = rmem;
            last_drops = drops;
            t_change = now;
            first = 0;
        } else if (rmem > 0 && now - t_change >= DRAIN_SETTLE_MS * 1000000ull) {
            fprintf(stderr, "wa-recv: drain: queue settled at %u bytes (drops=%u) after %.3f s\n",
                    rmem, drops, (double)(now - t_start) / 1e9);
            return 0;
        }
        if (now >= t_cap)
            return 1;
        struct timespec pause = { 0, DRAIN_POLL_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
}

int main(int argc, char **argv)
{
    struct receiver_options opt = receiver_defaults();
    long long idle_ms = 500;
    int drain = 0;
    int read_sender = 0;
    const char *peers_path = NULL;

    static const struct option opts[] = {
        RECEIVER_OPTIONS,
        { "idle-ms", required_argument, NULL, 'i' },
        { "drain", no_argument, NULL, 'D' },
        { "read-sender", no_argument, NULL, 'S' },
        { "peers", required_argument, NULL, 'P' },
        { "help", no_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 }
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int bad = receiver_option(&opt, o, optarg, "dual", MAX_BATCH, MAX_COUNT);
        if (bad < 0) {
            bad = 0;
            switch (o) {
            case 'i': bad = wa_parse_i64(optarg, 1, 3600000, &idle_ms); break;
            case 'D': drain = 1; break;
            case 'S': read_sender = 1; break;
            case 'P': peers_path = optarg; break;
            case 'H': usage(stdout); return 0;
            default: usage(stderr); return 2;
            }
        }
        if (bad)
            return wa_reject_option("wa-recv", opts, o, optarg, usage);
    }
    if (optind != argc || opt.count < 0)
        return wa_missing_options("wa-recv", "--count is", usage);
    if (opt.method == METHOD_RECVFROM)
        opt.batch = 1;

    if (wa_pin_cpu_or_report("wa-recv", opt.cpu) < 0)
        return 1;

    /* ---- the peer table, built on the CPU that will look up in it ---- */
    struct wa_peers peers;
    long peer_count = 0;
    uint64_t wrong_peer = 0;
    if (peers_path) {
        peer_count = wa_peers_load(&peers, peers_path, "wa-recv");
        if (peer_count < 0)
            return 1;
        fprintf(stderr, "wa-recv: %ld peers in %u slots\n", peer_count, peers.mask + 1);
    }
    const int take_names = read_sender || peers_path != NULL;

    /* ---- socket ---- */
    struct sockaddr_storage addr;
    int family = strcmp(opt.bind_to, "127.0.0.1") == 0 ? AF_INET : AF_INET6;
    socklen_t alen = wa_loopback(&addr, family, (unsigned)opt.port);
    if (strcmp(opt.bind_to, "dual") == 0) {
        /* loopback only: the IPv4-mapped form of 127.0.0.1, not "::" */
        inet_pton(AF_INET6, "::ffff:127.0.0.1", &((struct sockaddr_in6 *)&addr)->sin6_addr);
    }

    int fd = socket(family, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("wa-recv: socket");
        return 1;
    }
    int one = 1, zero = 0;
    if (strcmp(opt.bind_to, "dual") == 0 &&
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
        perror("wa-recv: setsockopt(IPV6_V6ONLY=0)");
        return 1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) < 0) {
        perror("wa-recv: setsockopt(SO_RXQ_OVFL)");
        return 1;
    }
    if (opt.rcvbuf > 0) {
        int v = (int)opt.rcvbuf;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0) {
            perror("wa-recv: setsockopt(SO_RCVBUF)");
            return 1;
        }
    }
    int granted = 0;
    socklen_t glen = sizeof(granted);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &glen) < 0) {
        perror("wa-recv: getsockopt(SO_RCVBUF)");
        return 1;
    }
    fprintf(stderr, "wa-recv: SO_RCVBUF asked=%lld granted=%d\n", opt.rcvbuf, granted);
    struct timeval tv = { 0, RCV_TIMEOUT_MS * 1000 };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        perror("wa-recv: setsockopt(SO_RCVTIMEO)");
        return 1;
    }
    if (bind(fd, (struct sockaddr *)&addr, alen) < 0) {
        perror("wa-recv: bind");
        return 1;
    }
    unsigned bound_port;
    if (wa_bound_port(fd, family, &bound_port) < 0) {
        perror("wa-recv: getsockname");
        return 1;
    }

    /* ---- buffers (touched now, not during the measurement) ---- */
    struct stats st;
    memset(&st, 0, sizeof(st));
    st.first_seq = opt.first_seq;
    st.no_check = opt.no_check;
    st.count = (uint64_t)opt.count;
    st.seen = calloc((size_t)((opt.count + 7) / 8), 1);
    size_t nb = (size_t)opt.batch, sz = (size_t)opt.size;
    uint8_t *data = malloc(nb * sz);
    char *ctl = malloc(nb * CTL_SPACE);
    struct iovec *iov = calloc(nb, sizeof(*iov));
    struct mmsghdr *msgs = calloc(nb, sizeof(*msgs));
    struct sockaddr_storage *names = calloc(nb, sizeof(*names));
    uint64_t sender_sum = 0; /* --read-sender: every sender's port, summed, so the read is real */
    if (!st.seen || !data || !ctl || !iov || !msgs || !names) {
        fprintf(stderr, "wa-recv: out of memory\n");
        return 1;
    }
    memset(st.seen, 0, (size_t)((opt.count + 7) / 8));
    memset(data, 0, nb * sz);
    memset(ctl, 0, nb * CTL_SPACE);
    for (size_t i = 0; i < nb; i++) {
        iov[i].iov_base = data + i * sz;
        iov[i].iov_len = sz;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_control = ctl + i * CTL_SPACE;
        msgs[i].msg_hdr.msg_controllen = CTL_SPACE;
        if (take_names) {
            msgs[i].msg_hdr.msg_name = &names[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(names[i]);
        }
    }

    /* ---- tell the driver we are ready ---- */
    fprintf(stderr, "port=%u\n", bound_port);
    if (opt.ready_file && wa_write_ready_file(opt.ready_file, bound_port) < 0) {
        fprintf(stderr, "wa-recv: cannot write %s: %s\n", opt.ready_file, strerror(errno));
        return 1;
    }

    /* ---- receive loop ---- */
    struct rusage ru0, ru1;
    const uint64_t idle_ns = (uint64_t)idle_ms * 1000000ull;
    const uint64_t t_cap = wa_now_ns() + (uint64_t)opt.max_seconds * 1000000000ull;
    uint64_t t_first = 0, t_last = 0;
    int got_any = 0;
    size_t used = 0; /* entries of msgs[] filled by the last recvmmsg */
    const char *stop_reason = "count";
    /* --drain: never block; an empty queue ends the loop */
    const int wait_flags = drain ? MSG_DONTWAIT : 0;

    if (drain) {
        int w = wait_for_full_queue(fd, t_cap);
        if (w < 0) {
            perror("wa-recv: getsockopt(SO_MEMINFO)");
            return 1;
        }
        if (w > 0)
            fprintf(stderr, "wa-recv: drain: the queue did not settle before --max-seconds\n");
    }
    getrusage(RUSAGE_SELF, &ru0);
    if (drain) {
        /* the timed span starts before the first call, not after it */
        got_any = 1;
        t_first = t_last = wa_now_ns();
    }

    while (st.received < st.count) {
        int n;
        if (opt.method == METHOD_RECVFROM) {
            /* The "recvfrom" method: one datagram per system call.  It is
             * recvmsg() with one iovec rather than recvfrom() because the
             * SO_RXQ_OVFL drop counter only comes as a control message. */
            struct msghdr *m = &msgs[0].msg_hdr;
            m->msg_controllen = CTL_SPACE;
            if (take_names)
                m->msg_namelen = sizeof(names[0]);
            ssize_t r = recvmsg(fd, m, wait_flags);
            if (r >= 0) {
                msgs[0].msg_len = (unsigned)r;
                n = 1;
            } else {
                n = -1;
            }
        } else {
            /* the kernel overwrites msg_controllen of every entry it
             * filled; reset those that the previous call used */
            for (size_t i = 0; i < used; i++) {
                msgs[i].msg_hdr.msg_controllen = CTL_SPACE;
                if (take_names)
                    msgs[i].msg_hdr.msg_namelen = sizeof(names[i]);
            }
            n = recvmmsg(fd, msgs, (unsigned)nb, drain ? MSG_DONTWAIT : MSG_WAITFORONE, NULL);
            used = n > 0 ? (size_t)n : 0;
        }
        uint64_t now = wa_now_ns();

        if (n < 0 && drain && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            stop_reason = "drained";
            break;
        }
        if (n > 0) {
            if (!got_any) {
                got_any = 1;
                t_first = now;
            }
            t_last = now;
            st.calls++;
            for (int i = 0; i < n; i++) {
                account(&st, data + (size_t)i * sz, msgs[i].msg_len,
                        msgs[i].msg_hdr.msg_flags);
                if (peers_path) {
                    /* the server's question: which peer sent this? */
                    struct wa_peer_key k;
                    int32_t sent_by;
                    int32_t found = wa_peer_key_from_sockaddr(&names[i], &k) == 0
                                    ? wa_peers_find(&peers, &k) : -1;
                    if (msgs[i].msg_len < 8)
                        wrong_peer++;
                    else {
                        memcpy(&sent_by, data + (size_t)i * sz + 4, sizeof(sent_by));
                        if (found < 0 || found != sent_by)
                            wrong_peer++;
                    }
                } else if (read_sender) {
                    sender_sum += ((const struct sockaddr_in *)&names[i])->sin_port;
                }
            }
            st.drops_cmsg = drops_from_cmsg(&msgs[n - 1].msg_hdr);
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                   errno != EINTR) {
            perror(opt.method == METHOD_RECVFROM ? "wa-recv: recvmsg" : "wa-recv: recvmmsg");
            return 1;
        } else if (got_any && now - t_last >= idle_ns) {
            stop_reason = "idle";
            break;
        }
        if (now >= t_cap) {
            stop_reason = "max-seconds";
            break;
        }
    }

    getrusage(RUSAGE_SELF, &ru1);

    /* SO_RXQ_OVFL only tells what the counter was when the last received
     * datagram was queued; datagrams dropped after it are not in there.
     * The same counter (sk_drops) read now through SO_MEMINFO covers them. */
    uint64_t drops_final = st.drops_cmsg;
    uint32_t rmem_end, drops_end;
    if (read_meminfo(fd, &rmem_end, &drops_end) == 0) {
        if (drops_end > drops_final)
            drops_final = drops_end;
        fprintf(stderr, "wa-recv: drops so_rxq_ovfl_last=%u so_meminfo_end=%u\n",
                st.drops_cmsg, drops_end);
    } else {
        fprintf(stderr, "wa-recv: drops so_rxq_ovfl_last=%u so_meminfo_end=n/a\n",
                st.drops_cmsg);
    }
    fprintf(stderr, "wa-recv: stopped by %s; unique=%llu calls=%llu "
            "datagrams_per_call=%.2f\n", stop_reason,
            (unsigned long long)st.unique, (unsigned long long)st.calls,
            st.calls ? (double)st.received / (double)st.calls : 0.0);

    /* CPU time of the receive loop (includes the idle wait at the end,
     * which costs almost no CPU since the socket blocks).  When the sender
     * is the bottleneck, wall-clock datagrams_per_s only shows the
     * sender's rate; CPU time per datagram shows the receiver's cost. */
    report_cpu("wa-recv", &ru0, &ru1, st.received);
    if (read_sender && !peers_path)
        fprintf(stderr, "wa-recv: sender port sum %llu\n", (unsigned long long)sender_sum);

    double seconds = got_any ? (double)(t_last - t_first) / 1e9 : 0.0;
    double per_s, ns_per;
    rates(seconds, st.received, &per_s, &ns_per);
    char peer_field[40] = ""; /* --peers: one more field at the end of the line */
    if (peers_path)
        snprintf(peer_field, sizeof(peer_field), " wrong_peer=%llu", (unsigned long long)wrong_peer);
    printf("method=%s batch=%lld received=%llu corrupt=%llu duplicate=%llu "
           "out_of_range=%llu seconds=%.6f datagrams_per_s=%.0f "
           "ns_per_datagram=%.1f rcvbuf_granted=%d kernel_drops=%llu%s\n",
           opt.method == METHOD_RECVFROM ? "recvfrom" : "recvmmsg", opt.batch,
           (unsigned long long)st.received, (unsigned long long)st.corrupt,
           (unsigned long long)st.duplicate, (unsigned long long)st.out_of_range,
           seconds, per_s, ns_per, granted, (unsigned long long)drops_final, peer_field);
    close(fd);
    return 0;
}
