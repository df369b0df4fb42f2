/*
 * Decompression, the one copy every format uses (Parquet pages, ORC chunks, Avro blocks,
 * Puffin blobs, gzip metadata files), over Debian's codec libraries. A deflate, zlib or
 * gzip stream in one piece is decoded by libdeflate in one call; zlib's streaming inflate
 * takes every other case (several members, damage, output beyond the room), so its
 * output and its errors are the same either way.
 *
 *   icd_decompress       into a caller's buffer of `cap` bytes: *got is what came out; a
 *                        stream that would produce more than cap bytes is an error found
 *                        without writing past the buffer (it also defuses decompression
 *                        bombs); with `exact`, fewer than cap bytes is an error too
 *   icd_decompress_buf   output of unknown size, appended to a growing buffer up to `max`
 *                        bytes (more is ICD_EUNSUPPORTED, naming the limit)
 *
 * Streams: ICD_CODEC_ZLIB takes zlib or gzip streams (detected), and concatenated members
 * (gzip files written in parts); trailing zero bytes are allowed, other trailing bytes are
 * an error. ICD_CODEC_ZSTD takes one or more frames. ICD_CODEC_LZ4_FRAME one or more LZ4
 * frames. Every codec checks that its input is used up.
 *
 * Errors are ICD_ECORRUPT (or ICD_ENOMEM) with one line starting with the codec's name
 * ("ZSTD: corrupt stream (...)"); they name no file: the caller knows it
 * (icd_error_set_file) and what the bytes were.
 */
#ifndef ICD_BASE_DECOMPRESS_H
#define ICD_BASE_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

typedef enum icd_codec {
    ICD_CODEC_SNAPPY,    /* a raw snappy block */
    ICD_CODEC_DEFLATE,   /* raw deflate (RFC 1951): Avro "deflate", ORC ZLIB */
    ICD_CODEC_ZLIB,      /* zlib (RFC 1950) or gzip (RFC 1952) streams */
    ICD_CODEC_ZSTD,      /* Zstandard frames */
    ICD_CODEC_LZ4,       /* a raw LZ4 block */
    ICD_CODEC_LZ4_FRAME, /* LZ4 frames */
    ICD_CODEC_BROTLI
} icd_codec;

/* "SNAPPY", "DEFLATE", "GZIP", "ZSTD", "LZ4", "LZ4_FRAME", "BROTLI". */
const char *icd_codec_name(icd_codec c);

/* Decompresses n bytes at `in` into out[0..cap). `out` may be NULL when cap is 0. */
int icd_decompress(icd_codec c, const void *in, size_t n, void *out, size_t cap, bool exact,
                   size_t *got, icd_error *err);

/* Decompresses n bytes at `in`, appending to `out` (at most `max` bytes are appended). */
int icd_decompress_buf(icd_codec c, const void *in, size_t n, size_t max, icd_buf *out,
                       icd_error *err);

#endif
