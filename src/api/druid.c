/*
 * The public Druid API (include/icedruid/druid.h) over the druid/ stages: the spec parser
 * (druid/spec), the plan and the rewritten spec (druid/plan), the diff and the
 * re-ingestion statements (druid/phase2), staging (druid/stage). This file adapts and
 * orders those calls; the rules live in the stages.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/api.h"
#include "base/buf.h"
#include "base/jsonw.h"
#include "druid/phase2/diff.h"
#include "druid/phase2/emit.h"
#include "druid/phase2/sync.h"
#include "druid/plan/catalog_load.h"
#include "druid/plan/plan.h"
#include "druid/plan/rewrite.h"
#include "druid/serve/serve_files.h"
#include "druid/spec/period.h"
#include "druid/spec/spec.h"
#include "druid/rows/timestamp.h"
#include "druid/rows/tzrules.h"
#include "druid/spec/spec_columns.h"
#include "druid/stage/stage.h"
#include "iceberg/scan_plan.h"
#include "icedruid/druid.h"

struct icd_druid_diff {
    dr_diff diff;
    icd_druid_interval *replace, *append; /* the public copies */
};

struct icd_druid_reingest {
    icd_druid_diff diff;
    dr_emit_list list;
    bool staged;
    char *stage_location;
    dr_stage_stats stage_stats;
};

void icd_string_free(char *s)
{
    free(s);
}

/* ---- writing through an icd_write_fn ---------------------------------------------------- */

typedef struct write_to {
    icd_write_fn fn;
    void *ctx;
    int rc;
    icd_error err;
} write_to;

static bool write_sink(void *ctx, const char *p, size_t n)
{
    write_to *w = ctx;
    icd_error_clear(&w->err);
    w->rc = w->fn(w->ctx, p, n, &w->err);
    if (w->rc && !w->err.code) icd_fail(&w->err, w->rc, NULL, -1, "the output was refused");
    return w->rc == 0;
}

/* The caller's own failure wins over the writer's generic one. */
static int write_result(const write_to *w, int rc, icd_error *err)
{
    if (w->rc) {
        if (err) *err = w->err;
        return w->rc;
    }
    return rc;
}

static int write_buf(icd_buf *b, icd_write_fn fn, void *ctx, icd_error *err)
{
    if (b->oom) return icd_fail_nomem(err);
    write_to w = {fn, ctx, 0, {0}};
    if (b->len && !write_sink(&w, b->data, b->len)) return write_result(&w, ICD_EIO, err);
    return 0;
}

/* ---- the spec ---------------------------------------------------------------------------- */

static icd_druid_spec *spec_of(dr_spec *s)
{
    return (icd_druid_spec *)s;
}

static const dr_spec *dr_of(const icd_druid_spec *s)
{
    return (const dr_spec *)s;
}

int icd_druid_spec_parse(icd_druid_spec **out, const char *json, size_t len, const char *origin,
                         icd_error *err)
{
    *out = NULL;
    if (!json) return icd_fail(err, ICD_EINVALID, origin, -1, "no spec text");
    dr_spec *s = NULL;
    ICD_TRY(dr_spec_parse(&s, json, len, origin, NULL, err));
    *out = spec_of(s);
    return 0;
}

int icd_druid_spec_load(icd_druid_spec **out, const char *path, icd_error *err)
{
    *out = NULL;
    if (!path || !path[0]) return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec file");
    dr_spec *s = NULL;
    if (dr_spec_load(&s, path, NULL, err)) {
        icd_error_set_file(err, path);
        return err->code ? err->code : ICD_EINVALID;
    }
    *out = spec_of(s);
    return 0;
}

void icd_druid_spec_free(icd_druid_spec *s)
{
    dr_spec_free((dr_spec *)s);
}

const char *icd_druid_spec_data_source(const icd_druid_spec *s)
{
    return dr_spec_data_source(dr_of(s));
}

const char *icd_druid_spec_namespace(const icd_druid_spec *s)
{
    return dr_spec_namespace(dr_of(s));
}

const char *icd_druid_spec_table_name(const icd_druid_spec *s)
{
    return dr_spec_table_name(dr_of(s));
}

int icd_druid_spec_case_sensitive(const icd_druid_spec *s)
{
    return dr_spec_case_sensitive(dr_of(s)) ? 1 : 0;
}

int icd_druid_spec_parse_catalog(icd_druid_spec **out, const char *json, size_t len,
                                 const char *origin, const char *table, icd_error *err)
{
    *out = NULL;
    if (!json) return icd_fail(err, ICD_EINVALID, origin, -1, "no catalog text");
    dr_spec *s = NULL;
    ICD_TRY(dr_catalog_file_parse(json, len, origin, table, &s, err));
    *out = spec_of(s);
    return 0;
}

int icd_druid_spec_open_table(icd_table **out, const icd_druid_spec *spec, icd_storage *storage,
                              icd_error *err)
{
    *out = NULL;
    if (!spec || !storage)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "opening a spec's table needs a storage");
    const dr_spec *s = dr_of(spec);
    ice_metadata *md = NULL;
    ICD_TRY(dr_catalog_load(dr_spec_catalog(s), dr_spec_namespace(s), dr_spec_table_name(s),
                            storage->io, &md, err));
    return icd_api_table_new(out, storage, md, err);
}

void icd_druid_set_tz_dir(const char *dir)
{
    dr_tz_set_dir(dir);
}

/* ---- the plan ---------------------------------------------------------------------------- */

void icd_druid_plan_options_init(icd_druid_plan_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_PLAN_OPTIONS_VERSION;
    o->threads = 1;
}

static int plan_opts(const icd_druid_plan_options *o, dr_plan_opts *po, icd_error *err)
{
    icd_druid_plan_options d;
    if (!o) {
        icd_druid_plan_options_init(&d);
        o = &d;
    }
    if (o->version != ICD_DRUID_PLAN_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown plan options version %d", o->version);
    *po = (dr_plan_opts){o->threads, o->original_locations != 0, o->project != 0, o->stream != 0};
    return 0;
}

int icd_druid_plan_open(icd_druid_plan **out, const icd_druid_spec *spec, icd_storage *storage,
                        const icd_druid_plan_options *o, icd_error *err)
{
    *out = NULL;
    if (!spec || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec or storage");
    dr_plan_opts po;
    ICD_TRY(plan_opts(o, &po, err));
    icd_druid_plan *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->spec = dr_of(spec);
    if (dr_plan_build(p->spec, storage->io, &po, &p->plan, err)) {
        free(p);
        return err->code ? err->code : ICD_EINTERNAL;
    }
    *out = p;
    return 0;
}

void icd_druid_plan_free(icd_druid_plan *p)
{
    if (!p) return;
    dr_plan_free(p->plan);
    free(p);
}

int icd_druid_plan_is_v2(const icd_druid_plan *p)
{
    return dr_plan_is_v2(p->plan);
}

size_t icd_druid_plan_file_count(const icd_druid_plan *p)
{
    const ice_scan_plan *sp = dr_plan_scan(p->plan);
    return sp ? ice_scan_plan_task_count(sp) : 0;
}

int icd_druid_plan_residual(const icd_druid_plan *p, const char **text)
{
    const char *t = NULL;
    bool r = dr_plan_residual(p->plan, &t);
    if (text) *text = r ? t : NULL;
    return r;
}

int icd_druid_plan_warns_residual(const icd_druid_plan *p)
{
    return dr_spec_residual_mode(p->spec) == DR_RESIDUAL_WARN;
}

int icd_druid_plan_write(icd_druid_plan *p, icd_write_fn fn, void *ctx, icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no writer");
    write_to w = {fn, ctx, 0, {0}};
    icd_jsonw out;
    icd_jsonw_init(&out, write_sink, &w);
    int rc = dr_plan_write(p->plan, &out, err);
    icd_error ferr;
    icd_error_clear(&ferr);
    int frc = icd_jsonw_finish(&out, &ferr);
    if (rc) return write_result(&w, rc, NULL);
    if (frc) {
        *err = ferr;
        return write_result(&w, frc, err);
    }
    return 0;
}

int icd_druid_plan_split(char **out, const icd_druid_plan *p, size_t i, icd_error *err)
{
    *out = NULL;
    if (!dr_plan_scan(p->plan) || !dr_plan_is_v2(p->plan) || i >= dr_plan_split_count(p->plan))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "the plan has no split %zu", i);
    icd_buf b = ICD_BUF_INIT;
    int rc = dr_plan_split_json(p->plan, i, &b, err);
    if (!rc && !(*out = icd_buf_detach(&b))) rc = icd_fail_nomem(err);
    icd_buf_free(&b);
    return rc;
}

/* ---- the spec to submit ------------------------------------------------------------------ */

void icd_druid_rewrite_options_init(icd_druid_rewrite_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_REWRITE_OPTIONS_VERSION;
}

int icd_api_password_provider(const char *var, json_t **out, icd_error *err)
{
    *out = NULL;
    if (!var) return 0;
    *out = json_pack("{s:s,s:s}", "type", "environment", "variable", var);
    return *out ? 0 : icd_fail_nomem(err);
}

int icd_druid_rewrite(char **out, size_t *orc_files, icd_druid_plan *p,
                      const icd_druid_rewrite_options *o, icd_error *err)
{
    *out = NULL;
    if (orc_files) *orc_files = 0;
    if (!o || o->version != ICD_DRUID_REWRITE_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown rewrite options version");
    if (!!o->auth_user != !!o->auth_password_env)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "auth_user and auth_password_env go together");
    if (!dr_plan_scan(p->plan))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a streamed plan cannot be rewritten");
    json_t *pw = NULL, *doc = NULL;
    ICD_TRY(icd_api_password_provider(o->auth_password_env, &pw, err));
    int rc = o->rows ? dr_plan_decide_rows(p->plan, err) : dr_plan_decide(p->plan, err);
    if (!rc) {
        dr_rewrite_opts ro = {o->serve_url, o->auth_user, pw, !o->rows, NULL, NULL};
        rc = dr_rewrite_spec(p->plan, &ro, &doc, err);
    }
    json_decref(pw);
    if (rc) return rc;
    if (orc_files && !o->rows) {
        const char *path = NULL;
        *orc_files = dr_serve_files_orc(p->plan, &path);
    }
    *out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return *out ? 0 : icd_fail_nomem(err);
}

/* ---- staging ----------------------------------------------------------------------------- */

void icd_druid_stage_options_init(icd_druid_stage_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_STAGE_OPTIONS_VERSION;
    o->threads = 1;
}

int icd_druid_plan_materialized(icd_druid_plan *p, size_t *files, uint64_t *bytes, icd_error *err)
{
    *files = 0;
    *bytes = 0;
    const ice_scan_plan *scan = dr_plan_scan(p->plan);
    if (!scan) return icd_fail(err, ICD_EINVALID, NULL, -1, "a streamed plan has no files");
    ICD_TRY(dr_plan_decide(p->plan, err));
    for (size_t i = 0; i < dr_plan_split_count(p->plan); i++) {
        if (dr_plan_decision(p->plan, i)->raw) continue;
        (*files)++;
        *bytes += (uint64_t)ice_scan_plan_task(scan, i)->data->file_size;
    }
    return 0;
}

static void stage_stats(const dr_stage_stats *in, icd_druid_stage_stats *out)
{
    memset(out, 0, sizeof *out);
    out->raw_files = in->raw_files;
    out->staged_files = in->staged_files;
    out->written_files = in->written_files;
    out->skipped_files = in->skipped_files;
    out->bytes_written = in->bytes_written;
    out->rows_written = in->rows_written;
    out->raw_bytes = in->raw_bytes;
    out->table_bytes = in->table_bytes;
    out->staged_bytes = in->staged_bytes;
    out->source_bytes = in->source_bytes;
    icd_api_read_stats(&in->read, &out->read);
}

int icd_druid_stage(char **spec_out, icd_druid_stage_stats *stats, icd_druid_plan *p,
                    icd_storage *storage, const icd_druid_stage_options *o, icd_error *err)
{
    *spec_out = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!o || o->version != ICD_DRUID_STAGE_OPTIONS_VERSION || !o->to || !o->to[0])
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "staging needs options of this version and a location");
    if (!dr_plan_scan(p->plan))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a streamed plan cannot be staged");
    dr_stage_opts so = {o->to,          o->threads, o->part_bytes, o->on_file,
                        o->on_file_ctx, NULL,       o->tmp_dir};
    dr_stage *st = NULL;
    json_t *doc = NULL;
    int rc = dr_stage_run(p->plan, storage->io, &so, &st, err);
    if (!rc) rc = dr_stage_spec(st, &doc, err);
    if (!rc && stats) stage_stats(dr_stage_get_stats(st), stats);
    if (!rc && !(*spec_out = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        rc = icd_fail_nomem(err);
    json_decref(doc);
    dr_stage_free(st);
    return rc;
}

int icd_druid_stage_gc(const icd_druid_plan *p, icd_storage *storage, const char *to,
                       int64_t after_snapshot, size_t *removed, size_t *kept, icd_error *err)
{
    *removed = *kept = 0;
    if (!to || !to[0]) return icd_fail(err, ICD_EINVALID, NULL, -1, "no stage location");
    return dr_stage_gc(p->plan, storage->io, to, after_snapshot, removed, kept, err);
}

/* ---- pre-flight -------------------------------------------------------------------------- */

typedef struct checks {
    icd_druid_check_fn fn;
    void *ctx;
    icd_error first; /* the first failure */
} checks;

/* Reports one check; `err` is the failure when !ok. */
static bool report(checks *c, bool ok, const char *what, const char *detail, const icd_error *err)
{
    if (ok) {
        if (c->fn) c->fn(c->ctx, what, 1, detail);
        return true;
    }
    char line[2400];
    icd_error_format(err, line, sizeof line);
    if (c->fn) c->fn(c->ctx, what, 0, line);
    if (!c->first.code) c->first = *err;
    return false;
}

/* Opens `path` and reads its first byte. */
static int probe(icd_fileio *io, const char *path, icd_error *err)
{
    icd_file *f;
    ICD_TRY(icd_file_open(io, path, &f, err));
    unsigned char b;
    int rc = icd_file_size(f) > 0 ? icd_file_read_at(f, 0, &b, 1, err) : 0;
    icd_file_close(f);
    return rc;
}

/* The plan's data and delete files can be read: the first data file and every delete file. */
static bool check_storage(checks *c, icd_fileio *io, const ice_scan_plan *sp)
{
    icd_error err;
    icd_error_clear(&err);
    size_t n = ice_scan_plan_task_count(sp), nd = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        if (i == 0 && probe(io, t->data->path, &err)) ok = false;
        for (size_t k = 0; k < t->ndeletes && ok; k++, nd++)
            if (probe(io, t->deletes[k]->path, &err)) ok = false;
    }
    char detail[200];
    snprintf(detail, sizeof detail, "the first data file and %zu delete file reference%s read", nd,
             nd == 1 ? "" : "s");
    return report(c, ok, "storage", detail, &err);
}

static void check_locations(checks *c, const dr_spec *spec, const dr_plan *plan)
{
    icd_error err;
    icd_error_clear(&err);
    if (dr_plan_is_v2(plan)) {
        report(c, true, "locations",
               "splits are served by icedruid serve (rewrite-spec --serve-url)", &err);
        return;
    }
    json_t *src = NULL;
    bool ok = !dr_plan_v1_source(plan, &src, &err);
    json_decref(src);
    char detail[400];
    const char *ws = dr_spec_warehouse_source_type(spec);
    snprintf(detail, sizeof detail,
             "the locations handed to Druid fit the warehouseSource of type '%s'", ws ? ws : "?");
    report(c, ok, "locations", detail, &err);
}

int icd_druid_check(const icd_druid_spec *spec, icd_storage *storage,
                    const icd_druid_plan_options *o, icd_druid_check_fn fn, void *ctx,
                    icd_error *err)
{
    if (!spec || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec or storage");
    dr_plan_opts po;
    ICD_TRY(plan_opts(o, &po, err));
    po.stream = false; /* the storage check walks the tasks */
    const dr_spec *s = dr_of(spec);
    checks c = {fn, ctx, {0}};
    icd_error e;
    icd_error_clear(&e);
    char detail[1400];
    ice_metadata *md = NULL;
    bool ok = !dr_plan_load_metadata(s, storage->io, &md, &e);
    snprintf(detail, sizeof detail, "table %s.%s: %s", dr_spec_namespace(s), dr_spec_table_name(s),
             ok ? ice_metadata_file(md) : "");
    if (report(&c, ok, "catalog", detail, &e)) {
        ok = !dr_spec_check_columns(s, ice_metadata_current_schema(md), &e);
        report(&c, ok, "columns",
               "timestampSpec, dimensions, metric inputs and filter columns are in the schema", &e);
        ice_metadata_free(md);
        dr_plan *plan = NULL;
        if (dr_plan_build(s, storage->io, &po, &plan, &e)) {
            report(&c, false, "plan", "", &e);
        } else {
            size_t n = ice_scan_plan_task_count(dr_plan_scan(plan));
            snprintf(detail, sizeof detail, "manifests read, %zu data file%s, %s", n,
                     n == 1 ? "" : "s",
                     dr_plan_is_v2(plan) ? "v2 (delete files: splits read by icedruid)"
                                         : "v1 (no delete files: Druid reads the data files)");
            report(&c, true, "plan", detail, &e);
            check_storage(&c, storage->io, dr_plan_scan(plan));
            check_locations(&c, s, plan);
            dr_plan_free(plan);
        }
    }
    if (!c.first.code) return 0;
    if (err) *err = c.first;
    return ICD_EINVALID;
}

/* ---- phase 2: the diff ------------------------------------------------------------------- */

/* Parses a granularity given as a name or as JSON; the message lists the names. */
static int parse_granularity(const char *text, dr_granularity *g, icd_error *err)
{
    int rc;
    if (text[0] == '{' || text[0] == '"') {
        json_error_t je;
        json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
        if (!j)
            return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity: invalid JSON (%s)", je.text);
        rc = dr_granularity_parse(g, j, err);
        json_decref(j);
    } else {
        rc = dr_granularity_named(g, text, err);
    }
    if (rc && !strncmp(err->message, "No enum constant", 16)) {
        char names[400];
        dr_granularity_names(names, sizeof names);
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "granularity expects one of %s (any case) or a granularity JSON object, "
                        "got '%s'",
                        names, text);
    }
    if (rc) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        return icd_fail(err, ICD_EINVALID, NULL, -1, "granularity: %s", msg);
    }
    return 0;
}

int icd_druid_granularity_check(const char *text, icd_error *err)
{
    if (!text) return icd_fail(err, ICD_EINVALID, NULL, -1, "no granularity");
    dr_granularity g;
    return parse_granularity(text, &g, err);
}

void icd_druid_diff_options_init(icd_druid_diff_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_DIFF_OPTIONS_VERSION;
    o->threads = 1;
}

static int diff_opts(const icd_druid_diff_options *o, dr_diff_opts *d, dr_granularity *g,
                     icd_error *err)
{
    if (!o || o->version != ICD_DRUID_DIFF_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown diff options version");
    memset(d, 0, sizeof *d);
    d->from_snapshot = o->from_snapshot;
    d->has_to = o->has_to != 0;
    d->to_snapshot = o->to_snapshot;
    d->threads = o->threads;
    d->on_file = o->on_file;
    d->on_file_ctx = o->on_file_ctx;
    if (o->granularity) {
        ICD_TRY(parse_granularity(o->granularity, g, err));
        d->granularity = g;
    }
    return 0;
}

/* The public copies of the interval lists. */
static int diff_publish(icd_druid_diff *d, icd_error *err)
{
    const dr_diff *x = &d->diff;
    d->replace = calloc(x->n_replace ? x->n_replace : 1, sizeof *d->replace);
    d->append = calloc(x->n_append ? x->n_append : 1, sizeof *d->append);
    if (!d->replace || !d->append) return icd_fail_nomem(err);
    for (size_t i = 0; i < x->n_replace; i++)
        d->replace[i] = (icd_druid_interval){x->replace[i].start_ms, x->replace[i].end_ms,
                                             x->replace[i].rows_removed, x->replace[i].rows_added};
    for (size_t i = 0; i < x->n_append; i++)
        d->append[i] = (icd_druid_interval){x->append[i].start_ms, x->append[i].end_ms,
                                            x->append[i].rows_removed, x->append[i].rows_added};
    return 0;
}

static void diff_clear(icd_druid_diff *d)
{
    dr_diff_free(&d->diff);
    free(d->replace);
    free(d->append);
    memset(d, 0, sizeof *d);
}

int icd_druid_diff_compute(icd_druid_diff **out, const icd_druid_spec *spec, icd_storage *storage,
                           const icd_druid_diff_options *o, icd_error *err)
{
    *out = NULL;
    if (!spec || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec or storage");
    dr_diff_opts dopts;
    dr_granularity g;
    ICD_TRY(diff_opts(o, &dopts, &g, err));
    icd_druid_diff *d = calloc(1, sizeof *d);
    if (!d) return icd_fail_nomem(err);
    int rc = dr_diff_compute(dr_of(spec), storage->io, &dopts, &d->diff, err);
    if (!rc) rc = diff_publish(d, err);
    if (rc) {
        icd_druid_diff_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void icd_druid_diff_free(icd_druid_diff *d)
{
    if (!d) return;
    diff_clear(d);
    free(d);
}

size_t icd_druid_diff_count(const icd_druid_diff *d, icd_druid_change kind)
{
    return kind == ICD_DRUID_REPLACE ? d->diff.n_replace : d->diff.n_append;
}

const icd_druid_interval *icd_druid_diff_interval(const icd_druid_diff *d, icd_druid_change kind,
                                                  size_t i)
{
    if (i >= icd_druid_diff_count(d, kind)) return NULL;
    return kind == ICD_DRUID_REPLACE ? &d->replace[i] : &d->append[i];
}

int64_t icd_druid_diff_from_snapshot(const icd_druid_diff *d)
{
    return d->diff.from_snapshot;
}

int64_t icd_druid_diff_to_snapshot(const icd_druid_diff *d)
{
    return d->diff.to_snapshot;
}

int64_t icd_druid_diff_rows_unparseable(const icd_druid_diff *d)
{
    return d->diff.rows_unparseable;
}

int icd_druid_diff_write(const icd_druid_diff *d, icd_write_fn fn, void *ctx, icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no writer");
    icd_buf b = ICD_BUF_INIT;
    int rc = dr_diff_write_json(&d->diff, &b, err);
    if (!rc) rc = write_buf(&b, fn, ctx, err);
    icd_buf_free(&b);
    return rc;
}

/* ---- phase 2: the statements ------------------------------------------------------------- */

void icd_druid_reingest_options_init(icd_druid_reingest_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_REINGEST_OPTIONS_VERSION;
    o->threads = 1;
}

/* What building the statements holds on to while it runs. */
typedef struct reingest_run {
    const icd_druid_reingest_options *o;
    icd_fileio *io;
    dr_plan *plan; /* snapshot B */
    dr_spec *at;   /* the spec copy that selects B, or NULL */
    json_t *pw;
    bool staging;
    bool *used; /* staging: the tasks the statements list */
} reingest_run;

static int stage_run(reingest_run *r, dr_stage **st, icd_error *err)
{
    dr_stage_opts so = {r->o->stage_to, r->o->threads, 0, NULL, NULL, r->used, r->o->tmp_dir};
    return dr_stage_run(r->plan, r->io, &so, st, err);
}

/* Before the diff: the plan of B decided, raw files checked, the stage destination checked
 * (nothing listed yet: it checks the destination and gives its name). */
static int reingest_prepare(reingest_run *r, icd_druid_reingest *out, icd_error *err)
{
    const icd_druid_reingest_options *o = r->o;
    const ice_snapshot *b = ice_scan_plan_snapshot(dr_plan_scan(r->plan));
    if (!b) return icd_fail(err, ICD_ENOTFOUND, NULL, -1, "the table has no snapshot");
    ICD_TRY(icd_api_password_provider(o->auth_password_env, &r->pw, err));
    ICD_TRY(o->rows ? dr_plan_decide_rows(r->plan, err) : dr_plan_decide(r->plan, err));
    if (!o->rows) { /* files Druid would read raw: refused before the diff is computed */
        dr_rewrite_opts ro = {o->serve_url, NULL, NULL, true, o->stage_to, NULL};
        ICD_TRY(dr_rewrite_check_raw(r->plan, &ro, err));
    }
    r->staging = o->stage_to && !o->rows;
    if (!r->staging) return 0;
    size_t ntasks = ice_scan_plan_task_count(dr_plan_scan(r->plan));
    r->used = calloc(ntasks ? ntasks : 1, sizeof *r->used);
    if (!r->used) return icd_fail_nomem(err);
    dr_stage *check = NULL;
    ICD_TRY(stage_run(r, &check, err));
    out->stage_location = strdup(dr_stage_location(check));
    dr_stage_free(check);
    return out->stage_location ? 0 : icd_fail_nomem(err);
}

/* Stages the materialized files the statements list (used[i]). */
static int reingest_stage(reingest_run *r, icd_druid_reingest *out, icd_error *err)
{
    dr_stage *st = NULL;
    ICD_TRY(stage_run(r, &st, err));
    int rc = 0;
    if (strcmp(dr_stage_location(st), out->stage_location)) /* the statements name these */
        rc = icd_fail(err, ICD_EINTERNAL, out->stage_location, -1, "the stage location moved to %s",
                      dr_stage_location(st));
    out->stage_stats = *dr_stage_get_stats(st);
    out->staged = rc == 0;
    dr_stage_free(st);
    return rc;
}

static int reingest_emit(reingest_run *r, icd_druid_reingest *out, const dr_spec *spec,
                         icd_error *err)
{
    const icd_druid_reingest_options *o = r->o;
    dr_emit_opts eo = {0};
    eo.plan = r->plan;
    eo.io = r->io;
    eo.serve_url = o->serve_url;
    eo.auth_user = o->auth_user;
    eo.auth_password = r->pw;
    eo.replace_only = o->replace_only != 0;
    eo.files = !o->rows;
    eo.stage_to = out->stage_location;
    eo.used = r->used;
    const dr_spec *s = r->at ? r->at : spec; /* the one the plan selected B with */
    dr_emit_kind kind = o->kind == ICD_DRUID_MSQ ? DR_EMIT_MSQ : DR_EMIT_NATIVE;
    ICD_TRY(dr_emit_build(kind, s, &out->diff.diff, &eo, &out->list, err));
    /* the statements are handed out only once the files they list are staged */
    if (r->staging && out->list.files) ICD_TRY(reingest_stage(r, out, err));
    return 0;
}

int icd_druid_reingest_build(icd_druid_reingest **out, const icd_druid_spec *spec,
                             icd_storage *storage, const icd_druid_diff_options *diff,
                             const icd_druid_reingest_options *o, icd_error *err)
{
    *out = NULL;
    if (!spec || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec or storage");
    if (!o || o->version != ICD_DRUID_REINGEST_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown re-ingestion options version");
    if (!!o->auth_user != !!o->auth_password_env)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "auth_user and auth_password_env go together");
    if (o->stage_to && o->rows)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "stage_to stages files; rows reads NDJSON splits: choose one");
    dr_diff_opts dopts;
    dr_granularity g;
    ICD_TRY(diff_opts(diff, &dopts, &g, err));
    icd_druid_reingest *res = calloc(1, sizeof *res);
    if (!res) return icd_fail_nomem(err);
    reingest_run r = {o, storage->io, NULL, NULL, NULL, false, NULL};
    dr_plan_opts po = {o->threads, false, o->project != 0, false};
    const dr_spec *s = dr_of(spec);
    int rc =
        dr_plan_at_snapshot(s, r.io, dopts.has_to, dopts.to_snapshot, &po, &r.plan, &r.at, err);
    if (!rc) rc = reingest_prepare(&r, res, err);
    if (!rc) {
        dopts.has_to = true;
        dopts.to_snapshot = ice_scan_plan_snapshot(dr_plan_scan(r.plan))->snapshot_id;
        rc = dr_diff_compute(s, r.io, &dopts, &res->diff.diff, err);
    }
    if (!rc) rc = diff_publish(&res->diff, err);
    if (!rc) rc = reingest_emit(&r, res, s, err);
    json_decref(r.pw);
    free(r.used);
    dr_plan_free(r.plan);
    dr_spec_free(r.at);
    if (rc) {
        icd_druid_reingest_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

void icd_druid_reingest_free(icd_druid_reingest *r)
{
    if (!r) return;
    dr_emit_list_free(&r->list);
    diff_clear(&r->diff);
    free(r->stage_location);
    free(r);
}

int icd_druid_reingest_write(const icd_druid_reingest *r, icd_write_fn fn, void *ctx,
                             icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no writer");
    icd_buf b = ICD_BUF_INIT;
    int rc = dr_emit_write(&r->list, &b, err);
    if (!rc) rc = write_buf(&b, fn, ctx, err);
    icd_buf_free(&b);
    return rc;
}

size_t icd_druid_reingest_count(const icd_druid_reingest *r)
{
    return r->list.n;
}

const icd_druid_diff *icd_druid_reingest_diff(const icd_druid_reingest *r)
{
    return &r->diff;
}

int icd_druid_reingest_stage_info(const icd_druid_reingest *r, icd_druid_stage_info *out)
{
    memset(out, 0, sizeof *out);
    if (!r->staged) return 0;
    out->location = r->stage_location;
    out->staged_files = r->stage_stats.staged_files;
    out->written_files = r->stage_stats.written_files;
    out->skipped_files = r->stage_stats.skipped_files;
    return 1;
}

/* ---- phase 2: sync ----------------------------------------------------------------------- */

int icd_druid_state_open(icd_druid_state **out, const char *path, int *busy, icd_error *err)
{
    *out = NULL;
    if (busy) *busy = 0;
    if (!path || !path[0]) return icd_fail(err, ICD_EINVALID, NULL, -1, "no state file");
    dr_state *st = NULL;
    bool b = false;
    int rc = dr_state_open(path, &st, &b, err);
    if (busy) *busy = b;
    if (rc) return rc;
    *out = (icd_druid_state *)st;
    return 0;
}

void icd_druid_state_close(icd_druid_state *st)
{
    dr_state_close((dr_state *)st);
}

int icd_druid_state_lookup(const icd_druid_state *st, const char *data_source, int64_t *snapshot_id,
                           const char **table)
{
    return dr_state_lookup((const dr_state *)st, data_source, snapshot_id, table);
}

/* "namespace.table" of a spec. */
static int table_name(const dr_spec *s, char **out, icd_error *err)
{
    const char *ns = dr_spec_namespace(s), *t = dr_spec_table_name(s);
    size_t n = strlen(ns) + strlen(t) + 2;
    if (!(*out = malloc(n))) return icd_fail_nomem(err);
    snprintf(*out, n, "%s.%s", ns, t);
    return 0;
}

int icd_druid_state_set_baseline(icd_druid_state *st, const icd_druid_spec *spec,
                                 icd_storage *storage, int64_t snapshot_id, icd_error *err)
{
    if (!st || !spec || !storage)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "no state, spec or storage");
    const dr_spec *s = dr_of(spec);
    const char *ds = dr_spec_data_source(s);
    if (!ds) return icd_fail(err, ICD_EINVALID, NULL, -1, "sync needs a whole ingestion spec");
    ice_metadata *md = NULL;
    ICD_TRY(dr_plan_load_metadata(s, storage->io, &md, err));
    int rc = 0;
    if (!ice_metadata_snapshot(md, snapshot_id))
        rc = icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(md), -1,
                      "the table has no such snapshot");
    ice_metadata_free(md);
    char *table = NULL;
    if (!rc) rc = table_name(s, &table, err);
    if (!rc)
        rc = dr_state_record((dr_state *)st, ds, snapshot_id, table, dr_now_ms(), NULL, 0, err);
    if (!rc) rc = dr_state_save((dr_state *)st, err);
    free(table);
    return rc;
}

void icd_druid_sync_options_init(icd_druid_sync_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_SYNC_OPTIONS_VERSION;
    o->kind = ICD_DRUID_NATIVE;
    o->threads = 1;
}

struct icd_druid_sync {
    const dr_spec *spec; /* borrowed */
    icd_fileio *io;      /* borrowed */
    dr_sync_opts opts;
    json_t *pw, *context;
    dr_sync_job job;
    bool prepared, needs_server;
    icd_druid_diff diff; /* the public view of job.diff (its lists only) */
    icd_druid_plan plan; /* the public view of job.plan */
};

int icd_druid_sync_prepare(icd_druid_sync **out, const icd_druid_spec *spec, icd_storage *storage,
                           const icd_druid_state *st, const icd_druid_sync_options *o,
                           icd_error *err)
{
    *out = NULL;
    if (!spec || !storage || !st)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec, storage or state");
    if (!o || o->version != ICD_DRUID_SYNC_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown sync options version");
    if (!!o->auth_user != !!o->auth_password_env)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "auth_user and auth_password_env go together");
    icd_druid_sync *j = calloc(1, sizeof *j);
    if (!j) return icd_fail_nomem(err);
    j->spec = dr_of(spec);
    j->io = storage->io;
    int rc = icd_api_password_provider(o->auth_password_env, &j->pw, err);
    if (!rc && o->context_json) {
        json_error_t je;
        j->context = json_loads(o->context_json, 0, &je);
        if (!json_is_object(j->context))
            rc = icd_fail(err, ICD_EINVALID, NULL, -1, "the context must be a JSON object");
    }
    dr_sync_opts *so = &j->opts;
    so->kind = o->kind == ICD_DRUID_MSQ ? DR_EMIT_MSQ : DR_EMIT_NATIVE;
    so->emit.serve_url = o->serve_url;
    so->emit.auth_user = o->auth_user;
    so->emit.auth_password = j->pw;
    so->emit.replace_only = o->replace_only != 0;
    so->emit.files = !o->rows;
    so->emit.context = j->context;
    so->full = o->full != 0;
    so->threads = o->threads;
    so->project_staged = o->project != 0;
    so->serve_later = o->serve_later != 0;
    if (!rc) rc = dr_sync_prepare(j->spec, j->io, (const dr_state *)st, so, &j->job, err);
    if (rc) {
        json_decref(j->pw);
        json_decref(j->context);
        free(j);
        return rc;
    }
    j->prepared = true;
    dr_sync_job *job = &j->job;
    if (so->serve_later && job->has_snapshot && !job->up_to_date) {
        /* what the caller must serve: v2 splits, or (files mode) materialized files */
        bool need = dr_plan_is_v2(job->plan);
        if (!need && !o->rows) {
            rc = dr_plan_decide(job->plan, err);
            need = !rc && dr_plan_materialized_count(job->plan) > 0;
        }
        j->needs_server = need;
    }
    if (!rc && job->has_diff) {
        j->diff.diff = job->diff; /* shallow: the job owns it */
        rc = diff_publish(&j->diff, err);
    }
    if (rc) {
        icd_druid_sync_free(j);
        return rc;
    }
    *out = j;
    return 0;
}

void icd_druid_sync_free(icd_druid_sync *j)
{
    if (!j) return;
    free(j->diff.replace);
    free(j->diff.append);
    if (j->prepared) dr_sync_job_free(&j->job);
    json_decref(j->pw);
    json_decref(j->context);
    free(j);
}

void icd_druid_sync_get_info(const icd_druid_sync *j, icd_druid_sync_info *out)
{
    const dr_sync_job *job = &j->job;
    memset(out, 0, sizeof *out);
    out->status = !job->has_snapshot ? ICD_DRUID_SYNC_NO_SNAPSHOT
                  : job->up_to_date  ? ICD_DRUID_SYNC_UP_TO_DATE
                  : job->full        ? ICD_DRUID_SYNC_FULL
                                     : ICD_DRUID_SYNC_CHANGES;
    out->data_source = job->data_source;
    out->table = job->table;
    out->has_from = job->has_from;
    out->from_snapshot = job->from_snapshot;
    out->to_snapshot = job->to_snapshot;
    out->submissions = job->list.n;
    out->ranges = job->list.n_ranges;
    out->rows_from_serve = job->list.v2;
    out->needs_server = j->needs_server;
}

const icd_druid_diff *icd_druid_sync_diff(const icd_druid_sync *j)
{
    return j->prepared && j->job.has_diff && !j->job.full ? &j->diff : NULL;
}

icd_druid_plan *icd_druid_sync_plan(icd_druid_sync *j)
{
    if (!j->prepared || !j->job.plan) return NULL;
    j->plan = (icd_druid_plan){j->job.plan, j->spec};
    return &j->plan;
}

int icd_druid_sync_emit(icd_druid_sync *j, const char *serve_url, icd_error *err)
{
    if (!j->opts.serve_later)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "the run was prepared with its statements");
    j->opts.emit.serve_url = serve_url;
    if (dr_sync_emit(j->spec, j->io, &j->opts, &j->job, err)) {
        j->prepared = false; /* dr_sync_emit freed the job */
        return err->code ? err->code : ICD_EINTERNAL;
    }
    return 0;
}

int icd_druid_sync_write(const icd_druid_sync *j, icd_write_fn fn, void *ctx, icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no writer");
    icd_buf b = ICD_BUF_INIT;
    int rc = dr_emit_write(&j->job.list, &b, err);
    if (!rc) rc = write_buf(&b, fn, ctx, err);
    icd_buf_free(&b);
    return rc;
}

void icd_druid_client_init(icd_druid_client *c)
{
    memset(c, 0, sizeof *c);
    c->version = ICD_DRUID_CLIENT_VERSION;
}

static int client_of(const icd_druid_client *c, dr_druid_client *d, icd_error *err)
{
    if (!c || c->version != ICD_DRUID_CLIENT_VERSION || !c->url)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "a Druid client needs a version and a URL");
    *d = (dr_druid_client){c->url,          c->user,          c->user ? c->password : NULL,
                           c->max_attempts, c->base_delay_ms, c->ca_file};
    return 0;
}

int icd_druid_sync_submit(const icd_druid_sync *j, const icd_druid_client *c, size_t i,
                          char **task_id, icd_error *err)
{
    *task_id = NULL;
    dr_druid_client d;
    ICD_TRY(client_of(c, &d, err));
    if (i >= j->job.list.n)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "no submission %zu (the run has %zu)", i,
                        j->job.list.n);
    return dr_druid_submit(&d, &j->job.list.items[i], task_id, err);
}

int icd_druid_task_status(const icd_druid_client *c, const char *task_id, int *done, icd_error *err)
{
    *done = 0;
    dr_druid_client d;
    ICD_TRY(client_of(c, &d, err));
    bool b = false;
    ICD_TRY(dr_druid_task_status(&d, task_id, &b, err));
    *done = b;
    return 0;
}

int icd_druid_sync_record(const icd_druid_sync *j, icd_druid_state *st, const char *const *task_ids,
                          size_t n, icd_error *err)
{
    const dr_sync_job *job = &j->job;
    if (!job->has_snapshot || job->up_to_date) return 0; /* nothing new to record */
    ICD_TRY(dr_state_record((dr_state *)st, job->data_source, job->to_snapshot, job->table,
                            dr_now_ms(), task_ids, n, err));
    return dr_state_save((dr_state *)st, err);
}
