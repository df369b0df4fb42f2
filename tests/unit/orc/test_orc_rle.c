/*
 * ORC run-length decoders and compression framing, on the worked examples of the ORC
 * specification v1 ("Run Length Encoding", "Compression") and hand-made vectors.
 */
#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/orc/orc_codec.h"
#include "formats/orc/orc_rle.h"
#include "test.h"

static int ints(const uint8_t *p, size_t len, bool v2, bool sgn, int64_t *out, size_t n,
                icd_error *err)
{
    static orc_int_rle d;
    orc_int_rle_init(&d, p, len, v2, sgn);
    return orc_int_rle_next(&d, out, n, err);
}

static void test_varints(void)
{
    /* The spec's varint table. */
    struct {
        uint64_t v;
        uint8_t b[3];
        size_t n;
    } t[] = {{0, {0x00}, 1},
             {1, {0x01}, 1},
             {127, {0x7f}, 1},
             {128, {0x80, 0x01}, 2},
             {129, {0x81, 0x01}, 2},
             {16383, {0xff, 0x7f}, 2},
             {16384, {0x80, 0x80, 0x01}, 3},
             {16385, {0x81, 0x80, 0x01}, 3}};
    icd_error err;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        orc_cursor c;
        orc_cursor_init(&c, t[i].b, t[i].n);
        uint64_t v = 99;
        CHECK_EQ_INT(orc_read_uvarint(&c, &v, &err), 0);
        CHECK_EQ_INT(v, t[i].v);
        CHECK_EQ_INT(orc_cursor_left(&c), 0);
    }
    /* zigzag: 0 -1 1 -2 2 */
    int64_t want[] = {0, -1, 1, -2, 2};
    for (uint64_t u = 0; u < 5; u++)
        CHECK_EQ_INT(orc_unzigzag(u), want[u]);
    /* truncated and overlong */
    uint8_t trunc[] = {0x80, 0x80};
    orc_cursor c;
    orc_cursor_init(&c, trunc, 2);
    uint64_t v;
    CHECK_EQ_INT(orc_read_uvarint(&c, &v, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "truncated") != NULL);
    uint8_t big[11];
    memset(big, 0xff, 10);
    big[10] = 0x01;
    orc_cursor_init(&c, big, 11);
    CHECK_EQ_INT(orc_read_uvarint(&c, &v, &err), ICD_ECORRUPT);
}

static void test_byte_and_bool_rle(void)
{
    icd_error err;
    orc_byte_rle d;
    uint8_t out[100];
    /* a hundred 0's = [0x61, 0x00] */
    uint8_t run[] = {0x61, 0x00};
    orc_byte_rle_init(&d, run, sizeof run);
    memset(out, 7, sizeof out);
    CHECK_EQ_INT(orc_byte_rle_next(&d, out, 100, &err), 0);
    int zeros = 0;
    for (int i = 0; i < 100; i++)
        zeros += out[i] == 0;
    CHECK_EQ_INT(zeros, 100);
    CHECK_EQ_INT(orc_byte_rle_next(&d, out, 1, &err), ICD_ECORRUPT); /* nothing left */
    /* 0x44, 0x45 = [0xfe, 0x44, 0x45], read one value at a time */
    uint8_t lit[] = {0xfe, 0x44, 0x45};
    orc_byte_rle_init(&d, lit, sizeof lit);
    CHECK_EQ_INT(orc_byte_rle_next(&d, out, 1, &err), 0);
    CHECK_EQ_INT(orc_byte_rle_next(&d, out + 1, 1, &err), 0);
    CHECK_EQ_INT(out[0], 0x44);
    CHECK_EQ_INT(out[1], 0x45);
    /* truncated literal list */
    uint8_t bad[] = {0xfd, 0x01};
    orc_byte_rle_init(&d, bad, sizeof bad);
    CHECK_EQ_INT(orc_byte_rle_next(&d, out, 3, &err), ICD_ECORRUPT);

    /* boolean RLE: [0xff, 0x80] = one true followed by seven false */
    orc_bool_rle b;
    uint8_t bits[] = {0xff, 0x80};
    orc_bool_rle_init(&b, bits, sizeof bits);
    CHECK_EQ_INT(orc_bool_rle_next(&b, out, 8, &err), 0);
    CHECK_EQ_INT(out[0], 1);
    int ones = 0;
    for (int i = 1; i < 8; i++)
        ones += out[i];
    CHECK_EQ_INT(ones, 0);
    /* a run of 3 bytes 0xAA read in odd pieces: 1,0,1,0,... */
    uint8_t alt[] = {0x00, 0xaa};
    orc_bool_rle_init(&b, alt, sizeof alt);
    uint8_t all[24];
    CHECK_EQ_INT(orc_bool_rle_next(&b, all, 3, &err), 0);
    CHECK_EQ_INT(orc_bool_rle_next(&b, all + 3, 13, &err), 0);
    CHECK_EQ_INT(orc_bool_rle_next(&b, all + 16, 8, &err), 0);
    int okpat = 1;
    for (int i = 0; i < 24; i++)
        okpat &= all[i] == (i % 2 == 0);
    CHECK(okpat);
    CHECK_EQ_INT(orc_bool_rle_next(&b, all, 1, &err), ICD_ECORRUPT);
}

static void test_rle_v1(void)
{
    icd_error err;
    int64_t out[100];
    /* 100 instances of 7 = [0x61, 0x00, 0x07] */
    uint8_t a[] = {0x61, 0x00, 0x07};
    CHECK_EQ_INT(ints(a, sizeof a, false, false, out, 100, &err), 0);
    CHECK_EQ_INT(out[0], 7);
    CHECK_EQ_INT(out[99], 7);
    /* 100 down to 1 = [0x61, 0xff, 0x64] */
    uint8_t b[] = {0x61, 0xff, 0x64};
    CHECK_EQ_INT(ints(b, sizeof b, false, false, out, 100, &err), 0);
    int ok = 1;
    for (int i = 0; i < 100; i++)
        ok &= out[i] == 100 - i;
    CHECK(ok);
    /* [2, 3, 4, 7, 11] = [0xfb, 0x02, 0x03, 0x04, 0x07, 0xb] */
    uint8_t c[] = {0xfb, 0x02, 0x03, 0x04, 0x07, 0x0b};
    CHECK_EQ_INT(ints(c, sizeof c, false, false, out, 5, &err), 0);
    int64_t want[] = {2, 3, 4, 7, 11};
    CHECK(!memcmp(out, want, sizeof want));
    /* signed: the same bytes zigzag-decode to 1, -2, 2, -4, -6 */
    CHECK_EQ_INT(ints(c, sizeof c, false, true, out, 5, &err), 0);
    int64_t swant[] = {1, -2, 2, -4, -6};
    CHECK(!memcmp(out, swant, sizeof swant));
    /* signed run: base -3 (zigzag 5), delta 2, 4 values: -3 -1 1 3 */
    uint8_t d[] = {0x01, 0x02, 0x05};
    CHECK_EQ_INT(ints(d, sizeof d, false, true, out, 4, &err), 0);
    int64_t dwant[] = {-3, -1, 1, 3};
    CHECK(!memcmp(out, dwant, sizeof dwant));
    /* asking for more than there is */
    CHECK_EQ_INT(ints(d, sizeof d, false, true, out, 5, &err), ICD_ECORRUPT);
}

static void test_rle_v2(void)
{
    icd_error err;
    int64_t out[512];
    /* SHORT_REPEAT: [10000 x5] = [0x0a, 0x27, 0x10] */
    uint8_t sr[] = {0x0a, 0x27, 0x10};
    CHECK_EQ_INT(ints(sr, sizeof sr, true, false, out, 5, &err), 0);
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= out[i] == 10000;
    CHECK(ok);
    /* signed short repeat of -1 (zigzag 1), 3 times */
    uint8_t srs[] = {0x00, 0x01};
    CHECK_EQ_INT(ints(srs, sizeof srs, true, true, out, 3, &err), 0);
    CHECK(out[0] == -1 && out[1] == -1 && out[2] == -1);
    /* DIRECT: [23713, 43806, 57005, 48879] */
    uint8_t di[] = {0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef};
    CHECK_EQ_INT(ints(di, sizeof di, true, false, out, 4, &err), 0);
    int64_t dwant[] = {23713, 43806, 57005, 48879};
    CHECK(!memcmp(out, dwant, sizeof dwant));
    /* PATCHED_BASE: the spec's 20 values with one patched outlier */
    uint8_t pb[] = {0x8e, 0x13, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0x70,
                    0x28, 0x32, 0x3c, 0x46, 0x50, 0x5a, 0x64, 0x6e, 0x78, 0x82,
                    0x8c, 0x96, 0xa0, 0xaa, 0xb4, 0xbe, 0xfc, 0xe8};
    int64_t pwant[] = {2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090,
                       2100, 2110, 2120, 2130,    2140, 2150, 2160, 2170, 2180, 2190};
    CHECK_EQ_INT(ints(pb, sizeof pb, true, false, out, 20, &err), 0);
    CHECK(!memcmp(out, pwant, sizeof pwant));
    /* the same run read in pieces of 7 */
    orc_int_rle d;
    orc_int_rle_init(&d, pb, sizeof pb, true, false);
    int64_t piece[20];
    CHECK_EQ_INT(orc_int_rle_next(&d, piece, 7, &err), 0);
    CHECK_EQ_INT(orc_int_rle_next(&d, piece + 7, 7, &err), 0);
    CHECK_EQ_INT(orc_int_rle_next(&d, piece + 14, 6, &err), 0);
    CHECK(!memcmp(piece, pwant, sizeof pwant));
    /* patch gap pointing past the run: the gap field of the patch 0xfce8 is 3 (bits 15-14);
     * make the run 3 long so index 3 is outside. */
    uint8_t pbad[sizeof pb];
    memcpy(pbad, pb, sizeof pb);
    pbad[1] = 0x02; /* length 3 */
    uint8_t pbad2[] = {0x8e, 0x02, 0x2b, 0x21, 0x07, 0xd0, 0x1e, 0x00, 0x14, 0xfc, 0xe8};
    CHECK_EQ_INT(ints(pbad2, sizeof pbad2, true, false, out, 3, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "patch") != NULL);
    /* DELTA: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29] */
    uint8_t de[] = {0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46};
    int64_t primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29};
    CHECK_EQ_INT(ints(de, sizeof de, true, false, out, 10, &err), 0);
    CHECK(!memcmp(out, primes, sizeof primes));
    /* DELTA with a fixed delta (width 0), signed, decreasing: 10 8 6 4 2 */
    uint8_t fd[] = {0xc0, 0x04, 0x14, 0x03};
    CHECK_EQ_INT(ints(fd, sizeof fd, true, true, out, 5, &err), 0);
    int64_t fwant[] = {10, 8, 6, 4, 2};
    CHECK(!memcmp(out, fwant, sizeof fwant));
    /* DELTA decreasing with bit-packed deltas: base 100, first delta -10, then 5 and 1:
     * 100 90 85 84 */
    uint8_t dd[] = {0xc6, 0x03, 0x64, 0x13, 0x51};
    CHECK_EQ_INT(ints(dd, sizeof dd, true, false, out, 4, &err), 0);
    int64_t ddwant[] = {100, 90, 85, 84};
    CHECK(!memcmp(out, ddwant, sizeof ddwant));
    /* DIRECT with 64-bit signed values: INT64_MIN and INT64_MAX (zigzag all ones / ...10) */
    uint8_t d64[] = {0x7e, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
    CHECK_EQ_INT(ints(d64, sizeof d64, true, true, out, 2, &err), 0);
    CHECK(out[0] == INT64_MIN && out[1] == INT64_MAX);
    /* several runs back to back: short repeat then delta */
    uint8_t two[] = {0x0a, 0x27, 0x10, 0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46};
    CHECK_EQ_INT(ints(two, sizeof two, true, false, out, 15, &err), 0);
    CHECK(out[4] == 10000 && out[5] == 2 && out[14] == 29);
    /* truncated direct values */
    CHECK_EQ_INT(ints(di, 5, true, false, out, 4, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "truncated") != NULL);
    /* truncated headers */
    CHECK_EQ_INT(ints(pb, 3, true, false, out, 1, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(ints(de, 1, true, false, out, 1, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(ints(sr, 2, true, false, out, 1, &err), ICD_ECORRUPT);
    /* the width table */
    CHECK_EQ_INT(orc_rle2_width(0, false), 1);
    CHECK_EQ_INT(orc_rle2_width(0, true), 0);
    CHECK_EQ_INT(orc_rle2_width(7, false), 8);
    CHECK_EQ_INT(orc_rle2_width(23, false), 24);
    CHECK_EQ_INT(orc_rle2_width(24, false), 26);
    CHECK_EQ_INT(orc_rle2_width(27, false), 32);
    CHECK_EQ_INT(orc_rle2_width(28, false), 40);
    CHECK_EQ_INT(orc_rle2_width(31, false), 64);
}

/* Zigzag + varint of a 128-bit value (hi:lo), written here independently. */
static size_t enc128(uint8_t *p, int64_t hi, uint64_t lo)
{
    uint64_t sign = (uint64_t)(hi >> 63);
    uint64_t zhi = ((uint64_t)hi << 1 | lo >> 63) ^ sign;
    uint64_t zlo = (lo << 1) ^ sign;
    size_t n = 0;
    while (zhi || zlo >= 0x80) {
        p[n++] = (uint8_t)(zlo | 0x80);
        zlo = zlo >> 7 | zhi << 57;
        zhi >>= 7;
    }
    p[n++] = (uint8_t)zlo;
    return n;
}

static void test_decimal_varints(void)
{
    icd_error err;
    struct {
        int64_t hi;
        uint64_t lo;
    } v[] = {{0, 0},
             {-1, UINT64_MAX},                   /* -1 */
             {0, 12345},                         /* 12345 */
             {-1, (uint64_t)-12345},             /* -12345 */
             {0x0c9f2c9cd0, 0x4674edea40000000}, /* 10^30 */
             {INT64_MAX, UINT64_MAX},            /* 2^127 - 1 */
             {INT64_MIN, 0}};                    /* -2^127 */
    uint8_t buf[400];
    size_t n = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        n += enc128(buf + n, v[i].hi, v[i].lo);
    orc_cursor c;
    orc_cursor_init(&c, buf, n);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        int64_t hi = 1;
        uint64_t lo = 1;
        CHECK_EQ_INT(orc_read_varint128(&c, &hi, &lo, &err), 0);
        CHECK(hi == v[i].hi && lo == v[i].lo);
    }
    CHECK_EQ_INT(orc_cursor_left(&c), 0);
    /* 2^128 (zigzag 2^129) does not fit */
    uint8_t over[20];
    size_t k = 0;
    for (int i = 0; i < 18; i++)
        over[k++] = 0x80;
    over[k++] = 0x08; /* bit 129 */
    orc_cursor_init(&c, over, k);
    int64_t hi;
    uint64_t lo;
    CHECK_EQ_INT(orc_read_varint128(&c, &hi, &lo, &err), ICD_ECORRUPT);
    /* truncated */
    uint8_t tr[] = {0x80, 0x80};
    orc_cursor_init(&c, tr, 2);
    CHECK_EQ_INT(orc_read_varint128(&c, &hi, &lo, &err), ICD_ECORRUPT);
}

/* ---- compression framing ---- */

static void frame(icd_buf *f, const void *p, size_t n, bool original)
{
    uint32_t h = (uint32_t)n << 1 | (original ? 1 : 0);
    uint8_t hb[3] = {(uint8_t)h, (uint8_t)(h >> 8), (uint8_t)(h >> 16)};
    icd_buf_append(f, hb, 3);
    icd_buf_append(f, p, n);
}

static size_t deflate_raw(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t k = z.total_out;
    deflateEnd(&z);
    return k;
}

static void test_chunk_headers(void)
{
    /* The spec's header examples: 100,000 compressed bytes = [0x40, 0x0d, 0x03]; 5 bytes
     * stored original = [0x0b, 0x00, 0x00]. */
    uint32_t h = 100000u << 1;
    CHECK(((uint8_t)h) == 0x40 && (uint8_t)(h >> 8) == 0x0d && (uint8_t)(h >> 16) == 0x03);
    icd_error err;
    uint8_t orig[] = {0x0b, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o'};
    icd_buf out = ICD_BUF_INIT;
    CHECK_EQ_INT(orc_decompress(ORC_COMP_ZLIB, 262144, orig, sizeof orig, 1 << 20, &out, &err), 0);
    CHECK(out.len == 5 && !memcmp(out.data, "hello", 5));
    icd_buf_free(&out);
}

static void test_codecs(void)
{
    icd_error err;
    uint8_t plain[3000];
    for (size_t i = 0; i < sizeof plain; i++)
        plain[i] = (uint8_t)("orc chunk framing "[i % 18]);
    int kinds[] = {ORC_COMP_ZLIB, ORC_COMP_SNAPPY, ORC_COMP_ZSTD, ORC_COMP_LZ4};
    for (size_t k = 0; k < 4; k++) {
        /* chunk 1: first 1000 bytes compressed; chunk 2: 500 original; chunk 3: rest
         * compressed */
        icd_buf f = ICD_BUF_INIT;
        uint8_t comp[8192];
        size_t parts[3][2] = {{0, 1000}, {1000, 500}, {1500, 1500}};
        for (int p = 0; p < 3; p++) {
            const uint8_t *in = plain + parts[p][0];
            size_t n = parts[p][1];
            if (p == 1) {
                frame(&f, in, n, true);
                continue;
            }
            size_t cl = 0;
            switch (kinds[k]) {
            case ORC_COMP_ZLIB:
                cl = deflate_raw(in, n, comp, sizeof comp);
                break;
            case ORC_COMP_SNAPPY:
                cl = sizeof comp;
                snappy_compress((const char *)in, n, (char *)comp, &cl);
                break;
            case ORC_COMP_ZSTD:
                cl = ZSTD_compress(comp, sizeof comp, in, n, 3);
                break;
            case ORC_COMP_LZ4:
                cl = (size_t)LZ4_compress_default((const char *)in, (char *)comp, (int)n,
                                                  (int)sizeof comp);
                break;
            }
            frame(&f, comp, cl, false);
        }
        icd_buf out = ICD_BUF_INIT;
        CHECK_EQ_INT(orc_decompress(kinds[k], 2048, (uint8_t *)f.data, f.len, 1 << 20, &out, &err),
                     0);
        CHECK(out.len == sizeof plain && !memcmp(out.data, plain, sizeof plain));
        icd_buf_free(&out);
        /* a block size smaller than a chunk's output is an error */
        CHECK_EQ_INT(orc_decompress(kinds[k], 999, (uint8_t *)f.data, f.len, 1 << 20, &out, &err),
                     ICD_ECORRUPT);
        icd_buf_free(&out);
        /* so is a limit on the total */
        CHECK_EQ_INT(orc_decompress(kinds[k], 2048, (uint8_t *)f.data, f.len, 2000, &out, &err),
                     ICD_ECORRUPT);
        icd_buf_free(&out);
        /* truncated part: the last chunk cut short */
        CHECK_EQ_INT(
            orc_decompress(kinds[k], 2048, (uint8_t *)f.data, f.len - 1, 1 << 20, &out, &err),
            ICD_ECORRUPT);
        CHECK(strstr(err.message, "runs past") != NULL);
        icd_buf_free(&out);
        /* garbage inside a compressed chunk */
        icd_buf g = ICD_BUF_INIT;
        uint8_t junk[40];
        memset(junk, 0xfe, sizeof junk);
        frame(&g, junk, sizeof junk, false);
        CHECK(orc_decompress(kinds[k], 2048, (uint8_t *)g.data, g.len, 1 << 20, &out, &err) < 0);
        icd_buf_free(&out);
        icd_buf_free(&g);
        icd_buf_free(&f);
    }
    /* a dangling header byte */
    uint8_t two[] = {0x0b, 0x00};
    icd_buf out = ICD_BUF_INIT;
    CHECK_EQ_INT(orc_decompress(ORC_COMP_ZLIB, 100, two, 2, 100, &out, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "chunk header") != NULL);
    /* LZO: a clear unsupported error */
    CHECK_EQ_INT(orc_decompress(ORC_COMP_LZO, 100, two, 2, 100, &out, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "LZO") != NULL);
    icd_buf_free(&out);
}

TEST_MAIN(TEST(test_varints), TEST(test_byte_and_bool_rle), TEST(test_rle_v1), TEST(test_rle_v2),
          TEST(test_decimal_varints), TEST(test_chunk_headers), TEST(test_codecs))
