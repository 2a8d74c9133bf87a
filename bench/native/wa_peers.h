/*
 * wa_peers.h - a table of peers keyed by their socket address, for
 * wa-recv --peers: the lookup every server does per datagram ("which peer
 * sent this?"), in C, built the way the library's PeerTable<T> is built so
 * that the two can be compared on the same traffic:
 *
 *  - the key is the whole endpoint (family, 16 address bytes as two words,
 *    port, scope id), 24 bytes, and is compared in full; an IPv4 sender seen
 *    IPv4-mapped on an IPv6 socket is taken as the IPv4 key;
 *  - the hash is SipHash-1-3 of the key's three words under a key drawn at
 *    random per process (flood resistant), as EndPointKey.GetHashCode64;
 *  - open addressing, Robin Hood linear probing, over a power of two of at
 *    least 4/3 of the peers (load <= 0.75);
 *  - the slots' hashes (4 bytes, top bit set = occupied) in an array of
 *    their own; the entries (key + value, 32 bytes) in another, read only
 *    where the hash matched.
 *
 * No removal: wa-recv only builds the table and looks up.
 */
#ifndef WA_PEERS_H
#define WA_PEERS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#define WA_PEER_OCCUPIED 0x80000000u
#define WA_PEER_MAX (1 << 24)

struct wa_peer_key {
    uint64_t a0, a1;    /* address bytes in network order, read as two words */
    uint32_t scope_id;
    uint16_t port;      /* host order */
    uint8_t family;     /* 4 or 6; 0 = none */
};

struct wa_peer_entry {
    struct wa_peer_key key;
    int32_t value;
};

struct wa_peers {
    uint32_t *hashes;
    struct wa_peer_entry *entries;
    uint32_t mask;
    uint32_t count;
    uint64_t k0, k1;
};

#define WA_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define WA_SIPROUND \
    do { \
        v0 += v1; v1 = WA_ROTL(v1, 13); v1 ^= v0; v0 = WA_ROTL(v0, 32); \
        v2 += v3; v3 = WA_ROTL(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = WA_ROTL(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = WA_ROTL(v1, 17); v1 ^= v2; v2 = WA_ROTL(v2, 32); \
    } while (0)

/* SipHash-1-3 of the 24-byte message (m0, m1, m2) under (k0, k1): one
 * compression round per word and for the length word, three to finish. */
static inline uint64_t wa_siphash13_3(uint64_t m0, uint64_t m1, uint64_t m2,
                                      uint64_t k0, uint64_t k1)
{
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
    uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
    uint64_t v3 = k1 ^ 0x7465646279746573ull;
    const uint64_t len = 24ull << 56;
    v3 ^= m0; WA_SIPROUND; v0 ^= m0;
    v3 ^= m1; WA_SIPROUND; v0 ^= m1;
    v3 ^= m2; WA_SIPROUND; v0 ^= m2;
    v3 ^= len; WA_SIPROUND; v0 ^= len;
    v2 ^= 0xff;
    WA_SIPROUND;
    WA_SIPROUND;
    WA_SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static inline uint32_t wa_peer_hash(const struct wa_peers *t, const struct wa_peer_key *k)
{
    uint64_t m2 = ((uint64_t)k->scope_id << 32) | ((uint64_t)k->port << 8) | k->family;
    return (uint32_t)wa_siphash13_3(k->a0, k->a1, m2, t->k0, t->k1) | WA_PEER_OCCUPIED;
}

static inline int wa_peer_key_equal(const struct wa_peer_key *a, const struct wa_peer_key *b)
{
    return a->a0 == b->a0 && a->a1 == b->a1 && a->port == b->port &&
           a->family == b->family && a->scope_id == b->scope_id;
}

/* The key of a received sockaddr (an IPv4-mapped IPv6 sender becomes its
 * IPv4 key).  Returns 0, or -1 for a family that is neither. */
static inline int wa_peer_key_from_sockaddr(const void *sa, struct wa_peer_key *k)
{
    sa_family_t family;
    memcpy(&family, sa, sizeof(family));
    if (family == AF_INET) {
        const struct sockaddr_in *in = sa;
        uint32_t a;
        memcpy(&a, &in->sin_addr, 4);
        k->a0 = a;
        k->a1 = 0;
        k->scope_id = 0;
        k->port = ntohs(in->sin_port);
        k->family = 4;
        return 0;
    }
    if (family == AF_INET6) {
        const struct sockaddr_in6 *in6 = sa;
        uint64_t a0, a1;
        memcpy(&a0, in6->sin6_addr.s6_addr, 8);
        memcpy(&a1, in6->sin6_addr.s6_addr + 8, 8);
        k->port = ntohs(in6->sin6_port);
        if (a0 == 0 && (uint32_t)a1 == 0xffff0000u) { /* ::ffff:a.b.c.d, read little-endian */
            k->a0 = a1 >> 32;
            k->a1 = 0;
            k->scope_id = 0;
            k->family = 4;
        } else {
            k->a0 = a0;
            k->a1 = a1;
            k->scope_id = in6->sin6_scope_id;
            k->family = 6;
        }
        return 0;
    }
    return -1;
}

/* Room for n peers: the power of two at least 4/3 of n (at least 2). */
static inline int wa_peers_init(struct wa_peers *t, uint32_t n)
{
    uint64_t wanted = ((uint64_t)n * 4 + 2) / 3, slots = 2;
    while (slots < wanted)
        slots <<= 1;
    memset(t, 0, sizeof(*t));
    t->hashes = calloc(slots, sizeof(*t->hashes));
    t->entries = calloc(slots, sizeof(*t->entries));
    t->mask = (uint32_t)slots - 1;
    uint64_t seed[2];
    if (!t->hashes || !t->entries || getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
        return -1;
    t->k0 = seed[0];
    t->k1 = seed[1];
    return 0;
}

/* The value of key k, or -1 when it is not in the table. */
static inline int32_t wa_peers_find(const struct wa_peers *t, const struct wa_peer_key *k)
{
    uint32_t hash = wa_peer_hash(t, k), mask = t->mask, i = hash & mask, distance = 0;
    for (;;) {
        uint32_t h = t->hashes[i];
        if (h == hash) {
            if (wa_peer_key_equal(&t->entries[i].key, k))
                return t->entries[i].value;
        } else if (h == 0 || ((i - h) & mask) < distance) {
            /* empty, or a slot nearer its home than k would be here:
             * Robin Hood insertion would have put k before it */
            return -1;
        }
        i = (i + 1) & mask;
        distance++;
    }
}

/* Adds k with value v.  Returns 0, 1 when k is there already, -1 when full. */
static inline int wa_peers_add(struct wa_peers *t, const struct wa_peer_key *k, int32_t v)
{
    uint32_t hash = wa_peer_hash(t, k), mask = t->mask, i = hash & mask, distance = 0;
    for (;;) {
        uint32_t h = t->hashes[i];
        if (h == hash && wa_peer_key_equal(&t->entries[i].key, k))
            return 1;
        if (h == 0 || ((i - h) & mask) < distance)
            break;
        i = (i + 1) & mask;
        distance++;
    }
    if ((uint64_t)t->count * 4 >= (uint64_t)(mask + 1) * 3)
        return -1;
    struct wa_peer_entry carry;
    memset(&carry, 0, sizeof(carry)); /* padding too: entries compare by fields, but keep them clean */
    carry.key = *k;
    carry.value = v;
    uint32_t carry_hash = hash;
    for (;;) {
        uint32_t h = t->hashes[i];
        if (h == 0) {
            t->hashes[i] = carry_hash;
            t->entries[i] = carry;
            break;
        }
        uint32_t theirs = (i - h) & mask;
        if (theirs < distance) {
            struct wa_peer_entry displaced = t->entries[i];
            t->hashes[i] = carry_hash;
            t->entries[i] = carry;
            carry_hash = h;
            carry = displaced;
            distance = theirs;
        }
        i = (i + 1) & mask;
        distance++;
    }
    t->count++;
    return 0;
}

/* Reads "address port index" lines (IPv4 or IPv6 address, '#' starts a
 * comment line) into t, sized for them.  Returns the number of peers, or
 * -1 with a message on stderr. */
static inline long wa_peers_load(struct wa_peers *t, const char *path, const char *prog)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", prog, path);
        return -1;
    }
    char line[256];
    long n = 0;
    while (fgets(line, sizeof(line), f))
        if (line[0] != '#' && line[0] != '\n')
            n++;
    if (n < 1 || n > WA_PEER_MAX) {
        fprintf(stderr, "%s: %s: %ld peers (1..%d)\n", prog, path, n, WA_PEER_MAX);
        fclose(f);
        return -1;
    }
    if (wa_peers_init(t, (uint32_t)n) < 0) {
        fprintf(stderr, "%s: no memory or randomness for %ld peers\n", prog, n);
        fclose(f);
        return -1;
    }
    rewind(f);
    long lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char address[INET6_ADDRSTRLEN + 1];
        long port, index;
        char extra;
        struct sockaddr_storage ss;
        memset(&ss, 0, sizeof(ss));
        int fields = sscanf(line, "%46s %ld %ld %c", address, &port, &index, &extra);
        int ok = fields == 3 && port >= 0 && port <= 65535 && index >= 0 && index <= INT32_MAX;
        if (ok) {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
            if (inet_pton(AF_INET, address, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
            } else if (inet_pton(AF_INET6, address, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
            } else {
                ok = 0;
            }
        }
        struct wa_peer_key k;
        if (!ok || wa_peer_key_from_sockaddr(&ss, &k) < 0) {
            fprintf(stderr, "%s: %s:%ld: not \"address port index\"\n", prog, path, lineno);
            fclose(f);
            return -1;
        }
        if (wa_peers_add(t, &k, (int32_t)index) != 0) {
            fprintf(stderr, "%s: %s:%ld: %s is there twice\n", prog, path, lineno, address);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return n;
}

#endif
