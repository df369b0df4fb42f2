/*
 * Parquet page (de)compression: one entry point each way over the Debian codec libraries.
 * Decompression (snappy, zlib, zstd, lz4, brotli): the column reader hands it a page body
 * and the uncompressed size from the page header. Compression (snappy, gzip, zstd): the
 * writer compresses one page body at a time through a pq_compressor that keeps the codec's
 * context between pages.
 */
#ifndef ICD_PQ_CODEC_H
#define ICD_PQ_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* Thrift enum CompressionCodec. */
typedef enum pq_codec {
    PQ_CODEC_UNCOMPRESSED = 0,
    PQ_CODEC_SNAPPY = 1,
    PQ_CODEC_GZIP = 2,
    PQ_CODEC_LZO = 3,
    PQ_CODEC_BROTLI = 4,
    PQ_CODEC_LZ4 = 5, /* deprecated: Hadoop framing, or a plain LZ4 frame/block in the wild */
    PQ_CODEC_ZSTD = 6,
    PQ_CODEC_LZ4_RAW = 7
} pq_codec;

/* "SNAPPY", "GZIP", ... or "UNKNOWN(n)" (static storage; not thread-safe for unknown). */
const char *pq_codec_name(int codec);

/* Decompresses `in` into exactly `out_len` bytes. Output that does not fill `out_len`
 * exactly, or would overflow it, is a corrupt-page error. The message names the codec; the
 * caller adds the file and offset. An unknown or unsupported codec (LZO) is
 * ICD_EUNSUPPORTED. */
int pq_decompress(int codec, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len,
                  icd_error *err);

/* A compressor for one codec: UNCOMPRESSED, SNAPPY, GZIP or ZSTD (others are
 * ICD_EUNSUPPORTED). `level` 0 takes the codec's default (ZSTD 3, GZIP 6). */
typedef struct pq_compressor pq_compressor;
int pq_compressor_new(int codec, int level, pq_compressor **out, icd_error *err);
/* Replaces the contents of `out` with the compressed form of [in, in+n). The output is
 * a function of the input, codec and level only. */
int pq_compress(pq_compressor *c, const uint8_t *in, size_t n, icd_buf *out, icd_error *err);
void pq_compressor_free(pq_compressor *c);

#endif
