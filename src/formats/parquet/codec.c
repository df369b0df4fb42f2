/*
 * Parquet page decompression (codec.h) over base/decompress.h. The column reader passes
 * one page body and the uncompressed size from the page header; every codec must produce
 * exactly that many bytes into the caller's buffer (which also defuses decompression
 * bombs: a stream that would produce more is an error, found without writing past it).
 *
 * The deprecated LZ4 codec is ambiguous in the wild: parquet-mr wrote Hadoop's block
 * framing ([4-byte BE uncompressed size][4-byte BE compressed size][LZ4 block], repeated),
 * other writers an LZ4 frame or a bare block. Like parquet-cpp we try the three in order.
 */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "base/bits.h"
#include "base/decompress.h"
#include "formats/parquet/codec.h"

const char *pq_codec_name(int codec)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        return "UNCOMPRESSED";
    case PQ_CODEC_SNAPPY:
        return "SNAPPY";
    case PQ_CODEC_GZIP:
        return "GZIP";
    case PQ_CODEC_LZO:
        return "LZO";
    case PQ_CODEC_BROTLI:
        return "BROTLI";
    case PQ_CODEC_LZ4:
        return "LZ4";
    case PQ_CODEC_ZSTD:
        return "ZSTD";
    case PQ_CODEC_LZ4_RAW:
        return "LZ4_RAW";
    default: {
        static _Thread_local char unknown[32];
        snprintf(unknown, sizeof unknown, "UNKNOWN(%d)", codec);
        return unknown;
    }
    }
}

/* One LZ4 block into exactly out_len bytes; -1 when it does not decode to that. */
static int lz4_block_exact(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    icd_error ignored;
    size_t got;
    return icd_decompress(ICD_CODEC_LZ4, in, in_len, out, out_len, true, &got, &ignored) ? -1 : 0;
}

/* Hadoop framing: a sequence of [BE uncompressed size][BE compressed size][block]. */
static int lz4_try_hadoop(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    size_t ip = 0, op = 0;
    if (in_len < 8) return -1;
    while (ip < in_len) {
        if (in_len - ip < 8) return -1;
        size_t usize = icd_load_be32(in + ip), csize = icd_load_be32(in + ip + 4);
        ip += 8;
        if (csize > in_len - ip || usize > out_len - op) return -1;
        if (lz4_block_exact(in + ip, csize, out ? out + op : NULL, usize)) return -1;
        ip += csize;
        op += usize;
    }
    return op == out_len ? 0 : -1;
}

static int pq_lz4_hadoop(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                         icd_error *err)
{
    if (lz4_try_hadoop(in, in_len, out, out_len) == 0) return 0;
    bool frame = in_len >= 4 && in[0] == 0x04 && in[1] == 0x22 && in[2] == 0x4d && in[3] == 0x18;
    size_t got;
    if (frame) /* an LZ4 frame (or several): its own error when it is one */
        return icd_decompress(ICD_CODEC_LZ4_FRAME, in, in_len, out, out_len, true, &got, err);
    if (lz4_block_exact(in, in_len, out, out_len) == 0) return 0;
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "LZ4: %zu compressed bytes are neither Hadoop-framed LZ4, an LZ4 frame nor "
                    "an LZ4 block of exactly %zu bytes",
                    in_len, out_len);
}

int pq_decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  icd_error *err)
{
    if (codec == PQ_CODEC_UNCOMPRESSED) {
        if (in_len != out_len)
            return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                            "UNCOMPRESSED: a page body of %zu bytes, the page header says %zu",
                            in_len, out_len);
        if (out_len) memcpy(out, in, out_len);
        return 0;
    }
    if (codec == PQ_CODEC_LZO)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "LZO compression is not supported");
    if (codec < 0 || codec > PQ_CODEC_LZ4_RAW)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "unknown compression codec %d", codec);
    /* An empty body for an empty page: nothing to decode whatever the codec. */
    if (in_len == 0) {
        if (out_len == 0) return 0;
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "%s: empty page body, page header says %zu bytes", pq_codec_name(codec),
                        out_len);
    }
    if (codec == PQ_CODEC_LZ4) return pq_lz4_hadoop(in, in_len, out, out_len, err);
    icd_codec c = codec == PQ_CODEC_SNAPPY   ? ICD_CODEC_SNAPPY
                  : codec == PQ_CODEC_GZIP   ? ICD_CODEC_ZLIB
                  : codec == PQ_CODEC_BROTLI ? ICD_CODEC_BROTLI
                  : codec == PQ_CODEC_ZSTD   ? ICD_CODEC_ZSTD
                                             : ICD_CODEC_LZ4;
    size_t got; /* exactly the page header's size */
    int rc = icd_decompress(c, in, in_len, out, out_len, true, &got, err);
    const char *name = pq_codec_name(codec); /* LZ4_RAW is base's LZ4 */
    if (rc && rc != ICD_ENOMEM && strncmp(err->message, name, strlen(name)))
        icd_error_wrap(err, "%s", name);
    return rc;
}

/* --- compression (the writer's side) --- */

struct pq_compressor {
    int codec;
    int level;
    ZSTD_CCtx *zstd;
};

int pq_compressor_new(int codec, int level, pq_compressor **out, icd_error *err)
{
    *out = NULL;
    if (codec != PQ_CODEC_UNCOMPRESSED && codec != PQ_CODEC_SNAPPY && codec != PQ_CODEC_GZIP &&
        codec != PQ_CODEC_ZSTD)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "writing %s pages is not supported",
                        pq_codec_name(codec));
    pq_compressor *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    c->codec = codec;
    c->level = level;
    if (codec == PQ_CODEC_ZSTD) {
        c->zstd = ZSTD_createCCtx();
        if (!c->zstd) {
            free(c);
            return icd_fail_nomem(err);
        }
        if (!c->level) c->level = 3;
    }
    if (codec == PQ_CODEC_GZIP && !c->level) c->level = 6;
    *out = c;
    return 0;
}

void pq_compressor_free(pq_compressor *c)
{
    if (!c) return;
    ZSTD_freeCCtx(c->zstd);
    free(c);
}

static int gzip_compress(int level, const uint8_t *in, size_t n, icd_buf *out, icd_error *err)
{
    if (n > UINT_MAX)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "GZIP: page of %zu bytes is too large", n);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* 15 + 16: a gzip (RFC 1952) member, what parquet-mr writes; the header's mtime is 0. */
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return icd_fail_nomem(err);
    size_t bound = deflateBound(&zs, (uLong)n) + 32;
    if (!icd_buf_grow(out, bound)) {
        deflateEnd(&zs);
        return icd_fail_nomem(err);
    }
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)out->data;
    zs.avail_out = (uInt)(out->cap - 1);
    int zr = deflate(&zs, Z_FINISH);
    size_t got = zs.total_out;
    deflateEnd(&zs);
    if (zr != Z_STREAM_END)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "GZIP: deflate failed (%d)", zr);
    out->len = got;
    return 0;
}

int pq_compress(pq_compressor *c, const uint8_t *in, size_t n, icd_buf *out, icd_error *err)
{
    icd_buf_clear(out);
    switch (c->codec) {
    case PQ_CODEC_UNCOMPRESSED:
        icd_buf_append(out, in, n);
        break;
    case PQ_CODEC_SNAPPY: {
        size_t bound = snappy_max_compressed_length(n);
        if (!icd_buf_grow(out, bound + 1)) return icd_fail_nomem(err);
        size_t got = bound;
        if (snappy_compress((const char *)in, n, out->data, &got) != SNAPPY_OK)
            return icd_fail(err, ICD_EINTERNAL, NULL, -1, "SNAPPY: compression failed");
        out->len = got;
        break;
    }
    case PQ_CODEC_GZIP:
        ICD_TRY(gzip_compress(c->level, in, n, out, err));
        break;
    default: {
        size_t bound = ZSTD_compressBound(n);
        if (!icd_buf_grow(out, bound + 1)) return icd_fail_nomem(err);
        size_t r = ZSTD_compressCCtx(c->zstd, out->data, bound, in, n, c->level);
        if (ZSTD_isError(r))
            return icd_fail(err, ICD_EINTERNAL, NULL, -1, "ZSTD: %s", ZSTD_getErrorName(r));
        out->len = r;
        break;
    }
    }
    if (!icd_buf_ok(out)) return icd_fail_nomem(err);
    return 0;
}
