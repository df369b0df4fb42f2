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
 * call but tasks may follow each other in any order. fn == NULL counts only. The first
 * failure stops the other threads and is returned. */
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

#ifdef __cplusplus
}
#endif
#endif
