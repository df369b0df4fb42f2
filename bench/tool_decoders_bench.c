/*
 * Micro-benchmarks of the Parquet hot loops (src/formats/parquet): values/s of the
 * RLE/bit-packing hybrid (widths 1, 8, 17), DELTA_BINARY_PACKED (int64), PLAIN byte arrays
 * and BYTE_STREAM_SPLIT, and MB/s (of decompressed output) of each page codec on ~64 MB
 * of generated page-like data cut into 1 MiB pages. Inputs are made here with small
 * bench-only encoders and the codec libraries' compressors (brotli's encoder is loaded
 * with dlopen when present, since icedruid itself only links the decoder).
 *
 * Usage: build/bench/tool_decoders_bench [MB]   (MB of codec data, default 64)
 * Prints one table; each figure is the best of 3 runs, timed in thread CPU time.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/parquet/codec.h"
#include "formats/parquet/encodings.h"

#define PAGE_VALUES 65536
#define REPEAT 3

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* CPU time of this thread: on a shared, loaded machine it measures the decoder rather
 * than the scheduler (the figures are per core). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, icd_error *err)
{
    fprintf(stderr, "tool_decoders_bench: %s failed: %s\n", what, err ? err->message : "");
    exit(1);
}

static void row(const char *name, double units, const char *unit, double secs)
{
    printf("%-34s %12.1f %s\n", name, units / secs / 1e6, unit);
}

/* ---- bench-only encoders ---- */

static void pack_lsb(uint8_t *dst, const uint64_t *v, size_t nv, int w)
{
    size_t bit = 0;
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < w; k++, bit++)
            if ((v[i] >> k) & 1) dst[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

static size_t put_uleb(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        d[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    return n;
}

/* One page of values as a single bit-packed run, with occasional repeated runs as real
 * writers produce for levels and dictionary indices. */
static size_t enc_rle_page(uint8_t *d, int w, size_t nv)
{
    size_t pos = 0, done = 0;
    uint64_t mask = ((uint64_t)1 << w) - 1, tmp[512];
    while (done < nv) {
        if (rnd() % 8 == 0) { /* a repeated run of 64 values */
            pos += put_uleb(d + pos, 64 << 1);
            uint64_t v = rnd() & mask;
            for (int k = 0; k < (w + 7) / 8; k++)
                d[pos++] = (uint8_t)(v >> (8 * k));
            done += 64;
            continue;
        }
        size_t cnt = 512;
        pos += put_uleb(d + pos, (cnt / 8) << 1 | 1);
        for (size_t i = 0; i < cnt; i++)
            tmp[i] = rnd() & mask;
        memset(d + pos, 0, cnt / 8 * (size_t)w);
        pack_lsb(d + pos, tmp, cnt, w);
        pos += cnt / 8 * (size_t)w;
        done += cnt;
    }
    return pos;
}

static size_t enc_delta(uint8_t *d, const int64_t *v, size_t n)
{
    const size_t block = 128, mbs = 4, mbsize = 32;
    size_t pos = 0;
    pos += put_uleb(d + pos, block);
    pos += put_uleb(d + pos, mbs);
    pos += put_uleb(d + pos, n);
    pos += put_uleb(d + pos, ((uint64_t)v[0] << 1) ^ (uint64_t)(v[0] >> 63));
    uint64_t del[128];
    for (size_t i = 1; i < n; i += block) {
        size_t cnt = n - i < block ? n - i : block;
        int64_t min = INT64_MAX;
        for (size_t k = 0; k < cnt; k++) {
            int64_t x = (int64_t)((uint64_t)v[i + k] - (uint64_t)v[i + k - 1]);
            del[k] = (uint64_t)x;
            if (x < min) min = x;
        }
        for (size_t k = cnt; k < block; k++)
            del[k] = (uint64_t)min;
        pos += put_uleb(d + pos, ((uint64_t)min << 1) ^ (uint64_t)(min >> 63));
        size_t wat = pos;
        pos += mbs;
        size_t used_mbs = (cnt + mbsize - 1) / mbsize;
        for (size_t m = 0; m < used_mbs; m++) {
            uint64_t mx = 0;
            for (size_t k = 0; k < mbsize; k++) {
                del[m * mbsize + k] -= (uint64_t)min;
                if (del[m * mbsize + k] > mx) mx = del[m * mbsize + k];
            }
            int w = 0;
            while (w < 64 && (mx >> w))
                w++;
            d[wat + m] = (uint8_t)w;
            memset(d + pos, 0, mbsize / 8 * (size_t)w);
            pack_lsb(d + pos, del + m * mbsize, mbsize, w);
            pos += mbsize / 8 * (size_t)w;
        }
        for (size_t m = used_mbs; m < mbs; m++)
            d[wat + m] = 0;
    }
    return pos;
}

/* ---- value decoders ---- */

static void bench_rle(int w, size_t pages)
{
    uint8_t **enc = malloc(pages * sizeof *enc);
    size_t *len = malloc(pages * sizeof *len);
    for (size_t i = 0; i < pages; i++) {
        enc[i] = malloc(PAGE_VALUES * 5 + 64);
        len[i] = enc_rle_page(enc[i], w, PAGE_VALUES);
    }
    uint32_t *out = malloc(PAGE_VALUES * sizeof *out);
    double best = 1e9;
    icd_error err;
    for (int r = 0; r < REPEAT; r++) {
        double t = now();
        for (size_t i = 0; i < pages; i++)
            if (pq_rle_decode(enc[i], len[i], w, out, PAGE_VALUES, NULL, &err))
                die("pq_rle_decode", &err);
        t = now() - t;
        if (t < best) best = t;
    }
    char name[64];
    snprintf(name, sizeof name, "RLE/bit-packed, width %d", w);
    row(name, (double)pages * PAGE_VALUES, "M values/s", best);
    for (size_t i = 0; i < pages; i++)
        free(enc[i]);
    free(enc);
    free(len);
    free(out);
}

static void bench_delta(size_t n)
{
    /* Increasing timestamps (microseconds) with jitter, like event_time columns. */
    int64_t *v = malloc(n * sizeof *v), *out = malloc(n * sizeof *out);
    int64_t t = 1704067200000000;
    for (size_t i = 0; i < n; i++) {
        t += (int64_t)(rnd() % 600000);
        v[i] = t;
    }
    uint8_t *enc = malloc(n * 9 + 1024);
    size_t elen = enc_delta(enc, v, n);
    double best = 1e9;
    icd_error err;
    for (int r = 0; r < REPEAT; r++) {
        double s = now();
        if (pq_delta_binary_packed(enc, elen, n, out, NULL, &err))
            die("pq_delta_binary_packed", &err);
        s = now() - s;
        if (s < best) best = s;
    }
    if (memcmp(v, out, n * sizeof *v) != 0) die("delta round trip", NULL);
    row("DELTA_BINARY_PACKED int64", (double)n, "M values/s", best);
    free(v);
    free(out);
    free(enc);
}

static void bench_plain_byte_array(size_t n)
{
    uint8_t *enc = malloc(n * (4 + 24));
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t len = (uint32_t)(4 + rnd() % 17); /* 4..20 bytes, like ids and names */
        memcpy(enc + pos, &len, 4);
        pos += 4;
        for (uint32_t k = 0; k < len; k++)
            enc[pos++] = (uint8_t)('a' + rnd() % 26);
    }
    pq_bytes *out = malloc(PAGE_VALUES * sizeof *out);
    double best = 1e9;
    icd_error err;
    for (int r = 0; r < REPEAT; r++) {
        double t = now();
        size_t at = 0;
        for (size_t i = 0; i < n; i += PAGE_VALUES) {
            size_t used;
            size_t cnt = n - i < PAGE_VALUES ? n - i : PAGE_VALUES;
            if (pq_plain_byte_array(enc + at, pos - at, cnt, out, &used, &err))
                die("pq_plain_byte_array", &err);
            at += used;
        }
        t = now() - t;
        if (t < best) best = t;
    }
    row("PLAIN byte array (avg 12 B)", (double)n, "M values/s", best);
    free(enc);
    free(out);
}

static void bench_bss(size_t n, size_t width)
{
    uint8_t *enc = malloc(n * width), *out = malloc(n * width);
    for (size_t i = 0; i < n * width; i++)
        enc[i] = (uint8_t)rnd();
    double best = 1e9;
    icd_error err;
    for (int r = 0; r < REPEAT; r++) {
        double t = now();
        for (size_t i = 0; i < n; i += PAGE_VALUES) {
            size_t cnt = n - i < PAGE_VALUES ? n - i : PAGE_VALUES;
            if (pq_byte_stream_split(enc + i * width, cnt * width, cnt, cnt, width, out + i * width,
                                     &err))
                die("pq_byte_stream_split", &err);
        }
        t = now() - t;
        if (t < best) best = t;
    }
    char name[64];
    snprintf(name, sizeof name, "BYTE_STREAM_SPLIT, width %zu", width);
    row(name, (double)n, "M values/s", best);
    free(enc);
    free(out);
}

/* ---- codecs ---- */

#define CODEC_PAGE ((size_t)1 << 20)

typedef int (*brotli_enc_fn)(int quality, int lgwin, int mode, size_t in_len, const uint8_t *in,
                             size_t *out_len, uint8_t *out);

/* Compresses one page with `codec`; returns its length, 0 when unavailable. */
static size_t compress_page(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                            brotli_enc_fn brotli)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        memcpy(dst, src, n);
        return n;
    case PQ_CODEC_SNAPPY: {
        size_t l = cap;
        return snappy_compress((const char *)src, n, (char *)dst, &l) == SNAPPY_OK ? l : 0;
    }
    case PQ_CODEC_GZIP: {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        zs.next_in = (Bytef *)src;
        zs.avail_in = (uInt)n;
        zs.next_out = dst;
        zs.avail_out = (uInt)cap;
        int r = deflate(&zs, Z_FINISH);
        size_t l = r == Z_STREAM_END ? cap - zs.avail_out : 0;
        deflateEnd(&zs);
        return l;
    }
    case PQ_CODEC_BROTLI: {
        size_t l = cap;
        return brotli && brotli(5, 22, 0, n, src, &l, dst) == 1 ? l : 0;
    }
    case PQ_CODEC_LZ4: { /* Hadoop framing, one block */
        int c = LZ4_compress_default((const char *)src, (char *)dst + 8, (int)n, (int)cap - 8);
        uint32_t u = (uint32_t)n, k = (uint32_t)c;
        for (int i = 0; i < 4; i++) {
            dst[i] = (uint8_t)(u >> (24 - 8 * i));
            dst[4 + i] = (uint8_t)(k >> (24 - 8 * i));
        }
        return (size_t)c + 8;
    }
    case PQ_CODEC_ZSTD: {
        size_t l = ZSTD_compress(dst, cap, src, n, 3);
        return ZSTD_isError(l) ? 0 : l;
    }
    case PQ_CODEC_LZ4_RAW:
        return (size_t)LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)cap);
    }
    return 0;
}

/* Page-like data: dictionary-ish strings, increasing integers, random doubles. */
static void make_pages(uint8_t *d, size_t n)
{
    static const char *words[] = {"US",        "DE",    "FR",    "mobile",
                                  "desktop",   "/home", "/cart", "https://example.com/",
                                  "u00012345", "tablet"};
    size_t i = 0;
    int64_t x = 1000000;
    while (i + 32 < n) {
        switch (rnd() % 4) {
        case 0:
        case 1: {
            const char *w = words[rnd() % 10];
            size_t l = strlen(w);
            uint32_t l32 = (uint32_t)l;
            memcpy(d + i, &l32, 4);
            memcpy(d + i + 4, w, l);
            i += 4 + l;
            break;
        }
        case 2:
            x += (int64_t)(rnd() % 1000);
            memcpy(d + i, &x, 8);
            i += 8;
            break;
        default: {
            double v = (double)(rnd() % 100000) / 100.0;
            memcpy(d + i, &v, 8);
            i += 8;
        }
        }
    }
    memset(d + i, 0, n - i);
}

static void bench_codecs(size_t mb)
{
    size_t pages = mb, total = pages * CODEC_PAGE;
    uint8_t *src = malloc(total), *out = malloc(CODEC_PAGE);
    make_pages(src, total);
    void *blib = dlopen("libbrotlienc.so.1", RTLD_NOW | RTLD_LOCAL);
    brotli_enc_fn brotli = NULL;
    if (blib) *(void **)&brotli = dlsym(blib, "BrotliEncoderCompress");
    const int codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP,  PQ_CODEC_ZSTD,
                          PQ_CODEC_LZ4_RAW,      PQ_CODEC_LZ4,    PQ_CODEC_BROTLI};
    size_t cap = CODEC_PAGE + CODEC_PAGE / 2 + 4096;
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        int codec = codecs[c];
        uint8_t **comp = malloc(pages * sizeof *comp);
        size_t *clen = malloc(pages * sizeof *clen), ctotal = 0;
        int ok = 1;
        for (size_t i = 0; i < pages; i++) {
            comp[i] = malloc(cap);
            clen[i] = compress_page(codec, src + i * CODEC_PAGE, CODEC_PAGE, comp[i], cap, brotli);
            ok &= clen[i] > 0;
            ctotal += clen[i];
        }
        char name[64];
        snprintf(name, sizeof name, "%s (ratio %.2f)", pq_codec_name(codec),
                 ok ? (double)total / (double)ctotal : 0.0);
        if (!ok) {
            printf("%-34s %12s (no encoder available)\n", pq_codec_name(codec), "-");
        } else {
            double best = 1e9;
            icd_error err;
            for (int r = 0; r < REPEAT; r++) {
                double t = now();
                for (size_t i = 0; i < pages; i++)
                    if (pq_decompress(codec, comp[i], clen[i], out, CODEC_PAGE, &err))
                        die("pq_decompress", &err);
                t = now() - t;
                if (t < best) best = t;
            }
            if (memcmp(out, src + (pages - 1) * CODEC_PAGE, CODEC_PAGE) != 0)
                die("codec round trip", NULL);
            row(name, (double)total, "MB/s", best);
        }
        for (size_t i = 0; i < pages; i++)
            free(comp[i]);
        free(comp);
        free(clen);
    }
    if (blib) dlclose(blib);
    free(src);
    free(out);
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
    if (mb == 0) mb = 64;
    printf("%-34s %12s\n", "decoder / codec", "throughput");
    printf("%-34s %12s\n", "----------------------------------", "------------");
    bench_rle(1, 256);
    bench_rle(8, 256);
    bench_rle(17, 256);
    bench_delta((size_t)16 << 20);
    bench_plain_byte_array((size_t)8 << 20);
    bench_bss((size_t)8 << 20, 4);
    bench_bss((size_t)8 << 20, 8);
    bench_codecs(mb);
    return 0;
}
