/*
 * The native Parquet writer: column values per leaf in, a Parquet file out (streamed to a
 * caller-supplied write callback, so a local file, a memory buffer or an S3 multipart
 * upload all work alike).
 *
 *   schema       the caller gives the schema as the footer's flat depth-first list of
 *                pq_schema_element (root first, num_children set on groups): physical
 *                type, type_length, repetition, converted type, logical type, scale /
 *                precision and field id are written exactly as given, so a caller can
 *                mirror another file's schema element by element (INT96 timestamps,
 *                un-annotated binaries, legacy 2-level lists, ...). The Iceberg type
 *                mapping and the mirroring of an original file live one layer up, in
 *                iceberg/pq_write.h (ice_pqw_schema), together with the row sink that
 *                shreds the merge-on-read reader's rows into leaf columns.
 *   values       pq_writer_write_batch takes whole rows: for every leaf column its
 *                definition / repetition levels and dense non-null values, typed like the
 *                reader's pq_column_batch (BOOLEAN uint8_t 0/1, INT32 int32_t, INT64
 *                int64_t, INT96 pq_int96, FLOAT float, DOUBLE double, BYTE_ARRAY and
 *                FIXED_LEN_BYTE_ARRAY pq_bytes). The values are copied; the caller's
 *                buffers can be reused as soon as the call returns.
 *   encoding     data pages v1 (what parquet-mr, hence Druid, reads); levels RLE/bit-packed
 *                hybrid; values dictionary-encoded (PLAIN_DICTIONARY, the v1 writer's
 *                spelling) until the column chunk's dictionary exceeds dict_bytes, then
 *                PLAIN for the rest of the chunk; BOOLEAN always PLAIN.
 *   compression  UNCOMPRESSED, SNAPPY, GZIP or ZSTD per page (codec.h).
 *   statistics   min_value / max_value / null_count per page and per column chunk, in the
 *                order Parquet defines for the column (signed / unsigned integers, IEEE
 *                floats without NaN and with -0/+0 normalised, unsigned bytes, signed
 *                two's-complement for DECIMAL on binaries; no min/max for INT96,
 *                FLOAT16 and INTERVAL); ColumnOrder TYPE_DEFINED_ORDER for every leaf.
 *   memory       one row group is buffered (compressed pages + the open page +
 *                dictionary per column); it is flushed when it reaches row_group_bytes.
 *   determinism  the same schema, options and values give the same bytes: nothing time-
 *                or random-dependent is written; created_by is "icedruid version X".
 *
 * A page never splits a row; a row group holds whole rows.
 */
#ifndef ICD_PQ_WRITER_H
#define ICD_PQ_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "formats/parquet/codec.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/schema.h"

typedef struct pq_writer pq_writer;

/* Receives the file's bytes in order. Returns 0 or a negative icd error code (with err
 * filled); a failure stops the writer (every later call fails). */
typedef int (*pq_write_fn)(void *ctx, const void *p, size_t n, icd_error *err);

typedef struct pq_write_options {
    int codec;              /* PQ_CODEC_UNCOMPRESSED (0, default), SNAPPY, GZIP, ZSTD */
    int level;              /* codec level (ZSTD, GZIP); 0 = the codec's default */
    size_t page_bytes;      /* target size of a data page's values; 0 = 1 MiB */
    size_t page_rows;       /* at most this many level entries per page; 0 = 20000 */
    size_t row_group_bytes; /* buffered bytes that flush a row group; 0 = 64 MiB */
    size_t dict_bytes;      /* dictionary (PLAIN size) limit per column chunk; 0 = 1 MiB */
    bool no_dictionary;     /* PLAIN only */
    /* File key/value metadata (e.g. "iceberg.schema"), written in this order; borrowed
     * until pq_writer_new returns. */
    const pq_kv *kv;
    size_t num_kv;
} pq_write_options;

/* Starts a file: writes the "PAR1" magic. `schema` is the depth-first element list (root
 * first; the root's name is written as given); it is copied, as are the options. The
 * schema is validated with the reader's rules (pq_schema_build): a leaf without type, a
 * FIXED_LEN_BYTE_ARRAY without length, ... fail with ICD_EINVALID. */
int pq_writer_new(const pq_schema_element *schema, size_t num_schema, const pq_write_options *opt,
                  pq_write_fn write, void *ctx, pq_writer **out, icd_error *err);

/* The schema tree being written (leaves, levels, paths): leaf i of a batch is
 * pq_writer_schema(w)->leaves[i]. Valid until pq_writer_free. */
const pq_schema *pq_writer_schema(const pq_writer *w);

/* Appends `num_rows` whole rows. `cols` has one entry per leaf, in leaf order
 * (cols[i].leaf and .physical_type are ignored; the schema's leaf i is used):
 * num_levels entries of def (NULL allowed when the leaf's max definition level is 0) and
 * rep (NULL allowed when its max repetition level is 0), and num_values values, one per
 * entry whose def equals the leaf's max definition level. Levels out of range, a value
 * count that does not match the levels, a FIXED_LEN_BYTE_ARRAY value of the wrong
 * length, or a leaf whose rows (rep == 0 entries) do not add up to num_rows fail with
 * ICD_EINVALID (the writer is then unusable). May flush a row group. */
int pq_writer_write_batch(pq_writer *w, const pq_column_batch *cols, size_t num_rows,
                          icd_error *err);

/* Rows written so far, and bytes handed to the write callback so far. */
int64_t pq_writer_rows(const pq_writer *w);
int64_t pq_writer_bytes_written(const pq_writer *w);

/* Flushes the open row group now (no-op when it is empty), e.g. to bound a row group by
 * rows. */
int pq_writer_flush_row_group(pq_writer *w, icd_error *err);

/* Flushes the last row group and writes the footer (FileMetaData) and the closing magic.
 * A file with no rows is valid (no row groups). */
int pq_writer_close(pq_writer *w, icd_error *err);
/* Frees the writer (closed or not; an unclosed file is simply incomplete). */
void pq_writer_free(pq_writer *w);

/* "icedruid version X", the created_by of every file. */
const char *pq_writer_created_by(void);

#endif
