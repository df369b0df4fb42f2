/*
 * Parquet page decompression (codec.h) over the Debian codec libraries. The column reader
 * passes one page body and the uncompressed size from the page header; every codec must
 * produce exactly that many bytes into the caller's buffer. The output is bounded by
 * out_len, which also defuses decompression bombs: a stream that would produce more is an
 * error, found without writing past the buffer (zlib/LZ4 frame decode the excess into a
 * small scratch buffer to detect it).
 *
 * The deprecated LZ4 codec is ambiguous in the wild: parquet-mr wrote Hadoop's block
 * framing ([4-byte BE uncompressed size][4-byte BE compressed size][LZ4 block], repeated),
 * other writers an LZ4 frame or a bare block. Like parquet-cpp we try the three in order.
 */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/bits.h"
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

static int size_mismatch(icd_error *err, const char *codec, size_t in_len, size_t got,
                         size_t out_len)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "%s: %zu compressed bytes decompress to %zu bytes, page header says %zu", codec,
                    in_len, got, out_len);
}

static int too_large(icd_error *err, const char *codec, size_t in_len, size_t out_len)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "%s: %zu compressed bytes decompress to more than the %zu bytes the page "
                    "header says",
                    codec, in_len, out_len);
}

static int pq_snappy(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, icd_error *err)
{
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, in_len, &ulen) != SNAPPY_OK)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "SNAPPY: %zu compressed bytes do not start with a valid length", in_len);
    if (ulen != out_len) return size_mismatch(err, "SNAPPY", in_len, ulen, out_len);
    size_t got = out_len;
    char dummy;
    snappy_status st =
        snappy_uncompress((const char *)in, in_len, out ? (char *)out : &dummy, &got);
    if (st != SNAPPY_OK)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "SNAPPY: corrupt stream (%zu compressed bytes, %zu expected out)", in_len,
                        out_len);
    if (got != out_len) return size_mismatch(err, "SNAPPY", in_len, got, out_len);
    return 0;
}

/* Another gzip member or zlib stream starts at p? */
static int zlib_member_start(const uint8_t *p, size_t n)
{
    if (n < 2) return 0;
    if (p[0] == 0x1f && p[1] == 0x8b) return 1;
    return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((unsigned)p[0] << 8 | p[1]) % 31 == 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

static int pq_gzip(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, icd_error *err)
{
    if (in_len > UINT_MAX || out_len > UINT_MAX)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "GZIP: page of %zu/%zu bytes is larger than zlib handles at once", in_len,
                        out_len);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK) /* +32: gzip or zlib header, detected */
        return icd_fail_nomem(err);
    uint8_t scratch[64], dummy = 0;
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)in_len;
    zs.next_out = out ? out : &dummy;
    zs.avail_out = (uInt)out_len;
    int in_scratch = 0, rc = 0;
    for (;;) {
        if (zs.avail_out == 0 && !in_scratch) {
            /* Output full: anything more that comes out lands in scratch, and is an error. */
            in_scratch = 1;
            zs.next_out = scratch;
            zs.avail_out = sizeof scratch;
        }
        int zr = inflate(&zs, Z_NO_FLUSH);
        if (in_scratch && zs.avail_out < sizeof scratch) {
            rc = too_large(err, "GZIP", in_len, out_len);
            break;
        }
        if (zr == Z_STREAM_END) {
            size_t rest = zs.avail_in;
            const uint8_t *next = zs.next_in;
            if (rest == 0 || all_zero(next, rest)) break;
            if (!zlib_member_start(next, rest)) {
                rc = icd_fail(err, ICD_ECORRUPT, NULL, -1,
                              "GZIP: %zu bytes of garbage after the compressed stream "
                              "(%zu compressed bytes)",
                              rest, in_len);
                break;
            }
            if (inflateReset(&zs) != Z_OK) { /* next member: keeps next_in/next_out */
                rc = icd_fail(err, ICD_EINTERNAL, NULL, -1, "GZIP: inflateReset failed");
                break;
            }
            continue;
        }
        if (zr == Z_OK) continue;
        if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
            rc = icd_fail(err, ICD_ECORRUPT, NULL, -1,
                          "GZIP: stream of %zu compressed bytes is truncated", in_len);
            break;
        }
        if (zr == Z_MEM_ERROR) {
            rc = icd_fail_nomem(err);
            break;
        }
        rc = icd_fail(err, ICD_ECORRUPT, NULL, -1, "GZIP: corrupt stream (%s) after %lu bytes out",
                      zs.msg ? zs.msg : "inflate failed", (unsigned long)zs.total_out);
        break;
    }
    size_t got = in_scratch ? out_len : out_len - zs.avail_out;
    inflateEnd(&zs);
    if (rc) return rc;
    if (got != out_len) return size_mismatch(err, "GZIP", in_len, got, out_len);
    return 0;
}

static int pq_zstd(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, icd_error *err)
{
    /* ZSTD_decompress walks every frame (and skippable frame) and does not need the
     * content size in the frame header; it stops with an error before overflowing. */
    uint8_t dummy;
    size_t r = ZSTD_decompress(out ? out : &dummy, out_len, in, in_len);
    if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
            return too_large(err, "ZSTD", in_len, out_len);
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "ZSTD: corrupt stream (%s), %zu compressed bytes, %zu expected out",
                        ZSTD_getErrorName(r), in_len, out_len);
    }
    if (r != out_len) return size_mismatch(err, "ZSTD", in_len, r, out_len);
    return 0;
}

/* One LZ4 block into exactly out_len bytes; -1 when it does not decode to that. */
static int lz4_block_exact(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    if (in_len > INT_MAX || out_len > INT_MAX) return -1;
    char dummy;
    int r = LZ4_decompress_safe((const char *)in, out ? (char *)out : &dummy, (int)in_len,
                                (int)out_len);
    return r >= 0 && (size_t)r == out_len ? 0 : -1;
}

static int pq_lz4_raw(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                      icd_error *err)
{
    if (in_len > INT_MAX || out_len > INT_MAX)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "LZ4_RAW: page of %zu/%zu bytes is larger than LZ4 handles", in_len,
                        out_len);
    char dummy;
    int r = LZ4_decompress_safe((const char *)in, out ? (char *)out : &dummy, (int)in_len,
                                (int)out_len);
    if (r < 0)
        return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                        "LZ4_RAW: corrupt block or output larger than %zu bytes (%zu compressed "
                        "bytes)",
                        out_len, in_len);
    if ((size_t)r != out_len) return size_mismatch(err, "LZ4_RAW", in_len, (size_t)r, out_len);
    return 0;
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

/* An LZ4 frame (or several). 0 on success, -1 not a valid frame, -2 output too large. */
static int lz4_try_frame(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    if (in_len < 4 || !(in[0] == 0x04 && in[1] == 0x22 && in[2] == 0x4d && in[3] == 0x18))
        return -1;
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) return -1;
    size_t ip = 0, op = 0;
    int rc = -1;
    uint8_t scratch[64] = {0};
    for (;;) {
        int full = op == out_len;
        uint8_t *dst = full ? scratch : out + op;
        size_t dst_len = full ? sizeof scratch : out_len - op;
        size_t src_len = in_len - ip;
        size_t r = LZ4F_decompress(dctx, dst, &dst_len, in + ip, &src_len, NULL);
        if (LZ4F_isError(r)) break;
        if (full && dst_len > 0) {
            rc = -2;
            break;
        }
        ip += src_len;
        op += full ? 0 : dst_len;
        if (r == 0) { /* end of a frame */
            if (ip == in_len) {
                rc = op == out_len ? 0 : -1;
                break;
            }
            continue; /* the context is ready for a following frame */
        }
        if ((ip == in_len || src_len == 0) && dst_len == 0)
            break; /* truncated frame, or no progress */
    }
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

static int pq_lz4_hadoop(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                         icd_error *err)
{
    if (lz4_try_hadoop(in, in_len, out, out_len) == 0) return 0;
    int fr = lz4_try_frame(in, in_len, out, out_len);
    if (fr == 0) return 0;
    if (fr == -2) return too_large(err, "LZ4", in_len, out_len);
    if (lz4_block_exact(in, in_len, out, out_len) == 0) return 0;
    return icd_fail(err, ICD_ECORRUPT, NULL, -1,
                    "LZ4: %zu compressed bytes are neither Hadoop-framed LZ4, an LZ4 frame nor "
                    "an LZ4 block of exactly %zu bytes",
                    in_len, out_len);
}

static int pq_brotli(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, icd_error *err)
{
    BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!st) return icd_fail_nomem(err);
    size_t avail_in = in_len, avail_out = out_len;
    const uint8_t *next_in = in;
    uint8_t dummy = 0, *next_out = out ? out : &dummy;
    BrotliDecoderResult r =
        BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
    int rc = 0;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
        rc = too_large(err, "BROTLI", in_len, out_len);
    } else if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
        rc = icd_fail(err, ICD_ECORRUPT, NULL, -1,
                      "BROTLI: stream of %zu compressed bytes is truncated", in_len);
    } else if (r == BROTLI_DECODER_RESULT_ERROR) {
        rc = icd_fail(err, ICD_ECORRUPT, NULL, -1,
                      "BROTLI: corrupt stream (%s), %zu compressed bytes",
                      BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)), in_len);
    } else if (avail_in != 0) {
        rc = icd_fail(err, ICD_ECORRUPT, NULL, -1,
                      "BROTLI: %zu bytes of garbage after the compressed stream", avail_in);
    } else if (avail_out != 0) {
        rc = size_mismatch(err, "BROTLI", in_len, out_len - avail_out, out_len);
    }
    BrotliDecoderDestroyInstance(st);
    return rc;
}

int pq_decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  icd_error *err)
{
    if (codec == PQ_CODEC_UNCOMPRESSED) {
        if (in_len != out_len) return size_mismatch(err, "UNCOMPRESSED", in_len, in_len, out_len);
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
    switch (codec) {
    case PQ_CODEC_SNAPPY:
        return pq_snappy(in, in_len, out, out_len, err);
    case PQ_CODEC_GZIP:
        return pq_gzip(in, in_len, out, out_len, err);
    case PQ_CODEC_BROTLI:
        return pq_brotli(in, in_len, out, out_len, err);
    case PQ_CODEC_LZ4:
        return pq_lz4_hadoop(in, in_len, out, out_len, err);
    case PQ_CODEC_ZSTD:
        return pq_zstd(in, in_len, out, out_len, err);
    default:
        return pq_lz4_raw(in, in_len, out, out_len, err);
    }
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
