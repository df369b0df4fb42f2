/*
 * `icedruid serve`'s file provider (druid/serve/server.h): the materialized files of a plan
 * (stage.h) served by content address, so the spec Druid gets reads raw files through
 * the user's warehouseSource and materialized files over HTTP, both through the user's
 * own inputFormat (rewrite.h).
 *
 *   URL       BASE/files/<table>/<snapshot id>/<name>: <table> the spec's
 *             "namespace.tableName" (percent-encoded), <name> the staged name of
 *             stage.h ("icd-<table hash>-<content hash>.parquet|avro"), whose content hash
 *             covers everything the bytes depend on. The URL does not depend on the
 *             server that planned it: any instance serving the same table answers it.
 *   answer    the cache directory's copy of <name> if it is there; otherwise the
 *             snapshot in the URL is planned (the plan at start-up when it is that
 *             snapshot, else the table's metadata loaded again), the data file whose
 *             staged name is <name> is found and its materialized file written into the
 *             cache (stage.h's writer: deterministic, so a restarted server or another
 *             replica writes the same bytes). 404 when no data file of that snapshot has
 *             that name (also: another icedruid version, whose names differ), 410 when
 *             the snapshot no longer exists in the table (expired) — checked on every
 *             request against a list of the table's snapshots at most
 *             metadata_max_age_ms old — never another file.
 *   cache     bounded: after a file is written, the oldest (by modification time, which
 *             a hit refreshes) of this table's files ("icd-<table hash>-*") are removed
 *             until their total is at most cache_max_bytes; a file being sent stays
 *             readable (open descriptor); other files in the directory are never touched.
 *             Several servers may share one cache directory (atomic renames). Temporary
 *             files of a process killed while writing (".icd-*.tmp") are left behind.
 *
 * /splits stays empty (split_count 0): the NDJSON split path is the plan provider's
 * (plan_provider.h), used for tables whose materialized files would be ORC.
 */
#ifndef ICD_DRUID_SERVE_FILES_H
#define ICD_DRUID_SERVE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "druid/plan/plan.h"
#include "druid/serve/server.h"
#include "io/fileio.h"

typedef struct dr_serve_files dr_serve_files;

typedef struct dr_serve_files_opts {
    const char *cache_dir;       /* created when missing */
    uint64_t cache_max_bytes;    /* 0 -> 10 GiB */
    int metadata_max_age_ms;     /* < 0 -> 5000; 0: the table is loaded on every request */
    const char *auth_user;       /* copied into /spec as httpAuthenticationUsername */
    const json_t *auth_password; /* PasswordProvider for /spec (borrowed), or NULL */
    size_t read_budget; /* compressed column bytes one regeneration holds (0: whole chunks) */
    void (*log)(void *log_ctx, const char *line);
    void *log_ctx;
} dr_serve_files_opts;

/* `plan` (decided: dr_plan_decide) and `io` are borrowed and must outlive the provider.
 * Fails when a materialized file would be ORC (dr_serve_files_orc tells beforehand). */
int dr_serve_files_new(dr_plan *plan, icd_fileio *io, const dr_serve_files_opts *opts,
                       dr_serve_files **out, icd_error *err);
void dr_serve_files_free(dr_serve_files *sf);
void dr_serve_files_get(dr_serve_files *sf, dr_server_provider *out);

/* After dr_plan_decide: the number of materialized tasks whose data file is ORC (no
 * writer); *path names one. */
size_t dr_serve_files_orc(const dr_plan *p, const char **path);

/* Appends BASE/files/<table>/<snapshot>/<name> (see above) for task i of the plan, whose
 * staged name is `name`. */
void dr_serve_files_url(icd_buf *out, const char *base_url, const dr_plan *p, const char *name);

#endif
