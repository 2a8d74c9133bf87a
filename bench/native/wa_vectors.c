/*
 * wa-vectors - prints the README test vectors of the datagram format and
 * checks wa_datagram.h against itself:
 *   - wa_fletcher32 equals a plain "% 65535 after every step" version;
 *   - wa_check accepts what wa_fill writes (several sizes and sequences)
 *     and returns the right sequence number;
 *   - wa_check rejects every single-byte change of a datagram, and
 *     truncated datagrams.
 * Exit 0 if all checks pass, 1 otherwise.  No sockets.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "wa_datagram.h"

static int failures;

static void fail(const char *what, size_t size, uint64_t seq, long extra)
{
    failures++;
    if (failures <= 20)
        fprintf(stderr, "FAIL %s size=%zu seq=%llu (%ld)\n", what, size,
                (unsigned long long)seq, extra);
}

static uint32_t fletcher_reference(const uint8_t *d, size_t n)
{
    uint32_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + d[i]) % 65535u;
        b = (b + a) % 65535u;
    }
    return (b << 16) | a;
}

static void print_vector(size_t size, uint64_t seq)
{
    uint8_t buf[WA_MAX_SIZE];
    wa_fill(buf, size, seq);
    printf("seq=%llu size=%zu fletcher32=0x%08x\n", (unsigned long long)seq, size,
           wa_fletcher32(buf, size - WA_SUM_LEN));
    printf("%.*s\n", (int)size, (const char *)buf);
}

static void check_one(size_t size, uint64_t seq)
{
    uint8_t buf[WA_MAX_SIZE];
    uint8_t orig[WA_MAX_SIZE];
    wa_fill(buf, size, seq);
    memcpy(orig, buf, size);

    if (wa_fletcher32(buf, size - WA_SUM_LEN) !=
        fletcher_reference(buf, size - WA_SUM_LEN))
        fail("fletcher differs from reference", size, seq, 0);

    uint64_t got = ~0ull;
    if (wa_check(buf, size, &got) != WA_OK || got != seq)
        fail("valid datagram rejected", size, seq, 0);

    /* every byte, changed to a few other values, must be rejected */
    static const uint8_t deltas[] = { 1, 2, 13, 25, 0x80, 0xff };
    for (size_t i = 0; i < size; i++) {
        for (size_t d = 0; d < sizeof(deltas); d++) {
            buf[i] = (uint8_t)(orig[i] + deltas[d]);
            if (wa_check(buf, size, NULL) == WA_OK)
                fail("changed byte accepted", size, seq, (long)i);
        }
        buf[i] = orig[i];
    }
    /* a valid datagram cut short must be rejected (except when the cut
     * happens to produce another valid datagram, which it cannot: the
     * checksum field moves) */
    for (size_t len = 0; len < size; len++) {
        if (wa_check(buf, len, NULL) == WA_OK)
            fail("truncated datagram accepted", size, seq, (long)len);
    }
}

int main(void)
{
    print_vector(64, 0);
    print_vector(64, 12345);
    print_vector(24, 0);

    static const size_t sizes[] = { 24, 25, 33, 64, 100, 512, 1399, 1400 };
    static const uint64_t seqs[] = { 0, 1, 25, 26, 12345, 4294967295ull,
                                     4294967296ull, 9999999999ull };
    for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
        for (size_t b = 0; b < sizeof(seqs) / sizeof(seqs[0]); b++)
            check_one(sizes[a], seqs[b]);
    for (uint64_t q = 0; q < 2000; q++)
        check_one(64, q * 7919);

    if (failures) {
        fprintf(stderr, "wa-vectors: %d failures\n", failures);
        return 1;
    }
    fprintf(stderr, "wa-vectors: all format checks passed\n");
    return 0;
}
