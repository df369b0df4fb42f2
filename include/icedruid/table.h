/*
 * Opening an Iceberg table.
 *
 *   icd_storage  how locations are read: --remap rules (a table written on another cluster
 *                and copied here), S3 settings. One storage may serve several tables; it
 *                must outlive every table opened with it.
 *   icd_table    one table's metadata (the metadata file the location resolved to).
 *
 * A table location is a directory in the Hadoop layout (metadata/vN.metadata.json, with or
 * without metadata/version-hint.text) or a *.metadata.json file; local paths, file:,
 * s3://, s3a://, http:// and https:// locations are read.
 *
 * Thread safety: a table is immutable once opened and may be read from several threads
 * (by several scans at once). A storage may be shared by threads once configured (add
 * remaps and settings before opening tables).
 */
#ifndef ICEDRUID_TABLE_H
#define ICEDRUID_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "icedruid/common.h"
#include "icedruid/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct icd_storage icd_storage;
typedef struct icd_table icd_table;

/* A new storage. It reads no environment variables: give it a snapshot with
 * icd_storage_set_environment for the AWS default credential chain and the AWS_* S3
 * settings, and/or explicit settings with icd_storage_set_s3 (which win). */
ICD_EXTERN int icd_storage_new(icd_storage **out, icd_error *err);
ICD_EXTERN void icd_storage_free(icd_storage *s);

/* An environment snapshot (NULL-terminated "NAME=value" strings, copied; e.g. `environ`):
 * the AWS default credential chain (environment keys, web identity, shared config and
 * credentials files with AWS_PROFILE, ECS container credentials, EC2 IMDSv2; temporary
 * credentials refreshed before expiry) and AWS_REGION, AWS_DEFAULT_REGION,
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL are taken from it. */
ICD_EXTERN int icd_storage_set_environment(icd_storage *s, const char *const *envp, icd_error *err);

/* Locations starting with `from` are read under `to` instead (the longest matching prefix
 * wins). ICD_EINVALID for an empty `from`. */
ICD_EXTERN int icd_storage_add_remap(icd_storage *s, const char *from, const char *to,
                                     icd_error *err);

/* S3 settings (the library reads no AWS_* variables itself): any argument may be NULL to
 * leave that setting unset. `endpoint` is a URL such as http://127.0.0.1:9000 (path-style
 * requests are used with an endpoint). */
ICD_EXTERN int icd_storage_set_s3(icd_storage *s, const char *access_key_id,
                                  const char *secret_access_key, const char *session_token,
                                  const char *region, const char *endpoint, icd_error *err);

/* Called before each retry of a remote request, from the thread doing the request (any
 * thread; calls may overlap when several threads read): the location read (it may hold a
 * URL's userinfo as the table or remap wrote it: pass what you print through
 * icd_redact_userinfo), the attempt that failed (1 for the first), the attempts allowed,
 * the delay before the next attempt in milliseconds and why it failed ("HTTP 503", a
 * connection error). It must not call back into the storage. */
typedef void (*icd_retry_fn)(void *ctx, const char *location, int attempt, int max_attempts,
                             long delay_ms, const char *reason);

#define ICD_STORAGE_REMOTE_OPTIONS_VERSION 1

/* Retries and timeouts of remote reads (HTTP, S3, REST/Glue catalogs). Retried:
 * connection errors, timeouts, HTTP 429 and 5xx; the delay starts at base_delay_ms and
 * doubles, capped at max_delay_ms. icd_storage_remote_options_init gives the defaults
 * below, icd_storage_get_remote_options a storage's current settings. */
typedef struct icd_storage_remote_options {
    int version;             /* ICD_STORAGE_REMOTE_OPTIONS_VERSION */
    int max_attempts;        /* tries of one request, >= 1 (1: no retry); default 4 */
    long base_delay_ms;      /* delay before the first retry, >= 0; default 200 */
    long max_delay_ms;       /* cap of the doubled delay, >= 0; default 5000 */
    long connect_timeout_ms; /* connecting to the server, > 0; default 10000 */
    long stall_timeout_s;    /* an attempt slower than 1 byte/s for this long is cut (and
                              * retried), >= 0 (0: never); default 30 */
    long total_timeout_s;    /* one whole attempt, >= 0 (0: no limit, the default) */
    /* The deadline of one attempt: deadline_seconds plus the bytes asked for at
     * deadline_min_rate bytes/s, so that a trickling server cannot keep a read alive for
     * ever. Defaults 30 s and 65536 B/s; deadline_seconds <= 0: no deadline;
     * deadline_min_rate must be > 0. */
    double deadline_seconds;
    long deadline_min_rate;
    icd_retry_fn on_retry; /* may be NULL (the default): retries are silent */
    void *on_retry_ctx;
} icd_storage_remote_options;

/* The defaults above (the settings of a new storage). */
ICD_EXTERN void icd_storage_remote_options_init(icd_storage_remote_options *o);
/* The storage's current settings (o->version is set). */
ICD_EXTERN void icd_storage_get_remote_options(const icd_storage *s, icd_storage_remote_options *o);
/* Replaces the storage's settings with `o` (all of its fields: start from
 * icd_storage_remote_options_init or icd_storage_get_remote_options). ICD_EINVALID, the
 * storage unchanged, for an unknown version or a value out of range. Set them before
 * opening tables: requests already running keep the settings they started with. (The
 * icedruid command sets them from --retries, --connect-timeout, --request-timeout,
 * --stall-timeout, ICEDRUID_HTTP_TIMEOUT and ICEDRUID_HTTP_MIN_RATE.) */
ICD_EXTERN int icd_storage_set_remote_options(icd_storage *s, const icd_storage_remote_options *o,
                                              icd_error *err);

/* Only the deadline of the remote options (deadline_seconds = base_seconds; min_rate <= 0
 * keeps the current rate); the other settings are kept. */
ICD_EXTERN int icd_storage_set_http_deadline(icd_storage *s, double base_seconds, long min_rate,
                                             icd_error *err);

/* A delete file whose size differs from the size its manifest entry records (a file
 * truncated or replaced: a smaller valid file in its place would bring deleted rows back)
 * fails the read (warn = 0, the default); with warn != 0 it is read, with a warning (to
 * the icd_set_warn_handler handler), when its record count and bounds agree with the entry
 * (tables whose manifests were edited by hand). Data files are checked by their row count
 * only. (The icedruid command sets it from ICEDRUID_SIZE_MISMATCH=warn.) Set it before
 * opening tables. */
ICD_EXTERN void icd_storage_set_size_mismatch_warn(icd_storage *s, int warn);

/* Reads done through a storage so far (metadata, manifests, data and delete files). */
typedef struct icd_storage_stats {
    uint64_t remote_requests; /* HTTP and S3 requests sent, retries included */
    uint64_t remote_bytes;    /* response bytes they brought */
    uint64_t local_reads;     /* reads of local files */
    uint64_t local_bytes;     /* bytes those reads returned */
} icd_storage_stats;

ICD_EXTERN void icd_storage_get_stats(const icd_storage *s, icd_storage_stats *out);

/* Opens the table at `location` (see above). ICD_ENOTFOUND when it holds no table. */
ICD_EXTERN int icd_table_open(icd_table **out, icd_storage *storage, const char *location,
                              icd_error *err);

/* Opens NAMESPACE.TABLE through a Druid icebergCatalog given as JSON
 * ({"type": "local"|"rest"|"hive"|"glue", ...}: the object Druid's iceberg input source
 * takes). Catalog-vended storage settings go to `storage`. */
ICD_EXTERN int icd_table_open_catalog(icd_table **out, icd_storage *storage,
                                      const char *catalog_json, const char *ns, const char *name,
                                      icd_error *err);

ICD_EXTERN void icd_table_free(icd_table *t);

/* Parses a point in time as Iceberg's timestamp literals are written
 * ("2024-06-01T12:00:00Z", "2024-06-01T14:00:00.250+02:00"; no offset: UTC) into epoch
 * milliseconds, e.g. for icd_scan_options' as_of_ms. ICD_EINVALID for anything else. */
ICD_EXTERN int icd_timestamp_parse(const char *text, int64_t *epoch_ms, icd_error *err);

/* The metadata file the table was read from. */
ICD_EXTERN const char *icd_table_metadata_location(const icd_table *t);
/* The table's location (the metadata's "location", as written: before any remap). */
ICD_EXTERN const char *icd_table_location(const icd_table *t);
/* The table format version (1, 2 or 3). */
ICD_EXTERN int icd_table_format_version(const icd_table *t);
/* The current snapshot's id; ICD_ENOTFOUND for a table without snapshots. */
ICD_EXTERN int icd_table_current_snapshot(const icd_table *t, int64_t *snapshot_id, icd_error *err);

#ifdef __cplusplus
}
#endif
#endif
