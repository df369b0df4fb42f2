/*
 * Internals of the merge-on-read reader shared by reader.c (the scan reader and the one
 * task loop of every format), reader_mor.c (the merge-on-read step), and the data sources
 * of the formats: data_parquet.c, data_orc.c (also the ORC format adapter), data_avro.c.
 * The delete cache and the loading rules are in deletes/delete_cache.h. Not for use
 * outside src/iceberg/reader*.c and src/iceberg/data_*.c.
 */
#ifndef ICD_ICE_READER_INTERNAL_H
#define ICD_ICE_READER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/buf.h"
#include "base/hash.h"
#include "iceberg/deletes/delete_cache.h"
#include "iceberg/deletes/eq_key.h"
#include "iceberg/expr.h"
#include "iceberg/deletes/posset.h"
#include "iceberg/reader.h"
#include "iceberg/tvalue.h"
#include "iceberg/vbatch.h"

struct ice_scan_reader {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_schema *schema;
    const ice_field **fields;
    size_t nfields;
    const ice_name_mapping *mapping;
    const ice_bound_expr *filter; /* stripe pruning (ORC); NULL = none */
    ice_delete_cache *deletes;    /* the scan-wide delete cache */
    size_t read_budget;           /* Parquet data files: pq_reader_set_read_budget */
    atomic_bool canceled;
};

/* The Iceberg field of an id in any of the table's schemas, or NULL. */
const ice_field *ice_rd_schema_field(const ice_scan_reader *r, int32_t id);
/* The identity-partition value of field `id` in the data file's partition, or NULL. */
const ice_literal *ice_rd_partition_value(const ice_scan_reader *r, const ice_content_file *df,
                                          int32_t id);
/* Equality key column k of delete file `df`: the table field it names (in any schema),
 * or an error naming the delete file. */
int ice_rd_equality_field(const ice_scan_reader *r, const ice_content_file *df, size_t k,
                          const ice_field **out, icd_error *err);
/* The value every row of data file `data` has in field f when the file predates the
 * column: its identity-partition value, the field's initial-default, or null. */
ice_tvalue ice_rd_absent_value(const ice_scan_reader *r, const ice_content_file *data,
                               const ice_field *f);
/* The loaded form of a delete file (loaded once per scan; tasks that need a file being
 * loaded wait for that file only). */
int ice_rd_get_entry(ice_scan_reader *r, const ice_content_file *df, const cache_entry **out,
                     bool *loaded, icd_error *err);
/* The manifest-entry check of a data file (delete_cache.h): its row count (a data file is
 * not checked by size). */
static inline int ice_rd_check_rows(const ice_content_file *df, int64_t rows, icd_error *err)
{
    return ice_delete_check_entry(df, 0, rows, false, err);
}
static inline int ice_rd_open_entry(ice_scan_reader *r, const ice_content_file *df, icd_file **out,
                                    icd_error *err)
{
    return ice_delete_open_entry(r->io, df, out, err);
}

/* The position set of the task's data file from its position deletes and DVs: *pos is
 * NULL when nothing is deleted; *pos_owned (free it) when several sets were merged. */
int ice_rd_task_positions(ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                          const ice_posset **pos, ice_posset **pos_owned, icd_error *err);

/* ---- reader_mor.c: the merge-on-read step of every format ---- */

typedef struct ice_mor_eq {
    const ice_eq_set *keys;
    const ice_content_file *df; /* the equality delete file (its equality_ids) */
} ice_mor_eq;

typedef struct ice_mor {
    const ice_posset *pos; /* the data file's deleted positions; NULL: none */
    ice_posset *pos_owned;
    ice_mor_eq *eq; /* the task's equality delete files, in task order */
    size_t neq;
    icd_buf keys; /* one batch of keys */
    uint32_t *offs;
    size_t offcap;
} ice_mor;

/* Fetches the task's delete files from the cache (loading them once per scan). */
int ice_mor_init(ice_mor *m, ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                 icd_error *err);
struct ice_rd_task;
/* The deletes of task t applied to its current batch (t->batch): sel[i] = 1 for the rows
 * that survive every delete of the task, 0 for the others (counted in t->stats, with
 * rows_read). An equality key value out of its type's range is an error. */
int ice_mor_apply(struct ice_rd_task *t, uint8_t *sel, icd_error *err);
void ice_mor_free(ice_mor *m);

/* A batch of n rows begins: every VALUES column (outputs and keys) gets room for n values
 * (v) and out_of_range false, for the format to fill. */
int ice_rd_batch_begin(ice_rd_task *t, size_t n, icd_error *err);

/* ---- the one task loop (reader.c) and the data source of each format ----
 *
 * ice_scan_reader_read_task reads every data file, whatever its format, as:
 *
 *   open      the file; its row count by footer or stripes, checked against the manifest
 *             entry before any row is read (Avro: counted while reading, checked at the end)
 *   bind      the read schema's fields to the file's columns (by field id, name mapping,
 *             or constants: identity-partition value, initial-default, null): batch.cols
 *   ice_mor_init   the task's delete files, from the scan-wide cache
 *   prepare   the key columns of each equality delete file (batch.keys), row-group or
 *             stripe pruning by the reader's filter, the format reader
 *   for each batch:  next (decodes into batch) -> ice_mor_apply (positions, then the
 *             canonical keys of the key columns) -> the surviving rows to the sink
 *   close     (also after a failure)
 *
 * The loop owns the cancel check, the selection, the row-count checks, the key encoding
 * and the emission; a format only binds and decodes into the neutral batch.
 */

struct ice_rd_task {
    ice_scan_reader *r;
    const ice_scan_task *task;
    const ice_row_sink *sink;
    ice_read_stats *stats;
    /* Read part `part` of `nparts` (nparts <= 1: the whole file): Parquet reads the part's
     * share of the row groups (ice_scan_reader_read_task_part). */
    unsigned part, nparts;
    ice_mor mor;
    /* The batch: the loop allocates the columns, with their field and name_len, before
     * bind (one per field of the reader) and prepare (one per equality key column, keys[e]
     * the first of delete file mor.eq[e]); the format binds them (kind, impl, callbacks). */
    ice_vbatch batch;
    ice_vcol *kcols;
    size_t nkcols;
    void *src; /* the format's state (its close frees it) */
    ice_tvalue *cells;
    size_t cells_cap;
    /* whole-batch emission: the kept rows' batch indexes and file positions */
    ice_sink_column *scols;
    uint32_t *rows;
    int64_t *pos;
    size_t rows_cap, pos_cap;
};

/* Column k of the batch: the output columns first (batch.cols), then the key columns
 * (t->kcols). */
static inline ice_vcol *ice_rd_col(ice_rd_task *t, size_t k)
{
    return k < t->batch.ncols ? &t->batch.cols[k] : &t->kcols[k - t->batch.ncols];
}

typedef struct ice_data_ops {
    /* Opens t->task->data; *num_rows = its rows by its footer (or stripes), or -1 when
     * the format tells only by reading them all. */
    int (*open)(ice_rd_task *t, int64_t *num_rows, icd_error *err);
    /* Binds the reader's fields to the file's columns: t->batch.cols. */
    int (*bind)(ice_rd_task *t, icd_error *err);
    /* After ice_mor_init: binds the key columns (t->kcols), opens the format's reader with
     * pruning by t->r->filter. */
    int (*prepare)(ice_rd_task *t, icd_error *err);
    /* The next batch into t->batch: first_row, nrows and, after ice_rd_batch_begin, every
     * VALUES column's values. Returns 1 with a batch, 0 after the last one, < 0 on error. */
    int (*next)(ice_rd_task *t, icd_error *err);
    /* Frees t->src; adds what the format counts (row groups, stripes) to t->stats. */
    void (*close)(ice_rd_task *t);
} ice_data_ops;

/* The units (Parquet row groups, ORC stripes) [*lo, *hi) of the n a file has that t's
 * part reads: all of them for a whole read. */
static inline void ice_rd_part_units(const ice_rd_task *t, size_t n, size_t *lo, size_t *hi)
{
    *lo = (size_t)((uint64_t)n * t->part / t->nparts);
    *hi = (size_t)((uint64_t)n * (t->part + 1) / t->nparts);
}

/* Ends a row at the sink: counted as emitted, or as skipped when the sink says so (a
 * Druid parse exception); < 0 when the sink fails. */
static inline int ice_rd_end_row(ice_rd_task *t, icd_error *err)
{
    int rc = t->sink->end_row(t->sink->ctx, err);
    if (rc < 0) return rc;
    if (rc > 0)
        t->stats->rows_skipped++;
    else
        t->stats->rows_emitted++;
    return 0;
}

extern const ice_data_ops ice_data_parquet;
extern const ice_data_ops ice_data_orc;
extern const ice_data_ops ice_data_avro;

#endif
