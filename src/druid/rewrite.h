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
#include "druid/plan.h"

typedef struct dr_rewrite_opts {
    const char *serve_url;       /* base URL of `icedruid serve` (needed for v2) */
    const char *auth_user;       /* httpAuthenticationUsername, or NULL */
    const json_t *auth_password; /* httpAuthenticationPassword (a PasswordProvider), or NULL */
} dr_rewrite_opts;

/* The rewritten document (a new reference). A spec given as a bare input source gives
 * just the new input source. */
int dr_rewrite_spec(const dr_plan *p, const dr_rewrite_opts *o, json_t **out, icd_error *err);

/* The user's document with its iceberg input source replaced by `src` (taken over, also
 * on failure); a spec given as a bare input source gives `src` itself. The v1 rewrite and
 * `icedruid stage` (stage.h) both build their spec with it. */
int dr_rewrite_with_source(const dr_plan *p, json_t *src, json_t **out, icd_error *err);

#endif
