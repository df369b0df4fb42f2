/*
 * Parquet value and level encodings, one file per encoding (plain.c, rle.c, delta.c,
 * byte_stream_split.c). Every decoder works on one whole (decompressed) page buffer:
 * decode exactly `count` values from [p, p+n) into `out`, report in *used how many input
 * bytes it consumed (when `used` is not NULL), and fail with ICD_ECORRUPT — never read past
 * `p + n` — when the buffer is too short or malformed. Messages name the encoding; the
 * column reader adds the file and offset.
 */
#ifndef ICD_PQ_ENCODINGS_H
#define ICD_PQ_ENCODINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"

/* Thrift enum Encoding. */
typedef enum pq_encoding {
    PQ_ENC_PLAIN = 0,
    PQ_ENC_PLAIN_DICTIONARY = 2,
    PQ_ENC_RLE = 3,
    PQ_ENC_BIT_PACKED = 4,
    PQ_ENC_DELTA_BINARY_PACKED = 5,
    PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    PQ_ENC_DELTA_BYTE_ARRAY = 7,
    PQ_ENC_RLE_DICTIONARY = 8,
    PQ_ENC_BYTE_STREAM_SPLIT = 9
} pq_encoding;

const char *pq_encoding_name(int encoding);

/* A byte-array value: points into the page buffer (or into an arena for
 * DELTA_BYTE_ARRAY, whose values are rebuilt from prefixes). */
typedef struct pq_bytes {
    const uint8_t *ptr;
    uint32_t len;
} pq_bytes;

/* --- plain.c --- */
/* Bit-packed booleans, LSB first, one byte (0/1) per value in out. */
int pq_plain_bool(const uint8_t *p, size_t n, size_t count, uint8_t *out, size_t *used,
                  icd_error *err);
/* Length-prefixed (4-byte LE) byte arrays. */
int pq_plain_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out, size_t *used,
                        icd_error *err);
/* Fixed-width values (INT32/INT64/INT96/FLOAT/DOUBLE/FIXED_LEN_BYTE_ARRAY): `width` bytes
 * each, copied to out. */
int pq_plain_fixed(const uint8_t *p, size_t n, size_t count, size_t width, void *out, size_t *used,
                   icd_error *err);

/* --- rle.c --- */
/* RLE / bit-packing hybrid with the given bit width (0..32), no length prefix: levels,
 * dictionary indices (the caller strips the 1-byte width prefix), RLE booleans (the caller
 * strips the 4-byte length prefix). Values > 2^bit_width - 1 cannot occur. A stream that
 * ends before `count` values is corrupt. */
int pq_rle_decode(const uint8_t *p, size_t n, int bit_width, uint32_t *out, size_t count,
                  size_t *used, icd_error *err);
/* The writer's side: appends the RLE / bit-packing hybrid runs (no length prefix) of
 * v[0..n) with the given bit width (1..32; values must fit) to `out`. Runs of 8 or more
 * equal values become repeated runs, the rest bit-packed groups of 8 (the last one padded
 * with zeros). Deterministic. */
struct icd_buf;
void pq_rle_encode(const uint32_t *v, size_t n, int bit_width, struct icd_buf *out);
/* Bits needed for values 0..max (0 for max 0). */
int pq_bit_width(uint64_t max);

/* The legacy BIT_PACKED level encoding (MSB-first bit order, no runs). */
int pq_bit_packed_decode(const uint8_t *p, size_t n, int bit_width, uint32_t *out, size_t count,
                         size_t *used, icd_error *err);

/* --- delta.c --- */
/* DELTA_BINARY_PACKED into int64 (INT32 columns: the caller narrows; the arithmetic is
 * modular so the low 32 bits are exact). `count` may be less than the header's total. */
int pq_delta_binary_packed(const uint8_t *p, size_t n, size_t count, int64_t *out, size_t *used,
                           icd_error *err);
/* DELTA_LENGTH_BYTE_ARRAY: lengths (delta packed) then the concatenated bytes. */
int pq_delta_length_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out,
                               size_t *used, icd_error *err);
/* DELTA_BYTE_ARRAY (incremental/front coding): prefix lengths, suffixes; values are
 * rebuilt into `arena`. Also used for FIXED_LEN_BYTE_ARRAY. */
int pq_delta_byte_array(const uint8_t *p, size_t n, size_t count, pq_bytes *out, icd_arena *arena,
                        size_t *used, icd_error *err);

/* --- byte_stream_split.c --- */
/* BYTE_STREAM_SPLIT: `count` values of `width` bytes whose k-th bytes are stored in stream
 * k; the page holds exactly `total` values (num non-null values of the page), of which the
 * first `count` are decoded. */
int pq_byte_stream_split(const uint8_t *p, size_t n, size_t total, size_t count, size_t width,
                         void *out, icd_error *err);

#endif
