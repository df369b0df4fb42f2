/*
 * TEMPORARY page decompression (codec.h) for testing the column reader; the integrator
 * replaces this file.
 */
#include <stdio.h>
#include <string.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/parquet/codec.h"
#include "formats/parquet/encodings.h"

const char *pq_codec_name(int codec)
{
    static char buf[32];
    static const char *const N[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                    "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    if (codec >= 0 && codec < 8)
        return N[codec];
    snprintf(buf, sizeof buf, "UNKNOWN(%d)", codec);
    return buf;
}

const char *pq_encoding_name(int e)
{
    switch (e) {
    case 0: return "PLAIN";
    case 2: return "PLAIN_DICTIONARY";
    case 3: return "RLE";
    case 4: return "BIT_PACKED";
    case 5: return "DELTA_BINARY_PACKED";
    case 6: return "DELTA_LENGTH_BYTE_ARRAY";
    case 7: return "DELTA_BYTE_ARRAY";
    case 8: return "RLE_DICTIONARY";
    case 9: return "BYTE_STREAM_SPLIT";
    default: return "UNKNOWN";
    }
}

static int bad(icd_error *err, int codec)
{
    return icd_fail(err, ICD_ECORRUPT, NULL, -1, "%s: page does not decompress to its size",
                    pq_codec_name(codec));
}

static int gzip(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len, icd_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return icd_fail_nomem(err);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)in_len;
    z.next_out = out;
    z.avail_out = (uInt)out_len;
    int rc;
    for (;;) {
        rc = inflate(&z, Z_FINISH);
        if (rc == Z_STREAM_END && z.avail_in > 0) {
            inflateReset(&z);
            continue;
        }
        break;
    }
    size_t got = out_len - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || got != out_len)
        return bad(err, PQ_CODEC_GZIP);
    return 0;
}

static int hadoop_lz4(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    size_t ip = 0, op = 0;
    while (ip < in_len) {
        if (in_len - ip < 8)
            return -1;
        uint32_t ulen = (uint32_t)in[ip] << 24 | (uint32_t)in[ip + 1] << 16 |
                        (uint32_t)in[ip + 2] << 8 | in[ip + 3];
        uint32_t clen = (uint32_t)in[ip + 4] << 24 | (uint32_t)in[ip + 5] << 16 |
                        (uint32_t)in[ip + 6] << 8 | in[ip + 7];
        ip += 8;
        if (clen > in_len - ip || ulen > out_len - op)
            return -1;
        int r = LZ4_decompress_safe((const char *)in + ip, (char *)out + op, (int)clen,
                                    (int)ulen);
        if (r < 0 || (uint32_t)r != ulen)
            return -1;
        ip += clen;
        op += ulen;
    }
    return op == out_len ? 0 : -1;
}

static int lz4_frame(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    LZ4F_dctx *d;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
        return -1;
    size_t ip = 0, op = 0, r = 1;
    while (ip < in_len && r != 0) {
        size_t src = in_len - ip, dst = out_len - op;
        r = LZ4F_decompress(d, out + op, &dst, in + ip, &src, NULL);
        if (LZ4F_isError(r))
            break;
        ip += src;
        op += dst;
        if (src == 0 && dst == 0)
            break;
    }
    LZ4F_freeDecompressionContext(d);
    return (!LZ4F_isError(r) && op == out_len) ? 0 : -1;
}

int pq_decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  icd_error *err)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (in_len != out_len)
            return bad(err, codec);
        if (in_len)
            memcpy(out, in, in_len);
        return 0;
    case PQ_CODEC_SNAPPY: {
        size_t n = 0;
        if (snappy_uncompressed_length((const char *)in, in_len, &n) != SNAPPY_OK ||
            n != out_len)
            return bad(err, codec);
        if (snappy_uncompress((const char *)in, in_len, (char *)out, &n) != SNAPPY_OK ||
            n != out_len)
            return bad(err, codec);
        return 0;
    }
    case PQ_CODEC_GZIP: return gzip(in, in_len, out, out_len, err);
    case PQ_CODEC_ZSTD: {
        size_t r = ZSTD_decompress(out, out_len, in, in_len);
        if (ZSTD_isError(r) || r != out_len)
            return bad(err, codec);
        return 0;
    }
    case PQ_CODEC_LZ4_RAW: {
        if (in_len > INT32_MAX || out_len > INT32_MAX)
            return bad(err, codec);
        int r = LZ4_decompress_safe((const char *)in, (char *)out, (int)in_len, (int)out_len);
        if (r < 0 || (size_t)r != out_len)
            return bad(err, codec);
        return 0;
    }
    case PQ_CODEC_LZ4:
        if (hadoop_lz4(in, in_len, out, out_len) == 0 || lz4_frame(in, in_len, out, out_len) == 0)
            return 0;
        if (in_len <= INT32_MAX && out_len <= INT32_MAX) {
            int r = LZ4_decompress_safe((const char *)in, (char *)out, (int)in_len, (int)out_len);
            if (r >= 0 && (size_t)r == out_len)
                return 0;
        }
        return bad(err, codec);
    case PQ_CODEC_BROTLI: {
        size_t n = out_len;
        if (BrotliDecoderDecompress(in_len, in, &n, out) != BROTLI_DECODER_RESULT_SUCCESS ||
            n != out_len)
            return bad(err, codec);
        return 0;
    }
    default:
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "compression codec %s is not supported",
                        pq_codec_name(codec));
    }
}
