/*
 * Phase 2 emitters: a snapshot diff (diff.h) -> the Druid re-ingestion that makes the
 * data source match the snapshot it was diffed to.
 *
 *   MSQ     one `REPLACE INTO "ds" OVERWRITE WHERE __time >= TIMESTAMP 'a' AND
 *           __time < TIMESTAMP 'b' SELECT ... FROM TABLE(EXTERN(...)) WHERE <time in
 *           [a,b)> PARTITIONED BY ...` per contiguous range (submitted to
 *           /druid/v2/sql/task as {"query": ..., "context": {...}}).
 *   native  one `index_parallel` task: the user's spec with granularitySpec.intervals =
 *           the ranges, appendToExisting=false, dropExisting=true (submitted to
 *           /druid/indexer/v1/task).
 *
 * Ranges: the diff's replace intervals and (unless replace_only) its append intervals,
 * widened to the spec's segmentGranularity buckets (OVERWRITE WHERE and dropExisting
 * work on whole segments) and merged when they touch or overlap. Append intervals are
 * REPLACEd too rather than INSERTed: an INSERT of "the new rows" would need exactly the
 * rows added since the last run and would duplicate them when a crash makes sync submit
 * again, while a REPLACE of the interval from the snapshot is idempotent.
 *
 * What the re-ingestion reads (the correctness point): Druid's own `iceberg` input source
 * ignores delete files, so it is used only when the plan of the snapshot to read is v1
 * (no delete file applies to any task). It is then pinned to that snapshot
 * (`snapshotTime` = the snapshot's timestamp) and pruned to the ranges with an
 * icebergFilter on the timestamp column, and-ed with the spec's own filter: `interval`
 * for a timestamp/timestamptz column, `range` in the column's unit for a numeric column
 * read as millis/posix/micro/nano; other columns, and specs with a timestampSpec
 * missingValue (rows with a null timestamp belong to that instant), are not pruned (the
 * SQL WHERE / granularitySpec.intervals still restrict the rows). The pruning filter leaves a
 * residual by design, so it is added only when the spec's residualFilterMode is not "fail";
 * the mode is always kept as the user wrote it. When the plan is v2 the rows are read from
 * `icedruid serve` (serve_url, required) through the `http` input source of rewrite.h, restricted
 * to the splits whose data file can hold rows of the ranges: the snapshot is planned again
 * with the same pruning filter (partition values and column bounds decide, as in Druid),
 * and the splits of files it keeps are kept; every split when that is not possible.
 *
 * In files mode (dr_emit_opts.files, the CLI's default) a snapshot with a file to
 * materialize (deletes, or columns a raw read would miss) is read like the first ingestion
 * instead: its raw files and materialized files (served or staged, content-addressed)
 * through the user's own inputFormat and timestampSpec, pruned to the files that can hold
 * rows of the ranges the same way; the NDJSON splits above remain for --rows and ORC.
 * MSQ cannot read a `combining` source (Druid's ExternalInputSpecSlicer.splitsToSlice
 * hands the combining source its delegates' own per-file splits: ClassCastException, since
 * Druid 26), so an MSQ statement whose files are raw + served is refused (native reads it;
 * staged files share the one warehouseSource).
 *
 * A full ingestion (diff NULL: the first sync of a data source) is one `REPLACE ...
 * OVERWRITE ALL` / one native task with appendToExisting=false and no intervals.
 */
#ifndef ICD_DRUID_EMIT_H
#define ICD_DRUID_EMIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/phase2/diff.h"
#include "druid/spec/period.h"
#include "druid/plan/plan.h"
#include "druid/spec/spec.h"

typedef enum dr_emit_kind { DR_EMIT_MSQ, DR_EMIT_NATIVE } dr_emit_kind;

typedef struct dr_emit_opts {
    /* The plan of the snapshot the diff goes to (v1/v2, schema, snapshot, splits).
     * NULL: treated as v1 with no schema and no snapshot pin (tests, hand-made diffs). */
    const dr_plan *plan;
    /* The FileIO the plan was built with: v2 plans the snapshot again with the time
     * filter to keep only the splits that can hold rows of the ranges. NULL: every split. */
    icd_fileio *io;
    const char *serve_url;       /* v2: base URL of `icedruid serve` */
    const char *auth_user;       /* v2: httpAuthenticationUsername, or NULL */
    const json_t *auth_password; /* v2: httpAuthenticationPassword provider, or NULL */
    bool replace_only;           /* leave the append intervals out */
    /* Files mode (rewrite.h, dr_rewrite_uses_files; the plan decided): the rows are read
     * through the user's own inputFormat from the raw files (warehouseSource) and the
     * materialized files of the snapshot, served by `icedruid serve` at serve_url
     * (`combining` with `http`) or staged at stage_to (stage.h names, listed in the
     * warehouseSource), restricted to the files that can hold rows of the ranges as for
     * v2 splits; timestampSpec, dimensions and inputFormat stay the user's, so re-ingested
     * intervals are built exactly like the first ingestion. ORC files to materialize
     * fall back to the v2 NDJSON splits. */
    bool files;
    const char *stage_to;
    /* Files mode: NULL, or one flag per task of the plan, set for every task whose file
     * an item lists (`diff --stage-to` stages just the materialized ones of those). */
    bool *used;
    const json_t *context; /* MSQ query context / native task context entries to
                              add (an object), or NULL */
} dr_emit_opts;

/* One submission. */
typedef struct dr_emit_item {
    dr_emit_kind kind;
    bool full;         /* OVERWRITE ALL / whole table */
    dr_interval range; /* MSQ: the range it overwrites (unset when full) */
    char *sql;         /* MSQ: the statement, no trailing ';' (NULL for native) */
    json_t *payload;   /* the JSON body to POST */
} dr_emit_item;

typedef struct dr_emit_list {
    dr_emit_kind kind;
    dr_emit_item *items;
    size_t n;
    dr_interval *ranges; /* the merged ranges (none when full) */
    size_t n_ranges;
    bool v2;    /* rows read from `icedruid serve`'s NDJSON splits */
    bool files; /* raw + materialized files through the user's inputFormat */
} dr_emit_list;

/* Builds the submissions for `diff` (NULL: a full ingestion). An empty diff gives an
 * empty list. */
int dr_emit_build(dr_emit_kind kind, const dr_spec *spec, const dr_diff *diff,
                  const dr_emit_opts *opts, dr_emit_list *out, icd_error *err);
void dr_emit_list_free(dr_emit_list *l);
/* The list as text: MSQ statements each followed by ";\n" and a blank line between them;
 * native specs as indented JSON, one per paragraph. Nothing for an empty list. */
int dr_emit_write(const dr_emit_list *l, icd_buf *out, icd_error *err);

/* dr_emit_build + dr_emit_write. */
int dr_emit_msq(const dr_spec *spec, const dr_diff *diff, const dr_emit_opts *opts, icd_buf *out,
                icd_error *err);
int dr_emit_native(const dr_spec *spec, const dr_diff *diff, const dr_emit_opts *opts, icd_buf *out,
                   icd_error *err);

/* Helpers, exposed for tests. */
/* The ranges described above, sorted (malloc'd; *n = 0 and *out = NULL when none). */
int dr_emit_ranges(const dr_spec *spec, const dr_diff *diff, bool replace_only, dr_interval **out,
                   size_t *n, icd_error *err);
/* SQL string literal: 'text' with quotes doubled. */
void dr_sql_string(icd_buf *b, const char *s, size_t n);
/* SQL identifier: "name" with double quotes doubled. */
void dr_sql_ident(icd_buf *b, const char *s);
/* "2024-01-02T00:00:00.000Z" and "2024-01-02 00:00:00.000" (SQL TIMESTAMP literal). */
void dr_fmt_iso_ms(icd_buf *b, int64_t ms);
void dr_fmt_sql_ts(icd_buf *b, int64_t ms);
/* A granularity as an ISO period ("P1D", "PT15M"); false for NONE / ALL. */
bool dr_granularity_period_text(const dr_granularity *g, icd_buf *out);

#endif
