/*
 * The native Parquet reader: the API used by `icedruid cat`/`inspect` and by the Iceberg
 * merge-on-read layer.
 *
 *   pq_file_open        reads the footer only (FileMetaData + schema tree)
 *   pq_reader_open      selects columns (leaves; by index, dotted path or field id)
 *   pq_reader_next      yields columnar batches of whole rows, row group by row group
 *
 * A batch holds, per selected leaf column, the definition levels, the repetition levels
 * (nested columns only) and the dense non-null values typed by the physical type, plus the
 * file row position of its first row (0-based over the whole file; position deletes use
 * it). A batch never spans two row groups and never splits a row. Memory is bounded by the
 * compressed column chunks of the current row group (or, with a read budget, by the budget
 * plus the largest page) plus one decoded page per column and the batch.
 *
 * A batch and everything it points to stay valid until the next pq_reader_next or
 * pq_reader_close call.
 */
#ifndef ICD_PQ_PARQUET_H
#define ICD_PQ_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "formats/parquet/encodings.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/schema.h"
#include "io/fileio.h"

typedef struct pq_file pq_file;
typedef struct pq_reader pq_reader;

/* INT96 as stored: 8 bytes little-endian nanoseconds of the day, then 4 bytes
 * little-endian Julian day. */
typedef struct pq_int96 {
    uint8_t b[12];
} pq_int96;

/* One selected leaf column of a batch. `values` holds num_values entries whose C type
 * follows the physical type: BOOLEAN uint8_t (0/1), INT32 int32_t, INT64 int64_t, INT96
 * pq_int96, FLOAT float, DOUBLE double, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY pq_bytes. */
typedef struct pq_column_batch {
    const pq_node *leaf;
    int physical_type;
    size_t num_levels;   /* level entries; equals the batch's num_rows for unnested columns */
    const uint32_t *def; /* num_levels entries; NULL when leaf->def_level == 0 */
    const uint32_t *rep; /* num_levels entries; NULL when leaf->rep_level == 0 */
    size_t num_values;   /* entries with def == leaf->def_level */
    const void *values;
} pq_column_batch;

typedef struct pq_batch {
    int64_t first_row; /* file row position of the batch's first row */
    size_t num_rows;
    uint32_t row_group;
    size_t num_columns; /* selected leaves, in schema (leaf) order */
    pq_column_batch *columns;
} pq_batch;

/* --- files --- */

/* Opens a Parquet file and decodes its footer and schema. */
int pq_file_open(icd_fileio *io, const char *location, pq_file **out, icd_error *err);
/* The same over an already open icd_file (e.g. a memory-backed one); the pq_file takes
 * ownership of `f` (closed by pq_file_close, also on failure). */
int pq_file_open_file(icd_file *f, pq_file **out, icd_error *err);
void pq_file_close(pq_file *pf);

const char *pq_file_location(const pq_file *pf);
const pq_file_meta *pq_file_metadata(const pq_file *pf);
const pq_schema *pq_file_schema(const pq_file *pf);
int64_t pq_file_num_rows(const pq_file *pf);
uint32_t pq_file_num_row_groups(const pq_file *pf);
const pq_row_group *pq_file_row_group(const pq_file *pf, uint32_t rg);
/* File row position of the first row of a row group (sum of the preceding num_rows). */
int64_t pq_file_row_group_first_row(const pq_file *pf, uint32_t rg);

/* --- statistics of a column chunk (for pruning) --- */

typedef enum pq_stat_kind {
    PQ_STAT_NONE = 0,
    PQ_STAT_BOOL,
    PQ_STAT_INT,    /* signed: INT32/INT64 (incl. DATE, TIME, TIMESTAMP, DECIMAL unscaled) */
    PQ_STAT_UINT,   /* unsigned INTEGER annotations */
    PQ_STAT_DOUBLE, /* FLOAT, DOUBLE, FLOAT16 */
    PQ_STAT_BYTES   /* BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY (points into the footer) */
} pq_stat_kind;

typedef struct pq_stat_value {
    int kind; /* pq_stat_kind */
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    pq_bytes bytes;
} pq_stat_value;

typedef struct pq_column_stats {
    bool has_min, has_max; /* usable bounds (see pq_file_column_stats) */
    pq_stat_value min, max;
    bool min_exact, max_exact;
    bool has_null_count;
    int64_t null_count;
    bool has_nan_count;
    int64_t nan_count;
    int64_t num_values; /* level entries of the chunk (ColumnMetaData.num_values) */
} pq_column_stats;

/* Typed statistics of leaf `leaf` in row group `rg`. min_value/max_value are used when the
 * file declares a column order for the leaf; the deprecated min/max only where their signed
 * order is the column's order (signed integers, floats, booleans; never byte arrays,
 * unsigned integers or INT96). Float bounds that are NaN are dropped; a zero min becomes
 * -0.0 and a zero max +0.0 (the spec's compatibility rules). */
int pq_file_column_stats(const pq_file *pf, uint32_t rg, uint32_t leaf, pq_column_stats *out,
                         icd_error *err);

/* --- readers --- */

/* Column selection: every listed node (dotted path or field id, top-level or nested)
 * selects all leaves under it. An empty selection (or NULL) selects every column. A name
 * or id that is not in the schema fails with ICD_ENOTFOUND. */
typedef struct pq_selection {
    const char *const *paths;
    size_t num_paths;
    const int32_t *field_ids;
    size_t num_field_ids;
} pq_selection;

/* Resolves a selection into sorted, distinct leaf indexes (malloc'd; free()). */
int pq_file_select(const pq_file *pf, const pq_selection *sel, int **leaves, size_t *count,
                   icd_error *err);

/* Opens a reader over `leaves` (count 0 = all columns) yielding batches of at most
 * `batch_rows` rows (0 = 4096). The reader borrows `pf`, which must outlive it. */
int pq_reader_open(pq_file *pf, const int *leaves, size_t count, size_t batch_rows, pq_reader **out,
                   icd_error *err);
/* Row-group pruning: keep[rg] == 0 skips row group rg entirely (row positions of the
 * following row groups stay right). Call before the first pq_reader_next. */
int pq_reader_select_row_groups(pq_reader *r, const uint8_t *keep, size_t n, icd_error *err);
/* Bounds the compressed chunk bytes the reader holds at once (0 = none: every selected
 * chunk of a row group is read whole, one read each, the fastest way). A row group whose
 * selected chunks are larger than `bytes` is read through a window per column, its share
 * of the budget by chunk size (at least 16 KiB), a few pages per ranged read; a page
 * larger than its window is read whole into one buffer shared by the columns (pages are
 * decompressed and decoded whole), so the reader holds at most about `bytes` plus its
 * largest page. Decoded pages (one per column) are on top. Call before pq_reader_next;
 * rows are the same with any budget. */
void pq_reader_set_read_budget(pq_reader *r, size_t bytes);
/* The compressed chunk bytes the reader's buffers hold now (windows + large-page buffer). */
size_t pq_reader_read_bytes(const pq_reader *r);
/* Every buffer the reader holds now, by capacity: chunk bytes, dictionaries, decoded
 * pages, the batch arrays (a gauge of its decode memory, e.g. for a global budget). */
size_t pq_reader_memory_bytes(const pq_reader *r);
/* Next batch: 0 with *out set, or 0 with *out == NULL at the end. */
int pq_reader_next(pq_reader *r, pq_batch **out, icd_error *err);
void pq_reader_close(pq_reader *r);

#define PQ_DEFAULT_BATCH_ROWS 4096

#endif
