/*
 * Druid's side: an ingestion spec whose input source is Druid's `iceberg` source, the plan
 * icedruid makes of it, the spec to submit instead, and phase 2 (the Druid intervals two
 * snapshots differ in, and the statements that re-ingest just those).
 *
 *   icd_druid_spec        a parsed ingestion spec, input source or task (design.md §1)
 *   icd_druid_plan        the spec's table planned: v1 (no delete file: Druid reads the
 *                         data files itself) or v2 (deletes: icedruid corrects some files)
 *   icd_druid_plan_write  the plan as JSON (what `icedruid plan` prints), streamed
 *   icd_druid_rewrite     the spec to submit to Druid (`icedruid rewrite-spec`)
 *   icd_druid_check       the pre-flight checks (`icedruid plan --check`)
 *   icd_druid_read        the rows Druid would ingest, as Druid input rows (NDJSON), from
 *                         the whole plan or one split (`icedruid read`)
 *   icd_druid_stage       materialized files written to a directory or S3 prefix, and the
 *                         spec that lists them with the raw ones (`icedruid stage`)
 *   icd_druid_diff        the intervals that changed between two snapshots (`icedruid diff`)
 *   icd_druid_reingest    the MSQ statements or native task that re-ingest them
 *                         (`icedruid diff --emit msq|native`)
 *   icd_druid_server      an HTTP server handing Druid a plan's delete-applied files (or its
 *                         splits' rows as NDJSON) and the spec reading them (`icedruid serve`)
 *   icd_druid_state       the state file of `icedruid sync`: per data source, the last
 *                         snapshot Druid ingested
 *   icd_druid_sync        one sync run: plan the current snapshot, diff it against the
 *                         recorded one, the statements; submit them (icd_druid_client),
 *                         then record the snapshot
 *
 * Text results are handed to an icd_write_fn in pieces (each call a run of bytes of one
 * document; a non-zero return stops the writer with that code) or returned as a string
 * the caller frees with icd_string_free.
 *
 * Thread safety: a spec is immutable once parsed and may be shared. A plan, a diff and a
 * re-ingestion are used from one thread at a time; the functions that take `threads`
 * run their own worker threads inside the call.
 */
#ifndef ICEDRUID_DRUID_H
#define ICEDRUID_DRUID_H

#include <stddef.h>
#include <stdint.h>

#include "icedruid/common.h"
#include "icedruid/error.h"
#include "icedruid/scan.h"
#include "icedruid/table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct icd_druid_spec icd_druid_spec;
typedef struct icd_druid_plan icd_druid_plan;
typedef struct icd_druid_diff icd_druid_diff;
typedef struct icd_druid_reingest icd_druid_reingest;
typedef struct icd_druid_server icd_druid_server;
typedef struct icd_druid_state icd_druid_state;
typedef struct icd_druid_sync icd_druid_sync;

/* A sink for text: `len` bytes at `data`. A non-zero return stops the writer, which then
 * returns that code (fill err to say why). */
typedef int (*icd_write_fn)(void *ctx, const char *data, size_t len, icd_error *err);

/* Frees a string a function of this header returned. */
ICD_EXTERN void icd_string_free(char *s);

/* ---- the spec -------------------------------------------------------------------------- */

/* Parses `len` bytes of JSON: an ingestion spec ({"type": "index_parallel", "spec": ...} or
 * its "spec" object), or a bare iceberg input source. `origin` names the text in messages
 * (a file name; may be NULL). Druid's own rules decide what is accepted (Jackson's
 * coercions, Druid's defaults); a spec Druid would refuse is ICD_EINVALID, one line naming
 * the field. */
ICD_EXTERN int icd_druid_spec_parse(icd_druid_spec **out, const char *json, size_t len,
                                    const char *origin, icd_error *err);
/* Reads and parses the local file `path`. */
ICD_EXTERN int icd_druid_spec_load(icd_druid_spec **out, const char *path, icd_error *err);
ICD_EXTERN void icd_druid_spec_free(icd_druid_spec *s);

/* The spec's dataSource (NULL for a bare input source), and the table it names. */
ICD_EXTERN const char *icd_druid_spec_data_source(const icd_druid_spec *s);
ICD_EXTERN const char *icd_druid_spec_namespace(const icd_druid_spec *s);
ICD_EXTERN const char *icd_druid_spec_table_name(const icd_druid_spec *s);
/* The icebergCatalog's caseSensitive (Druid's default: 1): 1 when column names must match
 * the table's exactly, 0 when they match whatever their case. */
ICD_EXTERN int icd_druid_spec_case_sensitive(const icd_druid_spec *s);

/* Parses a catalog document (`len` bytes of JSON; `origin` names it in messages, may be
 * NULL): either a bare icebergCatalog object ({"type": "local"|"rest"|"hive"|"glue", ...})
 * and `table` the table in it as NAMESPACE.TABLE (split at the last dot), or anything
 * icd_druid_spec_parse takes, which names its table itself (`table` must then be NULL).
 * What `icedruid scan --catalog FILE [TABLE]` reads. ICD_EINVALID naming the problem. */
ICD_EXTERN int icd_druid_spec_parse_catalog(icd_druid_spec **out, const char *json, size_t len,
                                            const char *origin, const char *table, icd_error *err);

/* Opens the spec's table (its namespace and tableName) through its icebergCatalog, at its
 * current metadata; catalog-vended storage settings go to `storage`, which must outlive
 * the table. The table does not refer to the spec. */
ICD_EXTERN int icd_druid_spec_open_table(icd_table **out, const icd_druid_spec *spec,
                                         icd_storage *storage, icd_error *err);

/* The folder of the tz database (TZif files) that Druid timestamp formats naming a zone
 * load their rules from: /usr/share/zoneinfo unless set; NULL or "" restores that default.
 * `dir` is copied (up to 1023 bytes). The library reads no TZDIR variable itself (the
 * icedruid command passes $TZDIR). Process-wide and not synchronized: call it once at
 * start-up, before any spec is planned or read, never while another thread uses the
 * library. */
ICD_EXTERN void icd_druid_set_tz_dir(const char *dir);

/* ---- the plan -------------------------------------------------------------------------- */

#define ICD_DRUID_PLAN_OPTIONS_VERSION 1

typedef struct icd_druid_plan_options {
    int version; /* ICD_DRUID_PLAN_OPTIONS_VERSION */
    int threads; /* manifests read in parallel (<= 1: one at a time) */
    /* The locations handed to Druid: 0 = what the storage's remaps make of them (Druid reads
     * the same copy as icedruid), 1 = the table's own locations. */
    int original_locations;
    /* Materialized files hold only the columns Druid's reader keeps for the spec. */
    int project;
    /* Streamed: nothing per data file is kept; the plan serves icd_druid_plan_write only
     * (it reads the manifests again while writing). Memory stays flat for any table. */
    int stream;
} icd_druid_plan_options;

ICD_EXTERN void icd_druid_plan_options_init(icd_druid_plan_options *o);

/* Plans the spec's table (opened through the spec's icebergCatalog, read through
 * `storage`), at the snapshot the spec selects. The spec and storage must outlive it. */
ICD_EXTERN int icd_druid_plan_open(icd_druid_plan **out, const icd_druid_spec *spec,
                                   icd_storage *storage, const icd_druid_plan_options *o,
                                   icd_error *err);
ICD_EXTERN void icd_druid_plan_free(icd_druid_plan *p);

/* 1 when a data file has delete files (Druid must not read the files raw), else 0. */
ICD_EXTERN int icd_druid_plan_is_v2(const icd_druid_plan *p);
/* The data files planned (0 for a streamed plan). */
ICD_EXTERN size_t icd_druid_plan_file_count(const icd_druid_plan *p);
/* 1 when the spec's icebergFilter leaves a residual Iceberg cannot decide from partitions
 * and statistics (rows outside it are read too); *text (may be NULL) gets it, owned by
 * the plan. */
ICD_EXTERN int icd_druid_plan_residual(const icd_druid_plan *p, const char **text);
/* 1 when the spec asks for a warning about such a residual (filterResidual = "warn"). */
ICD_EXTERN int icd_druid_plan_warns_residual(const icd_druid_plan *p);

/* Writes the plan as one JSON document: v1 the input source Druid's warehouseSource
 * builds; v2 one icebergFileTask split per data file. */
ICD_EXTERN int icd_druid_plan_write(icd_druid_plan *p, icd_write_fn fn, void *ctx, icd_error *err);

/* The standalone icebergFileTask split of data file i of a v2 plan (not streamed), as
 * `icedruid serve` serves it and icd_druid_read_split reads it (JSON; icd_string_free). */
ICD_EXTERN int icd_druid_plan_split(char **out, const icd_druid_plan *p, size_t i, icd_error *err);

/* ---- the spec to submit ---------------------------------------------------------------- */

#define ICD_DRUID_REWRITE_OPTIONS_VERSION 1

typedef struct icd_druid_rewrite_options {
    int version;                   /* ICD_DRUID_REWRITE_OPTIONS_VERSION */
    const char *serve_url;         /* base URL of `icedruid serve` (files to materialize) */
    const char *auth_user;         /* basic auth of Druid's http input source, or NULL */
    const char *auth_password_env; /* the environment variable holding its password on the
                                      Druid side (an `environment` PasswordProvider) */
    /* 0: files mode — raw files through the warehouseSource and materialized files from
     * serve_url, the user's inputFormat untouched; 1: NDJSON splits of `serve --rows`. */
    int rows;
} icd_druid_rewrite_options;

ICD_EXTERN void icd_druid_rewrite_options_init(icd_druid_rewrite_options *o);

/* The ingestion spec to submit (JSON, indented), in *out (icd_string_free). Decides, file
 * by file, whether Druid can read it raw. A v2 plan without serve_url is ICD_EINVALID
 * naming the first file that must be materialized and why. *orc_files (may be NULL) gets
 * the ORC data files that must be materialized: icedruid writes no ORC, so such a spec
 * reads NDJSON splits even in files mode. Needs a plan that is not streamed. */
ICD_EXTERN int icd_druid_rewrite(char **out, size_t *orc_files, icd_druid_plan *p,
                                 const icd_druid_rewrite_options *o, icd_error *err);

/* ---- Druid input rows ---------------------------------------------------------------------- */

#define ICD_DRUID_READ_OPTIONS_VERSION 1

typedef struct icd_druid_read_options {
    int version;    /* ICD_DRUID_READ_OPTIONS_VERSION */
    int threads;    /* data files read at once */
    uint64_t limit; /* stop after this many rows (0: every row); read on one thread */
    /* Decode memory of one thread; an eighth of it bounds the compressed bytes read ahead.
     * 0: 16 MiB. */
    size_t stream_memory;
    /* Skip Parquet row groups and ORC stripes the spec's icebergFilter excludes by their
     * statistics (a plan read only). */
    int prune_row_groups;
    /* Each row whose timestamp the timestampSpec cannot parse (a Druid parse exception:
     * the row is skipped; more than tuningConfig.maxParseExceptions fails the read), with
     * the file and row. Calls are serialised. May be NULL. */
    void (*on_parse_exception)(void *ctx, const icd_error *row);
    /* After each data file (and once before the first, files_done = 0): calls are
     * serialised and never overlap the rows callback. May be NULL. */
    void (*on_progress)(void *ctx, size_t files_done, size_t files_total, uint64_t bytes_done,
                        uint64_t bytes_total);
    /* A warning (one line), e.g. a residual filter Druid's rows are not filtered by. */
    void (*on_warning)(void *ctx, const char *message);
    void *ctx; /* of the three callbacks */
} icd_druid_read_options;

ICD_EXTERN void icd_druid_read_options_init(icd_druid_read_options *o);

/* Reads every data file of the plan (not streamed) as Druid input rows: the columns
 * Druid's reader keeps for the spec, values as Druid's inputFormat reader gives them, the
 * timestamp as the timestampSpec parses it; every delete applied. Each call of fn holds
 * whole rows (NDJSON lines) of one file; calls never overlap. `stats` (may be NULL) gets
 * the row accounting, rows_unparseable included. */
ICD_EXTERN int icd_druid_read_plan(icd_druid_plan *p, icd_storage *storage,
                                   const icd_druid_read_options *o, icd_rows_fn fn, void *ctx,
                                   icd_scan_stats *stats, icd_error *err);

/* The same for one icebergFileTask split (the JSON text `len` bytes long, as `icedruid
 * plan` writes them and `icedruid serve` serves them) of the spec's table. A split with a
 * residual filter fails with residualFilterMode "fail" and warns with "warn". */
ICD_EXTERN int icd_druid_read_split(const icd_druid_spec *spec, icd_storage *storage,
                                    const char *split_json, size_t len, const char *origin,
                                    const icd_druid_read_options *o, icd_rows_fn fn, void *ctx,
                                    icd_scan_stats *stats, icd_error *err);
/* The same for a split file (at most 16 MiB). */
ICD_EXTERN int icd_druid_read_split_file(const icd_druid_spec *spec, icd_storage *storage,
                                         const char *path, const icd_druid_read_options *o,
                                         icd_rows_fn fn, void *ctx, icd_scan_stats *stats,
                                         icd_error *err);

/* ---- staging ----------------------------------------------------------------------------- */

#define ICD_DRUID_STAGE_OPTIONS_VERSION 1

typedef struct icd_druid_stage_options {
    int version;         /* ICD_DRUID_STAGE_OPTIONS_VERSION */
    const char *to;      /* a local directory or s3://bucket/prefix */
    int threads;         /* files written at once */
    size_t part_bytes;   /* S3 multipart part size; 0: 8 MiB */
    const char *tmp_dir; /* where files bound for S3 are spooled; NULL: /tmp */
    /* Called after each materialized file, written or found already staged, from the
     * writing threads (the callee serializes): the data file's size and the rows written
     * (0 when found). May be NULL. */
    void (*on_file)(void *ctx, int64_t source_bytes, uint64_t rows);
    void *on_file_ctx;
} icd_druid_stage_options;

ICD_EXTERN void icd_druid_stage_options_init(icd_druid_stage_options *o);

typedef struct icd_druid_stage_stats {
    size_t raw_files;     /* data files Druid reads where they are */
    size_t staged_files;  /* materialized files the spec lists */
    size_t written_files; /* written by this run */
    size_t skipped_files; /* already at their name (content-addressed) */
    int64_t bytes_written;
    int64_t rows_written;
    int64_t raw_bytes;    /* sizes of the raw data files */
    int64_t table_bytes;  /* sizes of all planned data files */
    int64_t staged_bytes; /* sizes of all staged files */
    int64_t source_bytes; /* sizes of the data files that were materialized */
    icd_scan_stats read;  /* the rows of the files written by this run */
} icd_druid_stage_stats;

/* The materialized files of a plan (decided file by file): how many, and their data
 * files' bytes (for a progress display). */
ICD_EXTERN int icd_druid_plan_materialized(icd_druid_plan *p, size_t *files, uint64_t *bytes,
                                           icd_error *err);

/* Writes every file of the plan Druid cannot read raw, delete-applied in the data file's
 * format, under o->to (skipping the ones already there), and gives the ingestion spec to
 * submit (JSON, indented; icd_string_free): the user's spec reading raw and staged files
 * through its warehouseSource. `stats` may be NULL. */
ICD_EXTERN int icd_druid_stage(char **spec_out, icd_druid_stage_stats *stats, icd_druid_plan *p,
                               icd_storage *storage, const icd_druid_stage_options *o,
                               icd_error *err);

/* Removes the plan's table's staged files under `to` that no snapshot after
 * `after_snapshot` needs; *removed and *kept count them. */
ICD_EXTERN int icd_druid_stage_gc(const icd_druid_plan *p, icd_storage *storage, const char *to,
                                  int64_t after_snapshot, size_t *removed, size_t *kept,
                                  icd_error *err);

/* ---- pre-flight ------------------------------------------------------------------------ */

/* One check's outcome: what was checked ("catalog", "columns", "plan", "storage",
 * "locations"), whether it passed, and a line saying what (failed: the error). */
typedef void (*icd_druid_check_fn)(void *ctx, const char *what, int ok, const char *detail);

/* Runs the pre-flight checks: the catalog finds the table, the spec's columns are in its
 * schema, the manifests, the first data file and every delete file can be read, and the
 * locations handed to Druid fit the warehouseSource. Each check is reported to fn (later
 * checks are skipped when one they need failed). Returns 0 when every check passed,
 * ICD_EINVALID when one failed (err: the first failure), another code when the checks
 * could not run. */
ICD_EXTERN int icd_druid_check(const icd_druid_spec *spec, icd_storage *storage,
                               const icd_druid_plan_options *o, icd_druid_check_fn fn, void *ctx,
                               icd_error *err);

/* ---- phase 2: what changed ------------------------------------------------------------- */

/* ICD_EINVALID, with a message listing the accepted names, unless `text` is a Druid
 * granularity: a name (DAY, hour, ...) or a granularity JSON object. */
ICD_EXTERN int icd_druid_granularity_check(const char *text, icd_error *err);

#define ICD_DRUID_DIFF_OPTIONS_VERSION 1

typedef struct icd_druid_diff_options {
    int version;           /* ICD_DRUID_DIFF_OPTIONS_VERSION */
    int64_t from_snapshot; /* A: the snapshot Druid holds */
    int has_to;            /* 0: B is the table's current snapshot */
    int64_t to_snapshot;   /* B */
    /* A granularity name or JSON object; NULL: the spec's segmentGranularity. */
    const char *granularity;
    int threads;
    /* Progress (may be NULL): called from the worker threads after each file phase 1
     * (timestamps) or phase 2 (row contents) looked at, with the phase, the number of
     * files of the phase and the file's bytes. The callee serializes. */
    void (*on_file)(void *ctx, int phase, size_t nfiles, int64_t file_bytes);
    void *on_file_ctx;
} icd_druid_diff_options;

ICD_EXTERN void icd_druid_diff_options_init(icd_druid_diff_options *o);

/* Computes the Druid intervals whose rows differ between snapshots A and B. */
ICD_EXTERN int icd_druid_diff_compute(icd_druid_diff **out, const icd_druid_spec *spec,
                                      icd_storage *storage, const icd_druid_diff_options *o,
                                      icd_error *err);
ICD_EXTERN void icd_druid_diff_free(icd_druid_diff *d);

typedef struct icd_druid_interval {
    int64_t start_ms;     /* epoch milliseconds, inclusive */
    int64_t end_ms;       /* exclusive */
    int64_t rows_removed; /* rows of A not in B; -1 = unknown (decided from statistics) */
    int64_t rows_added;   /* rows of B not in A */
} icd_druid_interval;

typedef enum icd_druid_change {
    ICD_DRUID_REPLACE = 0, /* some row removed (maybe some added too): rebuild */
    ICD_DRUID_APPEND = 1   /* rows only added */
} icd_druid_change;

/* The intervals of one kind, sorted by start and disjoint; an interval is of one kind. */
ICD_EXTERN size_t icd_druid_diff_count(const icd_druid_diff *d, icd_druid_change kind);
ICD_EXTERN const icd_druid_interval *icd_druid_diff_interval(const icd_druid_diff *d,
                                                             icd_druid_change kind, size_t i);
ICD_EXTERN int64_t icd_druid_diff_from_snapshot(const icd_druid_diff *d);
ICD_EXTERN int64_t icd_druid_diff_to_snapshot(const icd_druid_diff *d);
/* Rows read whose timestamp the spec's timestampSpec cannot parse (not in Druid). */
ICD_EXTERN int64_t icd_druid_diff_rows_unparseable(const icd_druid_diff *d);

/* The diff as one JSON document (what `icedruid diff` prints). */
ICD_EXTERN int icd_druid_diff_write(const icd_druid_diff *d, icd_write_fn fn, void *ctx,
                                    icd_error *err);

/* ---- phase 2: re-ingesting it ---------------------------------------------------------- */

typedef enum icd_druid_statement_kind {
    ICD_DRUID_MSQ = 0,   /* REPLACE statements, one per contiguous range */
    ICD_DRUID_NATIVE = 1 /* one index_parallel task with dropExisting */
} icd_druid_statement_kind;

#define ICD_DRUID_REINGEST_OPTIONS_VERSION 1

typedef struct icd_druid_reingest_options {
    int version; /* ICD_DRUID_REINGEST_OPTIONS_VERSION */
    icd_druid_statement_kind kind;
    /* As icd_druid_rewrite_options: where the materialized files of B are served, or
     * (rows = 1) the NDJSON splits. */
    const char *serve_url;
    const char *auth_user;
    const char *auth_password_env;
    int rows;
    /* Instead of serve_url: stage the materialized files the statements list under this
     * location (a directory or s3://bucket/prefix; `icedruid stage`'s names, so staged
     * files are reused) before they are returned, and list them there. */
    const char *stage_to;
    const char *tmp_dir; /* where files bound for S3 are spooled; NULL: /tmp */
    int replace_only;    /* leave the append-only intervals out */
    int project;         /* icd_druid_plan_options.project */
    int threads;
} icd_druid_reingest_options;

ICD_EXTERN void icd_druid_reingest_options_init(icd_druid_reingest_options *o);

/* Computes the diff A -> B of `diff` and the statements that re-ingest its intervals,
 * reading snapshot B: Druid's iceberg source when no file of B must be materialized; else
 * the user's inputFormat over B's raw files and its materialized files (served or staged),
 * so re-ingested intervals are built like the first ingestion. The cheap refusals come
 * before the diff is computed: a file Druid would read raw where Iceberg reads otherwise
 * (ICD_EINVALID naming it), a stage location that cannot be written. With stage_to the
 * materialized files the statements list are staged before this returns. */
ICD_EXTERN int icd_druid_reingest_build(icd_druid_reingest **out, const icd_druid_spec *spec,
                                        icd_storage *storage, const icd_druid_diff_options *diff,
                                        const icd_druid_reingest_options *o, icd_error *err);
ICD_EXTERN void icd_druid_reingest_free(icd_druid_reingest *r);

/* The statements (MSQ: one per line, each ending in ';'; native: the task JSON), as
 * `icedruid diff --emit` prints them. */
ICD_EXTERN int icd_druid_reingest_write(const icd_druid_reingest *r, icd_write_fn fn, void *ctx,
                                        icd_error *err);
/* How many statements (or tasks) there are; 0 when nothing is to be re-ingested. */
ICD_EXTERN size_t icd_druid_reingest_count(const icd_druid_reingest *r);
/* The diff the statements re-ingest (owned by the re-ingestion). */
ICD_EXTERN const icd_druid_diff *icd_druid_reingest_diff(const icd_druid_reingest *r);

typedef struct icd_druid_stage_info {
    const char *location; /* the stage location (owned by the re-ingestion) */
    size_t staged_files;  /* materialized files the statements read from it */
    size_t written_files; /* written by this call */
    size_t skipped_files; /* already there */
} icd_druid_stage_info;

/* 1 and *out filled when files were staged (stage_to), else 0. */
ICD_EXTERN int icd_druid_reingest_stage_info(const icd_druid_reingest *r,
                                             icd_druid_stage_info *out);

/* ---- serving ------------------------------------------------------------------------------ */

/* One request served (for an access log). */
typedef struct icd_druid_access {
    const char *method;
    const char *path;   /* the request target, control and non-ASCII bytes escaped (\xHH) */
    const char *client; /* "ADDR:PORT" of the peer */
    int64_t time_ms;    /* the request's end, Unix milliseconds */
    int status;
    uint64_t bytes; /* body bytes sent */
    double seconds; /* from the request's arrival to its end */
    int completed;  /* 0: the client went away, the stream failed, or shutdown */
} icd_druid_access;

#define ICD_DRUID_SERVER_OPTIONS_VERSION 1

typedef struct icd_druid_server_options {
    int version;            /* ICD_DRUID_SERVER_OPTIONS_VERSION */
    const char *listen;     /* "HOST:PORT" ("PORT" 0: any free port); NULL: 127.0.0.1:0 */
    int allow_remote;       /* listen on addresses other than loopback */
    const char *public_url; /* the base URL Druid reaches the server at; NULL: the listen one */
    /* Basic auth the server asks for (both or neither), and the environment variable that
     * holds the same password on the Druid side (written into the served spec). */
    const char *auth_user;
    const char *auth_password;
    const char *auth_password_env;
    /* 0: the materialized files by content address at /files/... (regenerated into
     * cache_dir on demand); 1: every split's rows as NDJSON at /splits/N. A table whose
     * files to materialize are ORC is served as splits either way. */
    int rows;
    const char *cache_dir;           /* files mode; required */
    uint64_t cache_max_bytes;        /* 0: 10 GiB */
    int metadata_max_age_ms;         /* how old the snapshot list may be; < 0: 5000 */
    size_t stream_memory;            /* decode memory of one stream; 0: whole column chunks */
    size_t decode_memory;            /* rows mode: over all streams; 0: no bound */
    unsigned threads;                /* 0: 4 */
    unsigned max_streams;            /* splits produced at once; 0: 64 */
    unsigned producers;              /* decoding threads; 0: the server's default */
    unsigned max_connections;        /* 0: 1000 */
    unsigned max_connections_per_ip; /* 0: 64 */
    unsigned header_timeout_s, idle_timeout_s, queue_timeout_s; /* 0: the defaults */
    size_t stream_buffer_bytes;                  /* rows buffered per stream; 0: 1 MiB */
    size_t buffer_bytes;                         /* over all streams; 0: 64 MiB */
    void (*on_log)(void *ctx, const char *line); /* errors and events, from any thread */
    void (*on_access)(void *ctx, const icd_druid_access *rec); /* may be NULL */
    void *ctx;
} icd_druid_server_options;

ICD_EXTERN void icd_druid_server_options_init(icd_druid_server_options *o);

/* Decides the plan (not streamed) file by file and serves it until icd_druid_server_stop.
 * The plan and storage must outlive the server. */
ICD_EXTERN int icd_druid_server_start(icd_druid_server **out, icd_druid_plan *p,
                                      icd_storage *storage, const icd_druid_server_options *o,
                                      icd_error *err);
ICD_EXTERN const char *icd_druid_server_url(const icd_druid_server *s);
/* 1 when it serves files, 0 when NDJSON splits. */
ICD_EXTERN int icd_druid_server_serves_files(const icd_druid_server *s);
/* The materialized files (files mode) or the splits (rows mode) it serves. */
ICD_EXTERN size_t icd_druid_server_count(const icd_druid_server *s);
/* The ORC data files that made a files-mode server serve splits (0: none). */
ICD_EXTERN size_t icd_druid_server_orc_files(const icd_druid_server *s);
/* Stops accepting and waits up to timeout_s for the streams in flight; returns how many
 * were cut. */
ICD_EXTERN unsigned icd_druid_server_drain(icd_druid_server *s, unsigned timeout_s);
ICD_EXTERN unsigned icd_druid_server_streams_in_flight(icd_druid_server *s);
/* Stops the server (cutting what is left) and frees it. */
ICD_EXTERN void icd_druid_server_stop(icd_druid_server *s);

/* ---- phase 2: keeping a data source in step (sync) ------------------------------------- */

/* Opens the state file at `path` (a missing file is an empty state) and takes its lock (an
 * exclusive lock on "<path>.lock", held until icd_druid_state_close), so that runs on one
 * state are serialised. When another process holds the lock: ICD_EIO and *busy = 1. */
ICD_EXTERN int icd_druid_state_open(icd_druid_state **out, const char *path, int *busy,
                                    icd_error *err);
ICD_EXTERN void icd_druid_state_close(icd_druid_state *st);
/* 1 and the recorded snapshot (and "namespace.table", owned by the state; may be NULL)
 * when the data source has an entry, else 0. */
ICD_EXTERN int icd_druid_state_lookup(const icd_druid_state *st, const char *data_source,
                                      int64_t *snapshot_id, const char **table);

/* Records `snapshot_id` of the spec's table as ingested into the spec's data source,
 * without submitting anything (a data source ingested by other means): the snapshot must
 * exist. The state file is written at once (atomically). */
ICD_EXTERN int icd_druid_state_set_baseline(icd_druid_state *st, const icd_druid_spec *spec,
                                            icd_storage *storage, int64_t snapshot_id,
                                            icd_error *err);

#define ICD_DRUID_SYNC_OPTIONS_VERSION 1

typedef struct icd_druid_sync_options {
    int version;                   /* ICD_DRUID_SYNC_OPTIONS_VERSION */
    icd_druid_statement_kind kind; /* the statements (a native spec is synced natively) */
    /* As icd_druid_reingest_options (where materialized files are served, NDJSON rows). */
    const char *serve_url;
    const char *auth_user;
    const char *auth_password_env;
    int rows;
    int replace_only;
    int project;
    int threads;
    /* Entries added to the MSQ query context / native task context (a JSON object), or
     * NULL. */
    const char *context_json;
    int full; /* ignore the state: a full ingestion (REPLACE ... OVERWRITE ALL) */
    /* The caller serves snapshot C's files itself at a URL it learns only later: prepare
     * stops before the statements are built; call icd_druid_sync_emit with that URL. */
    int serve_later;
} icd_druid_sync_options;

ICD_EXTERN void icd_druid_sync_options_init(icd_druid_sync_options *o);

typedef enum icd_druid_sync_status {
    ICD_DRUID_SYNC_NO_SNAPSHOT = 0, /* the table has no snapshot yet: nothing to ingest */
    ICD_DRUID_SYNC_UP_TO_DATE = 1,  /* the recorded snapshot is the current one */
    ICD_DRUID_SYNC_FULL = 2,        /* no entry (or full): ingest the whole snapshot */
    ICD_DRUID_SYNC_CHANGES = 3      /* re-ingest the intervals the diff found */
} icd_druid_sync_status;

typedef struct icd_druid_sync_info {
    icd_druid_sync_status status;
    const char *data_source; /* owned by the run */
    const char *table;       /* "namespace.table" */
    int has_from;
    int64_t from_snapshot; /* A, the recorded snapshot (has_from) */
    int64_t to_snapshot;   /* C, the current one */
    size_t submissions;    /* statements or tasks to submit */
    size_t ranges;         /* merged time ranges they cover (0 when full) */
    int rows_from_serve;   /* they read NDJSON splits from `icedruid serve` */
    int needs_server;      /* serve_later: C has files the caller must serve */
} icd_druid_sync_info;

/* Plans the current snapshot C of the spec's table, looks up the recorded snapshot A of
 * the spec's dataSource in `st`, diffs A -> C and builds the statements. */
ICD_EXTERN int icd_druid_sync_prepare(icd_druid_sync **out, const icd_druid_spec *spec,
                                      icd_storage *storage, const icd_druid_state *st,
                                      const icd_druid_sync_options *o, icd_error *err);
ICD_EXTERN void icd_druid_sync_free(icd_druid_sync *j);
ICD_EXTERN void icd_druid_sync_get_info(const icd_druid_sync *j, icd_druid_sync_info *out);
/* The diff A -> C (NULL for a full ingestion or when there is nothing to do). */
ICD_EXTERN const icd_druid_diff *icd_druid_sync_diff(const icd_druid_sync *j);
/* The plan of snapshot C (owned by the run; NULL when there is nothing to do or the run
 * failed): serve_later callers serve it (icd_druid_server_start) before emitting. */
ICD_EXTERN icd_druid_plan *icd_druid_sync_plan(icd_druid_sync *j);
/* serve_later: builds the statements reading C's files from `serve_url`. On failure only
 * icd_druid_sync_free may be called on the run. */
ICD_EXTERN int icd_druid_sync_emit(icd_druid_sync *j, const char *serve_url, icd_error *err);
/* The statements, as icd_druid_reingest_write writes them. */
ICD_EXTERN int icd_druid_sync_write(const icd_druid_sync *j, icd_write_fn fn, void *ctx,
                                    icd_error *err);

/* A Druid cluster: the Router (or Overlord/Broker) that takes MSQ statements
 * (/druid/v2/sql/task) and native tasks (/druid/indexer/v1/task). */
#define ICD_DRUID_CLIENT_VERSION 1

typedef struct icd_druid_client {
    int version;          /* ICD_DRUID_CLIENT_VERSION */
    const char *url;      /* e.g. http://localhost:8888 */
    const char *user;     /* basic auth, or NULL */
    const char *password; /* with user */
    const char *ca_file;  /* CA bundle for https; NULL: the system's */
    int max_attempts;     /* tries on connection errors, 429 and 5xx; 0: 3 */
    long base_delay_ms;   /* the first retry's delay, doubling; 0: 500 */
} icd_druid_client;

ICD_EXTERN void icd_druid_client_init(icd_druid_client *c);

/* Submits statement `i` (0 <= i < submissions) of the run; *task_id (icd_string_free)
 * gets the id Druid gave the task. */
ICD_EXTERN int icd_druid_sync_submit(const icd_druid_sync *j, const icd_druid_client *c, size_t i,
                                     char **task_id, icd_error *err);
/* Asks Druid for a task's status: *done = 1 when it succeeded, 0 while it runs; a failed
 * task is an error saying why. */
ICD_EXTERN int icd_druid_task_status(const icd_druid_client *c, const char *task_id, int *done,
                                     icd_error *err);
/* Records C as ingested (with the tasks that did it) and writes the state file
 * atomically. Call it only once Druid accepted (or finished) every submission: a run
 * stopped before leaves A recorded, and the next run re-ingests a superset of the same
 * intervals, which is safe (a REPLACE of an interval from a snapshot is idempotent). */
ICD_EXTERN int icd_druid_sync_record(const icd_druid_sync *j, icd_druid_state *st,
                                     const char *const *task_ids, size_t n, icd_error *err);

#ifdef __cplusplus
}
#endif
#endif
