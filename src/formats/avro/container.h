/*
 * Avro object container files (manifest lists, manifests, Avro data files): the header
 * (magic, metadata map, sync marker), then blocks of objects read one at a time with
 * positional reads and decompressed (null, deflate, snappy, zstandard). Records come out
 * as avro_value trees (decode.h) or are skipped.
 *
 * Typical use:
 *     avro_reader *r;  avro_reader_open(io, path, &r, err);
 *     icd_arena a = ICD_ARENA_INIT;  avro_value v;  bool eof;
 *     while (!(rc = avro_reader_next(r, &a, &v, &eof, err)) && !eof) {
 *         ... use v (valid until the next block is loaded and until `a` is reset) ...
 *         icd_arena_reset(&a);      // or once per block: see avro_reader_block_seq
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

typedef enum avro_codec {
    AVRO_CODEC_NULL,
    AVRO_CODEC_DEFLATE,
    AVRO_CODEC_SNAPPY,
    AVRO_CODEC_ZSTD
} avro_codec;

typedef struct avro_meta {
    char *key;
    char *value; /* NUL-terminated copy; may hold NULs itself: use len */
    size_t len;
} avro_meta;

typedef struct avro_reader avro_reader;

/* Opens a container file and reads its header and schema. */
int avro_reader_open(icd_fileio *io, const char *location, avro_reader **out, icd_error *err);
/* Same over an already open file; with take_file the reader closes it. */
int avro_reader_open_file(icd_file *f, bool take_file, avro_reader **out, icd_error *err);
void avro_reader_free(avro_reader *r);

const avro_schema *avro_reader_schema(const avro_reader *r);
avro_codec avro_reader_codec(const avro_reader *r);
const char *avro_codec_name(avro_codec c);
const uint8_t *avro_reader_sync(const avro_reader *r); /* 16 bytes */
size_t avro_reader_meta_count(const avro_reader *r);
const avro_meta *avro_reader_meta_at(const avro_reader *r, size_t i);
/* The metadata value for `key`, or NULL when the header has none. */
const avro_meta *avro_reader_meta(const avro_reader *r, const char *key);
/* Where the first block starts (= header size). */
uint64_t avro_reader_header_size(const avro_reader *r);

/* The next record, decoded into `out` with its tree in `arena` (never reset here).
 * *eof is set (and 0 returned) after the last record. */
int avro_reader_next(avro_reader *r, icd_arena *arena, avro_value *out, bool *eof, icd_error *err);
/* Like avro_reader_next, decoding only the top-level fields with keep[i] set. */
int avro_reader_next_projected(avro_reader *r, const bool *keep, icd_arena *arena, avro_value *out,
                               bool *eof, icd_error *err);
/* Steps over the next record without decoding it. */
int avro_reader_skip(avro_reader *r, bool *eof, icd_error *err);

/* Loads the next block (checking that the previous one was consumed exactly). Records are
 * then read with the calls above; this is for callers that work per block (counts, arena
 * resets). *eof is set at the end of the file. */
int avro_reader_next_block(avro_reader *r, bool *eof, icd_error *err);
/* Objects in the current block, and how many of them were read so far. */
int64_t avro_reader_block_count(const avro_reader *r);
int64_t avro_reader_block_read(const avro_reader *r);
/* Increases each time a block is loaded: a caller that keeps one arena per block resets it
 * when this changes. */
uint64_t avro_reader_block_seq(const avro_reader *r);
/* Records read (or skipped) so far. */
uint64_t avro_reader_records_read(const avro_reader *r);

#endif
