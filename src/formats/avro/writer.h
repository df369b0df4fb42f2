/*
 * Avro object container files, written: the header (magic, metadata map with the schema
 * and codec, sync marker), then blocks of datums compressed with null, deflate, snappy or
 * zstandard (the codecs container.c reads), streamed to a caller-supplied write callback.
 * The caller encodes each datum (avro_put_* below, or the Iceberg row sink of
 * writer_ice.h) into avro_writer_datum() and ends it with avro_writer_end_datum().
 *
 * Determinism: the sync marker is given by the caller (stage derives it from the
 * content address of the file), so the same schema, codec, marker and datums give the
 * same bytes.
 */
#ifndef ICD_AVRO_WRITER_H
#define ICD_AVRO_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "formats/avro/container.h"

typedef int (*avro_write_fn)(void *ctx, const void *p, size_t n, icd_error *err);

typedef struct avro_writer avro_writer;

typedef struct avro_write_options {
    avro_codec codec;
    int level;               /* deflate / zstd level; 0 = the codec's default */
    size_t block_bytes;      /* uncompressed bytes that close a block; 0 = 1 MiB */
    const char *const *meta; /* extra header metadata: key, value, key, value, ..., NULL */
} avro_write_options;

/* Writes the header. `schema_json` is copied into the header as avro.schema. */
int avro_writer_new(const char *schema_json, const uint8_t sync[16], const avro_write_options *opt,
                    avro_write_fn write, void *ctx, avro_writer **out, icd_error *err);
/* The buffer the next datum is appended to. */
icd_buf *avro_writer_datum(avro_writer *w);
/* Ends the datum appended since the previous call; may write a block. */
int avro_writer_end_datum(avro_writer *w, icd_error *err);
/* Drops what was appended since the last end_datum (a row the caller rejects). */
void avro_writer_drop_datum(avro_writer *w);
/* Writes the last block. */
int avro_writer_close(avro_writer *w, icd_error *err);
void avro_writer_free(avro_writer *w);
int64_t avro_writer_count(const avro_writer *w);

/* Avro binary encoding of primitives (zigzag varint longs and ints, little-endian floats,
 * length-prefixed bytes and strings). */
void avro_put_long(icd_buf *b, int64_t v);
void avro_put_float(icd_buf *b, float v);
void avro_put_double(icd_buf *b, double v);
void avro_put_bytes(icd_buf *b, const void *p, size_t n);

#endif
