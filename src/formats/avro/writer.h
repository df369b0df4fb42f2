/*
 * Avro object container files, written: the header (magic, metadata map with the schema
 * and codec, sync marker), then blocks of datums compressed with null, deflate, snappy or
 * zstandard (the codecs container.c reads), streamed to a caller-supplied write callback.
 * The caller encodes each datum (avro_put_* below, or the Iceberg row sink of
 * writer_ice.h) into icd_avro_writer_datum() and ends it with icd_avro_writer_end_datum().
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

typedef int (*icd_avro_write_fn)(void *ctx, const void *p, size_t n, icd_error *err);

typedef struct icd_avro_writer icd_avro_writer;

typedef struct icd_avro_write_options {
    icd_avro_codec codec;
    int level;               /* deflate / zstd level; 0 = the codec's default */
    size_t block_bytes;      /* uncompressed bytes that close a block; 0 = 1 MiB */
    const char *const *meta; /* extra header metadata: key, value, key, value, ..., NULL */
} icd_avro_write_options;

/* Writes the header. `schema_json` is copied into the header as avro.schema. */
int icd_avro_writer_new(const char *schema_json, const uint8_t sync[16],
                        const icd_avro_write_options *opt, icd_avro_write_fn write, void *ctx,
                        icd_avro_writer **out, icd_error *err);
/* The buffer the next datum is appended to. */
icd_buf *icd_avro_writer_datum(icd_avro_writer *w);
/* Ends the datum appended since the previous call; may write a block. */
int icd_avro_writer_end_datum(icd_avro_writer *w, icd_error *err);
/* Drops what was appended since the last end_datum (a row the caller rejects). */
void icd_avro_writer_drop_datum(icd_avro_writer *w);
/* Writes the last block. */
int icd_avro_writer_close(icd_avro_writer *w, icd_error *err);
void icd_avro_writer_free(icd_avro_writer *w);
int64_t icd_avro_writer_count(const icd_avro_writer *w);

/* Avro binary encoding of primitives (zigzag varint longs and ints, little-endian floats,
 * length-prefixed bytes and strings). */
void icd_avro_put_long(icd_buf *b, int64_t v);
void icd_avro_put_float(icd_buf *b, float v);
void icd_avro_put_double(icd_buf *b, double v);
void icd_avro_put_bytes(icd_buf *b, const void *p, size_t n);

#endif
