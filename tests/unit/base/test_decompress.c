/*
 * base/decompress.c, the one decompressor of every format: for each codec (data
 * compressed here by the codec libraries themselves), both ways of calling it:
 *   - round trip into an exact buffer and into a growing buffer (appended after bytes
 *     already there);
 *   - a buffer one byte short: "more than N bytes", nothing written past it (the byte
 *     after the buffer is a canary); a limit one byte short in the growing mode;
 *   - with `exact`, a buffer one byte too long: "decompress to N bytes, M expected";
 *   - truncated input and trailing garbage: errors naming the codec;
 *   - streams of several parts: gzip members, zlib streams, zstd frames, LZ4 frames.
 * Brotli has an encoded vector in tests/unit/parquet/test_codecs.c (no encoder linked).
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "base/decompress.h"
#include "test.h"

#define N 100000

static uint8_t *sample(void)
{
    uint8_t *p = malloc(N);
    uint32_t x = 12345;
    for (size_t i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = i % 7 == 0 ? (uint8_t)(x >> 24) : (uint8_t)("icedruid"[i % 8]);
    }
    return p;
}

/* Compresses src with codec c (the libraries' own encoders). */
static size_t encode(icd_codec c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    switch (c) {
    case ICD_CODEC_SNAPPY: {
        size_t got = cap;
        return snappy_compress((const char *)src, n, (char *)dst, &got) == SNAPPY_OK ? got : 0;
    }
    case ICD_CODEC_DEFLATE:
    case ICD_CODEC_ZLIB: {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        int bits = c == ICD_CODEC_DEFLATE ? -15 : 15 + 16; /* raw, or a gzip member */
        if (deflateInit2(&zs, 6, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
        zs.next_in = (Bytef *)(uintptr_t)src;
        zs.avail_in = (uInt)n;
        zs.next_out = dst;
        zs.avail_out = (uInt)cap;
        int zr = deflate(&zs, Z_FINISH);
        size_t got = zs.total_out;
        deflateEnd(&zs);
        return zr == Z_STREAM_END ? got : 0;
    }
    case ICD_CODEC_ZSTD: {
        size_t r = ZSTD_compress(dst, cap, src, n, 3);
        return ZSTD_isError(r) ? 0 : r;
    }
    case ICD_CODEC_LZ4: {
        int r = LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)cap);
        return r > 0 ? (size_t)r : 0;
    }
    case ICD_CODEC_LZ4_FRAME: {
        size_t r = LZ4F_compressFrame(dst, cap, src, n, NULL);
        return LZ4F_isError(r) ? 0 : r;
    }
    default:
        return 0;
    }
}

static bool names_codec(const icd_error *err, icd_codec c)
{
    return strstr(err->message, icd_codec_name(c)) != NULL;
}

static void check_codec(icd_codec c, const uint8_t *src)
{
    size_t cap = N + N / 2 + 1024;
    uint8_t *comp = malloc(cap), *out = malloc(N + 2);
    size_t clen = encode(c, src, N, comp, cap);
    CHECK(clen > 0 && clen < N);
    icd_error err;
    size_t got;
    /* exact */
    CHECK_EQ_INT(icd_decompress(c, comp, clen, out, N, true, &got, &err), 0);
    CHECK(got == N && memcmp(out, src, N) == 0);
    /* one byte short: an error, the canary untouched */
    out[N - 1] = 0xA5;
    CHECK_EQ_INT(icd_decompress(c, comp, clen, out, N - 1, false, &got, &err), ICD_ECORRUPT);
    CHECK(names_codec(&err, c) && strstr(err.message, "more than"));
    CHECK(out[N - 1] == 0xA5);
    /* one byte too many with exact; fine without */
    CHECK_EQ_INT(icd_decompress(c, comp, clen, out, N + 1, true, &got, &err), ICD_ECORRUPT);
    CHECK(names_codec(&err, c) && strstr(err.message, "expected"));
    CHECK_EQ_INT(icd_decompress(c, comp, clen, out, N + 1, false, &got, &err), 0);
    CHECK(got == N);
    /* growing buffer, appended after what is there */
    icd_buf b = ICD_BUF_INIT;
    icd_buf_append(&b, "xy", 2);
    CHECK_EQ_INT(icd_decompress_buf(c, comp, clen, N, &b, &err), 0);
    CHECK(b.len == N + 2 && memcmp(b.data, "xy", 2) == 0 && memcmp(b.data + 2, src, N) == 0);
    CHECK(b.data[b.len] == '\0');
    b.len = 0;
    CHECK_EQ_INT(icd_decompress_buf(c, comp, clen, N - 1, &b, &err), ICD_EUNSUPPORTED);
    CHECK(names_codec(&err, c) && strstr(err.message, "limit"));
    icd_buf_free(&b);
    /* truncated input */
    CHECK(icd_decompress(c, comp, clen / 2, out, N, true, &got, &err) < 0);
    CHECK(names_codec(&err, c));
    /* garbage after the stream (not for a raw LZ4 block or snappy: no end marker) */
    if (c != ICD_CODEC_LZ4 && c != ICD_CODEC_SNAPPY) {
        memcpy(comp + clen, "\x01\x02\x03", 3);
        CHECK_EQ_INT(icd_decompress(c, comp, clen + 3, out, N, true, &got, &err), ICD_ECORRUPT);
        CHECK(names_codec(&err, c));
    }
    free(comp);
    free(out);
}

static void test_codecs(void)
{
    uint8_t *src = sample();
    const icd_codec all[] = {ICD_CODEC_SNAPPY, ICD_CODEC_DEFLATE, ICD_CODEC_ZLIB,
                             ICD_CODEC_ZSTD,   ICD_CODEC_LZ4,     ICD_CODEC_LZ4_FRAME};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        check_codec(all[i], src);
    free(src);
}

/* Streams in parts: two gzip members, two zstd frames, two LZ4 frames; zero padding after
 * a gzip stream. */
static void test_parts(void)
{
    uint8_t *src = sample();
    const icd_codec multi[] = {ICD_CODEC_ZLIB, ICD_CODEC_ZSTD, ICD_CODEC_LZ4_FRAME};
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
        icd_codec c = multi[i];
        size_t cap = 2 * N + 4096;
        uint8_t *comp = malloc(cap + 16), *out = malloc(N);
        size_t a = encode(c, src, N / 2, comp, cap);
        size_t b = encode(c, src + N / 2, N - N / 2, comp + a, cap - a);
        CHECK(a > 0 && b > 0);
        icd_error err;
        size_t got;
        CHECK_EQ_INT(icd_decompress(c, comp, a + b, out, N, true, &got, &err), 0);
        CHECK(memcmp(out, src, N) == 0);
        if (c == ICD_CODEC_ZLIB) {
            memset(comp + a + b, 0, 16);
            CHECK_EQ_INT(icd_decompress(c, comp, a + b + 16, out, N, true, &got, &err), 0);
        }
        free(comp);
        free(out);
    }
    free(src);
}

/* Degenerate inputs: empty input (no stream: truncated), an empty output buffer, an
 * unknown codec. */
static void test_edges(void)
{
    icd_error err;
    size_t got;
    uint8_t one = 0;
    CHECK(icd_decompress(ICD_CODEC_ZLIB, &one, 0, NULL, 0, false, &got, &err) < 0);
    CHECK(icd_decompress(ICD_CODEC_ZSTD, &one, 0, NULL, 0, false, &got, &err) < 0);
    uint8_t comp[64];
    size_t clen = encode(ICD_CODEC_ZSTD, (const uint8_t *)"abc", 3, comp, sizeof comp);
    CHECK_EQ_INT(icd_decompress(ICD_CODEC_ZSTD, comp, clen, NULL, 0, false, &got, &err),
                 ICD_ECORRUPT);
    CHECK(icd_decompress((icd_codec)99, comp, clen, NULL, 0, false, &got, &err) == ICD_EINTERNAL);
    /* snappy: a length header larger than the limit is refused before decoding */
    icd_buf b = ICD_BUF_INIT;
    uint8_t big[5] = {0xff, 0xff, 0xff, 0xff, 0x0f}; /* varint 2^32 - 1 */
    CHECK_EQ_INT(icd_decompress_buf(ICD_CODEC_SNAPPY, big, 5, 1 << 20, &b, &err), ICD_EUNSUPPORTED);
    icd_buf_free(&b);
}

/* Deflate, zlib and gzip streams in one piece go through libdeflate, anything else through
 * zlib: a growing buffer for output far beyond 4x the input (the quick way retries with
 * more room), the limit met exactly and missed by one byte, and a zlib stream (not gzip). */
static void test_deflate_whole(void)
{
    size_t n = 3u << 20; /* 3 MiB of zeros: about 1000x */
    uint8_t *src = calloc(n, 1), *comp = malloc(n);
    const icd_codec cs[] = {ICD_CODEC_DEFLATE, ICD_CODEC_ZLIB};
    for (size_t i = 0; i < 2; i++) {
        size_t clen = encode(cs[i], src, n, comp, n);
        CHECK(clen > 0 && clen < n / 500);
        icd_error err;
        icd_buf b = ICD_BUF_INIT;
        icd_buf_append(&b, "x", 1); /* appended after what is there */
        CHECK_EQ_INT(icd_decompress_buf(cs[i], comp, clen, n, &b, &err), 0);
        CHECK_EQ_INT(b.len, n + 1);
        CHECK(b.data[0] == 'x' && b.data[1] == 0 && b.data[n] == 0 && b.data[n + 1] == '\0');
        icd_buf_free(&b);
        icd_buf c = ICD_BUF_INIT;
        CHECK_EQ_INT(icd_decompress_buf(cs[i], comp, clen, n - 1, &c, &err), ICD_EUNSUPPORTED);
        CHECK(strstr(err.message, "limit") != NULL);
        icd_buf_free(&c);
    }
    /* a zlib (RFC 1950) stream, detected as such by ICD_CODEC_ZLIB */
    uLongf zl = (uLongf)n;
    CHECK(compress2(comp, &zl, src, 100000, 6) == Z_OK);
    uint8_t *out = malloc(100000);
    icd_error err;
    size_t got;
    CHECK_EQ_INT(icd_decompress(ICD_CODEC_ZLIB, comp, zl, out, 100000, true, &got, &err), 0);
    CHECK(got == 100000 && out[99999] == 0);
    /* one byte short of the output: the too-large error of the streaming way */
    CHECK_EQ_INT(icd_decompress(ICD_CODEC_ZLIB, comp, zl, out, 99999, false, &got, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "more than 99999 bytes") != NULL);
    free(out);
    free(src);
    free(comp);
}

TEST_MAIN(TEST(test_codecs), TEST(test_parts), TEST(test_edges), TEST(test_deflate_whole))
