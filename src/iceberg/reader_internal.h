/*
 * Internals of the merge-on-read reader shared by reader.c (Parquet and Avro data and
 * delete files), reader_orc.c (ORC data and delete files) and reader_mor.c (the one
 * merge-on-read step of every format). The delete cache and the loading rules are in
 * deletes/delete_cache.h. Not for use outside src/iceberg/reader*.c.
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
/* The manifest-entry checks (delete_cache.h), for the data-file paths. */
static inline int ice_rd_check_entry(const ice_content_file *df, uint64_t size, int64_t rows,
                                     icd_error *err)
{
    return ice_delete_check_entry(df, size, rows, err);
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

/* Appends the canonical key (ice_key_put of each equality column, in equality_ids order)
 * of row `row` of the current batch for equality delete file m->eq[e]. */
typedef void (*ice_mor_key_fn)(void *ctx, size_t e, size_t row, icd_buf *key);

/* Fetches the task's delete files from the cache (loading them once per scan). */
int ice_mor_init(ice_mor *m, ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                 icd_error *err);
/* The batch of rows at file positions [first_row, first_row + n): sel[i] = 1 for the
 * rows that survive every delete of the task, 0 for the others (counted in stats, with
 * rows_read). */
int ice_mor_apply(ice_mor *m, uint64_t first_row, size_t n, uint8_t *sel, ice_mor_key_fn key,
                  void *ctx, ice_read_stats *stats, icd_error *err);
void ice_mor_free(ice_mor *m);

/* ---- reader_orc.c ---- */

/* Reads one task whose data file is ORC. */
int ice_rd_read_orc_task(ice_scan_reader *r, const ice_scan_task *task, const ice_row_sink *sink,
                         ice_read_stats *stats, icd_error *err);

#endif
