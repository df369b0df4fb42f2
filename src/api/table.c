/*
 * The public table API (include/icedruid/table.h): icd_storage wraps the internal FileIO
 * (io/fileio.h: remaps, S3 settings), icd_table one table's metadata, loaded through the
 * Hadoop-layout resolution (catalog/local.c) or a Druid icebergCatalog
 * (druid/plan/catalog_load.c). This file only adapts; it holds no reading logic of its own.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/api.h"
#include "catalog/local.h"
#include "druid/plan/catalog_load.h"
#include "druid/spec/spec.h"
#include "iceberg/literal.h"
#include "io/http.h"
#include "io/s3.h"

int icd_storage_new(icd_storage **out, icd_error *err)
{
    *out = NULL;
    icd_storage *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    int rc = icd_fileio_new(&s->io, err);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void icd_storage_free(icd_storage *s)
{
    if (!s) return;
    icd_fileio_free(s->io);
    free(s);
}

int icd_storage_set_environment(icd_storage *s, const char *const *envp, icd_error *err)
{
    return icd_fileio_set_environment(s->io, envp, err);
}

void icd_storage_set_size_mismatch_warn(icd_storage *s, int warn)
{
    if (s) icd_fileio_set_size_mismatch_warns(s->io, warn != 0);
}

int icd_storage_add_remap(icd_storage *s, const char *from, const char *to, icd_error *err)
{
    if (!s || !from || !to || !from[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a remap needs a non-empty FROM and a TO");
    return icd_fileio_add_remap(s->io, from, to, err);
}

int icd_storage_set_s3(icd_storage *s, const char *access_key_id, const char *secret_access_key,
                       const char *session_token, const char *region, const char *endpoint,
                       icd_error *err)
{
    if (!s) return icd_fail(err, ICD_EINVALID, NULL, -1, "no storage");
    icd_s3_options o = {access_key_id, secret_access_key, session_token, region, endpoint, -1};
    return icd_fileio_set_s3(s->io, &o, err);
}

void icd_storage_remote_options_init(icd_storage_remote_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_STORAGE_REMOTE_OPTIONS_VERSION;
    o->max_attempts = 4;
    o->base_delay_ms = 200;
    o->max_delay_ms = 5000;
    o->connect_timeout_ms = 10000;
    o->stall_timeout_s = 30;
    o->total_timeout_s = 0;
    o->deadline_seconds = 30;
    o->deadline_min_rate = 65536;
}

void icd_storage_get_remote_options(const icd_storage *s, icd_storage_remote_options *o)
{
    icd_storage_remote_options_init(o);
    icd_remote *r = s ? icd_fileio_remote(s->io) : NULL;
    if (!r) return;
    icd_http_policy p;
    icd_http_get_policy(r, &p);
    o->max_attempts = p.max_attempts;
    o->base_delay_ms = p.base_delay_ms;
    o->max_delay_ms = p.max_delay_ms;
    o->connect_timeout_ms = p.connect_timeout_ms;
    o->stall_timeout_s = p.low_speed_time_s;
    o->total_timeout_s = p.total_timeout_s;
    o->deadline_seconds = (double)p.deadline_base_ms / 1000;
    o->deadline_min_rate = p.deadline_min_rate;
    o->on_retry = p.on_retry;
    o->on_retry_ctx = p.on_retry_ctx;
}

/* The first field of `o` out of range, or NULL. */
static const char *remote_options_bad(const icd_storage_remote_options *o)
{
    if (o->max_attempts < 1) return "max_attempts must be at least 1";
    if (o->base_delay_ms < 0 || o->max_delay_ms < 0) return "retry delays must be >= 0";
    if (o->connect_timeout_ms <= 0) return "connect_timeout_ms must be > 0";
    if (o->stall_timeout_s < 0 || o->total_timeout_s < 0) return "timeouts must be >= 0";
    if (o->deadline_min_rate <= 0) return "deadline_min_rate must be > 0";
    if (!(o->deadline_seconds <= 1e9)) return "deadline_seconds too large"; /* NaN too */
    return NULL;
}

int icd_storage_set_remote_options(icd_storage *s, const icd_storage_remote_options *o,
                                   icd_error *err)
{
    icd_remote *r = s ? icd_fileio_remote(s->io) : NULL;
    if (!r || !o) return icd_fail(err, ICD_EINVALID, NULL, -1, "no storage or no options");
    if (o->version != ICD_STORAGE_REMOTE_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown remote options version %d",
                        o->version);
    const char *bad = remote_options_bad(o);
    if (bad) return icd_fail(err, ICD_EINVALID, NULL, -1, "remote options: %s", bad);
    icd_http_policy p;
    icd_http_get_policy(r, &p); /* keeps what the options do not cover (read-ahead) */
    p.max_attempts = o->max_attempts;
    p.base_delay_ms = o->base_delay_ms;
    p.max_delay_ms = o->max_delay_ms;
    p.connect_timeout_ms = o->connect_timeout_ms;
    p.low_speed_time_s = o->stall_timeout_s;
    p.total_timeout_s = o->total_timeout_s;
    p.deadline_base_ms = o->deadline_seconds > 0 ? (long)(o->deadline_seconds * 1000) : 0;
    p.deadline_min_rate = o->deadline_min_rate;
    p.on_retry = o->on_retry;
    p.on_retry_ctx = o->on_retry_ctx;
    icd_http_set_policy(r, &p);
    return 0;
}

int icd_storage_set_http_deadline(icd_storage *s, double base_seconds, long min_rate,
                                  icd_error *err)
{
    if (!s || !icd_fileio_remote(s->io)) return icd_fail(err, ICD_EINVALID, NULL, -1, "no storage");
    if (base_seconds > 1e9) return icd_fail(err, ICD_EINVALID, NULL, -1, "deadline too large");
    icd_storage_remote_options o;
    icd_storage_get_remote_options(s, &o);
    o.deadline_seconds = base_seconds > 0 ? base_seconds : 0;
    if (min_rate > 0) o.deadline_min_rate = min_rate;
    return icd_storage_set_remote_options(s, &o, err);
}

void icd_storage_get_stats(const icd_storage *s, icd_storage_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!s) return;
    icd_remote *r = icd_fileio_remote(s->io);
    out->remote_requests = r ? icd_remote_requests(r) : 0;
    out->remote_bytes = r ? icd_remote_bytes(r) : 0;
    out->local_reads = icd_fileio_local_reads(s->io);
    out->local_bytes = icd_fileio_local_bytes(s->io);
}

int icd_api_table_new(icd_table **out, icd_storage *storage, ice_metadata *md, icd_error *err)
{
    icd_table *t = calloc(1, sizeof *t);
    if (!t) {
        ice_metadata_free(md);
        return icd_fail_nomem(err);
    }
    t->storage = storage;
    t->md = md;
    *out = t;
    return 0;
}

int icd_table_open(icd_table **out, icd_storage *storage, const char *location, icd_error *err)
{
    *out = NULL;
    if (!storage || !location || !location[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a table needs a storage and a location");
    ice_metadata *md = NULL;
    ICD_TRY(cat_local_load(storage->io, location, &md, err));
    return icd_api_table_new(out, storage, md, err);
}

int icd_table_open_catalog(icd_table **out, icd_storage *storage, const char *catalog_json,
                           const char *ns, const char *name, icd_error *err)
{
    *out = NULL;
    if (!storage || !catalog_json || !ns || !name || !ns[0] || !name[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "a catalog table needs a storage, the catalog JSON, a namespace and "
                        "a table name");
    json_error_t je;
    json_t *catalog = json_loads(catalog_json, 0, &je);
    if (!catalog)
        return icd_fail(err, ICD_EINVALID, NULL, je.position,
                        "the catalog is not valid JSON (line %d, column %d): %s", je.line,
                        je.column, je.text);
    /* The catalog as Druid's iceberg input source, so that the one spec parser checks it. */
    json_t *is =
        json_pack("{s:s, s:s, s:s, s:O, s:{s:s}}", "type", "iceberg", "namespace", ns, "tableName",
                  name, "icebergCatalog", catalog, "warehouseSource", "type", "local");
    json_decref(catalog);
    if (!is) return icd_fail_nomem(err);
    dr_spec *spec = NULL;
    int rc = dr_spec_parse_json(&spec, is, "icebergCatalog", NULL, err);
    json_decref(is);
    ice_metadata *md = NULL;
    if (rc == 0)
        rc = dr_catalog_load(dr_spec_catalog(spec), dr_spec_namespace(spec),
                             dr_spec_table_name(spec), storage->io, &md, err);
    dr_spec_free(spec);
    if (rc) return rc;
    return icd_api_table_new(out, storage, md, err);
}

void icd_table_free(icd_table *t)
{
    if (!t) return;
    ice_metadata_free(t->md);
    free(t);
}

const char *icd_table_metadata_location(const icd_table *t)
{
    return ice_metadata_file(t->md);
}

const char *icd_table_location(const icd_table *t)
{
    return ice_metadata_location(t->md);
}

int icd_table_format_version(const icd_table *t)
{
    return ice_metadata_format_version(t->md);
}

int icd_table_current_snapshot(const icd_table *t, int64_t *snapshot_id, icd_error *err)
{
    const ice_snapshot *snap = ice_metadata_current_snapshot(t->md);
    if (!snap)
        return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(t->md), -1,
                        "the table has no current snapshot");
    *snapshot_id = snap->snapshot_id;
    return 0;
}

int icd_timestamp_parse(const char *text, int64_t *epoch_ms, icd_error *err)
{
    bool zone;
    int64_t ms;
    if (!text || !ice_parse_timestamp(text, strlen(text), 3, &zone, &ms))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "'%s' is not an ISO-8601 timestamp (YYYY-MM-DDTHH:MM[:SS[.fff]][Z|+HH:MM])",
                        text ? text : "");
    *epoch_ms = ms;
    return 0;
}
