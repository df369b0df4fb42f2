/*
 * The ingestion spec to submit to Druid after planning (`icedruid rewrite-spec`, and
 * `GET /spec` of `icedruid serve`):
 *
 *   v1  the user's spec with the `iceberg` input source replaced by the planned warehouse
 *       input source (dr_plan_v1_source); inputFormat untouched. An empty snapshot keeps
 *       the `iceberg` input source (Druid reads it as an empty source itself).
 *   v2  an `http` input source with one URI per split served by `icedruid serve`,
 *       `"inputFormat": {"type": "json", "keepNullColumns": true}` (a flattenSpec of the
 *       original format is kept; null columns are discovered as Parquet's reader does),
 *       `"timestampSpec": {"column": "__time", "format": "millis"}` (the rows carry the
 *       __time icedruid computed with the original timestampSpec), and the original
 *       timestamp column added to dimensionExclusions (in schemaless mode without
 *       useSchemaDiscovery also the struct/list/map columns, which Druid's Parquet reader
 *       does not discover either), so the datasource Druid builds is
 *       the one its own v1 path would build from the same rows: same __time, same
 *       dimensions in schemaless mode, same metric inputs.
 * Everything else (dataSchema, granularity, metrics, transforms, tuningConfig,
 * appendToExisting, dropExisting, context) is kept as the user wrote it.
 */
#ifndef ICD_DRUID_REWRITE_H
#define ICD_DRUID_REWRITE_H

#include <jansson.h>

#include "base/error.h"
#include "druid/plan/plan.h"

typedef struct dr_rewrite_opts {
    const char *serve_url;       /* base URL of `icedruid serve` (needed for v2) */
    const char *auth_user;       /* httpAuthenticationUsername, or NULL */
    const json_t *auth_password; /* httpAuthenticationPassword (a PasswordProvider), or NULL */
    /* Files mode (`serve` serving materialized files, serve_files.h): raw files through
     * the warehouseSource, materialized files as BASE/files/... through `http`, both in
     * one `combining` input source, the user's inputFormat and dataSchema untouched.
     * Needs the plan decided (dr_plan_decide). A table with an ORC file to materialize
     * falls back to the v2 NDJSON splits (dr_rewrite_uses_files tells). */
    bool files;
    /* Files mode with staged files instead of served ones: the materialized files are
     * STAGE_TO/<staged name> (stage.h; written by dr_stage_run to that location) and are
     * listed with the raw files in the warehouseSource; serve_url is then not needed. */
    const char *stage_to;
    /* Files mode: NULL, or one flag per task of the plan, set for every task whose file
     * (raw or materialized) dr_rewrite_files_source lists (what must be staged). */
    bool *used;
} dr_rewrite_opts;

/* The rewritten document (a new reference). A spec given as a bare input source gives
 * just the new input source. */
int dr_rewrite_spec(const dr_plan *p, const dr_rewrite_opts *o, json_t **out, icd_error *err);
/* The same document as text (indented JSON and a newline) appended to `out`: what
 * `serve` answers at /spec. */
int dr_rewrite_spec_text(const dr_plan *p, const dr_rewrite_opts *o, icd_buf *out, icd_error *err);

/*   files  (opts.files) the user's spec with the `iceberg` input source replaced by
 *          {"type":"combining","delegates":[WAREHOUSE_SOURCE(raw files),
 *          {"type":"http","uris":[BASE/files/...],...}]} (one delegate alone when the
 *          other would be empty); inputFormat, timestampSpec, dimensions untouched, so
 *          Druid's own reader reads raw and materialized files alike.
 *
 * True when dr_rewrite_spec with these options gives the files shape (files requested
 * with a serve_url or stage_to, some file materialized, none of them ORC). Without a URL
 * a plan without delete files but with files to materialize for other reasons (e.g.
 * identity-partition columns) is refused (dr_rewrite_check_raw). */
bool dr_rewrite_uses_files(const dr_plan *p, const dr_rewrite_opts *o);

/* Files mode (o->files, the plan decided) without a serve_url or stage_to on a plan
 * without delete files (v1 shape) where some non-ORC file is materialized (renamed or
 * identity-partition-only columns, defaults, promotions): an error naming the first such
 * file, why it is not raw and what to give (Druid would read it raw: wrong values);
 * else 0. dr_rewrite_spec and the emitters (emit.h) check it first. */
int dr_rewrite_check_raw(const dr_plan *p, const dr_rewrite_opts *o, icd_error *err);

/* Files mode: the input source of the tasks with keep[i] (NULL: all; none kept: the
 * first task, since Druid's sources need a file) as described above (a new reference). */
int dr_rewrite_files_source(const dr_plan *p, const dr_rewrite_opts *o, const bool *keep,
                            json_t **out, icd_error *err);

/* The user's document with its iceberg input source replaced by `src` (taken over, also
 * on failure); a spec given as a bare input source gives `src` itself. The v1 rewrite and
 * `icedruid stage` (stage.h) both build their spec with it. */
int dr_rewrite_with_source(const dr_plan *p, json_t *src, json_t **out, icd_error *err);

#endif
