/*
 * The merge-on-read reader: reads one file scan task — a data file and the delete files
 * the planner matched to it — and hands every surviving row to an ice_row_sink.
 *
 *   projection   by field id, never by name: renamed columns follow their id; a column the
 *                file lacks reads as its identity-partition value, its initial-default, or
 *                null; files without field ids go through schema.name-mapping.default;
 *                promotions (int->long, float->double, decimal widening, date->timestamp)
 *                are applied on the fly; struct/list/map columns are assembled by Iceberg
 *                type from the Parquet levels (nested.h), `variant` columns are decoded
 *                to JSON (sink's raw_json)
 *   deletes      one merge-on-read step for every format (reader_mor.c): position delete
 *                files and deletion vectors become one position set per data file, applied
 *                to each batch as a selection; equality deletes are key sets (one per
 *                delete file, deletes/eq_set.h) probed a batch of canonical keys at a time
 *                (deletes/eq_key.h); null equals null
 *   pruning      with a filter, Parquet row groups and ORC stripes whose statistics exclude
 *                it are skipped (ice_range_may_match)
 *   sharing      every delete file is read once per scan (ice_scan_reader caches it) and
 *                shared by all tasks it applies to, across threads
 *
 * Every format goes through one task loop (reader.c; data_parquet.c, data_orc.c,
 * data_avro.c decode). ORC data files follow the same rules: columns by the iceberg.id type
 * attribute (or the name mapping), row positions from the batch's row_start; ORC
 * position and equality delete files feed the same delete cache.
 *
 * Memory per task: one row group (ORC: one stripe; Avro: one batch of at most 1,024
 * records) of the projected columns (plus key columns) and the task's delete index.
 */
#ifndef ICD_ICE_READER_H
#define ICD_ICE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "iceberg/metadata.h"
#include "iceberg/row_sink.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"
#include "io/fileio.h"

typedef struct ice_scan_reader ice_scan_reader;

/* Counters of one scan; add() merges task counters. */
typedef struct ice_read_stats {
    uint64_t data_files;
    uint64_t rows_read;
    uint64_t rows_deleted_position; /* by position delete files and DVs */
    uint64_t rows_deleted_dv;       /* the part of rows_deleted_position due to DVs */
    uint64_t rows_deleted_equality;
    uint64_t rows_emitted;
    uint64_t rows_skipped; /* sink asked to skip (e.g. Druid parse exceptions) */
    uint64_t delete_files_loaded;
    uint64_t row_groups_read;    /* Parquet row groups and ORC stripes read */
    uint64_t row_groups_skipped; /* ... skipped by the filter's statistics */
    /* A gauge, not a count: the buffers of the Parquet reader reading now (or last), by
     * capacity (pq_reader_memory_bytes), updated at each batch; add() keeps the larger. */
    uint64_t decode_bytes;
} ice_read_stats;

/* `columns` selects top-level columns by name (NULL = all), in the table schema's order.
 * The reader borrows io, md and schema. */
int ice_scan_reader_new(icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                        const char *const *columns, size_t ncolumns, ice_scan_reader **out,
                        icd_error *err);
void ice_scan_reader_free(ice_scan_reader *r);

/* The projected top-level fields, in output order. */
size_t ice_scan_reader_field_count(const ice_scan_reader *r);
const ice_field *ice_scan_reader_field(const ice_scan_reader *r, size_t i);

/* Reads one task into the sink. Safe to call from several threads at once (each with
 * its own sink). Stats are added to *stats (caller-owned, not shared across threads). */
int ice_scan_reader_read_task(ice_scan_reader *r, const ice_scan_task *task,
                              const ice_row_sink *sink, ice_read_stats *stats, icd_error *err);

/* Reads part `part` (0 <= part < nparts) of a task, so that several threads can share one
 * big data file: row groups (Parquet) or stripes (ORC) [n * part / nparts, n * (part + 1)
 * / nparts) of its n (positions, deletes and pruning as in the whole read; a part may be
 * empty); an Avro file is read whole by part 0, its other parts are empty. Counts the
 * data file (stats->data_files) in part 0 only. nparts <= 1 is
 * ice_scan_reader_read_task. */
int ice_scan_reader_read_task_part(ice_scan_reader *r, const ice_scan_task *task, unsigned part,
                                   unsigned nparts, const ice_row_sink *sink, ice_read_stats *stats,
                                   icd_error *err);

/* A row filter bound to the reader's schema (ice_expr_bind), borrowed: Parquet row groups
 * and ORC stripes whose statistics show that no row can match are skipped (one evaluator,
 * ice_range_may_match; top-level primitive columns). Rows of the parts read are NOT
 * filtered (the filter stays a residual for the caller). NULL = no pruning. Set it before
 * the first read_task. */
struct ice_bound_expr;
void ice_scan_reader_set_filter(ice_scan_reader *r, const struct ice_bound_expr *filter);

/* Bounds the compressed column bytes each read_task holds of a Parquet data file
 * (pq_reader_set_read_budget; 0, the default, reads whole column chunks). Rows are the
 * same with any budget. Set it before the first read_task. */
void ice_scan_reader_set_read_budget(ice_scan_reader *r, size_t bytes);

/* Stops running and future reads at their next batch (ICD_ECANCELED). */
void ice_scan_reader_cancel(ice_scan_reader *r);

void ice_read_stats_add(ice_read_stats *into, const ice_read_stats *from);

#endif
