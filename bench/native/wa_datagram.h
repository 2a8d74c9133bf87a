/*
 * wa_datagram.h - the datagram format shared by wa-sender and wa-recv.
 *
 * A datagram of size S (24 <= S) is plain ASCII:
 *
 *   offset 0..2        "WA "
 *   offset 3..12       sequence number, exactly 10 decimal digits, zero padded
 *   offset 13          ' '
 *   offset 14..S-9     filler: byte i is 'a' + ((seq + i) % 26)
 *   offset S-8..S-1    Fletcher-32 of bytes [0, S-8) as 8 lowercase hex
 *                      digits, most significant first
 *
 * Fletcher-32 here takes every body byte as one 16-bit word (value 0..255):
 *   sum1 = (sum1 + w) % 65535; sum2 = (sum2 + sum1) % 65535;
 * starting from sum1 = sum2 = 0; result = (sum2 << 16) | sum1.
 *
 * Header only: every function is static inline.
 */
#ifndef WA_DATAGRAM_H
#define WA_DATAGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WA_MIN_SIZE 24
#define WA_MAX_SIZE 1400
#define WA_MAX_SEQ 9999999999ULL /* largest value that fits in 10 digits */

#define WA_PREFIX_LEN 3   /* "WA " */
#define WA_DIGITS_OFF 3
#define WA_DIGITS_LEN 10
#define WA_SPACE_OFF 13
#define WA_FILLER_OFF 14
#define WA_SUM_LEN 8

/* Result codes of wa_check (0 means valid). */
enum wa_check_result {
    WA_OK = 0,
    WA_ERR_SHORT = 1,    /* fewer than WA_MIN_SIZE bytes */
    WA_ERR_PREFIX = 2,   /* does not start with "WA " */
    WA_ERR_DIGITS = 3,   /* sequence field is not 10 digits plus a space */
    WA_ERR_FILLER = 4,   /* a filler letter is wrong */
    WA_ERR_SUMTEXT = 5,  /* checksum field is not 8 lowercase hex digits */
    WA_ERR_SUM = 6       /* checksum does not match the body */
};

static inline uint32_t wa_fletcher32(const uint8_t *data, size_t len)
{
    /* Same result as taking "% 65535" after every addition, because only
     * the sums modulo 65535 matter.  The 64-bit sums are reduced once per
     * block of 4096 bytes, far before they could overflow. */
    uint64_t sum1 = 0, sum2 = 0;
    while (len > 0) {
        size_t n = len < 4096 ? len : 4096;
        for (size_t i = 0; i < n; i++) {
            sum1 += data[i];
            sum2 += sum1;
        }
        sum1 %= 65535u;
        sum2 %= 65535u;
        data += n;
        len -= n;
    }
    return (uint32_t)((sum2 << 16) | sum1);
}

/* Two alphabets in a row: the 26 filler letters that start with letter k
 * are wa_alpha2[k .. k+26).  After 26 bytes the letter index is k again,
 * so the filler is the same 26-byte run repeated (and cut at the end). */
static const char wa_alpha2[52] = {
    'a','b','c','d','e','f','g','h','i','j','k','l','m',
    'n','o','p','q','r','s','t','u','v','w','x','y','z',
    'a','b','c','d','e','f','g','h','i','j','k','l','m',
    'n','o','p','q','r','s','t','u','v','w','x','y','z'
};

static const char wa_hex_digits[16] = {
    '0', '1', '2', '3', '4', '5', '6', '7',
    '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'
};

/* Writes the datagram for seq into buf[0, size).  size must be in
 * [WA_MIN_SIZE, ...) and seq <= WA_MAX_SEQ; the caller checks that. */
static inline void wa_fill(uint8_t *buf, size_t size, uint64_t seq)
{
    buf[0] = 'W';
    buf[1] = 'A';
    buf[2] = ' ';
    uint64_t v = seq;
    for (int d = WA_DIGITS_LEN - 1; d >= 0; d--) {
        buf[WA_DIGITS_OFF + d] = (uint8_t)('0' + (v % 10));
        v /= 10;
    }
    buf[WA_SPACE_OFF] = ' ';

    size_t body = size - WA_SUM_LEN;
    /* byte i is 'a' + (seq + i) % 26 */
    const char *run = wa_alpha2 + (seq + WA_FILLER_OFF) % 26;
    for (size_t i = WA_FILLER_OFF; i < body; i += 26) {
        size_t n = body - i < 26 ? body - i : 26;
        memcpy(buf + i, run, n);
    }

    uint32_t sum = wa_fletcher32(buf, body);
    for (int d = WA_SUM_LEN - 1; d >= 0; d--) {
        buf[body + (size_t)d] = (uint8_t)wa_hex_digits[sum & 0xfu];
        sum >>= 4;
    }
}

/* Validates buf[0, len).  On success returns WA_OK (0) and stores the
 * sequence number in *seq_out (if not NULL).  Otherwise returns one of
 * the WA_ERR_* codes; *seq_out is then left unchanged. */
static inline int wa_check(const uint8_t *buf, size_t len, uint64_t *seq_out)
{
    if (len < WA_MIN_SIZE)
        return WA_ERR_SHORT;
    if (buf[0] != 'W' || buf[1] != 'A' || buf[2] != ' ')
        return WA_ERR_PREFIX;

    uint64_t seq = 0;
    for (int d = 0; d < WA_DIGITS_LEN; d++) {
        uint8_t c = buf[WA_DIGITS_OFF + d];
        if (c < '0' || c > '9')
            return WA_ERR_DIGITS;
        seq = seq * 10 + (uint64_t)(c - '0');
    }
    if (buf[WA_SPACE_OFF] != ' ')
        return WA_ERR_DIGITS;

    size_t body = len - WA_SUM_LEN;
    const char *run = wa_alpha2 + (seq + WA_FILLER_OFF) % 26;
    for (size_t i = WA_FILLER_OFF; i < body; i += 26) {
        size_t n = body - i < 26 ? body - i : 26;
        if (memcmp(buf + i, run, n) != 0)
            return WA_ERR_FILLER;
    }

    uint32_t want = 0;
    for (size_t i = body; i < len; i++) {
        uint8_t c = buf[i];
        uint32_t nib;
        if (c >= '0' && c <= '9')
            nib = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            nib = (uint32_t)(c - 'a' + 10);
        else
            return WA_ERR_SUMTEXT;
        want = (want << 4) | nib;
    }
    if (wa_fletcher32(buf, body) != want)
        return WA_ERR_SUM;

    if (seq_out)
        *seq_out = seq;
    return WA_OK;
}

#endif /* WA_DATAGRAM_H */
