/*
 * ORC chunk framing and the codecs behind it (zlib raw deflate, snappy, zstd, lz4 block).
 * The file tail reader and the stripe reader call orc_decompress() for every compressed
 * part; nothing here knows about streams or types. Each chunk decompresses into at most
 * the postscript's compression block size, which is what keeps a hostile file from
 * expanding a few bytes into gigabytes.
 */
#include "formats/orc/orc_codec.h"

#include <assert.h>
#include <string.h>

#include "base/decompress.h"

const char *orc_compression_name(int kind)
{
    switch (kind) {
    case ORC_COMP_NONE:
        return "NONE";
    case ORC_COMP_ZLIB:
        return "ZLIB";
    case ORC_COMP_SNAPPY:
        return "SNAPPY";
    case ORC_COMP_LZO:
        return "LZO";
    case ORC_COMP_LZ4:
        return "LZ4";
    case ORC_COMP_ZSTD:
        return "ZSTD";
    default:
        return "UNKNOWN";
    }
}

int orc_compression_check(int kind, icd_error *err)
{
    if (kind == ORC_COMP_LZO)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "ORC compression LZO is not supported (no LZO library in Debian's "
                        "dependency set)");
    if (kind < 0 || kind > ORC_COMP_ZSTD)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1, "unknown ORC compression kind %d", kind);
    return 0;
}

/* Decompresses one chunk into at most `cap` bytes, appending to `out`. */
static int chunk_decode(int kind, const uint8_t *in, size_t len, size_t cap, icd_buf *out,
                        icd_error *err)
{
    icd_codec c = kind == ORC_COMP_ZLIB     ? ICD_CODEC_DEFLATE
                  : kind == ORC_COMP_SNAPPY ? ICD_CODEC_SNAPPY
                  : kind == ORC_COMP_ZSTD   ? ICD_CODEC_ZSTD
                                            : ICD_CODEC_LZ4;
    if (!icd_buf_grow(out, cap + 1)) return icd_fail_nomem(err);
    size_t got;
    ICD_TRY(icd_decompress(c, in, len, out->data + out->len, cap, false, &got, err));
    out->len += got;
    out->data[out->len] = '\0';
    return 0;
}

/* Output room for one compressed chunk: the block size, but never more than the codec's
 * worst-case expansion of `len` input bytes nor than what `max_out` still allows. */
static size_t chunk_room(int kind, size_t len, uint64_t block_size, size_t left)
{
    uint64_t room = block_size;
    uint64_t ratio = kind == ORC_COMP_ZLIB ? 1032 : kind == ORC_COMP_LZ4 ? 256 : 0;
    if (ratio && len < (UINT64_MAX - 64) / ratio && len * ratio + 64 < room)
        room = len * ratio + 64;
    return room < left ? (size_t)room : left;
}

int orc_decompress(int kind, uint64_t block_size, const uint8_t *in, size_t len, size_t max_out,
                   icd_buf *out, icd_error *err)
{
    assert(kind != ORC_COMP_NONE); /* orc_codec.h: uncompressed parts have no chunk headers */
    ICD_TRY(orc_compression_check(kind, err));
    size_t start_len = out->len;
    size_t pos = 0;
    while (pos < len) {
        if (len - pos < 3)
            return icd_fail(err, ICD_ECORRUPT, NULL, (int64_t)pos, "truncated %s chunk header",
                            orc_compression_name(kind));
        uint32_t h = (uint32_t)in[pos] | (uint32_t)in[pos + 1] << 8 | (uint32_t)in[pos + 2] << 16;
        size_t clen = h >> 1;
        bool original = h & 1;
        if (clen > len - pos - 3)
            return icd_fail(err, ICD_ECORRUPT, NULL, (int64_t)pos,
                            "%s chunk of %zu bytes runs past the end of its %zu-byte part",
                            orc_compression_name(kind), clen, len);
        const uint8_t *c = in + pos + 3;
        size_t left = max_out - (out->len - start_len);
        if (original) {
            if (clen > left)
                return icd_fail(err, ICD_ECORRUPT, NULL, (int64_t)pos,
                                "decompressed part exceeds the limit of %zu bytes", max_out);
            icd_buf_append(out, c, clen);
            if (!icd_buf_ok(out)) return icd_fail_nomem(err);
        } else {
            if (clen == 0)
                return icd_fail(err, ICD_ECORRUPT, NULL, (int64_t)pos, "empty compressed %s chunk",
                                orc_compression_name(kind));
            if (left == 0)
                return icd_fail(err, ICD_ECORRUPT, NULL, (int64_t)pos,
                                "decompressed part exceeds the limit of %zu bytes", max_out);
            int rc =
                chunk_decode(kind, c, clen, chunk_room(kind, clen, block_size, left), out, err);
            if (rc == ICD_ENOMEM) return rc;
            if (rc) {
                err->offset = (int64_t)pos;
                return icd_error_wrap(err, "%s chunk", orc_compression_name(kind));
            }
        }
        pos += 3 + clen;
    }
    return 0;
}
