/*
 * Avro object container files (manifest lists, manifests, Avro data files): the header
 * (magic, metadata map, sync marker), then blocks of objects read one at a time with
 * positional reads and decompressed (null, deflate, snappy, zstandard). Records come out
 * as icd_avro_value trees (decode.h) or are skipped.
 *
 * Typical use:
 *     icd_avro_reader *r;  icd_avro_reader_open(io, path, &r, err);
 *     icd_arena a = ICD_ARENA_INIT;  icd_avro_value v;  bool eof;
 *     while (!(rc = icd_avro_reader_next(r, &a, &v, &eof, err)) && !eof) {
 *         ... use v (valid until the next block is loaded and until `a` is reset) ...
 *         icd_arena_reset(&a);      // or once per block: see icd_avro_reader_block_seq
 *     }
 */
#ifndef ICD_AVRO_CONTAINER_H
#define ICD_AVRO_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/error.h"
#include "formats/avro/decode.h"
#include "formats/avro/schema.h"
#include "io/fileio.h"

/* Largest decompressed block accepted, and largest header (metadata + schema). */
#define AVRO_MAX_BLOCK_BYTES ((size_t)256 << 20)
#define AVRO_MAX_HEADER_BYTES ((size_t)64 << 20)

typedef enum icd_avro_codec {
    AVRO_CODEC_NULL,
    AVRO_CODEC_DEFLATE,
    AVRO_CODEC_SNAPPY,
    AVRO_CODEC_ZSTD
} icd_avro_codec;

typedef struct icd_avro_meta {
    char *key;
    char *value; /* NUL-terminated copy; may hold NULs itself: use len */
    size_t len;
} icd_avro_meta;

typedef struct icd_avro_reader icd_avro_reader;

/* Opens a container file and reads its header and schema. */
int icd_avro_reader_open(icd_fileio *io, const char *location, icd_avro_reader **out,
                         icd_error *err);
/* Same over an already open file; with take_file the reader closes it. */
int icd_avro_reader_open_file(icd_file *f, bool take_file, icd_avro_reader **out, icd_error *err);
void icd_avro_reader_free(icd_avro_reader *r);

const icd_avro_schema *icd_avro_reader_schema(const icd_avro_reader *r);
icd_avro_codec icd_avro_reader_codec(const icd_avro_reader *r);
const char *icd_avro_codec_name(icd_avro_codec c);
const uint8_t *icd_avro_reader_sync(const icd_avro_reader *r); /* 16 bytes */
size_t icd_avro_reader_meta_count(const icd_avro_reader *r);
const icd_avro_meta *icd_avro_reader_meta_at(const icd_avro_reader *r, size_t i);
/* The metadata value for `key`, or NULL when the header has none. */
const icd_avro_meta *icd_avro_reader_meta(const icd_avro_reader *r, const char *key);
/* Where the first block starts (= header size). */
uint64_t icd_avro_reader_header_size(const icd_avro_reader *r);

/* The next record, decoded into `out` with its tree in `arena` (never reset here).
 * *eof is set (and 0 returned) after the last record. */
int icd_avro_reader_next(icd_avro_reader *r, icd_arena *arena, icd_avro_value *out, bool *eof,
                         icd_error *err);
/* Like icd_avro_reader_next, decoding only what `proj` keeps (decode.h). */
int icd_avro_reader_next_projected(icd_avro_reader *r, const icd_avro_projection *proj,
                                   icd_arena *arena, icd_avro_value *out, bool *eof,
                                   icd_error *err);
/* For decoders of their own (the manifest-entry decoder): positions the reader on the
 * next record and gives the cursor over its block, at the record; the caller reads exactly
 * one record from it and then calls icd_avro_reader_raw_end with its result, which counts
 * the record (rc 0) or turns a decoder error (offset = position in the block) into a file
 * position as icd_avro_reader_next does, and returns rc. *eof as icd_avro_reader_next. */
int icd_avro_reader_raw_next(icd_avro_reader *r, icd_avro_cursor **cur, bool *eof, icd_error *err);
int icd_avro_reader_raw_end(icd_avro_reader *r, int rc, icd_error *err);
/* Steps over the next record without decoding it. */
int icd_avro_reader_skip(icd_avro_reader *r, bool *eof, icd_error *err);

/* Loads the next block (checking that the previous one was consumed exactly). Records are
 * then read with the calls above; this is for callers that work per block (counts, arena
 * resets). *eof is set at the end of the file. */
int icd_avro_reader_next_block(icd_avro_reader *r, bool *eof, icd_error *err);
/* Objects in the current block, and how many of them were read so far. */
int64_t icd_avro_reader_block_count(const icd_avro_reader *r);
int64_t icd_avro_reader_block_read(const icd_avro_reader *r);
/* Increases each time a block is loaded: a caller that keeps one arena per block resets it
 * when this changes. */
uint64_t icd_avro_reader_block_seq(const icd_avro_reader *r);
/* Records read (or skipped) so far. */
uint64_t icd_avro_reader_records_read(const icd_avro_reader *r);

#endif
