/*
 * Scan planning: a table snapshot -> the file scan tasks a correct reader needs. Each task
 * is one live data file with exactly the delete files the spec makes apply to it (see
 * delete_index.h). The plan owns everything it returns.
 *
 * Steps: select the snapshot -> read its manifest list -> drop manifests that cannot
 * matter (no live files; delete manifests older than every data file; partition
 * summaries that exclude the filter) -> read the delete manifests (in parallel) and index
 * their files -> read the data manifests, a window of them at a time (in parallel), in
 * manifest-list order -> prune data files by partition values and column bounds -> one
 * task per data file.
 *
 * One code path, two ways to use it: the stream (ice_scan_stream_*) hands each data
 * manifest's tasks to a consumer and forgets them; the materialized plan (ice_scan_plan_*)
 * is the stream collected, for callers that need random access or read tasks in parallel.
 * `tasks` and `plan` (without --check) stream; `scan`, `read`, `serve`, `stage`, `diff`,
 * `sync`, `rewrite-spec`, `plan --check`, `table-info` and the public API (icd_scan_*)
 * materialize.
 */
#ifndef ICD_ICE_SCAN_PLAN_H
#define ICD_ICE_SCAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "iceberg/content_file.h"
#include "iceberg/expr.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

typedef struct ice_scan_task {
    const ice_content_file *data;
    const ice_content_file *const *deletes;
    size_t ndeletes;
    /* The filter still has to be checked on this file's rows (it was not decided by the
     * file's partition alone). */
    bool has_residual;
} ice_scan_task;

typedef struct ice_scan_opts {
    ice_snapshot_selector select;
    const ice_expr *filter; /* unbound; NULL = everything */
    bool case_sensitive;    /* how filter column names bind */
    int threads;            /* manifests read in parallel; <= 1 = serially */
    bool keep_stats;        /* keep data files' column metrics even without a filter */
    bool single_run;        /* the stream is run once: nothing is recorded for later runs */
} ice_scan_opts;

typedef struct ice_scan_counts {
    size_t manifests_total, manifests_read;
    size_t manifests_pruned;  /* data manifests whose partition summaries exclude the filter */
    size_t data_files_pruned; /* data files excluded by partition values or column metrics */
    size_t data_files_total;  /* live in the snapshot, before pruning (pruned manifests count
                               * by their manifest-list file counts when known) */
    size_t data_files;        /* in tasks */
    size_t delete_files_total;
    size_t delete_files; /* applying to at least one task */
    size_t position_delete_files, equality_delete_files, deletion_vectors; /* of those */
} ice_scan_counts;

/* ---- the stream ----------------------------------------------------------------------
 *
 * Planning as a stream: ice_scan_stream_open reads the manifest list and every delete
 * manifest and indexes the delete files; ice_scan_stream_run then reads the data manifests
 * in manifest-list order (opts->threads at a time) and hands each one's tasks, in plan
 * order, to a consumer, releasing the manifest's entries after the call unless the
 * consumer takes them. Memory is the delete files, their index and a window of data
 * manifests, whatever the number of data files. The materialized plan below is the stream
 * collected. */
typedef struct ice_scan_stream ice_scan_stream;

/* One data manifest's tasks. They, and the delete lists they point into, live until the
 * consumer returns; the data files live in `arena`, which the consumer may take (move the
 * struct out and leave *arena = ICD_ARENA_INIT). */
typedef struct ice_scan_batch {
    const ice_scan_task *tasks;
    size_t ntasks;
    size_t first; /* plan index of tasks[0] */
    icd_arena *arena;
} ice_scan_batch;

typedef int (*ice_scan_consumer)(void *ctx, ice_scan_batch *batch, icd_error *err);

int ice_scan_stream_open(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                         ice_scan_stream **out, icd_error *err);
/* Produces every task, in plan order. May be run again (the same tasks; the first run
 * records what later runs replay, unless opts->single_run): a caller that needs totals
 * before the tasks runs it once for the totals. The counts, the residual and has_deletes
 * describe the last complete run. */
int ice_scan_stream_run(ice_scan_stream *s, ice_scan_consumer fn, void *ctx, icd_error *err);
/* The same without looking up delete files: every task has ndeletes 0 (for a consumer
 * that needs the data files only); the delete counts and has_deletes stay those of the
 * last ice_scan_stream_run. */
int ice_scan_stream_run_data(ice_scan_stream *s, ice_scan_consumer fn, void *ctx, icd_error *err);
void ice_scan_stream_free(ice_scan_stream *s);
const ice_snapshot *ice_scan_stream_snapshot(const ice_scan_stream *s);
const ice_schema *ice_scan_stream_schema(const ice_scan_stream *s);
const struct ice_bound_expr *ice_scan_stream_filter(const ice_scan_stream *s);
ice_scan_counts ice_scan_stream_counts(const ice_scan_stream *s);
bool ice_scan_stream_has_residual(const ice_scan_stream *s, const char **text);
bool ice_scan_stream_has_deletes(const ice_scan_stream *s);

/* For a loop that writes tasks[0..n) in order, called before task i: fetches ahead the
 * delete files of task i + 2 and the paths of those of task i + 1. A plan's delete files
 * are used in no order, so each was a cache miss, a sixth of writing a large plan. The
 * _deletes one fetches the delete files only (for a writer that keeps their texts). */
static inline void ice_scan_tasks_prefetch_deletes(const ice_scan_task *tasks, size_t n, size_t i)
{
    if (i + 2 < n)
        for (size_t k = 0; k < tasks[i + 2].ndeletes; k++)
            __builtin_prefetch(tasks[i + 2].deletes[k]);
}
static inline void ice_scan_tasks_prefetch(const ice_scan_task *tasks, size_t n, size_t i)
{
    ice_scan_tasks_prefetch_deletes(tasks, n, i);
    if (i + 1 < n)
        for (size_t k = 0; k < tasks[i + 1].ndeletes; k++)
            __builtin_prefetch(tasks[i + 1].deletes[k]->path);
}

/* ---- the materialized plan: every task, for random access ---------------------------- */
typedef struct ice_scan_plan ice_scan_plan;

int ice_scan_plan_build(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                        ice_scan_plan **out, icd_error *err);
void ice_scan_plan_free(ice_scan_plan *p);

/* The snapshot read (NULL for a table without snapshots: no tasks) and the schema the read
 * uses (ice_metadata_read_schema: current for current/branch reads, the snapshot's own for
 * id/time/tag reads). */
const ice_snapshot *ice_scan_plan_snapshot(const ice_scan_plan *p);
const ice_schema *ice_scan_plan_schema(const ice_scan_plan *p);
size_t ice_scan_plan_task_count(const ice_scan_plan *p);
const ice_scan_task *ice_scan_plan_task(const ice_scan_plan *p, size_t i);
ice_scan_counts ice_scan_plan_counts(const ice_scan_plan *p);
/* The plan's filter bound to its schema (NULL: no filter), owned by the plan: for
 * row-group / stripe pruning (ice_scan_reader_set_filter). */
const struct ice_bound_expr *ice_scan_plan_filter(const ice_scan_plan *p);
/* True when some task keeps a residual filter; `text` describes it (may be NULL). */
bool ice_scan_plan_has_residual(const ice_scan_plan *p, const char **text);
/* ice_scan_tasks_prefetch over the plan's tasks. */
void ice_scan_plan_prefetch(const ice_scan_plan *p, size_t i);
/* True when any task carries delete files (Druid's v2 path). */
bool ice_scan_plan_has_deletes(const ice_scan_plan *p);

#endif
