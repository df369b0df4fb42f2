/*
 * Phase 2 `icedruid sync`: keep a Druid data source in step with its Iceberg table.
 *
 *   state file  {"version":1,"dataSources":{"<ds>":{"snapshotId":N,"ingestedAt":"ISO",
 *               "table":"ns.table","tasks":["<druid task id>",...]}}}: the last snapshot
 *               whose re-ingestion Druid accepted, per data source. Written atomically
 *               (a temporary file in the same directory, fsync, rename over the old
 *               file, fsync of the directory), so a crash leaves the old or the new
 *               state, never a torn file. Runs are serialised by an exclusive flock on
 *               "<state>.lock" (a sidecar: the state file itself is replaced by rename,
 *               so a lock on it would not be seen by a run that opens the new file).
 *   a run       plan the table's current snapshot C; with no entry for the data source,
 *               a full ingestion (REPLACE ... OVERWRITE ALL); with entry A == C nothing;
 *               else diff A -> C (diff.h) and emit the REPLACE of the touched intervals
 *               (emit.h). Submit every statement to Druid; record C only when Druid
 *               accepted all of them.
 *   crash safety  a crash or failure after some submissions and before the state write
 *               leaves A in the state, so the next run diffs A -> C' (C' >= C) and
 *               submits REPLACEs over a superset of the same intervals. A REPLACE of an
 *               interval from a snapshot is idempotent, so running it twice (or Druid
 *               running both the old and the new task) gives the same segments.
 */
#ifndef ICD_DRUID_SYNC_H
#define ICD_DRUID_SYNC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/phase2/diff.h"
#include "druid/phase2/emit.h"
#include "druid/plan/plan.h"
#include "druid/spec/spec.h"
#include "io/fileio.h"

/* ---- the state file ----------------------------------------------------------------- */

typedef struct dr_state dr_state;

/* Takes the lock "<path>.lock" (without waiting: *busy = true and ICD_EIO when another
 * run holds it) and reads the state (a missing file is an empty state; a file that does
 * not parse is an error, never silently replaced). */
int dr_state_open(const char *path, dr_state **out, bool *busy, icd_error *err);
/* The recorded snapshot of a data source; false when there is none. `table` may be NULL. */
bool dr_state_lookup(const dr_state *st, const char *data_source, int64_t *snapshot_id,
                     const char **table);
/* Sets the entry (in memory). */
int dr_state_record(dr_state *st, const char *data_source, int64_t snapshot_id, const char *table,
                    int64_t now_ms, const char *const *tasks, size_t n_tasks, icd_error *err);
/* Writes the state atomically (see above). */
int dr_state_save(dr_state *st, icd_error *err);
/* Releases the lock and frees. */
void dr_state_close(dr_state *st);

/* ---- Druid's task endpoints ---------------------------------------------------------- */

typedef struct dr_druid_client {
    const char *url;  /* Router or Overlord/Broker base URL, e.g. http://localhost:8888 */
    const char *user; /* basic auth, or NULL */
    const char *password;
    int max_attempts;    /* tries for connection errors, 429 and 5xx; 0 -> 3 */
    long base_delay_ms;  /* first retry delay, doubling; 0 -> 500 */
    const char *ca_file; /* CA bundle for https (the CLI: SSL_CERT_FILE); NULL: curl's */
} dr_druid_client;

/* POSTs one emitted item: MSQ to URL/druid/v2/sql/task, native to URL/druid/indexer/v1/task.
 * On 2xx returns the task id ("taskId" / "task" of the answer; malloc'd). Otherwise an
 * error naming the endpoint, the HTTP status and Druid's error (dr_druid_error_text). */
int dr_druid_submit(const dr_druid_client *c, const dr_emit_item *item, char **task_id,
                    icd_error *err);
/* GET URL/druid/indexer/v1/task/ID/status (MSQ and native tasks alike): *done on SUCCESS,
 * an error naming the task and Druid's errorMsg on FAILED, 0 with !*done while it is
 * waiting or running. */
int dr_druid_task_status(const dr_druid_client *c, const char *task_id, bool *done, icd_error *err);
/* One line from a Druid error body: the DruidException shape {"error","errorCode",
 * "category","errorMessage"}, the older {"error","errorMessage","errorClass","host"},
 * the Overlord's {"error": "..."}; other bodies are quoted (first 300 bytes). */
void dr_druid_error_text(const char *body, size_t len, icd_buf *out);

/* Internal, exposed for fuzzing: what the client makes of Druid's answers. A status and
 * body: the JSON object of a 2xx answer, else the error above. */
int dr_druid_answer(long status, int attempts, const char *body, size_t len, const char *url,
                    json_t **out, icd_error *err);
/* A submission's answer: the task id (malloc'd). `path` names the endpoint. */
int dr_druid_submit_answer(const json_t *o, const char *path, char **task_id, icd_error *err);
/* A task status answer: *done on SUCCESS, an error on FAILED, else still running. */
int dr_druid_status_answer(const json_t *o, const char *task_id, bool *done, icd_error *err);

/* ---- planning a given snapshot -------------------------------------------------------- */

/* Plans snapshot `snapshot_id` of the spec's table (the current one, or the spec's
 * snapshotTime, when !has_id). A snapshot that is not the one the spec selects is
 * planned through a copy of the spec with snapshotTime = its timestamp (*spec_out, which
 * must outlive the plan; NULL when the spec itself was used); ICD_ENOTFOUND when the
 * table has no such snapshot, ICD_EUNSUPPORTED when its timestamp selects another one. */
int dr_plan_at_snapshot(const dr_spec *spec, icd_fileio *io, bool has_id, int64_t snapshot_id,
                        const dr_plan_opts *po, dr_plan **plan, dr_spec **spec_out, icd_error *err);

/* ---- one run ------------------------------------------------------------------------- */

typedef struct dr_sync_opts {
    dr_emit_kind kind;
    dr_emit_opts emit; /* plan is filled in by dr_sync_prepare */
    bool full;         /* ignore the state: full ingestion */
    /* The caller serves the plan's splits itself (sync --serve-listen): prepare stops
     * before emitting; call dr_sync_emit with emit.serve_url set. */
    bool serve_later;
    int threads;
    bool project_staged; /* dr_plan_opts.project_staged */
} dr_sync_opts;

typedef struct dr_sync_job {
    const char *data_source;
    char *table; /* "namespace.table" */
    dr_plan *plan;
    bool has_snapshot;   /* false: the table has no snapshot, nothing to do */
    int64_t to_snapshot; /* C */
    bool has_from;
    int64_t from_snapshot; /* A, the recorded snapshot */
    bool up_to_date;       /* A == C */
    bool full;             /* no usable entry (or --full): full ingestion */
    bool has_diff;
    dr_diff diff;
    dr_emit_list list; /* what to submit (may be empty) */
} dr_sync_job;

/* Plans C, looks up A, diffs and emits. `io` must outlive the job. */
int dr_sync_prepare(const dr_spec *spec, icd_fileio *io, const dr_state *st, const dr_sync_opts *o,
                    dr_sync_job *job, icd_error *err);
/* Emits job->list (after dr_sync_prepare with serve_later). Frees the job on failure. */
int dr_sync_emit(const dr_spec *spec, icd_fileio *io, const dr_sync_opts *o, dr_sync_job *job,
                 icd_error *err);
void dr_sync_job_free(dr_sync_job *job);

#endif
