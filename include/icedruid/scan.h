/*
 * Reading a table: a scan plans one snapshot (Iceberg's planning rules: manifests, the
 * delete files that apply to each data file) and reads its tasks with every position
 * delete, equality delete and deletion vector applied.
 *
 *   icd_scan_open      plans the scan (snapshot selection, column selection)
 *   icd_scan_next_task iterates the tasks: one data file and the delete files that apply
 *   icd_scan_read_task reads one task; rows are handed over as chunks of whole NDJSON
 *                      lines (the values of `icedruid scan`: design.md §3)
 *   icd_scan_run       reads every task on N threads (the driver `icedruid scan` uses)
 *   icd_scan_read_task_batches, icd_scan_run_batches
 *                      the same reads as batches of typed values (icd_batch): each value
 *                      in its column's Iceberg type, with each row's position in its file
 *
 * Thread safety: icd_scan_read_task may be called from several threads at once (each
 * with its own callback context); delete files are read once per scan and shared. The
 * iterator and icd_scan_free must not race with other calls on the same scan.
 */
#ifndef ICEDRUID_SCAN_H
#define ICEDRUID_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "icedruid/common.h"
#include "icedruid/error.h"
#include "icedruid/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct icd_scan icd_scan;

typedef enum icd_snapshot_kind {
    ICD_SNAPSHOT_CURRENT = 0, /* the table's current state */
    ICD_SNAPSHOT_ID = 1,      /* snapshot_id */
    ICD_SNAPSHOT_AS_OF = 2,   /* the snapshot current at as_of_ms (epoch milliseconds) */
    ICD_SNAPSHOT_REF = 3      /* the branch or tag named ref */
} icd_snapshot_kind;

#define ICD_SCAN_OPTIONS_VERSION 2

typedef struct icd_scan_options {
    int version; /* ICD_SCAN_OPTIONS_VERSION (1: the fields up to `threads`) */
    icd_snapshot_kind snapshot;
    int64_t snapshot_id;
    int64_t as_of_ms;
    const char *ref;
    /* Top-level columns by name, NULL = all, in the table schema's order. */
    const char *const *columns;
    size_t ncolumns;
    /* Manifests read in parallel while planning (<= 1: one at a time). */
    int threads;
    /* Version 2: column names match ignoring case (a catalog with caseSensitive=false,
     * as Druid's); a name matching two columns ignoring case is ICD_EINVALID. */
    int case_insensitive;
} icd_scan_options;

/* Fills `o` with the defaults: the current snapshot, every column, one thread. */
ICD_EXTERN void icd_scan_options_init(icd_scan_options *o);

/* Plans the scan. The table and storage must outlive it. */
ICD_EXTERN int icd_scan_open(icd_scan **out, icd_table *t, const icd_scan_options *o,
                             icd_error *err);
ICD_EXTERN void icd_scan_free(icd_scan *s);

/* The snapshot read; ICD_ENOTFOUND for a table without snapshots (the scan has no tasks). */
ICD_EXTERN int icd_scan_snapshot(const icd_scan *s, int64_t *snapshot_id, icd_error *err);

/* One task of the plan: a data file and the delete files that apply to it. */
typedef struct icd_task_info {
    size_t index;            /* 0-based, for icd_scan_read_task */
    const char *data_file;   /* location, as the manifest records it */
    const char *file_format; /* "PARQUET", "AVRO" or "ORC" */
    int64_t record_count;    /* rows in the data file, before deletes */
    size_t position_deletes; /* position delete files that apply */
    size_t equality_deletes; /* equality delete files that apply */
    size_t deletion_vectors; /* deletion vectors that apply (0 or 1) */
    int64_t file_size;       /* the data file's file_size_in_bytes */
} icd_task_info;

ICD_EXTERN size_t icd_scan_task_count(const icd_scan *s);

/* The next task (in plan order), or ICD_ITEROVER after the last one. Strings point into
 * the scan. */
ICD_EXTERN int icd_scan_next_task(icd_scan *s, icd_task_info *out, icd_error *err);

/* The rows of a read: `ndjson` holds `len` bytes of whole lines (each a JSON object and a
 * newline). A non-zero return stops the read with that code (fill err to say why). */
typedef int (*icd_rows_fn)(void *ctx, const char *ndjson, size_t len, icd_error *err);

/* Reads task `index`. With fn == NULL the rows are only counted (no JSON is produced). */
ICD_EXTERN int icd_scan_read_task(icd_scan *s, size_t index, icd_rows_fn fn, void *ctx,
                                  icd_error *err);

/* Reads every task on up to `threads` threads. Each call of fn holds whole lines of one
 * task; calls never overlap (fn needs no lock); tasks' rows are not interleaved within a
 * call but tasks may follow each other in any order. When there are fewer tasks than the
 * threads can share (under 16 a thread), the tasks of Parquet and ORC files are read in
 * parts, ranges of their row groups or stripes, on several threads at once: a task's
 * lines then come in the calls of its parts, each part's in row order, the parts in any
 * order. fn == NULL counts only. The first failure stops the other threads and is
 * returned. */
ICD_EXTERN int icd_scan_run(icd_scan *s, int threads, icd_rows_fn fn, void *ctx, icd_error *err);

typedef struct icd_scan_stats {
    uint64_t data_files;            /* tasks read */
    uint64_t delete_files_loaded;   /* delete files read (each once per scan) */
    uint64_t rows_read;             /* rows of the data files read */
    uint64_t rows_deleted_position; /* removed by position deletes and DVs */
    uint64_t rows_deleted_equality; /* removed by equality deletes */
    uint64_t rows_emitted;          /* surviving rows */
    uint64_t rows_deleted_dv;       /* the part of rows_deleted_position due to DVs */
    uint64_t row_groups_read;       /* Parquet row groups and ORC stripes read */
    uint64_t row_groups_skipped;    /* ... and skipped by a filter's statistics */
    uint64_t rows_unparseable;      /* rows skipped as Druid parse exceptions (a timestamp the
                                       timestampSpec cannot parse; icd_druid_read_*) */
} icd_scan_stats;

/* Counters of everything this scan read so far (all threads). */
ICD_EXTERN void icd_scan_get_stats(icd_scan *s, icd_scan_stats *out);

/* What the plan holds. */
typedef struct icd_scan_plan_info {
    size_t data_files;            /* tasks */
    uint64_t data_bytes;          /* their file_size_in_bytes, added up */
    size_t delete_files;          /* delete files applying to at least one task */
    size_t position_delete_files; /* of those */
    size_t equality_delete_files;
    size_t deletion_vectors;
} icd_scan_plan_info;

ICD_EXTERN void icd_scan_get_plan_info(const icd_scan *s, icd_scan_plan_info *out);

/* Called by icd_scan_run after each task (never at the same time as another call of it or
 * of the rows callback): the task read and the scan's counters so far. */
typedef void (*icd_progress_fn)(void *ctx, const icd_task_info *task, const icd_scan_stats *stats);

/* Sets (fn != NULL) or clears the progress callback of icd_scan_run. */
ICD_EXTERN void icd_scan_set_progress(icd_scan *s, icd_progress_fn fn, void *ctx);

/* ---- typed reads: rows as batches of Iceberg-typed values ---- */

/* The Iceberg type of a column (the spec's primitive and nested types). */
typedef enum icd_type_id {
    ICD_TYPE_BOOLEAN = 1,
    ICD_TYPE_INT,
    ICD_TYPE_LONG,
    ICD_TYPE_FLOAT,
    ICD_TYPE_DOUBLE,
    ICD_TYPE_DECIMAL,
    ICD_TYPE_DATE,
    ICD_TYPE_TIME,
    ICD_TYPE_TIMESTAMP,
    ICD_TYPE_TIMESTAMPTZ,
    ICD_TYPE_TIMESTAMP_NS,
    ICD_TYPE_TIMESTAMPTZ_NS,
    ICD_TYPE_STRING,
    ICD_TYPE_UUID,
    ICD_TYPE_FIXED,
    ICD_TYPE_BINARY,
    ICD_TYPE_STRUCT,
    ICD_TYPE_LIST,
    ICD_TYPE_MAP,
    ICD_TYPE_VARIANT,
    ICD_TYPE_UNKNOWN, /* v3 `unknown`: always null */
    ICD_TYPE_OTHER    /* a type icedruid cannot read (geometry, geography) */
} icd_type_id;

/* One column of the scan's output (a top-level field of the read schema). */
typedef struct icd_column_info {
    const char *name; /* points into the scan */
    int32_t field_id;
    icd_type_id type;
    int32_t precision; /* decimal */
    int32_t scale;     /* decimal */
    int32_t length;    /* fixed */
    int required;      /* 1 when the schema says the column is never null */
} icd_column_info;

/* The columns every batch holds, in order (the `columns` option, or the whole schema). */
ICD_EXTERN size_t icd_scan_column_count(const icd_scan *s);
/* Column i; ICD_EINVALID when i >= icd_scan_column_count. */
ICD_EXTERN int icd_scan_column(const icd_scan *s, size_t i, icd_column_info *out, icd_error *err);

/* How a value is held. By column type:
 *   ICD_VALUE_NULL    a null (any type)
 *   ICD_VALUE_BOOL    boolean: i is 0 or 1
 *   ICD_VALUE_INT     int, long; date (days from 1970-01-01); time (microseconds of the
 *                     day); timestamp / timestamptz (microseconds from the epoch) and the
 *                     _ns types (nanoseconds); decimal of precision <= 18 (the unscaled
 *                     value: 12.34 with scale 2 is 1234)
 *   ICD_VALUE_DOUBLE  float (widened exactly) and double: d
 *   ICD_VALUE_BYTES   p / n: string (UTF-8, not NUL-terminated), binary, fixed, uuid (its
 *                     16 bytes), decimal of precision > 18 (the unscaled value, big-endian
 *                     two's complement)
 *   ICD_VALUE_JSON    p / n: struct, list, map and variant values as one JSON text, in the
 *                     conventions of `icedruid scan` (a map is an array of {"key","value"})
 * Promotions of schema evolution (int -> long, float -> double, decimal widening, date ->
 * timestamp) are applied: a value always has its column's current type. */
typedef enum icd_value_kind {
    ICD_VALUE_NULL = 0,
    ICD_VALUE_BOOL,
    ICD_VALUE_INT,
    ICD_VALUE_DOUBLE,
    ICD_VALUE_BYTES,
    ICD_VALUE_JSON
} icd_value_kind;

typedef struct icd_value {
    icd_value_kind kind;
    int64_t i;
    double d;
    const void *p; /* points into the batch: valid until the batch callback returns */
    size_t n;
} icd_value;

/* Up to ICD_BATCH_MAX_ROWS surviving rows of one task: fewer for wide rows (a batch's
 * values take about 2 MiB), when the rows' strings and nested values pass 4 MiB, and at
 * the end of the task. A batch lives until its callback returns. */
typedef struct icd_batch icd_batch;

#define ICD_BATCH_MAX_ROWS 4096

ICD_EXTERN size_t icd_batch_row_count(const icd_batch *b);
ICD_EXTERN size_t icd_batch_column_count(const icd_batch *b);
/* The task the rows belong to (icd_task_info.index) and its data file. */
ICD_EXTERN size_t icd_batch_task(const icd_batch *b);
ICD_EXTERN const char *icd_batch_data_file(const icd_batch *b);
/* Row `row`'s 0-based position in its data file (the position a position delete names):
 * increasing within a task; deleted positions are missing. */
ICD_EXTERN int64_t icd_batch_position(const icd_batch *b, size_t row);
/* The value of column `col` in row `row` (ICD_VALUE_NULL outside the batch). */
ICD_EXTERN void icd_batch_get(const icd_batch *b, size_t row, size_t col, icd_value *out);

/* A batch of rows. A non-zero return stops the read with that code (fill err to say why). */
typedef int (*icd_batch_fn)(void *ctx, const icd_batch *batch, icd_error *err);

/* Reads task `index` as batches (thread safety as icd_scan_read_task). */
ICD_EXTERN int icd_scan_read_task_batches(icd_scan *s, size_t index, icd_batch_fn fn, void *ctx,
                                          icd_error *err);

/* Reads every task as batches on up to `threads` threads, like icd_scan_run: calls of fn
 * never overlap, a task's batches come in row order, tasks in any order. */
ICD_EXTERN int icd_scan_run_batches(icd_scan *s, int threads, icd_batch_fn fn, void *ctx,
                                    icd_error *err);

#ifdef __cplusplus
}
#endif
#endif
