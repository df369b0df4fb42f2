/*
 * ORC compression framing: every compressed part of an ORC file (footer, metadata, stripe
 * footers, streams) is a sequence of chunks, each with a 3-byte little-endian header
 * (length << 1 | isOriginal). Original chunks are stored as is; the others are
 * independently compressed with the file's codec (ZLIB = raw deflate, SNAPPY, ZSTD, LZ4
 * block). Files without compression have no chunk headers at all.
 */
#ifndef ICD_ORC_CODEC_H
#define ICD_ORC_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* PostScript.compression. */
typedef enum orc_compression {
    ORC_COMP_NONE = 0,
    ORC_COMP_ZLIB = 1,
    ORC_COMP_SNAPPY = 2,
    ORC_COMP_LZO = 3,
    ORC_COMP_LZ4 = 4,
    ORC_COMP_ZSTD = 5
} orc_compression;

/* Largest compression block size accepted from a postscript. */
#define ORC_MAX_BLOCK_SIZE ((uint64_t)64 << 20)

/* "NONE", "ZLIB", ... or "UNKNOWN". */
const char *orc_compression_name(int kind);

/* True when the codec can be decoded (LZO and unknown kinds cannot). */
int orc_compression_check(int kind, icd_error *err);

/* Decodes the chunks of one compressed part into `out` (appended). `block_size` bounds
 * each decompressed chunk, `max_out` the whole result. Errors are ICD_ECORRUPT with the
 * offset (relative to `in`) of the failing chunk in err->offset; the caller adds its own
 * base offset and the file. Must not be called with ORC_COMP_NONE. */
int orc_decompress(int kind, uint64_t block_size, const uint8_t *in, size_t len, size_t max_out,
                   icd_buf *out, icd_error *err);

#endif
