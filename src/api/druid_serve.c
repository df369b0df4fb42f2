/*
 * Serving a plan through the public API (icd_druid_server_*): decides the plan, picks the
 * provider (druid/serve/serve_files.h for the materialized files by content address,
 * druid/serve/plan_provider.h for NDJSON splits; ORC files to materialize fall back to
 * splits, there being no ORC writer) and starts the HTTP server (druid/serve/server.h).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/api.h"
#include "druid/plan/plan.h"
#include "druid/serve/plan_provider.h"
#include "druid/serve/serve_files.h"
#include "druid/serve/server.h"
#include "icedruid/druid.h"

struct icd_druid_server {
    dr_plan *plan; /* borrowed */
    json_t *pw;
    dr_serve_files *sf;
    dr_plan_provider *pp;
    dr_server *srv;
    size_t orc_files;
    void (*on_log)(void *ctx, const char *line);
    void (*on_access)(void *ctx, const icd_druid_access *rec);
    void *ctx;
};

void icd_druid_server_options_init(icd_druid_server_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_SERVER_OPTIONS_VERSION;
    o->metadata_max_age_ms = -1;
}

/* The server's two callbacks share one context: this server, which holds the caller's. */
static void on_log(void *ctx, const char *line)
{
    icd_druid_server *s = ctx;
    s->on_log(s->ctx, line);
}

static void on_access(void *ctx, const dr_server_access *r)
{
    icd_druid_server *s = ctx;
    icd_druid_access a = {r->method, r->path,  r->client,  r->time_ms,
                          r->status, r->bytes, r->seconds, r->completed};
    s->on_access(s->ctx, &a);
}

/* Files mode unless rows were asked for or an ORC file must be materialized. */
static int decide(icd_druid_server *s, const icd_druid_server_options *o, bool *files,
                  icd_error *err)
{
    *files = !o->rows;
    if (!*files) return dr_plan_decide_rows(s->plan, err);
    ICD_TRY(dr_plan_decide(s->plan, err));
    const char *orc = NULL;
    s->orc_files = dr_serve_files_orc(s->plan, &orc);
    if (s->orc_files) {
        *files = false;
        return dr_plan_decide_rows(s->plan, err);
    }
    return 0;
}

static int provider(icd_druid_server *s, const icd_druid_server_options *o, icd_fileio *io,
                    bool files, dr_server_provider *p, icd_error *err)
{
    size_t budget = o->stream_memory / 8; /* the compressed bytes read ahead */
    if (files) {
        if (!o->cache_dir || !o->cache_dir[0])
            return icd_fail(err, ICD_EINVALID, NULL, -1, "serving files needs a cache directory");
        dr_serve_files_opts fo = {.cache_dir = o->cache_dir,
                                  .cache_max_bytes = o->cache_max_bytes,
                                  .metadata_max_age_ms = o->metadata_max_age_ms,
                                  .auth_user = o->auth_user,
                                  .auth_password = s->pw,
                                  .read_budget = budget,
                                  .log = o->on_log,
                                  .log_ctx = o->ctx};
        ICD_TRY(dr_serve_files_new(s->plan, io, &fo, &s->sf, err));
        dr_serve_files_get(s->sf, p);
        return 0;
    }
    /* one chunk queued in the provider: the server buffers ahead (stream_buffer_bytes) */
    dr_plan_provider_opts po = {.auth_user = o->auth_user,
                                .auth_password = s->pw,
                                .queue_chunks = 1,
                                .read_budget = budget,
                                .decode_memory = o->decode_memory,
                                .stream_memory = o->stream_memory,
                                .log = o->on_log,
                                .log_ctx = o->ctx};
    ICD_TRY(dr_plan_provider_new(s->plan, io, &po, &s->pp, err));
    dr_plan_provider_get(s->pp, p);
    return 0;
}

int icd_druid_server_start(icd_druid_server **out, icd_druid_plan *p, icd_storage *storage,
                           const icd_druid_server_options *o, icd_error *err)
{
    *out = NULL;
    if (!p || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no plan or storage");
    if (!o || o->version != ICD_DRUID_SERVER_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown server options version");
    if (!dr_plan_scan(p->plan))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a streamed plan cannot be served");
    if (!!o->auth_user != !!o->auth_password)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "auth_user and auth_password go together");
    icd_druid_server *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->plan = p->plan;
    s->on_log = o->on_log;
    s->on_access = o->on_access;
    s->ctx = o->ctx;
    int rc = icd_api_password_provider(o->auth_password_env, &s->pw, err);
    bool files = false;
    dr_server_provider prov;
    if (!rc) rc = decide(s, o, &files, err);
    if (!rc) rc = provider(s, o, storage->io, files, &prov, err);
    if (!rc) {
        dr_server_config cfg = {0};
        cfg.listen = o->listen;
        cfg.allow_remote = o->allow_remote;
        cfg.threads = o->threads;
        cfg.auth_user = o->auth_user;
        cfg.auth_password = o->auth_password;
        cfg.public_url = o->public_url;
        cfg.max_streams = o->max_streams;
        cfg.producers = o->producers;
        cfg.queue_timeout_s = o->queue_timeout_s;
        cfg.idle_timeout_s = o->idle_timeout_s;
        cfg.header_timeout_s = o->header_timeout_s;
        cfg.max_connections = o->max_connections;
        cfg.max_connections_per_ip = o->max_connections_per_ip;
        cfg.stream_buffer_bytes = o->stream_buffer_bytes;
        cfg.buffer_bytes = o->buffer_bytes;
        cfg.on_error = o->on_log ? on_log : NULL;
        cfg.on_access = o->on_access ? on_access : NULL;
        cfg.log_ctx = s;
        rc = dr_server_start(&cfg, &prov, &s->srv, err) < 0 ? (err->code ? err->code : -1) : 0;
    }
    if (rc) {
        icd_druid_server_stop(s);
        return rc;
    }
    *out = s;
    return 0;
}

const char *icd_druid_server_url(const icd_druid_server *s)
{
    return dr_server_base_url(s->srv);
}

int icd_druid_server_serves_files(const icd_druid_server *s)
{
    return s->sf != NULL;
}

size_t icd_druid_server_count(const icd_druid_server *s)
{
    return s->sf ? dr_plan_materialized_count(s->plan) : dr_plan_split_count(s->plan);
}

size_t icd_druid_server_orc_files(const icd_druid_server *s)
{
    return s->orc_files;
}

unsigned icd_druid_server_drain(icd_druid_server *s, unsigned timeout_s)
{
    return dr_server_drain(s->srv, timeout_s);
}

unsigned icd_druid_server_streams_in_flight(icd_druid_server *s)
{
    return dr_server_streams_in_flight(s->srv);
}

void icd_druid_server_stop(icd_druid_server *s)
{
    if (!s) return;
    dr_server_stop(s->srv); /* before the providers it calls */
    dr_serve_files_free(s->sf);
    dr_plan_provider_free(s->pp);
    json_decref(s->pw);
    free(s);
}
