/*
 * Druid ingestion planning: a parsed spec (spec.h) -> the table, the snapshot and the
 * Iceberg scan plan, and the table-wide v1/v2 decision Druid's `iceberg` input source
 * would make with delete support:
 *
 *   v1  no task carries a delete file: the data-file paths go into the user's
 *       warehouseSource the way Druid's InputSourceFactory.create(paths) builds it
 *       (local -> "files", s3 -> "uris" (s3a:// -> s3://), hdfs -> "paths",
 *       google -> "uris" (gs://), azureStorage -> "uris"); Druid reads them natively.
 *   v2  some task carries a delete file: every task becomes one split, a self-contained
 *       JSON object {"type":"icebergFileTask", ...} (see dr_plan_split_json) that
 *       icedruid reads with every delete applied (split.h), without planning again.
 *
 * Table resolution (druid/plan/catalog_load.h): `local` catalogs read WAREHOUSE/NAMESPACE/TABLE
 * in the Hadoop layout (a relative warehousePath is taken relative to the current
 * directory); `rest` catalogs load the table from catalogUri with catalogProperties
 * (vended credentials go to the FileIO); `hive` asks the Hive Metastore at catalogUri and
 * `glue` asks AWS Glue for the table's metadata_location. snapshotTime selects the
 * snapshot current at that time.
 *
 * The icebergFilter: until the filter binding exists, planning does not prune by it and
 * a spec with an icebergFilter counts every task as keeping a residual (conservative);
 * residualFilterMode=fail then fails the plan (Druid's message), warn/ignore keep it
 * (dr_plan_residual tells the caller to warn).
 */
#ifndef ICD_DRUID_PLAN_H
#define ICD_DRUID_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/jsonw.h"
#include "druid/spec/spec.h"
#include "druid/plan/stage_decide.h"
#include "iceberg/metadata.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"

typedef struct dr_plan dr_plan;

typedef struct dr_plan_opts {
    int threads; /* manifests read in parallel (<= 1: serially) */
    /* The locations handed to Druid (the v1 warehouse input source): false = what the
     * --remap rules make of them (Druid reads the same copy as icedruid), true = the
     * table's own locations (icedruid reads a remapped local copy, Druid the original).
     * Either way each must fit the warehouseSource's type, else dr_plan_v1_source fails
     * naming it. */
    bool druid_original_locations;
    /* Materialized files hold only the top-level columns Druid's reader keeps for the spec
     * (dr_spec_columns_filter), not every column of the read schema (--project). */
    bool project_staged;
    /* Streamed: the plan holds no task (the scan is a stream, ice_scan_plan.h), only each
     * task's decision, made while planning; dr_plan_write is all it serves (it reads the
     * data manifests again for each list it writes). dr_plan_scan is then NULL and the
     * per-task accessors (split count, decision, location, v1 source, split JSON) have
     * nothing to give. */
    bool stream;
} dr_plan_opts;

/* What a materialized file holds: `schema` is what it is written with (its columns, the
 * Parquet/Avro schema, and part of its content address: dr_stage_name), `names` the
 * reader's selection of the read schema's top-level columns that gives those rows
 * (NULL: every column). Without projection, or when the spec keeps every column, schema
 * is the read schema itself. */
typedef struct dr_stage_cols {
    const ice_schema *schema;
    const char **names;
    size_t n;
    ice_schema *owned; /* the projected schema */
} dr_stage_cols;
/* For read schema `schema`: its projection for `spec` when `project`, else all of it. */
int dr_stage_cols_init(dr_stage_cols *c, const dr_spec *spec, bool project,
                       const ice_schema *schema, icd_error *err);
void dr_stage_cols_free(dr_stage_cols *c);

/* Plans the spec's table. `io` (borrowed, must outlive the plan) carries the --remap
 * rules; the catalog adds its storage settings (REST: the table's) to it. */
int dr_plan_build(const dr_spec *spec, icd_fileio *io, const dr_plan_opts *opts, dr_plan **out,
                  icd_error *err);
void dr_plan_free(dr_plan *p);
/* Loads the spec's table metadata through its catalog without planning (diff reads
 * several snapshots of it). The caller frees *out with ice_metadata_free. */
int dr_plan_load_metadata(const dr_spec *spec, icd_fileio *io, ice_metadata **out, icd_error *err);

const dr_spec *dr_plan_spec(const dr_plan *p);
const ice_metadata *dr_plan_metadata(const dr_plan *p);
const ice_scan_plan *dr_plan_scan(const dr_plan *p);
/* The selected snapshot's schema (the schema v2 splits carry). */
const ice_schema *dr_plan_schema(const dr_plan *p);
/* What the plan's materialized files hold (dr_plan_opts.project_staged). */
const dr_stage_cols *dr_plan_stage_cols(const dr_plan *p);
bool dr_plan_projects_staged(const dr_plan *p);
/* True: Druid reads the table's rows from icedruid (NDJSON splits): some task has delete
 * files, or (after dr_plan_decide) a file must be materialized in a format icedruid has no
 * writer for (ORC), or (after dr_plan_decide_rows) any file must be materialized. */
bool dr_plan_is_v2(const dr_plan *p);
/* The number of splits: tasks (= data files after pruning). */
size_t dr_plan_split_count(const dr_plan *p);
/* Makes the raw / materialized decision of every task (stage_decide.h; reads the footers
 * of delete-free files). Idempotent; plan output and `stage` call it. */
int dr_plan_decide(dr_plan *p, icd_error *err);
/* For --rows (NDJSON splits instead of materialized files): on a table without deletes,
 * decides every file and, when one cannot be read raw, makes the plan v2 so that Druid gets
 * all rows from icedruid. A no-op when the plan is v2 already. */
int dr_plan_decide_rows(dr_plan *p, icd_error *err);
/* The decision of split i after dr_plan_decide, NULL out of range or before. The reason
 * text ("" when raw) is shared between tasks and lives as long as the plan. */
typedef struct dr_plan_file {
    bool raw;
    bool from_footer;
    const char *reason;
} dr_plan_file;
const dr_plan_file *dr_plan_decision(const dr_plan *p, size_t i);
/* The number of tasks that are not raw. */
size_t dr_plan_materialized_count(const dr_plan *p);
/* True when a residual filter remains (see above); *text describes it. */
bool dr_plan_residual(const dr_plan *p, const char **text);

/* v1: the input source warehouseSource.create(paths) gives for the planned data files
 * (locations resolved through --remap, since another reader gets them), as a new JSON
 * object. An empty plan gives the same shape with an empty list. */
int dr_plan_v1_source(const dr_plan *p, json_t **out, icd_error *err);
/* The data file of task i as another reader names it: resolved through --remap, made
 * absolute for a `local` warehouseSource (malloc'd; NULL on OOM). */
char *dr_plan_task_location(const dr_plan *p, size_t i);
/* The FileIO the plan reads with (its --remap rules and storage settings). */
icd_fileio *dr_plan_io(const dr_plan *p);
/* v2 split i as self-contained JSON (appended to `out`, one line): the task's own fields
 * and the fields every split shares (tableSchemaJson, tableNamespace, tableName,
 * warehouseSource, formatVersion, tableLocation, snapshotId, nameMappingJson). */
int dr_plan_split_json(const dr_plan *p, size_t i, icd_buf *out, icd_error *err);
/* What `icedruid plan` prints, streamed through `out` (with a streamed plan, memory is a
 * decision per task; the v1 input source holds every location):
 * {"mode":"v1","snapshotId":..,"dataFiles":N, "inputSource":{...}} or
 * {"mode":"v2","snapshotId":..,"dataFiles":N,"deleteFiles":M,"splitCommon":{...},
 * "splits":[...]} followed by a newline; both with "rawFiles", "materializedFiles" and
 * "files": [{"path","format","decision":"raw"|"materialized","decidedBy":"metadata"|
 * "footer","delivery","reason"}] per data file. v2 splits carry their own fields only; the
 * shared ones (the schema JSON among them) are in "splitCommon" once: the split Druid or
 * `read --split` reads is splitCommon's members plus the split's (dr_split_from_json
 * accepts the two objects, `read --split` a file with the merged object). */
int dr_plan_write(dr_plan *p, icd_jsonw *out, icd_error *err);

/* Helper of dr_plan_v1_source, exposed for tests: the input source `type` builds from
 * `paths` (ws is the warehouseSource object, copied except for its path list). */
int dr_warehouse_source_create(const json_t *ws, const char *const *paths, size_t n, json_t **out,
                               icd_error *err);

#endif
