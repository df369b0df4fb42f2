/*
 * Parquet value/level decoders (src/formats/parquet/encodings.h): known answers worked
 * out by hand from the examples of parquet-format's Encodings.md, round trips through
 * small test-only encoders written here from the spec (RLE/bit-packing hybrid, legacy
 * BIT_PACKED, DELTA_BINARY_PACKED with 32- and 64-bit wrapping, DELTA_LENGTH_BYTE_ARRAY,
 * DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT), and the corrupt inputs each decoder must reject.
 */
#include <stdint.h>
#include <stdlib.h>

#include "formats/parquet/encodings.h"
#include "test.h"

/* ---------- helpers: PRNG and a growable byte buffer ---------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, uint8_t v)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->p = realloc(b->p, b->cap);
    }
    b->p[b->n++] = v;
}
static void put_n(bytes *b, const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(b, ((const uint8_t *)src)[i]);
}
static void put_uleb(bytes *b, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        put(b, (uint8_t)(c | (v ? 0x80 : 0)));
    } while (v);
}
static void put_zigzag(bytes *b, int64_t v)
{
    put_uleb(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static void put_le32(bytes *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put(b, (uint8_t)(v >> (8 * i)));
}

/* LSB-first bit writer over a zeroed region of `b` starting at byte `at`. */
static void pack_lsb(bytes *b, size_t at, const uint64_t *v, size_t nv, int w)
{
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < w; k++)
            if ((v[i] >> k) & 1) {
                size_t bit = i * (size_t)w + (size_t)k;
                b->p[at + bit / 8] |= (uint8_t)(1u << (bit % 8));
            }
}
static void put_zeros(bytes *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(b, 0);
}

static int bits_for(uint64_t v)
{
    int w = 0;
    while (w < 64 && (v >> w))
        w++;
    return w;
}

/* ---------- test-only encoders ---------- */

/* RLE/bit-packing hybrid: a repeated run for 8+ equal values, bit-packed groups otherwise.
 * Returns how many values the stream holds, padding of the last bit-packed group included. */
static size_t enc_rle(bytes *b, const uint32_t *v, size_t n, int w)
{
    size_t i = 0, held = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && v[j] == v[i])
            j++;
        if (j - i >= 8) {
            put_uleb(b, (uint64_t)(j - i) << 1);
            held += j - i;
            for (int k = 0; k < (w + 7) / 8; k++)
                put(b, (uint8_t)(v[i] >> (8 * k)));
            i = j;
            continue;
        }
        /* bit-pack up to 64 values (or until a long equal stretch starts) */
        size_t end = i + 64 < n ? i + 64 : n;
        size_t groups = (end - i + 7) / 8;
        put_uleb(b, (uint64_t)groups << 1 | 1);
        uint64_t tmp[64] = {0};
        for (size_t k = i; k < end; k++)
            tmp[k - i] = v[k];
        size_t at = b->n;
        put_zeros(b, groups * (size_t)w);
        pack_lsb(b, at, tmp, groups * 8, w);
        held += groups * 8;
        i = end;
    }
    return held;
}

/* DELTA_BINARY_PACKED. narrow32: deltas computed with 32-bit wrapping, as an INT32 writer
 * does. Width bytes of unneeded miniblocks of the last block are filled with garbage
 * (readers must accept any value). */
static void enc_delta(bytes *b, const int64_t *v, size_t n, uint64_t block, uint64_t mbs,
                      int narrow32)
{
    put_uleb(b, block);
    put_uleb(b, mbs);
    put_uleb(b, n);
    put_zigzag(b, n ? v[0] : 0);
    uint64_t mbsize = block / mbs;
    uint64_t *d = calloc(block, sizeof *d);
    for (size_t i = 1; i < n;) {
        size_t cnt = n - i < block ? n - i : (size_t)block;
        int64_t min = INT64_MAX;
        for (size_t k = 0; k < cnt; k++) {
            int64_t delta;
            if (narrow32)
                delta = (int32_t)(uint32_t)((uint32_t)v[i + k] - (uint32_t)v[i + k - 1]);
            else
                delta = (int64_t)((uint64_t)v[i + k] - (uint64_t)v[i + k - 1]);
            d[k] = (uint64_t)delta;
            if (delta < min) min = delta;
        }
        put_zigzag(b, min);
        size_t used_mbs = (cnt + mbsize - 1) / mbsize;
        int widths[1024];
        for (size_t m = 0; m < mbs; m++) {
            uint64_t maxrel = 0;
            for (size_t k = m * mbsize; k < (m + 1) * mbsize && k < cnt; k++) {
                uint64_t rel =
                    narrow32 ? (uint32_t)((uint32_t)d[k] - (uint32_t)min) : d[k] - (uint64_t)min;
                d[k] = rel;
                if (rel > maxrel) maxrel = rel;
            }
            widths[m] = bits_for(maxrel);
            put(b, m < used_mbs ? (uint8_t)widths[m] : (uint8_t)(0xA0 + rnd_below(64)));
        }
        for (size_t m = 0; m < used_mbs; m++) {
            uint64_t *vals = calloc(mbsize, sizeof *vals);
            for (size_t k = 0; k < mbsize && m * mbsize + k < cnt; k++)
                vals[k] = d[m * mbsize + k];
            size_t at = b->n;
            put_zeros(b, (size_t)(mbsize / 8 * (uint64_t)widths[m]));
            pack_lsb(b, at, vals, mbsize, widths[m]);
            free(vals);
        }
        i += cnt;
    }
    free(d);
}

typedef struct str {
    const uint8_t *p;
    uint32_t len;
} str;

static void enc_dlba(bytes *b, const str *s, size_t n)
{
    int64_t *lens = calloc(n + 1, sizeof *lens);
    for (size_t i = 0; i < n; i++)
        lens[i] = s[i].len;
    enc_delta(b, lens, n, 128, 4, 0);
    for (size_t i = 0; i < n; i++)
        put_n(b, s[i].p, s[i].len);
    free(lens);
}

static void enc_dba(bytes *b, const str *s, size_t n)
{
    int64_t *pre = calloc(n + 1, sizeof *pre);
    str *suf = malloc((n + 1) * sizeof *suf);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = 0;
        if (i)
            while (k < s[i].len && k < s[i - 1].len && s[i].p[k] == s[i - 1].p[k])
                k++;
        pre[i] = k;
        suf[i].p = s[i].p + k;
        suf[i].len = s[i].len - k;
    }
    enc_delta(b, pre, n, 256, 8, 0);
    enc_dlba(b, suf, n);
    free(pre);
    free(suf);
}

/* ---------- known answers from Encodings.md ---------- */

static void test_rle_spec_example(void)
{
    /* 0..7 at bit width 3, one bit-packed group: header (1 << 1) | 1, then the spec's
     * bytes 10001000 11000110 11111010. */
    const uint8_t bp[] = {0x03, 0x88, 0xC6, 0xFA};
    uint32_t out[8];
    size_t used = 99;
    icd_error err;
    CHECK_EQ_INT(pq_rle_decode(bp, sizeof bp, 3, out, 8, &used, &err), 0);
    for (uint32_t i = 0; i < 8; i++)
        CHECK_EQ_INT(out[i], i);
    CHECK_EQ_INT(used, 4);
    /* Only 5 of the group's 8 values wanted: the padding values are not returned. */
    CHECK_EQ_INT(pq_rle_decode(bp, sizeof bp, 3, out, 5, &used, &err), 0);
    CHECK_EQ_INT(out[4], 4);
    /* A repeated run: header 5 << 1, value 7 in one byte; then the bit-packed group. */
    const uint8_t mix[] = {0x0A, 0x07, 0x03, 0x88, 0xC6, 0xFA};
    uint32_t out2[13];
    CHECK_EQ_INT(pq_rle_decode(mix, sizeof mix, 3, out2, 13, &used, &err), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(out2[i], 7);
    for (uint32_t i = 0; i < 8; i++)
        CHECK_EQ_INT(out2[5 + i], i);
    CHECK_EQ_INT(used, 6);
    /* Width 17: a repeated value takes 3 bytes (0x01FFFF = 131071). */
    const uint8_t wide[] = {0x04, 0xFF, 0xFF, 0x01};
    CHECK_EQ_INT(pq_rle_decode(wide, sizeof wide, 17, out, 2, &used, &err), 0);
    CHECK_EQ_INT(out[0], 131071);
    CHECK_EQ_INT(out[1], 131071);
}

static void test_bit_packed_spec_example(void)
{
    /* 0..7 at bit width 3, MSB first: 00000101 00111001 01110111. */
    const uint8_t bp[] = {0x05, 0x39, 0x77};
    uint32_t out[8];
    size_t used = 0;
    icd_error err;
    CHECK_EQ_INT(pq_bit_packed_decode(bp, sizeof bp, 3, out, 8, &used, &err), 0);
    for (uint32_t i = 0; i < 8; i++)
        CHECK_EQ_INT(out[i], i);
    CHECK_EQ_INT(used, 3);
    /* 30 values of 2 bits take 8 bytes (spec). */
    uint8_t z[8] = {0};
    uint32_t o30[30];
    CHECK_EQ_INT(pq_bit_packed_decode(z, 8, 2, o30, 30, &used, &err), 0);
    CHECK_EQ_INT(used, 8);
    CHECK_EQ_INT(pq_bit_packed_decode(z, 7, 2, o30, 30, &used, &err), ICD_ECORRUPT);
}

/* The spec's two DELTA_BINARY_PACKED examples use block size 8, "invalid in real cases";
 * here they are rewritten by hand for block size 128 with 4 miniblocks of 32. */
static void test_delta_spec_examples(void)
{
    icd_error err;
    size_t used = 0;
    int64_t out[8];
    /* Example 1: 1 2 3 4 5. Header 128 (0x80 0x01), 4, 5, zigzag(1) = 2; block: min delta
     * zigzag(1) = 2, widths 0 0 0 0, no miniblock data. */
    const uint8_t ex1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0, 0xEE};
    CHECK_EQ_INT(pq_delta_binary_packed(ex1, sizeof ex1, 5, out, &used, &err), 0);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(out[i], i + 1);
    CHECK_EQ_INT(used, 10);
    /* Example 2: 7 5 3 1 2 3 4 5. Deltas -2 -2 -2 1 1 1 1, min -2 (zigzag 3), relative
     * 0 0 0 3 3 3 3 at width 2: byte0 = 3 << 6 = 0xC0, byte1 = 0b00111111 = 0x3F, then
     * zero padding to 32 values * 2 bits = 8 bytes. */
    const uint8_t ex2[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 2, 0, 0,
                           0,    0xC0, 0x3F, 0,    0,    0,    0, 0, 0};
    const int64_t want2[] = {7, 5, 3, 1, 2, 3, 4, 5};
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, sizeof ex2, 8, out, &used, &err), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(out[i], want2[i]);
    CHECK_EQ_INT(used, 18);
    /* Fewer values than the stream holds: used still covers the whole stream. */
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, sizeof ex2, 3, out, &used, &err), 0);
    CHECK_EQ_INT(out[2], 3);
    CHECK_EQ_INT(used, 18);
    /* The same stream without its padding bytes, at the end of the buffer: accepted. */
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, 12, 8, out, &used, &err), 0);
    CHECK_EQ_INT(out[7], 5);
    /* ... but not when the needed bytes are missing. */
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, 11, 8, out, &used, &err), ICD_ECORRUPT);
    /* A single value: header only, no block. */
    const uint8_t one[] = {0x80, 0x01, 0x04, 0x01, 0x03};
    CHECK_EQ_INT(pq_delta_binary_packed(one, sizeof one, 1, out, &used, &err), 0);
    CHECK_EQ_INT(out[0], -2);
    CHECK_EQ_INT(used, 5);
}

static const uint8_t dlba_example[] = {
    0x80, 0x01, 0x04, 0x04, 0x0A, /* header: 128, 4 miniblocks, 4 values, first zigzag(5) */
    0x00, 1,    0,    0,    0,    /* min delta 0; widths 1 0 0 0 */
    0x02, 0,    0,    0,          /* deltas 0 1 0 at width 1, 32 values = 4 bytes */
    'H',  'e',  'l',  'l',  'o',  'W', 'o', 'r', 'l', 'd', 'F',
    'o',  'o',  'b',  'a',  'r',  'A', 'B', 'C', 'D', 'E', 'F'};

static void test_dlba_spec_example(void)
{
    pq_bytes out[4];
    size_t used = 0;
    icd_error err;
    CHECK_EQ_INT(pq_delta_length_byte_array(dlba_example, sizeof dlba_example, 4, out, &used, &err),
                 0);
    const char *want[] = {"Hello", "World", "Foobar", "ABCDEF"};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(out[i].len, strlen(want[i]));
        CHECK(memcmp(out[i].ptr, want[i], out[i].len) == 0);
    }
    CHECK_EQ_INT(used, sizeof dlba_example);
    /* One byte short: the last value does not fit. */
    CHECK_EQ_INT(
        pq_delta_length_byte_array(dlba_example, sizeof dlba_example - 1, 4, out, &used, &err),
        ICD_ECORRUPT);
}

static void test_dba_spec_example(void)
{
    /* "axis", "axle", "babble", "babyhood": prefixes 0 2 0 3 (first 0; deltas 2 -2 3, min
     * -2 = zigzag 3, relative 4 0 5 at width 3 -> bytes 0x44 0x01), suffix lengths 4 2 6 5
     * (first zigzag(4) = 8; deltas -2 4 -1, min -2, relative 0 6 1 at width 3 -> 0x70). */
    const uint8_t enc[] = {
        0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 3,    0,    0,    0,    0x44, 0x01, 0,   0,   0,   0,
        0,    0,    0,    0,    0,    0,    0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 3,   0,   0,   0,
        0x70, 0x00, 0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    'a', 'x', 'i', 's',
        'l',  'e',  'b',  'a',  'b',  'b',  'l',  'e',  'y',  'h',  'o',  'o',  'd'};
    pq_bytes out[4];
    icd_arena arena = ICD_ARENA_INIT;
    size_t used = 0;
    icd_error err;
    CHECK_EQ_INT(pq_delta_byte_array(enc, sizeof enc, 4, out, &arena, &used, &err), 0);
    const char *want[] = {"axis", "axle", "babble", "babyhood"};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(out[i].len, strlen(want[i]));
        CHECK(memcmp(out[i].ptr, want[i], out[i].len) == 0);
    }
    CHECK_EQ_INT(used, sizeof enc);

    /* Prefix 5 for the second value, longer than "axis": corrupt. Re-encode the prefix
     * stream: 0 5 0 3 -> deltas 5 -5 3, min -5 (zigzag 9), relative 10 0 8 at width 4. */
    /* Relative 10, 0, 8 at 4 bits: byte0 = 0x0A, byte1 = 0x08, 16 bytes in all. */
    bytes b = {0};
    put_n(&b, enc, 6);
    b.p[5] = 0x09;
    put(&b, 4);
    put_n(&b, "\0\0\0", 3);
    put(&b, 0x0A);
    put(&b, 0x08);
    put_zeros(&b, 14);
    put_n(&b, enc + 22, sizeof enc - 22);
    icd_arena_reset(&arena);
    CHECK_EQ_INT(pq_delta_byte_array(b.p, b.n, 4, out, &arena, &used, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "prefix length 5") != NULL);
    free(b.p);
    icd_arena_free(&arena);
}

static void test_bss_spec_example(void)
{
    const uint8_t enc[] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
    const uint8_t want[] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6};
    uint8_t out[12];
    icd_error err;
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 3, 3, 4, out, &err), 0);
    CHECK(memcmp(out, want, 12) == 0);
    /* Only the first 2 of the 3 values. */
    memset(out, 0, sizeof out);
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 3, 2, 4, out, &err), 0);
    CHECK(memcmp(out, want, 8) == 0);
    CHECK_EQ_INT(out[8], 0);
    /* The same bytes as 2 values of 6 bytes (FIXED_LEN_BYTE_ARRAY) and 6 of 2 (FLOAT16). */
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 2, 2, 6, out, &err), 0);
    const uint8_t want6[] = {0xAA, 0xA3, 0x11, 0xCC, 0xC5, 0x33,
                             0x00, 0xBB, 0xB4, 0x22, 0xDD, 0xD6};
    CHECK(memcmp(out, want6, 12) == 0);
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 6, 6, 2, out, &err), 0);
    const uint8_t want2[] = {0xAA, 0xCC, 0x00, 0x22, 0xA3, 0xC5,
                             0xBB, 0xDD, 0x11, 0x33, 0xB4, 0xD6};
    CHECK(memcmp(out, want2, 12) == 0);
    /* Size must be exactly total * width. */
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 2, 2, 4, out, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_byte_stream_split(enc, 11, 3, 3, 4, out, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, 3, 4, 4, out, &err), ICD_EINVALID);
    CHECK_EQ_INT(pq_byte_stream_split(enc, 12, SIZE_MAX / 2, 1, 4, out, &err), ICD_ECORRUPT);
}

static void test_plain(void)
{
    icd_error err;
    size_t used = 0;
    /* Booleans LSB first: 0b00000101, 0b1 -> 1 0 1 0 0 0 0 0 1 */
    const uint8_t bools[] = {0x05, 0x01};
    uint8_t ob[9];
    CHECK_EQ_INT(pq_plain_bool(bools, 2, 9, ob, &used, &err), 0);
    const uint8_t wantb[] = {1, 0, 1, 0, 0, 0, 0, 0, 1};
    CHECK(memcmp(ob, wantb, 9) == 0);
    CHECK_EQ_INT(used, 2);
    CHECK_EQ_INT(pq_plain_bool(bools, 1, 9, ob, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_plain_bool(bools, 0, 0, ob, &used, &err), 0);
    CHECK_EQ_INT(used, 0);

    const uint8_t ba[] = {3, 0, 0, 0, 'a', 'b', 'c', 0, 0, 0, 0, 1, 0, 0, 0, 'z'};
    pq_bytes out[3];
    CHECK_EQ_INT(pq_plain_byte_array(ba, sizeof ba, 3, out, &used, &err), 0);
    CHECK_EQ_INT(out[0].len, 3);
    CHECK(memcmp(out[0].ptr, "abc", 3) == 0);
    CHECK_EQ_INT(out[1].len, 0);
    CHECK_EQ_INT(out[2].len, 1);
    CHECK_EQ_INT(out[2].ptr[0], 'z');
    CHECK_EQ_INT(used, sizeof ba);
    CHECK_EQ_INT(pq_plain_byte_array(ba, sizeof ba - 1, 3, out, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_plain_byte_array(ba, 2, 1, out, &used, &err), ICD_ECORRUPT);
    const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 'x'};
    CHECK_EQ_INT(pq_plain_byte_array(huge, sizeof huge, 1, out, &used, &err), ICD_ECORRUPT);

    const uint8_t i32[] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    int32_t oi[2];
    CHECK_EQ_INT(pq_plain_fixed(i32, 8, 2, 4, oi, &used, &err), 0);
    CHECK_EQ_INT(oi[0], 1);
    CHECK_EQ_INT(oi[1], -1);
    CHECK_EQ_INT(used, 8);
    CHECK_EQ_INT(pq_plain_fixed(i32, 8, 1, 12, oi, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_plain_fixed(i32, 8, SIZE_MAX / 2, 4, oi, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_plain_fixed(i32, 8, 1, 0, oi, &used, &err), ICD_EINVALID);
}

static void test_encoding_names(void)
{
    CHECK_EQ_STR(pq_encoding_name(PQ_ENC_PLAIN), "PLAIN");
    CHECK_EQ_STR(pq_encoding_name(PQ_ENC_RLE_DICTIONARY), "RLE_DICTIONARY");
    CHECK_EQ_STR(pq_encoding_name(PQ_ENC_DELTA_BYTE_ARRAY), "DELTA_BYTE_ARRAY");
    CHECK_EQ_STR(pq_encoding_name(PQ_ENC_BYTE_STREAM_SPLIT), "BYTE_STREAM_SPLIT");
    CHECK_EQ_STR(pq_encoding_name(77), "UNKNOWN(77)");
}

/* ---------- round trips ---------- */

static void test_rle_roundtrip_all_widths(void)
{
    icd_error err;
    for (int w = 0; w <= 32; w++) {
        for (int trial = 0; trial < 6; trial++) {
            size_t n = trial == 0 ? 1 : (size_t)rnd_below(3000) + 1;
            uint32_t *v = malloc(n * sizeof *v), *out = malloc((n + 8) * sizeof *out);
            uint64_t maxv = w == 32 ? UINT32_MAX : ((uint64_t)1 << w) - 1;
            for (size_t i = 0; i < n;) {
                uint32_t x =
                    (uint32_t)(trial % 2 ? maxv - rnd_below(2) * (maxv > 0) : rnd() & maxv);
                size_t run = rnd_below(4) == 0 ? (size_t)rnd_below(40) + 1 : 1;
                for (size_t k = 0; k < run && i < n; k++)
                    v[i++] = x;
            }
            bytes b = {0};
            size_t held = enc_rle(&b, v, n, w);
            size_t enc_len = b.n;
            put(&b, 0xAB); /* a trailing byte must not be consumed */
            size_t used = 0;
            int rc = pq_rle_decode(b.p, b.n, w, out, n, &used, &err);
            CHECK_EQ_INT(rc, 0);
            if (rc == 0) {
                CHECK(memcmp(v, out, n * sizeof *v) == 0);
                CHECK_EQ_INT(used, enc_len);
            }
            /* Asking for one value more than the stream holds is corrupt, except at width 0
             * where the value is known anyway. Without the trailing byte: */
            CHECK(held - n < 8);
            rc = pq_rle_decode(b.p, enc_len, w, out, held + 1, &used, &err);
            CHECK_EQ_INT(rc, w == 0 ? 0 : ICD_ECORRUPT);
            free(b.p);
            free(v);
            free(out);
        }
    }
}

static void test_bit_packed_roundtrip(void)
{
    icd_error err;
    for (int w = 0; w <= 32; w++) {
        size_t n = (size_t)rnd_below(200) + 1;
        uint32_t v[200], out[200];
        uint64_t maxv = w == 32 ? UINT32_MAX : ((uint64_t)1 << w) - 1;
        bytes b = {0};
        size_t nbytes = (n * (size_t)w + 7) / 8;
        put_zeros(&b, nbytes + 1);
        for (size_t i = 0; i < n; i++) {
            v[i] = (uint32_t)(rnd() & maxv);
            for (int k = 0; k < w; k++) /* MSB first */
                if ((v[i] >> (w - 1 - k)) & 1) {
                    size_t bit = i * (size_t)w + (size_t)k;
                    b.p[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
                }
        }
        size_t used = 0;
        CHECK_EQ_INT(pq_bit_packed_decode(b.p, nbytes, w, out, n, &used, &err), 0);
        CHECK(memcmp(v, out, n * sizeof *v) == 0);
        CHECK_EQ_INT(used, nbytes);
        free(b.p);
    }
}

/* Values whose deltas span exactly [0, 2^w - 1] so the encoder must pick width w. */
static void delta_values_for_width(int64_t *v, size_t n, int w)
{
    uint64_t mask = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
    uint64_t x = rnd();
    v[0] = (int64_t)x;
    for (size_t i = 1; i < n; i++) {
        uint64_t d = rnd() & mask;
        if (i % 32 == 1) d = 0;
        if (i % 32 == 2) d = mask;
        x += d;
        v[i] = (int64_t)x;
    }
}

static void test_delta_roundtrip_all_widths(void)
{
    icd_error err;
    const uint64_t shapes[][2] = {{128, 4}, {128, 1}, {256, 8}, {1024, 4}};
    for (int w = 0; w <= 64; w++) {
        for (int s = 0; s < 4; s++) {
            size_t n = (size_t)rnd_below(1500) + 2;
            int64_t *v = malloc(n * sizeof *v), *out = malloc((n + 1) * sizeof *out);
            delta_values_for_width(v, n, w);
            bytes b = {0};
            enc_delta(&b, v, n, shapes[s][0], shapes[s][1], 0);
            size_t enc_len = b.n;
            put(&b, 0x7F);
            put(&b, 0x7F);
            size_t used = 0;
            int rc = pq_delta_binary_packed(b.p, b.n, n, out, &used, &err);
            CHECK_EQ_INT(rc, 0);
            if (rc == 0) {
                CHECK(memcmp(v, out, n * sizeof *v) == 0);
                CHECK_EQ_INT(used, enc_len);
            }
            /* A prefix of the values; used still reaches the end of the stream. */
            size_t part = (size_t)rnd_below(n) + 1;
            CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n, part, out, &used, &err), 0);
            CHECK(memcmp(v, out, part * sizeof *v) == 0);
            CHECK_EQ_INT(used, enc_len);
            /* More values than the header's total: corrupt. */
            CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n, n + 1, out, &used, &err), ICD_ECORRUPT);
            /* Truncated in the middle (not at a padding boundary): corrupt or, when the
             * cut only removes padding of the last miniblock, the same values. */
            size_t cut = (size_t)rnd_below(enc_len);
            rc = pq_delta_binary_packed(b.p, cut, n, out, &used, &err);
            if (rc == 0)
                CHECK(memcmp(v, out, n * sizeof *v) == 0);
            else
                CHECK_EQ_INT(rc, ICD_ECORRUPT);
            free(b.p);
            free(v);
            free(out);
        }
    }
}

static void test_delta_wraparound(void)
{
    icd_error err;
    size_t used;
    /* INT32 written with 32-bit wrapping deltas: INT32_MAX -> INT32_MIN is a delta of +1. */
    const int32_t v32[] = {INT32_MAX, INT32_MIN, INT32_MAX, 0,         -1,
                           INT32_MIN, 1,         INT32_MIN, INT32_MAX, -7};
    int64_t in32[10], out[16];
    for (int i = 0; i < 10; i++)
        in32[i] = v32[i];
    bytes b = {0};
    enc_delta(&b, in32, 10, 128, 4, 1);
    CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n, 10, out, &used, &err), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT((int32_t)(uint32_t)(uint64_t)out[i], v32[i]);
    CHECK_EQ_INT(used, b.n);
    free(b.p);

    const int64_t v64[] = {INT64_MAX, INT64_MIN, 0,         INT64_MAX, INT64_MIN + 1,
                           -1,        INT64_MIN, INT64_MAX, 42,        INT64_MIN};
    b = (bytes){0};
    enc_delta(&b, v64, 10, 128, 4, 0);
    CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n, 10, out, &used, &err), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(out[i], v64[i]);
    free(b.p);

    /* Hand-made: first value INT64_MAX (zigzag 2^64 - 2), min delta INT64_MAX, 1 delta at
     * width 0: INT64_MAX + INT64_MAX wraps to -2. */
    b = (bytes){0};
    put_n(&b, "\x80\x01\x04\x02", 4);
    put_uleb(&b, UINT64_MAX - 1);
    put_uleb(&b, UINT64_MAX - 1);
    put_n(&b, "\0\0\0\0", 4);
    CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n, 2, out, &used, &err), 0);
    CHECK_EQ_INT(out[0], INT64_MAX);
    CHECK_EQ_INT(out[1], -2);
    free(b.p);
}

static void test_delta_corrupt(void)
{
    icd_error err;
    size_t used;
    int64_t out[300];
    /* Truncated header at every length. */
    const uint8_t ex2[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 2, 0, 0,
                           0,    0xC0, 0x3F, 0,    0,    0,    0, 0, 0};
    for (size_t n = 1; n < 10; n++)
        CHECK_EQ_INT(pq_delta_binary_packed(ex2, n, 8, out, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, 0, 1, out, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_delta_binary_packed(ex2, 0, 0, out, &used, &err), 0);
    /* Block size not a multiple of 128; miniblocks not multiples of 32; zero. */
    const uint8_t bs100[] = {100, 0x04, 0x01, 0x00};
    CHECK_EQ_INT(pq_delta_binary_packed(bs100, 4, 1, out, &used, &err), ICD_ECORRUPT);
    const uint8_t mb3[] = {0x80, 0x01, 0x03, 0x01, 0x00};
    CHECK_EQ_INT(pq_delta_binary_packed(mb3, 5, 1, out, &used, &err), ICD_ECORRUPT);
    const uint8_t mb8[] = {0x80, 0x01, 0x08, 0x01, 0x00};
    CHECK_EQ_INT(pq_delta_binary_packed(mb8, 5, 1, out, &used, &err), ICD_ECORRUPT);
    const uint8_t mb0[] = {0x80, 0x01, 0x00, 0x01, 0x00};
    CHECK_EQ_INT(pq_delta_binary_packed(mb0, 5, 1, out, &used, &err), ICD_ECORRUPT);
    /* Bit width 65. */
    uint8_t w65[sizeof ex2];
    memcpy(w65, ex2, sizeof ex2);
    w65[6] = 65;
    CHECK_EQ_INT(pq_delta_binary_packed(w65, sizeof w65, 8, out, &used, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "bit width 65") != NULL);
    /* An overlong varint (11 bytes). */
    const uint8_t longv[] = {0x80, 0x01, 0x04, 0x02, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_EQ_INT(pq_delta_binary_packed(longv, sizeof longv, 1, out, &used, &err), ICD_ECORRUPT);
    /* A middle miniblock cut short (not the last one): 200 values, width 8 everywhere. */
    int64_t v[200];
    for (int i = 0; i < 200; i++)
        v[i] = (int64_t)(rnd() & 0xff);
    bytes b = {0};
    enc_delta(&b, v, 200, 128, 4, 0);
    CHECK_EQ_INT(pq_delta_binary_packed(b.p, 40, 200, out, &used, &err), ICD_ECORRUPT);
    /* The second block's miniblocks cut short. */
    CHECK_EQ_INT(pq_delta_binary_packed(b.p, b.n - 70, 200, out, &used, &err), ICD_ECORRUPT);
    free(b.p);
}

static void random_strings(str *s, size_t n, uint8_t *pool, size_t pool_len)
{
    /* Strings drawn from a small alphabet so that neighbours share prefixes. */
    for (size_t i = 0; i < pool_len; i++)
        pool[i] = (uint8_t)("abcd"[rnd_below(4)]);
    for (size_t i = 0; i < n; i++) {
        size_t len = rnd_below(5) == 0 ? 0 : (size_t)rnd_below(40);
        size_t at = (size_t)rnd_below(pool_len - 40);
        if (i && rnd_below(3) == 0) { /* start like the previous one */
            s[i].p = s[i - 1].p;
            s[i].len = s[i - 1].len < len ? s[i - 1].len : (uint32_t)len;
        } else {
            s[i].p = pool + at;
            s[i].len = (uint32_t)len;
        }
    }
}

static void test_byte_array_roundtrips(void)
{
    icd_error err;
    uint8_t pool[4096];
    for (int trial = 0; trial < 20; trial++) {
        size_t n = trial == 0 ? 1 : (size_t)rnd_below(1200) + 1;
        str *s = malloc(n * sizeof *s);
        pq_bytes *out = malloc(n * sizeof *out);
        random_strings(s, n, pool, sizeof pool);

        bytes b = {0};
        enc_dlba(&b, s, n);
        size_t used = 0;
        CHECK_EQ_INT(pq_delta_length_byte_array(b.p, b.n, n, out, &used, &err), 0);
        CHECK_EQ_INT(used, b.n);
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ_INT(out[i].len, s[i].len);
            CHECK(s[i].len == 0 || memcmp(out[i].ptr, s[i].p, s[i].len) == 0);
        }
        free(b.p);

        b = (bytes){0};
        enc_dba(&b, s, n);
        icd_arena arena = ICD_ARENA_INIT;
        CHECK_EQ_INT(pq_delta_byte_array(b.p, b.n, n, out, &arena, &used, &err), 0);
        CHECK_EQ_INT(used, b.n);
        int bad = 0;
        for (size_t i = 0; i < n; i++)
            if (out[i].len != s[i].len || (s[i].len && memcmp(out[i].ptr, s[i].p, s[i].len))) bad++;
        CHECK_EQ_INT(bad, 0);
        /* Truncations: never a crash, always a clear corrupt error. */
        size_t cut = (size_t)rnd_below(b.n);
        icd_arena_reset(&arena);
        CHECK_EQ_INT(pq_delta_byte_array(b.p, cut, n, out, &arena, &used, &err), ICD_ECORRUPT);
        CHECK_EQ_INT(pq_delta_byte_array(b.p, b.n, n + 1, out, &arena, &used, &err), ICD_ECORRUPT);
        icd_arena_free(&arena);
        free(b.p);

        b = (bytes){0};
        for (size_t i = 0; i < n; i++) {
            put_le32(&b, s[i].len);
            put_n(&b, s[i].p, s[i].len);
        }
        CHECK_EQ_INT(pq_plain_byte_array(b.p, b.n, n, out, &used, &err), 0);
        CHECK_EQ_INT(used, b.n);
        for (size_t i = 0; i < n; i++)
            CHECK_EQ_INT(out[i].len, s[i].len);
        free(b.p);
        free(s);
        free(out);
    }
}

/* Front coding as a decompression bomb: one 100,000-byte value, then values that repeat
 * all of it plus one byte. Rebuilding stops at the per-page limit with a clear error. */
static void test_dba_bomb(void)
{
    const size_t big = 100000, reps = 5000;
    int64_t *pre = malloc((reps + 1) * sizeof *pre), *suf = malloc((reps + 1) * sizeof *suf);
    pre[0] = 0;
    suf[0] = (int64_t)big;
    for (size_t i = 1; i <= reps; i++) {
        pre[i] = (int64_t)(big + i - 1);
        suf[i] = 1;
    }
    bytes b = {0};
    enc_delta(&b, pre, reps + 1, 128, 4, 0);
    enc_delta(&b, suf, reps + 1, 128, 4, 0);
    for (size_t i = 0; i < big + reps; i++)
        put(&b, 'a');
    pq_bytes *out = malloc((reps + 1) * sizeof *out);
    icd_arena arena = ICD_ARENA_INIT;
    icd_error err;
    size_t used;
    /* The first 100 values are fine (about 10 MB). */
    CHECK_EQ_INT(pq_delta_byte_array(b.p, b.n, 100, out, &arena, &used, &err), 0);
    CHECK_EQ_INT(out[99].len, big + 99);
    CHECK(out[99].ptr[big + 98] == 'a');
    icd_arena_reset(&arena);
    CHECK_EQ_INT(pq_delta_byte_array(b.p, b.n, reps + 1, out, &arena, &used, &err),
                 ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "exceed") != NULL);
    icd_arena_free(&arena);
    free(out);
    free(b.p);
    free(pre);
    free(suf);
}

static void test_bss_roundtrip(void)
{
    icd_error err;
    const size_t widths[] = {1, 2, 3, 4, 5, 8, 12, 16};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        size_t w = widths[wi], n = (size_t)rnd_below(500) + 1;
        uint8_t *vals = malloc(n * w), *enc = malloc(n * w), *out = malloc(n * w);
        for (size_t i = 0; i < n * w; i++)
            vals[i] = (uint8_t)rnd();
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < w; k++)
                enc[k * n + i] = vals[i * w + k];
        CHECK_EQ_INT(pq_byte_stream_split(enc, n * w, n, n, w, out, &err), 0);
        CHECK(memcmp(vals, out, n * w) == 0);
        free(vals);
        free(enc);
        free(out);
    }
}

/* ---------- RLE corrupt inputs ---------- */

static void test_rle_corrupt(void)
{
    icd_error err;
    uint32_t out[64];
    size_t used;
    const uint8_t bp[] = {0x03, 0x88, 0xC6, 0xFA};
    /* bit width out of range */
    CHECK_EQ_INT(pq_rle_decode(bp, 4, 33, out, 8, &used, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "33") != NULL);
    CHECK_EQ_INT(pq_rle_decode(bp, 4, -1, out, 8, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_bit_packed_decode(bp, 4, 33, out, 8, &used, &err), ICD_ECORRUPT);
    /* count larger than the stream */
    CHECK_EQ_INT(pq_rle_decode(bp, 4, 3, out, 9, &used, &err), ICD_ECORRUPT);
    /* zero-length input */
    CHECK_EQ_INT(pq_rle_decode(bp, 0, 3, out, 1, &used, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(pq_rle_decode(bp, 0, 3, out, 0, &used, &err), 0);
    CHECK_EQ_INT(used, 0);
    /* a bit-packed run whose needed bytes are missing */
    CHECK_EQ_INT(pq_rle_decode(bp, 3, 3, out, 8, &used, &err), ICD_ECORRUPT);
    /* ... but a run whose missing bytes are only padding, at the end: accepted */
    CHECK_EQ_INT(pq_rle_decode(bp, 3, 3, out, 5, &used, &err), 0);
    CHECK_EQ_INT(out[4], 4);
    CHECK_EQ_INT(used, 3);
    /* truncated header (continuation bit set at the end) */
    const uint8_t trunc[] = {0x0A, 0x01, 0x80};
    CHECK_EQ_INT(pq_rle_decode(trunc, 3, 3, out, 6, &used, &err), ICD_ECORRUPT);
    /* an 11-byte varint header */
    const uint8_t longh[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_EQ_INT(pq_rle_decode(longh, sizeof longh, 3, out, 1, &used, &err), ICD_ECORRUPT);
    /* a repeated run without its value, and with a value too wide for the width */
    const uint8_t novalue[] = {0x0A};
    CHECK_EQ_INT(pq_rle_decode(novalue, 1, 3, out, 5, &used, &err), ICD_ECORRUPT);
    const uint8_t wide[] = {0x0A, 0x08};
    CHECK_EQ_INT(pq_rle_decode(wide, 2, 3, out, 5, &used, &err), ICD_ECORRUPT);
    const uint8_t wide17[] = {0x0A, 0x00, 0x00, 0x02};
    CHECK_EQ_INT(pq_rle_decode(wide17, 4, 17, out, 5, &used, &err), ICD_ECORRUPT);
    /* a huge bit-packed run header with nothing behind it */
    const uint8_t hugebp[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    CHECK_EQ_INT(pq_rle_decode(hugebp, 5, 5, out, 64, &used, &err), ICD_ECORRUPT);
    /* width 0: all zeros, with or without runs */
    const uint8_t w0[] = {0x10};
    for (int i = 0; i < 64; i++)
        out[i] = 7;
    CHECK_EQ_INT(pq_rle_decode(w0, 1, 0, out, 8, &used, &err), 0);
    CHECK_EQ_INT(out[0], 0);
    CHECK_EQ_INT(out[7], 0);
    CHECK_EQ_INT(used, 1);
    CHECK_EQ_INT(pq_rle_decode(w0, 0, 0, out, 64, &used, &err), 0);
    CHECK_EQ_INT(out[63], 0);
}

TEST_MAIN(TEST(test_rle_spec_example), TEST(test_bit_packed_spec_example),
          TEST(test_delta_spec_examples), TEST(test_dlba_spec_example), TEST(test_dba_spec_example),
          TEST(test_bss_spec_example), TEST(test_plain), TEST(test_encoding_names),
          TEST(test_rle_roundtrip_all_widths), TEST(test_bit_packed_roundtrip),
          TEST(test_delta_roundtrip_all_widths), TEST(test_delta_wraparound),
          TEST(test_delta_corrupt), TEST(test_byte_array_roundtrips), TEST(test_dba_bomb),
          TEST(test_bss_roundtrip), TEST(test_rle_corrupt))
