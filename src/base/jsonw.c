/*
 * JSON value writers (see jsonw.h). These sit on the hot path of every row printed, so
 * the common cases (ASCII strings, small integers) avoid stdio.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonw.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const char HEX[] = "0123456789abcdef";

/* Room for n more bytes (and the NUL after them) at the end of b: the writers below put
 * their text straight into the buffer instead of building it aside and copying it (a
 * libc memcpy call per value was a fifth of `cat`'s time). NULL when the buffer failed. */
static inline char *room(icd_buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap && !icd_buf_grow(b, n + 1)) return NULL;
    return b->data + b->len;
}

/* Ends a direct write at `end` (within the room asked for). */
static inline void commit(icd_buf *b, char *end)
{
    b->len = (size_t)(end - b->data);
    *end = '\0';
}

/* Copies n bytes without a library call for short runs (most JSON strings): two
 * overlapping fixed-size moves, which never read or write outside [s, s+n) / [d, d+n). */
static inline void copy_short(char *d, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, z;
        memcpy(&a, s, 8);
        memcpy(&z, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &z, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, z;
        memcpy(&a, s, 4);
        memcpy(&z, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &z, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
#ifdef __SSE2__
    else if (n <= 64) { /* (paths: 16 bytes at a time, the last 16 overlapping) */
        size_t i = 0;
        for (; i + 16 < n; i += 16)
            _mm_storeu_si128((__m128i *)(void *)(d + i),
                             _mm_loadu_si128((const __m128i *)(const void *)(s + i)));
        _mm_storeu_si128((__m128i *)(void *)(d + n - 16),
                         _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16)));
    }
#endif
    else {
        memcpy(d, s, n);
    }
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes are not one. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (n >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;
        if (c == 0xF4 && p[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

/* True when none of the 8 bytes at p needs a look (control, '"', '\\', non-ASCII). */
static inline bool plain8(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
    /* a byte is flagged when it is < 0x20, equals '"' or '\\', or has its high bit set */
    uint64_t t = (x - ones * 0x20) | (q - ones) | (bs - ones) | x;
    return (t & high) == 0;
}

/* plain8 for 4 bytes (the short strings: partition values, keys). */
static inline bool plain4(const unsigned char *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    const uint32_t ones = 0x01010101u, high = 0x80808080u;
    uint32_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
    uint32_t t = (x - ones * 0x20) | (q - ones) | (bs - ones) | x;
    return (t & high) == 0;
}

#ifdef __SSE2__
/* plain8 for 16 bytes: a signed byte below 0x20 is a control byte or has its high bit set. */
static inline bool plain16v(__m128i x)
{
    __m128i bad = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
                               _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                            _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    return _mm_movemask_epi8(bad) == 0;
}
#endif

/* The general case: escapes and UTF-8 repair, from byte i on (bytes before i are plain
 * and already in place up to `run`). */
static void json_str_slow(icd_buf *b, const char *s, size_t n, size_t i)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t run = 0; /* start of the pending run of bytes that need no escaping */
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        size_t seq = c >= 0x80 ? utf8_seq(p + i, n - i) : 0;
        if (seq) {
            i += seq;
            continue;
        }
        icd_buf_append(b, s + run, i - run);
        switch (c) {
        case '"':
            icd_buf_append(b, "\\\"", 2);
            break;
        case '\\':
            icd_buf_append(b, "\\\\", 2);
            break;
        case '\n':
            icd_buf_append(b, "\\n", 2);
            break;
        case '\r':
            icd_buf_append(b, "\\r", 2);
            break;
        case '\t':
            icd_buf_append(b, "\\t", 2);
            break;
        case '\b':
            icd_buf_append(b, "\\b", 2);
            break;
        case '\f':
            icd_buf_append(b, "\\f", 2);
            break;
        default:
            if (c < 0x20) {
                char esc[6] = {'\\', 'u', '0', '0', HEX[c >> 4], HEX[c & 15]};
                icd_buf_append(b, esc, 6);
            } else {
                icd_buf_append(b, "\\ufffd", 6); /* an invalid UTF-8 byte */
            }
        }
        i++;
        run = i;
    }
    icd_buf_append(b, s + run, n - run);
    icd_buf_putc(b, '"');
}

/* icd_json_str for any string (out of line: its 16-byte path and its slow path keep
 * registers that the short strings' path below does not need). */
static __attribute__((noinline)) void json_str_any(icd_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    if (b->len + n + 3 > b->cap && !icd_buf_grow(b, n + 3)) return;
    /* Fast path: find the first byte that needs a look, 8 bytes at a time; plain text
     * (the common case) is copied in one piece. */
    size_t i = 0;
#ifdef __SSE2__
    if (n >= 16) { /* each plain block stored as it is checked (the room is made above) */
        char *d = b->data + b->len + 1;
        for (; i + 16 <= n; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            if (!plain16v(x)) break;
            _mm_storeu_si128((__m128i *)(void *)(d + i), x);
        }
        if (i < n && i + 16 > n) { /* the tail as the last 16 bytes (as below) */
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
            if (plain16v(x)) {
                _mm_storeu_si128((__m128i *)(void *)(d + n - 16), x);
                i = n;
            }
        }
        if (i == n) {
            d[-1] = '"';
            d[n] = '"';
            d[n + 1] = '\0';
            b->len += n + 2;
            return;
        }
    }
#endif
    while (i + 8 <= n && plain8(p + i))
        i += 8;
    /* the tail as the last 8 bytes (overlapping plain ones), not byte by byte */
    if (i < n && n >= 8 && i + 8 > n && plain8(p + n - 8)) i = n;
    if (n >= 4 && n < 8 && plain4(p) && plain4(p + n - 4)) i = n; /* (two overlapping) */
    while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    char *o = b->data + b->len;
    o[0] = '"';
    if (i == n) {
        copy_short(o + 1, s, n);
        o[n + 1] = '"';
        o[n + 2] = '\0';
        b->len += n + 2;
        return;
    }
    b->len++;
    json_str_slow(b, s, n, i);
}

void icd_json_str(icd_buf *b, const char *s, size_t n)
{
    /* Short plain strings (most values: codes, names, ids) in a few instructions: checked as
     * two overlapping words (1 to 3 bytes: their first, middle and last byte as one word),
     * copied as two, quoted. */
    if (n > 0 && n < 16 && b->len + n + 3 <= b->cap) {
        const unsigned char *p = (const unsigned char *)s;
        bool plain;
        if (n >= 8) {
            plain = plain8(p) && plain8(p + n - 8);
        } else if (n >= 4) {
            plain = plain4(p) && plain4(p + n - 4);
        } else {
            unsigned char w[4] = {p[0], p[n >> 1], p[n - 1], 'a'};
            plain = plain4(w);
        }
        if (plain) {
            char *o = b->data + b->len;
            o[0] = '"';
            copy_short(o + 1, s, n);
            o[n + 1] = '"';
            o[n + 2] = '\0';
            b->len += n + 2;
            return;
        }
    }
    json_str_any(b, s, n);
}

void icd_base64_raw(icd_buf *b, const uint8_t *p, size_t n)
{
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!icd_buf_grow(b, (n + 2) / 3 * 4 + 1)) return;
    char *o = b->data + b->len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = T[(v >> 6) & 63];
        *o++ = T[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *o++ = T[v >> 18];
        *o++ = T[(v >> 12) & 63];
        *o++ = T[(v >> 6) & 63];
        *o++ = '=';
    }
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

void icd_json_base64(icd_buf *b, const uint8_t *p, size_t n)
{
    icd_buf_putc(b, '"');
    icd_base64_raw(b, p, n);
    icd_buf_putc(b, '"');
}

static const char DIG2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The 8 digits of v < 10^8, leading zeros included, ending just before e: two 4-digit
 * halves, so the 32-bit steps of the two do not wait on each other. */
static inline void digits8_before(char *e, uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;
    memcpy(e - 8, DIG2 + (a / 100) * 2, 2);
    memcpy(e - 6, DIG2 + (a % 100) * 2, 2);
    memcpy(e - 4, DIG2 + (b / 100) * 2, 2);
    memcpy(e - 2, DIG2 + (b % 100) * 2, 2);
}

/* Writes the decimal digits of v so that they end just before e; returns the first.
 * Eight digits at a time while more are left (a 64-bit step by 100 per two digits was a
 * chain of dependent multiplies), then two at a time in 32 bits. */
static inline char *digits_before(char *e, uint64_t v)
{
    while (v >= 100000000) {
        uint64_t q = v / 100000000;
        digits8_before(e, (uint32_t)(v - q * 100000000));
        e -= 8;
        v = q;
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        e -= 2;
        memcpy(e, DIG2 + (w % 100) * 2, 2);
        w /= 100;
    }
    if (w >= 10) {
        e -= 2;
        memcpy(e, DIG2 + w * 2, 2);
    } else {
        *--e = (char)('0' + w);
    }
    return e;
}

/* Number of decimal digits of v (1..20). */
static inline int num_digits(uint64_t v)
{
    int n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* digits_before and num_digits for values that fit 32 bits (most counts, sizes and ids
 * of a plan): 32-bit division by 100 is a cheaper multiply, the digit count a few compares. */
static inline void digits_before32(char *e, uint32_t v)
{
    while (v >= 100) {
        e -= 2;
        memcpy(e, DIG2 + (v % 100) * 2, 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(e - 2, DIG2 + v * 2, 2);
    else
        e[-1] = (char)('0' + v);
}

static inline int num_digits32(uint32_t v)
{
    if (v < 100000) {
        if (v < 100) return v < 10 ? 1 : 2;
        if (v < 1000) return 3;
        return v < 10000 ? 4 : 5;
    }
    if (v < 10000000) return v < 1000000 ? 6 : 7;
    if (v < 1000000000) return v < 100000000 ? 8 : 9;
    return 10;
}

/* The digits of v at p (room for 20); returns the end. */
static inline char *put_u64(char *p, uint64_t v)
{
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v <= UINT32_MAX) {
        char *e = p + num_digits32((uint32_t)v);
        digits_before32(e, (uint32_t)v);
        return e;
    }
    char *e = p + num_digits(v);
    digits_before(e, v);
    return e;
}

/* The digits of v, with a '-' when negative, at p (room for 21); returns the end. */
static inline char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

void icd_json_u64(icd_buf *b, uint64_t v)
{
    char *p = room(b, 20);
    if (p) commit(b, put_u64(p, v));
}

char *icd_json_i64_at(char *p, int64_t v)
{
    if (v >= 0 && v <= (int64_t)UINT32_MAX) {
        uint32_t u = (uint32_t)v;
        char *e = p + num_digits32(u);
        digits_before32(e, u);
        return e;
    }
    return put_i64(p, v);
}

void icd_json_i64(icd_buf *b, int64_t v)
{
    char *p = room(b, 21);
    if (!p) return;
    if (v >= 0 && v <= (int64_t)UINT32_MAX) { /* (sizes, counts, ids: written in place) */
        uint32_t u = (uint32_t)v;
        char *e = p + num_digits32(u);
        digits_before32(e, u);
        commit(b, e);
        return;
    }
    commit(b, put_i64(p, v));
}

/* The text of a NaN or an infinity (out of line: the writers test isfinite inline). */
static void put_nonfinite(icd_buf *b, double v)
{
    if (isnan(v))
        icd_buf_append(b, "\"NaN\"", 5);
    else if (v > 0)
        icd_buf_append(b, "\"Infinity\"", 10);
    else
        icd_buf_append(b, "\"-Infinity\"", 11);
}

static const uint64_t P10U[] = {1ull,
                                10ull,
                                100ull,
                                1000ull,
                                10000ull,
                                100000ull,
                                1000000ull,
                                10000000ull,
                                100000000ull,
                                1000000000ull,
                                10000000000ull,
                                100000000000ull,
                                1000000000000ull,
                                10000000000000ull,
                                100000000000000ull,
                                1000000000000000ull,
                                10000000000000000ull,
                                100000000000000000ull,
                                1000000000000000000ull,
                                10000000000000000000ull};

/* n / 10^k for 0 <= k <= 19, by a constant per case: the compiler turns each into a
 * multiply and shifts, where a division by the table's P10U[k] is a hardware divide
 * (tens of cycles; five of them were most of a double's text). */
static inline uint64_t div_pow10(uint64_t n, int k)
{
    switch (k) {
    case 0:
        return n;
    case 1:
        return n / 10u;
    case 2:
        return n / 100u;
    case 3:
        return n / 1000u;
    case 4:
        return n / 10000u;
    case 5:
        return n / 100000u;
    case 6:
        return n / 1000000u;
    case 7:
        return n / 10000000u;
    case 8:
        return n / 100000000u;
    case 9:
        return n / 1000000000u;
    case 10:
        return n / 10000000000u;
    case 11:
        return n / 100000000000u;
    case 12:
        return n / 1000000000000u;
    case 13:
        return n / 10000000000000u;
    case 14:
        return n / 100000000000000u;
    case 15:
        return n / 1000000000000000u;
    case 16:
        return n / 10000000000000000u;
    case 17:
        return n / 100000000000000000u;
    case 18:
        return n / 1000000000000000000u;
    default:
        return n / 10000000000000000000u;
    }
}

/* The 16 digits of x < 10^16, leading zeros included, at o. */
static inline void put16(char *o, uint64_t x)
{
    uint64_t hi = x / 100000000;
    uint32_t lo = (uint32_t)(x - hi * 100000000);
#ifdef __SSE2__
    /* All 16 at once in the lanes of a vector: the four 4-digit groups, one per 32-bit
     * lane, become two 2-digit pairs (the quotient by 100 in the lane's low half, the
     * remainder in its high half), and each 16-bit pair two digits (tens in the low
     * byte); x / 100 = (x * 5243 >> 16) >> 3 for x < 10^4 and x / 10 = x * 6554 >> 16
     * for x < 100. One store, no table. */
    uint32_t a1 = (uint32_t)hi / 10000, a0 = (uint32_t)hi - a1 * 10000;
    uint32_t b1 = lo / 10000, b0 = lo - b1 * 10000;
    __m128i v =
        _mm_set_epi64x((int64_t)(b1 | (uint64_t)b0 << 32), (int64_t)(a1 | (uint64_t)a0 << 32));
    __m128i t = _mm_srli_epi16(_mm_mulhi_epu16(v, _mm_set1_epi16(5243)), 3);
    __m128i r = _mm_sub_epi16(v, _mm_mullo_epi16(t, _mm_set1_epi16(100)));
    __m128i y = _mm_or_si128(t, _mm_slli_epi32(r, 16));
    __m128i tens = _mm_mulhi_epu16(y, _mm_set1_epi16(6554));
    __m128i units = _mm_sub_epi16(y, _mm_mullo_epi16(tens, _mm_set1_epi16(10)));
    __m128i z = _mm_or_si128(tens, _mm_slli_epi16(units, 8)); /* tens first in memory */
    _mm_storeu_si128((__m128i *)(void *)o, _mm_or_si128(z, _mm_set1_epi8('0')));
#else
    digits8_before(o + 8, (uint32_t)hi);
    digits8_before(o + 16, lo);
#endif
}

/* The 3 digits of x < 1000 at o. */
static inline void put3(char *o, uint32_t x)
{
    uint32_t h = x / 100;
    o[0] = (char)('0' + h);
    memcpy(o + 1, DIG2 + (x - h * 100) * 2, 2);
}

/* Writes ip, the point and the nf-digit fraction fp < 10^nf (leading zeros included,
 * trailing zeros dropped; "0" when fp is 0), "-" first when neg. Returns the length: at
 * most 33 bytes (a 15-digit ip leaves 16 fraction digits; ip 0 takes up to 20); bytes up
 * to 37 may be written.
 *
 * The fraction is scaled to a fixed width, 3 or 19 digits (the digits past nf are zeros
 * nobody keeps), and written at fixed places: no branch on how many digits it has, which
 * for full-precision values is as random as the values. */
static inline __attribute__((always_inline)) size_t put_fixed(uint64_t ip, uint64_t fp, int nf,
                                                              bool neg, char *out)
{
    char *o = out;
    *o = '-';
    o += neg;
    if (fp == 0) { /* (a non-integral value always has a fraction: only a defence) */
        nf = 1;
    } else {
        while (fp % 10 == 0) { /* (shortest digits never end in 0: only a defence) */
            fp /= 10;
            nf--;
        }
    }
    if (ip < 10) /* (most values: no call) */
        *o++ = (char)('0' + ip);
    else
        o = put_u64(o, ip);
    *o++ = '.';
    if (nf <= 3) {
        put3(o, (uint32_t)(fp * P10U[3 - nf]));
        return (size_t)(o + nf - out);
    }
    if (nf <= 19) {
        uint64_t x = fp * P10U[19 - nf]; /* < 10^19 < 2^64 */
        uint64_t top = x / 10000000000000000u;
        put3(o, (uint32_t)top);
        put16(o + 3, x - top * 10000000000000000u);
        return (size_t)(o + nf - out);
    }
    char *e = o + nf, *d = digits_before(e, fp);
    while (d > o) /* leading zeros of the fraction */
        *--d = '0';
    return (size_t)(e - out);
}

/* Shortest fixed-point text of a finite, non-integral binary floating-point value
 * m * 2^e (e < 0) of magnitude av in [1e-4, 1e15), without snprintf. With K fraction
 * digits chosen so that v * 10^K has about 17 digits, exact 128-bit integer arithmetic on
 * m * 10^K / 2^-e gives the range [l, h] of K-digit decimals that read back as the same
 * value (inside half the gap to each neighbour; the gap below is half as wide at a power
 * of two; the bounds count when m is even, as round-half-even reads them). The shortest
 * text is then the multiple of the largest power of ten 10^j within [l, h], nearest to
 * the value. Returns the text length, or 0 outside the handled range.
 *
 * The integer part of every text is that of av: the range [l, h] holds no integer (all
 * of them below 2^53 are values of their own), so the digits before the point come from
 * av and the fraction from the decimal less them, with no division by a power of ten. */
static inline __attribute__((always_inline)) size_t
shortest_fixed(uint64_t m, int e, bool narrow_below, bool neg, double av, bool is_double, char *out)
{
    typedef unsigned __int128 u128;
    int s = -e;
    if (s <= 0 || s > 120) return 0;
    static const double P10D[] = {1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,
                                  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t ip = (uint64_t)av;
    /* Values with few fraction digits (prices, metrics) first: v * 10^k is an integer N
     * below 2^53 and N / 10^k (one correctly rounded division) gives back v, so the text
     * of N with k fraction digits reads back as v. */
    double x6 = av * 1e6;
    /* (Doubles only: the shortest text of a float may drop digits its double needs.) */
    bool few = is_double;
    int k = 1;
    if (few && x6 < 9007199254740992.0) {
        /* If v * 10^k were within x * 2^-51 of an integer for some k <= 6, v * 10^6 would
         * be within x6 * 2^-50 of one (the extra rounding is below 2^-52 relative): a
         * value further off, like most full-precision doubles, skips the loop. */
        uint64_t n6 = (uint64_t)(x6 + 0.5);
        few = fabs(x6 - (double)n6) <= x6 * 0x1p-49;
        /* Below 2^50, n6 is exactly N * 10^(6-k) for the first k that passes (both
         * roundings together are under 1/2), so no k under 6 less n6's trailing zeros
         * can pass: the loop starts there (the five tests are independent). */
        if (few && x6 < 0x1p50)
            k += (n6 % 10 != 0) + (n6 % 100 != 0) + (n6 % 1000 != 0) + (n6 % 10000 != 0) +
                 (n6 % 100000 != 0);
    }
    for (; few && k <= 6; k++) {
        double x = av * P10D[4 + k];
        if (x >= 9007199254740992.0) break;
        /* the product may be off by an ulp or two from the integer it stands for */
        uint64_t n = (uint64_t)(x + 0.5);
        if (fabs(x - (double)n) <= x * 0x1p-51 && (double)n / P10D[4 + k] == av)
            return put_fixed(ip, n - ip * P10U[k], k, neg, out);
    }
    int p = -3; /* 10^(p-1) <= av < 10^p, roughly (only the digit budget depends on it) */
    while (p < 16 && av >= P10D[p + 4])
        p++;
    int K = 17 - p;
    if (K < 1 || K > 21) return 0;
    u128 p10 = K <= 19 ? (u128)P10U[K] : (u128)P10U[19] * P10U[K - 19];
    u128 w = (u128)m * p10; /* v * 10^K * 2^s, exactly; < 2^123 */
    u128 four_w = w << 2;
    u128 lo = four_w - (narrow_below ? p10 : p10 << 1), hi = four_w + (p10 << 1);
    int sh = s + 2;
    bool incl = (m & 1) == 0;
    u128 one = (u128)1 << sh;
    /* inclusive bounds: ceil(lo / 2^sh), floor(hi / 2^sh); exclusive ones: the integers
     * strictly inside (a bound's parity is random: no branch on it) */
    u128 L = (lo + one - incl) >> sh;
    u128 H = (hi - !incl) >> sh;
    if (L > H || (H >> 63)) return 0;
    uint64_t l = (uint64_t)L, h = (uint64_t)H;
    uint64_t c = (uint64_t)(w >> s); /* floor(v * 10^K) */
    /* j: the largest j < K with a multiple of 10^j in [l, h]. A full-precision value has
     * j of 0 or 1 mostly, and those take no branch; j >= 2 takes the loop. */
    int j;
    uint64_t q, d;
    if (h / 100 * 100 >= l && K > 2) {
        j = 2;
        while (j < K - 1 && div_pow10(h, j + 1) * P10U[j + 1] >= l)
            j++;
        q = div_pow10(c, j);
        d = P10U[j];
    } else {
        bool j1 = h / 10 * 10 >= l && K > 1;
        j = j1;
        q = j1 ? c / 10 : c;
        d = j1 ? 10 : 1;
    }
    /* Of the multiples r = q * d <= c and r + d, the one in [l, h]; when both are, the
     * nearer, on a tie the even last digit, as Ryu / Java. */
    uint64_t r = q * d; /* <= c <= h */
    bool r_ok = r >= l, up_ok = r + d <= h;
    if (!r_ok && !up_ok) return 0;
    u128 below = w - ((u128)r << s), above = ((u128)d << s) - below;
    bool nearer_up = (above < below) | ((above == below) & (q & 1));
    q += up_ok & (!r_ok | nearer_up);
    int nf = K - j;
    return put_fixed(ip, ip ? q - ip * P10U[nf] : q, nf, neg, out);
}

/* A finite double outside shortest_fixed's range, in exponent form: the shortest of 15..17
 * significant digits that reads back exactly. Any decimal of at most 15 digits is
 * recovered by %.15g for normal doubles; subnormals have fewer bits, so their shortest
 * form may be shorter: search from one digit. (Out of line: its buffer and calls would
 * cost every double a larger stack frame.) */
static __attribute__((noinline, cold)) void double_general(icd_buf *b, double v)
{
    char tmp[64];
    for (int prec = fabs(v) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
        int n = snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (prec == 17 || strtod(tmp, NULL) == v) {
            icd_buf_append(b, tmp, (size_t)n);
            return;
        }
    }
}

void icd_json_double(icd_buf *b, double v)
{
    if (!isfinite(v)) {
        put_nonfinite(b, v);
        return;
    }
    char *o = room(b, 64); /* the longest text is 33 bytes; put_fixed may write 37 */
    if (!o) return;
    if (fabs(v) < 1e15 && v == (double)(int64_t)v) { /* range first: the cast is UB outside */
        /* integral values: exact and fast; keep the sign of -0.0 */
        if (v == 0 && signbit(v)) {
            memcpy(o, "-0.0", 4);
            commit(b, o + 4);
        } else {
            o = put_i64(o, (int64_t)v);
            memcpy(o, ".0", 2);
            commit(b, o + 2);
        }
        return;
    }
    if (fabs(v) >= 1e-4 && fabs(v) < 1e15) {
        uint64_t bits;
        memcpy(&bits, &v, 8);
        int ex = (int)((bits >> 52) & 0x7ff);
        uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
        size_t n = shortest_fixed(frac | (UINT64_C(1) << 52), ex - 1075, frac == 0 && ex > 1, v < 0,
                                  fabs(v), true, o);
        if (n) {
            commit(b, o + n);
            return;
        }
    }
    double_general(b, v);
}

void icd_json_float(icd_buf *b, float v)
{
    if (!isfinite(v)) {
        put_nonfinite(b, v);
        return;
    }
    char *o = room(b, 64); /* see icd_json_double */
    if (!o) return;
    if (fabsf(v) < 1e7f && v == (float)(int32_t)v) { /* range first: the cast is UB outside */
        if (v == 0 && signbit(v)) {
            memcpy(o, "-0.0", 4);
            commit(b, o + 4);
        } else {
            o = put_i64(o, (int32_t)v);
            memcpy(o, ".0", 2);
            commit(b, o + 2);
        }
        return;
    }
    char tmp[64];
    if (fabsf(v) >= 1e-4f && fabsf(v) < 1e7f) {
        uint32_t bits;
        memcpy(&bits, &v, 4);
        int ex = (int)((bits >> 23) & 0xff);
        uint32_t frac = bits & ((1u << 23) - 1);
        size_t n = shortest_fixed(frac | (1u << 23), ex - 150, frac == 0 && ex > 1, v < 0, fabsf(v),
                                  false, o);
        if (n) {
            commit(b, o + n);
            return;
        }
    }
    for (int prec = fabsf(v) < FLT_MIN ? 1 : 6; prec <= 9; prec++) { /* see icd_json_double */
        int n = snprintf(tmp, sizeof tmp, "%.*g", prec, (double)v);
        if (prec == 9 || strtof(tmp, NULL) == v) {
            icd_buf_append(b, tmp, (size_t)n);
            return;
        }
    }
}

/* Writes the decimal digits `digits` (most significant first, no sign) with a point
 * placed `scale` digits from the right. */
static void put_scaled(icd_buf *b, bool neg, const char *digits, size_t nd, int scale)
{
    if (neg) icd_buf_putc(b, '-');
    if (scale <= 0) {
        icd_buf_append(b, digits, nd);
        for (int i = 0; i < -scale; i++)
            icd_buf_putc(b, '0');
        return;
    }
    size_t s = (size_t)scale;
    if (nd <= s) {
        icd_buf_append(b, "0.", 2);
        for (size_t i = nd; i < s; i++)
            icd_buf_putc(b, '0');
        icd_buf_append(b, digits, nd);
    } else {
        icd_buf_append(b, digits, nd - s);
        icd_buf_putc(b, '.');
        icd_buf_append(b, digits + nd - s, s);
    }
}

void icd_fmt_decimal_i64(icd_buf *b, int64_t unscaled, int scale)
{
    uint64_t m = unscaled < 0 ? (uint64_t)0 - (uint64_t)unscaled : (uint64_t)unscaled;
    char tmp[24];
    char *e = tmp + sizeof tmp, *s = e;
    do {
        *--s = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    put_scaled(b, unscaled < 0, s, (size_t)(e - s), scale);
}

void icd_fmt_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale)
{
    if (n == 0) {
        put_scaled(b, false, "0", 1, scale);
        return;
    }
    if (n <= 8) {
        uint64_t u = (be[0] & 0x80) ? UINT64_MAX : 0;
        for (size_t i = 0; i < n; i++)
            u = (u << 8) | be[i];
        icd_fmt_decimal_i64(b, (int64_t)u, scale);
        return;
    }
    /* Arbitrary length: magnitude as base-1e9 limbs by repeated division. */
    bool neg = be[0] & 0x80;
    uint8_t stackmag[64];
    uint8_t *mag = n <= sizeof stackmag ? stackmag : malloc(n);
    char *digits = malloc(n * 3 + 2);
    if (!mag || !digits) {
        b->oom = true;
        if (mag != stackmag) free(mag);
        free(digits);
        return;
    }
    memcpy(mag, be, n);
    if (neg) { /* two's complement negate */
        unsigned carry = 1;
        for (size_t i = n; i-- > 0;) {
            unsigned v = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)v;
            carry = v >> 8;
        }
    }
    size_t nd = 0, start = 0;
    while (start < n && mag[start] == 0)
        start++;
    char *out = digits + n * 3 + 1; /* filled right to left */
    while (start < n) {
        uint32_t rem = 0;
        for (size_t i = start; i < n; i++) {
            uint32_t cur = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
        }
        *--out = (char)('0' + rem);
        nd++;
        while (start < n && mag[start] == 0)
            start++;
    }
    if (nd == 0) {
        *--out = '0';
        nd = 1;
    }
    put_scaled(b, neg, out, nd, scale);
    if (mag != stackmag) free(mag);
    free(digits);
}

void icd_json_decimal_i64(icd_buf *b, int64_t unscaled, int scale)
{
    icd_buf_putc(b, '"');
    icd_fmt_decimal_i64(b, unscaled, scale);
    icd_buf_putc(b, '"');
}

void icd_json_decimal_be(icd_buf *b, const uint8_t *be, size_t n, int scale)
{
    icd_buf_putc(b, '"');
    icd_fmt_decimal_be(b, be, n, scale);
    icd_buf_putc(b, '"');
}

/* The last day converted by date_text on this thread: rows mostly come sorted by time,
 * so consecutive timestamps tend to share their day and skip the calendar arithmetic. */
static _Thread_local struct {
    bool ok;
    int64_t days;
    char text[10];
} last_date;

/* "YYYY-MM-DD" of a day number into out (years 0..9999); returns false for other years. */
static bool date_text(int64_t days, char out[10])
{
    if (last_date.ok && last_date.days == days) {
        memcpy(out, last_date.text, 10);
        return true;
    }
    int64_t y;
    int m, d;
    icd_civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) return false;
    memcpy(out, DIG2 + (y / 100) * 2, 2);
    memcpy(out + 2, DIG2 + (y % 100) * 2, 2);
    out[4] = '-';
    memcpy(out + 5, DIG2 + m * 2, 2);
    out[7] = '-';
    memcpy(out + 8, DIG2 + d * 2, 2);
    last_date.ok = true;
    last_date.days = days;
    memcpy(last_date.text, out, 10);
    return true;
}

void icd_fmt_date(icd_buf *b, int64_t days)
{
    char t[10];
    if (date_text(days, t)) {
        icd_buf_append(b, t, 10);
        return;
    }
    int64_t y;
    int m, d;
    icd_civil_from_days(days, &y, &m, &d);
    icd_buf_printf(b, "%c%04lld-%02d-%02d", y < 0 ? '-' : '+', (long long)(y < 0 ? -y : y), m, d);
}

/* "HH:MM:SS[.fraction]" of nanoseconds within a day into out (18 bytes of room: all nine
 * fraction digits are written, then the text cut to `digits`). */
static size_t time_text(int64_t nanos_of_day, int digits, char *out)
{
    /* callers pass 0 <= nanos_of_day < 86400e9; the % 100 only keeps odd input in the table */
    uint64_t ns = (uint64_t)nanos_of_day;
    uint32_t secs = (uint32_t)(ns / 1000000000 % 1000000), frac = (uint32_t)(ns % 1000000000);
    memcpy(out, DIG2 + (secs / 3600 % 100) * 2, 2);
    out[2] = ':';
    memcpy(out + 3, DIG2 + (secs / 60 % 60) * 2, 2);
    out[5] = ':';
    memcpy(out + 6, DIG2 + (secs % 60) * 2, 2);
    if (digits <= 0) return 8;
    /* straight to out: built aside and copied, the ten bytes were read back from stores
     * that had not reached the cache yet */
    out[8] = '.';
    out[9] = (char)('0' + frac / 100000000);
    digits8_before(out + 18, frac % 100000000);
    return 9 + (size_t)digits;
}

void icd_fmt_time(icd_buf *b, int64_t nanos_of_day, int digits)
{
    char t[20];
    icd_buf_append(b, t, time_text(nanos_of_day, digits, t));
}

void icd_fmt_timestamp(icd_buf *b, int64_t days, int64_t nanos_of_day, int digits, bool utc)
{
    char t[48];
    size_t n = 0;
    if (date_text(days, t)) {
        n = 10;
    } else {
        icd_fmt_date(b, days);
    }
    t[n++] = 'T';
    n += time_text(nanos_of_day, digits, t + n);
    if (utc) {
        memcpy(t + n, "+00:00", 6);
        n += 6;
    }
    icd_buf_append(b, t, n);
}

void icd_json_date(icd_buf *b, int64_t days)
{
    icd_buf_putc(b, '"');
    icd_fmt_date(b, days);
    icd_buf_putc(b, '"');
}

static int64_t unit_per_second(int unit_digits)
{
    return unit_digits == 3 ? 1000 : unit_digits == 6 ? 1000000 : 1000000000;
}

void icd_json_time(icd_buf *b, int64_t v, int unit_digits)
{
    int64_t ups = unit_per_second(unit_digits);
    int64_t day = 86400 * ups;
    v = icd_floormod(v, day);
    icd_buf_putc(b, '"');
    icd_fmt_time(b, v * (1000000000 / ups), unit_digits);
    icd_buf_putc(b, '"');
}

/* v units since the epoch as days and nanoseconds of the day, for each unit with a
 * constant divisor (a multiply, not a hardware divide per timestamp). */
static inline void split_days(int64_t v, int unit_digits, int64_t *days, int64_t *nanos)
{
    switch (unit_digits) {
    case 3:
        *days = icd_floordiv(v, INT64_C(86400000));
        *nanos = icd_floormod(v, INT64_C(86400000)) * 1000000;
        break;
    case 6:
        *days = icd_floordiv(v, INT64_C(86400000000));
        *nanos = icd_floormod(v, INT64_C(86400000000)) * 1000;
        break;
    default:
        *days = icd_floordiv(v, INT64_C(86400000000000));
        *nanos = icd_floormod(v, INT64_C(86400000000000));
        break;
    }
}

void icd_json_timestamp(icd_buf *b, int64_t v, int unit_digits, bool utc)
{
    int64_t days, nanos;
    split_days(v, unit_digits, &days, &nanos);
    char *t = room(b, 40); /* '"' date 'T' time(18) "+00:00" '"' = 38 */
    if (!t) return;
    if (!date_text(days, t + 1)) { /* years outside 0..9999: the general path */
        icd_buf_putc(b, '"');
        icd_fmt_timestamp(b, days, nanos, unit_digits, utc);
        icd_buf_putc(b, '"');
        return;
    }
    t[0] = '"';
    t[11] = 'T';
    size_t n = 12 + time_text(nanos, unit_digits, t + 12);
    if (utc) {
        memcpy(t + n, "+00:00", 6);
        n += 6;
    }
    t[n++] = '"';
    commit(b, t + n);
}

void icd_json_uuid(icd_buf *b, const uint8_t u[16])
{
    char t[38];
    int o = 0;
    t[o++] = '"';
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) t[o++] = '-';
        t[o++] = HEX[u[i] >> 4];
        t[o++] = HEX[u[i] & 15];
    }
    t[o++] = '"';
    icd_buf_append(b, t, (size_t)o);
}

/* ---- bounded buffered stream ------------------------------------------------------------ */

void icd_jsonw_init(icd_jsonw *w, bool (*sink)(void *ctx, const char *p, size_t n), void *ctx)
{
    w->buf = (icd_buf)ICD_BUF_INIT;
    w->sink = sink;
    w->ctx = ctx;
    w->failed = false;
}

static bool file_sink(void *ctx, const char *p, size_t n)
{
    return fwrite(p, 1, n, ctx) == n;
}

void icd_jsonw_init_file(icd_jsonw *w, FILE *fp)
{
    icd_jsonw_init(w, file_sink, fp);
}

void icd_jsonw_flush(icd_jsonw *w)
{
    if (!w->sink) return;
    if (w->buf.len && !w->failed && !w->buf.oom && !w->sink(w->ctx, w->buf.data, w->buf.len))
        w->failed = true;
    icd_buf_clear(&w->buf);
}

int icd_jsonw_finish(icd_jsonw *w, icd_error *err)
{
    bool oom = w->buf.oom;
    if (w->sink) {
        icd_jsonw_flush(w);
        icd_buf_free(&w->buf);
        if (w->sink == file_sink && fflush(w->ctx)) w->failed = true;
    }
    if (oom) return icd_fail_nomem(err);
    if (w->failed)
        return icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output: %s", strerror(errno));
    return 0;
}
