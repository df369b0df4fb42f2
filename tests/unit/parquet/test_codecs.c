/*
 * Parquet page decompression (src/formats/parquet/codec.h): every codec round-trips data
 * compressed here with the codec libraries' own encoders (snappy, zlib gzip/zlib, zstd,
 * LZ4 block / Hadoop framing built by hand / LZ4 frame, brotli via an embedded vector and,
 * when libbrotlienc.so.1 can be loaded, its encoder), and wrong sizes, truncations,
 * garbage and decompression bombs fail with ICD_ECORRUPT. Output buffers are allocated
 * with exactly out_len bytes so that ASan catches any write past them.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/parquet/codec.h"
#include "test.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Page-like data: runs of repeated words mixed with random bytes. */
static uint8_t *make_data(size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    static const char *words[] = {"druid", "iceberg", "parquet", "2024-01-01", "null", "u0000"};
    size_t i = 0;
    while (i < n) {
        if (rnd() % 3) {
            const char *w = words[rnd() % 6];
            for (size_t k = 0; w[k] && i < n; k++)
                d[i++] = (uint8_t)w[k];
        } else {
            d[i++] = (uint8_t)rnd();
        }
    }
    return d;
}

/* Decompresses into a buffer of exactly out_len bytes and compares with `want`
 * (when not NULL). */
static int decomp(int codec, const uint8_t *in, size_t in_len, size_t out_len, const uint8_t *want,
                  icd_error *err)
{
    uint8_t *out = malloc(out_len ? out_len : 1);
    icd_error_clear(err);
    int rc = pq_decompress(codec, in, in_len, out, out_len, err);
    if (rc == 0 && want) CHECK(memcmp(out, want, out_len) == 0);
    if (rc) CHECK(err->message[0] != '\0');
    free(out);
    return rc;
}

/* The checks every codec must pass on one compressed buffer of `src`. */
static void check_codec(int codec, const uint8_t *comp, size_t clen, const uint8_t *src, size_t n)
{
    icd_error err;
    CHECK_EQ_INT(decomp(codec, comp, clen, n, src, &err), 0);
    if (n > 0) {
        CHECK_EQ_INT(decomp(codec, comp, clen, n - 1, NULL, &err), ICD_ECORRUPT);
        CHECK(strstr(err.message, pq_codec_name(codec)) != NULL);
    }
    CHECK_EQ_INT(decomp(codec, comp, clen, n + 1, NULL, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, pq_codec_name(codec)) != NULL);
    if (clen > 1) {
        CHECK_EQ_INT(decomp(codec, comp, clen - 1, n, NULL, &err), ICD_ECORRUPT);
        CHECK_EQ_INT(decomp(codec, comp, clen / 2, n, NULL, &err), ICD_ECORRUPT);
    }
}

static const size_t sizes[] = {0, 1, 100, 70000, (size_t)1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void test_snappy(void)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        uint8_t *src = make_data(n);
        size_t clen = snappy_max_compressed_length(n);
        uint8_t *comp = malloc(clen);
        CHECK_EQ_INT(snappy_compress((const char *)src, n, (char *)comp, &clen), SNAPPY_OK);
        check_codec(PQ_CODEC_SNAPPY, comp, clen, src, n);
        free(src);
        free(comp);
    }
    icd_error err;
    const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK_EQ_INT(decomp(PQ_CODEC_SNAPPY, garbage, sizeof garbage, 10, NULL, &err), ICD_ECORRUPT);
    /* The length says 5, the literal holds 3 bytes. */
    const uint8_t short_lit[] = {0x05, 0x08, 'a', 'b', 'c'};
    CHECK_EQ_INT(decomp(PQ_CODEC_SNAPPY, short_lit, sizeof short_lit, 5, NULL, &err), ICD_ECORRUPT);
}

/* zlib deflate with the given window bits (15: zlib, 31: gzip, -15: raw deflate). */
static size_t deflate_buf(const uint8_t *src, size_t n, uint8_t *dst, size_t cap, int wbits)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    zs.next_in = (Bytef *)src;
    zs.avail_in = (uInt)n;
    zs.next_out = dst;
    zs.avail_out = (uInt)cap;
    int r = deflate(&zs, Z_FINISH);
    size_t out = r == Z_STREAM_END ? cap - zs.avail_out : 0;
    deflateEnd(&zs);
    return out;
}

static void test_gzip(void)
{
    icd_error err;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        uint8_t *src = make_data(n);
        size_t cap = compressBound((uLong)n) + 64;
        uint8_t *comp = malloc(2 * cap + 16);
        size_t clen = deflate_buf(src, n, comp, cap, 31);
        CHECK(clen > 0);
        check_codec(PQ_CODEC_GZIP, comp, clen, src, n);
        /* zlib framing is detected as well. */
        size_t zlen = deflate_buf(src, n, comp, cap, 15);
        CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, zlen, n, src, &err), 0);
        /* Two gzip members, each holding half of the data. */
        size_t h = n / 2;
        size_t l1 = deflate_buf(src, h, comp, cap, 31);
        size_t l2 = deflate_buf(src + h, n - h, comp + l1, cap, 31);
        CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, l1 + l2, n, src, &err), 0);
        if (n > 0) CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, l1 + l2, h, NULL, &err), ICD_ECORRUPT);
        /* Zero padding after the stream is tolerated, other trailing bytes are not. */
        memset(comp + l1 + l2, 0, 8);
        CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, l1 + l2 + 8, n, src, &err), 0);
        comp[l1 + l2 + 3] = 'x';
        CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, l1 + l2 + 8, n, NULL, &err), ICD_ECORRUPT);
        /* Raw deflate has no header to detect. */
        if (n > 0) {
            size_t rlen = deflate_buf(src, n, comp, cap, -15);
            CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, rlen, n, NULL, &err), ICD_ECORRUPT);
        }
        free(src);
        free(comp);
    }
}

static void test_zstd(void)
{
    icd_error err;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        uint8_t *src = make_data(n);
        size_t cap = ZSTD_compressBound(n);
        uint8_t *comp = malloc(2 * cap + 64);
        size_t clen = ZSTD_compress(comp, cap, src, n, 3);
        CHECK(!ZSTD_isError(clen));
        check_codec(PQ_CODEC_ZSTD, comp, clen, src, n);
        /* Two frames. */
        size_t h = n / 2;
        size_t l1 = ZSTD_compress(comp, cap, src, h, 1);
        size_t l2 = ZSTD_compress(comp + l1, cap, src + h, n - h, 1);
        CHECK_EQ_INT(decomp(PQ_CODEC_ZSTD, comp, l1 + l2, n, src, &err), 0);
        /* A skippable frame after them. */
        const uint8_t skip[] = {0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
        memcpy(comp + l1 + l2, skip, sizeof skip);
        CHECK_EQ_INT(decomp(PQ_CODEC_ZSTD, comp, l1 + l2 + sizeof skip, n, src, &err), 0);
        /* A frame without its content size. */
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
        size_t nl = ZSTD_compress2(cctx, comp, cap, src, n);
        ZSTD_freeCCtx(cctx);
        CHECK(!ZSTD_isError(nl));
        CHECK_EQ_INT(ZSTD_getFrameContentSize(comp, nl) == ZSTD_CONTENTSIZE_UNKNOWN, 1);
        CHECK_EQ_INT(decomp(PQ_CODEC_ZSTD, comp, nl, n, src, &err), 0);
        if (n > 0) CHECK_EQ_INT(decomp(PQ_CODEC_ZSTD, comp, nl, n - 1, NULL, &err), ICD_ECORRUPT);
        free(src);
        free(comp);
    }
}

static void test_lz4_raw(void)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        uint8_t *src = make_data(n);
        int cap = LZ4_compressBound((int)n);
        uint8_t *comp = malloc((size_t)cap);
        int clen = LZ4_compress_default((const char *)src, (char *)comp, (int)n, cap);
        CHECK(clen > 0);
        check_codec(PQ_CODEC_LZ4_RAW, comp, (size_t)clen, src, n);
        free(src);
        free(comp);
    }
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Hadoop framing built by hand: `parts` blocks, each [BE usize][BE csize][LZ4 block]. */
static size_t hadoop_frame(const uint8_t *src, size_t n, int parts, uint8_t *dst)
{
    size_t op = 0, ip = 0;
    for (int k = 0; k < parts; k++) {
        size_t len = k == parts - 1 ? n - ip : n / (size_t)parts;
        int c = LZ4_compress_default((const char *)src + ip, (char *)dst + op + 8, (int)len,
                                     LZ4_compressBound((int)len));
        put_be32(dst + op, (uint32_t)len);
        put_be32(dst + op + 4, (uint32_t)c);
        op += 8 + (size_t)c;
        ip += len;
    }
    return op;
}

static void test_lz4_deprecated(void)
{
    icd_error err;
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = sizes[s];
        uint8_t *src = make_data(n);
        size_t cap = (size_t)LZ4_compressBound((int)n) * 2 + 64 + LZ4F_compressFrameBound(n, NULL);
        uint8_t *comp = malloc(cap);
        /* Hadoop, one block and three blocks. */
        size_t hl = hadoop_frame(src, n, 1, comp);
        check_codec(PQ_CODEC_LZ4, comp, hl, src, n);
        hl = hadoop_frame(src, n, 3, comp);
        check_codec(PQ_CODEC_LZ4, comp, hl, src, n);
        /* An LZ4 frame. */
        size_t fl = LZ4F_compressFrame(comp, cap, src, n, NULL);
        CHECK(!LZ4F_isError(fl));
        check_codec(PQ_CODEC_LZ4, comp, fl, src, n);
        /* A bare block. */
        int bl = LZ4_compress_default((const char *)src, (char *)comp, (int)n, (int)cap);
        CHECK_EQ_INT(decomp(PQ_CODEC_LZ4, comp, (size_t)bl, n, src, &err), 0);
        if (n > 0) {
            CHECK_EQ_INT(decomp(PQ_CODEC_LZ4, comp, (size_t)bl, n - 1, NULL, &err), ICD_ECORRUPT);
            CHECK(strstr(err.message, "Hadoop") != NULL);
        }
        free(src);
        free(comp);
    }
}

/* "Parquet pages, brotli compressed: " + "abcabcabcabc" * 20, compressed with Node.js
 * zlib.brotliCompressSync (an independent encoder). */
static const uint8_t brotli_vec[] = {0x1b, 0x11, 0x01, 0xf8, 0x45, 0x4f, 0x96, 0xea, 0x63, 0x14,
                                     0xea, 0x99, 0x60, 0x63, 0xc6, 0xc8, 0x59, 0x0a, 0x1a, 0x2d,
                                     0x09, 0x40, 0xe9, 0x28, 0x85, 0x3b, 0xef, 0x57, 0x21, 0x42,
                                     0xb7, 0x2f, 0x03, 0xd6, 0xf5, 0xe7, 0x7c, 0x02, 0xd5, 0x00};

typedef int (*brotli_enc_fn)(int quality, int lgwin, int mode, size_t in_len, const uint8_t *in,
                             size_t *out_len, uint8_t *out);

static void test_brotli(void)
{
    icd_error err;
    char want[300];
    strcpy(want, "Parquet pages, brotli compressed: ");
    for (int i = 0; i < 20; i++)
        strcat(want, "abcabcabcabc");
    size_t n = strlen(want);
    CHECK_EQ_INT(n, 274);
    check_codec(PQ_CODEC_BROTLI, brotli_vec, sizeof brotli_vec, (const uint8_t *)want, n);
    const uint8_t empty[] = {0x3b};
    CHECK_EQ_INT(decomp(PQ_CODEC_BROTLI, empty, 1, 0, NULL, &err), 0);
    CHECK_EQ_INT(decomp(PQ_CODEC_BROTLI, empty, 1, 1, NULL, &err), ICD_ECORRUPT);
    uint8_t trailing[sizeof brotli_vec + 1];
    memcpy(trailing, brotli_vec, sizeof brotli_vec);
    trailing[sizeof brotli_vec] = 0x55;
    CHECK_EQ_INT(decomp(PQ_CODEC_BROTLI, trailing, sizeof trailing, n, NULL, &err), ICD_ECORRUPT);

    /* Round trips through the brotli encoder when its library can be loaded (the test does
     * not link it: only the decoder is a dependency of icedruid). */
    void *lib = dlopen("libbrotlienc.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "note: libbrotlienc.so.1 not loadable, brotli round trips skipped\n");
        return;
    }
    brotli_enc_fn enc;
    *(void **)&enc = dlsym(lib, "BrotliEncoderCompress");
    CHECK(enc != NULL);
    for (size_t s = 0; enc && s < NSIZES; s++) {
        size_t len = sizes[s];
        uint8_t *src = make_data(len);
        size_t clen = len + len / 2 + 1024;
        uint8_t *comp = malloc(clen);
        CHECK_EQ_INT(enc(5, 22, 0, len, src, &clen, comp), 1);
        check_codec(PQ_CODEC_BROTLI, comp, clen, src, len);
        free(src);
        free(comp);
    }
    dlclose(lib);
}

static void test_bombs(void)
{
    /* 16 MiB of zeros claimed to be a 1000-byte page: stops at the bound, no overflow. */
    size_t n = (size_t)16 << 20;
    uint8_t *zeros = calloc(n, 1);
    icd_error err;
    size_t cap = ZSTD_compressBound(n);
    uint8_t *comp = malloc(cap + compressBound((uLong)n));
    size_t cl = ZSTD_compress(comp, cap, zeros, n, 1);
    CHECK_EQ_INT(decomp(PQ_CODEC_ZSTD, comp, cl, 1000, NULL, &err), ICD_ECORRUPT);
    cl = deflate_buf(zeros, n, comp, cap + compressBound((uLong)n), 31);
    CHECK_EQ_INT(decomp(PQ_CODEC_GZIP, comp, cl, 1000, NULL, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "more than") != NULL);
    cl = LZ4F_compressFrame(comp, cap, zeros, n, NULL);
    CHECK_EQ_INT(decomp(PQ_CODEC_LZ4, comp, cl, 1000, NULL, &err), ICD_ECORRUPT);
    size_t sl = snappy_max_compressed_length(n);
    uint8_t *sc = malloc(sl);
    snappy_compress((const char *)zeros, n, (char *)sc, &sl);
    CHECK_EQ_INT(decomp(PQ_CODEC_SNAPPY, sc, sl, 1000, NULL, &err), ICD_ECORRUPT);
    free(sc);
    free(comp);
    free(zeros);
}

static void test_misc(void)
{
    icd_error err;
    const uint8_t abc[] = {'a', 'b', 'c'};
    CHECK_EQ_INT(decomp(PQ_CODEC_UNCOMPRESSED, abc, 3, 3, abc, &err), 0);
    CHECK_EQ_INT(decomp(PQ_CODEC_UNCOMPRESSED, abc, 3, 2, NULL, &err), ICD_ECORRUPT);
    CHECK_EQ_INT(decomp(PQ_CODEC_UNCOMPRESSED, abc, 0, 0, NULL, &err), 0);
    CHECK_EQ_INT(decomp(PQ_CODEC_LZO, abc, 3, 3, NULL, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "LZO") != NULL);
    CHECK_EQ_INT(decomp(99, abc, 3, 3, NULL, &err), ICD_EUNSUPPORTED);
    CHECK_EQ_INT(decomp(-1, abc, 3, 3, NULL, &err), ICD_EUNSUPPORTED);
    /* Zero-length bodies: fine for an empty page, corrupt otherwise. */
    for (int c = PQ_CODEC_SNAPPY; c <= PQ_CODEC_LZ4_RAW; c++) {
        if (c == PQ_CODEC_LZO) continue;
        CHECK_EQ_INT(pq_decompress(c, abc, 0, NULL, 0, &err), 0);
        CHECK_EQ_INT(decomp(c, abc, 0, 10, NULL, &err), ICD_ECORRUPT);
        /* Garbage of every codec: a clear error, never a crash. */
        const uint8_t junk[] = {0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02};
        CHECK_EQ_INT(decomp(c, junk, sizeof junk, 64, NULL, &err), ICD_ECORRUPT);
    }
    CHECK_EQ_STR(pq_codec_name(PQ_CODEC_ZSTD), "ZSTD");
    CHECK_EQ_STR(pq_codec_name(PQ_CODEC_LZ4_RAW), "LZ4_RAW");
    CHECK_EQ_STR(pq_codec_name(12), "UNKNOWN(12)");
}

TEST_MAIN(TEST(test_snappy), TEST(test_gzip), TEST(test_zstd), TEST(test_lz4_raw),
          TEST(test_lz4_deprecated), TEST(test_brotli), TEST(test_bombs), TEST(test_misc))
