/*
 * Phase 2 emitters (see emit.h): the last step of `icedruid diff --emit` and `icedruid
 * sync`. A diff's intervals become segment-aligned ranges; each range becomes an MSQ
 * REPLACE statement, or all of them one native index_parallel task. The rows are read
 * from the snapshot the diff went to: through Druid's `iceberg` input source (pinned and
 * pruned) when that snapshot's plan has no delete file, else through `icedruid serve`'s
 * splits (rewrite.h), since Druid's own reader would resurrect deleted rows.
 */
#include "druid/phase2/emit.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonw.h"
#include "druid/spec/jsonget.h"
#include "druid/plan/rewrite.h"
#include "druid/rows/timestamp.h"
#include "iceberg/schema.h"

#define EMIT_PATH_MAX 512
/* v2 MSQ: above this many ranges the splits are chosen once for all of them */
#define EMIT_MAX_PLANS 8

/* ---- small formatters ------------------------------------------------------------------ */

void dr_sql_string(icd_buf *b, const char *s, size_t n)
{
    icd_buf_putc(b, '\'');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') icd_buf_putc(b, '\'');
        icd_buf_putc(b, s[i]);
    }
    icd_buf_putc(b, '\'');
}

void dr_sql_ident(icd_buf *b, const char *s)
{
    icd_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') icd_buf_putc(b, '"');
        icd_buf_putc(b, *s);
    }
    icd_buf_putc(b, '"');
}

static void fmt_ms(icd_buf *b, int64_t ms, char sep, bool zulu)
{
    int64_t days, of_day;
    dr_split_ms(ms, &days, &of_day);
    icd_fmt_date(b, days);
    icd_buf_printf(b, "%c%02d:%02d:%02d.%03d%s", sep, (int)(of_day / 3600000),
                   (int)(of_day / 60000 % 60), (int)(of_day / 1000 % 60), (int)(of_day % 1000),
                   zulu ? "Z" : "");
}

void dr_fmt_iso_ms(icd_buf *b, int64_t ms)
{
    fmt_ms(b, ms, 'T', true);
}
void dr_fmt_sql_ts(icd_buf *b, int64_t ms)
{
    fmt_ms(b, ms, ' ', false);
}

static void fmt_interval(icd_buf *b, const dr_interval *iv)
{
    dr_fmt_iso_ms(b, iv->start);
    icd_buf_putc(b, '/');
    dr_fmt_iso_ms(b, iv->end);
}

bool dr_granularity_period_text(const dr_granularity *g, icd_buf *out)
{
    if (g->kind == DR_GRAN_DURATION) {
        int64_t s = g->duration_ms / 1000, ms = g->duration_ms % 1000;
        if (ms)
            icd_buf_printf(out, "PT%" PRId64 ".%03" PRId64 "S", s, ms);
        else
            icd_buf_printf(out, "PT%" PRId64 "S", s);
        return true;
    }
    if (g->kind != DR_GRAN_PERIOD) return false;
    const dr_period *p = &g->period;
    icd_buf_putc(out, 'P');
    if (p->years) icd_buf_printf(out, "%dY", (int)p->years);
    if (p->months) icd_buf_printf(out, "%dM", (int)p->months);
    if (p->weeks) icd_buf_printf(out, "%dW", (int)p->weeks);
    if (p->days) icd_buf_printf(out, "%dD", (int)p->days);
    if (p->hours || p->minutes || p->seconds || p->millis) {
        icd_buf_putc(out, 'T');
        if (p->hours) icd_buf_printf(out, "%dH", (int)p->hours);
        if (p->minutes) icd_buf_printf(out, "%dM", (int)p->minutes);
        if (p->millis)
            icd_buf_printf(out, "%d.%03dS", (int)p->seconds, (int)p->millis);
        else if (p->seconds)
            icd_buf_printf(out, "%dS", (int)p->seconds);
    }
    if (out->len && out->data[out->len - 1] == 'P') icd_buf_puts(out, "T0S");
    return true;
}

/* ---- ranges ---------------------------------------------------------------------------- */

static int cmp_interval(const void *a, const void *b)
{
    const dr_interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

int dr_emit_ranges(const dr_spec *spec, const dr_diff *diff, bool replace_only, dr_interval **out,
                   size_t *n, icd_error *err)
{
    *out = NULL;
    *n = 0;
    size_t total = diff->n_replace + (replace_only ? 0 : diff->n_append);
    if (!total) return 0;
    dr_interval *v = malloc(total * sizeof *v);
    if (!v) return icd_fail_nomem(err);
    const dr_granularity *g = &dr_spec_granularity(spec)->segment;
    size_t k = 0;
    for (size_t list = 0; list < 2; list++) {
        const dr_diff_interval *src = list ? diff->append : diff->replace;
        size_t cnt = list ? (replace_only ? 0 : diff->n_append) : diff->n_replace;
        for (size_t i = 0; i < cnt; i++) {
            if (src[i].end_ms <= src[i].start_ms) {
                free(v);
                return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                                "diff interval %zu is empty or reversed", i);
            }
            int64_t s, e, unused;
            int rc = dr_granularity_bucket(g, src[i].start_ms, &s, &unused, err);
            if (!rc) rc = dr_granularity_bucket(g, src[i].end_ms - 1, &unused, &e, err);
            if (rc) {
                free(v);
                return icd_error_wrap(err, "aligning the diff to the segmentGranularity");
            }
            v[k++] = (dr_interval){s, e};
        }
    }
    qsort(v, k, sizeof *v, cmp_interval);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && v[i].start <= v[m - 1].end) {
            if (v[i].end > v[m - 1].end) v[m - 1].end = v[i].end;
        } else {
            v[m++] = v[i];
        }
    }
    *out = v;
    *n = m;
    return 0;
}

/* ---- what the rows are read from ------------------------------------------------------- */

/* Everything the statement builders share. */
typedef struct emit_ctx {
    dr_emit_kind kind;
    const dr_spec *spec;
    const dr_emit_opts *o;
    const ice_schema *schema; /* NULL without a plan */
    const ice_snapshot *snap; /* NULL without a plan or for an empty table */
    bool v2;
    bool files;       /* files mode (emit.h) */
    json_t *v2_doc;   /* v2: the rewritten spec (http source over every split) */
    bool *union_keep; /* v2, many MSQ ranges: the splits kept for all of them */
    size_t union_n;
    bool full;
    const dr_interval *ranges;
    size_t n_ranges;
    const ice_field *ts_field; /* the timestamp column in the schema, or NULL */
    icd_error *err;
} emit_ctx;

/* The ioConfig object of a document shaped like the spec (NULL when absent). */
static json_t *io_config_of(const dr_spec *s, json_t *doc)
{
    char io_path[EMIT_PATH_MAX];
    const char *p = dr_spec_input_source_path(s);
    const char *dot = strrchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : 0;
    if (n >= sizeof io_path) return NULL;
    memcpy(io_path, p, n);
    io_path[n] = '\0';
    return dr_json_object_at(doc, io_path);
}

/* v1: the icebergFilter that prunes the snapshot to the ranges, or NULL when the
 * timestamp column cannot be compared without parsing. */
static int v1_time_filter(const emit_ctx *c, const dr_interval *rs, size_t nr, json_t **out)
{
    *out = NULL;
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(c->spec);
    /* null timestamps take missingValue: a filter on the column would prune their rows */
    if (c->full || !nr || !c->ts_field || ts->has_missing) return 0;
    const char *col = c->ts_field->name;
    ice_type_kind k = c->ts_field->type->kind;
    if (k == ICE_T_TIMESTAMP || k == ICE_T_TIMESTAMPTZ) {
        json_t *ivs = json_array();
        icd_buf b = ICD_BUF_INIT;
        for (size_t i = 0; ivs && i < nr; i++) {
            icd_buf_clear(&b);
            fmt_interval(&b, &rs[i]);
            if (!icd_buf_ok(&b) || json_array_append_new(ivs, json_string(b.data))) {
                json_decref(ivs);
                ivs = NULL;
            }
        }
        icd_buf_free(&b);
        *out = ivs ? json_pack("{s:s,s:s,s:o}", "type", "interval", "filterColumn", col,
                               "intervals", ivs)
                   : NULL;
        return *out ? 0 : icd_fail_nomem(c->err);
    }
    if (k != ICE_T_INT && k != ICE_T_LONG) return 0;
    int64_t unit; /* column units per milli (negative: millis per unit) */
    switch (ts->format) {
    case DR_TS_AUTO:
    case DR_TS_MILLIS:
        unit = 1;
        break;
    case DR_TS_POSIX:
        unit = -1000;
        break;
    case DR_TS_MICRO:
        unit = 1000;
        break;
    case DR_TS_NANO:
        unit = 1000000;
        break;
    default:
        return 0;
    }
    json_t *ors = json_array();
    for (size_t i = 0; ors && i < nr; i++) {
        int64_t lo, hi;
        if (unit > 0) {
            /* micro/nano truncate toward zero: before 1970 a value up to unit-1 below
             * start*unit still maps to start, so the lower bound takes them too */
            if (__builtin_mul_overflow(rs[i].start, unit, &lo) ||
                __builtin_sub_overflow(lo, unit - 1, &lo) ||
                __builtin_mul_overflow(rs[i].end, unit, &hi)) {
                json_decref(ors);
                return 0; /* out of the column's range: no pruning */
            }
        } else {
            lo = icd_floordiv(rs[i].start, -unit);
            hi = icd_floordiv(rs[i].end, -unit) + (icd_floormod(rs[i].end, -unit) != 0);
        }
        json_t *r =
            json_pack("{s:s,s:s,s:I,s:I,s:b,s:b}", "type", "range", "filterColumn", col, "lower",
                      (json_int_t)lo, "upper", (json_int_t)hi, "lowerOpen", 0, "upperOpen", 1);
        if (!r || json_array_append_new(ors, r)) {
            json_decref(ors);
            ors = NULL;
        }
    }
    if (!ors) return icd_fail_nomem(c->err);
    if (json_array_size(ors) == 1) {
        *out = json_incref(json_array_get(ors, 0));
        json_decref(ors);
    } else {
        *out = json_pack("{s:s,s:o}", "type", "or", "filters", ors);
    }
    return *out ? 0 : icd_fail_nomem(c->err);
}

/* The spec with `tf` and-ed into its icebergFilter (residuals ignored: they are the
 * pruning filter's), parsed; the caller frees it. */
static int spec_with_filter(const emit_ctx *c, json_t *tf, dr_spec **out)
{
    *out = NULL;
    json_t *doc = json_deep_copy(dr_spec_document(c->spec));
    if (!doc) return icd_fail_nomem(c->err);
    json_t *src = doc;
    const char *p = dr_spec_input_source_path(c->spec);
    if (*p) src = dr_json_object_at(doc, p);
    json_t *old = src ? json_object_get(src, "icebergFilter") : NULL;
    json_t *f = old && !json_is_null(old)
                    ? json_pack("{s:s,s:[O,O]}", "type", "and", "filters", old, tf)
                    : json_incref(tf);
    int rc = 0;
    if (!src || !f || json_object_set_new(src, "icebergFilter", f) ||
        json_object_set_new(src, "residualFilterMode", json_string("ignore")))
        rc = icd_fail_nomem(c->err);
    if (!rc) rc = dr_spec_parse_json(out, doc, "(re-ingestion filter)", NULL, c->err);
    json_decref(doc);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* v2: which splits (tasks of the plan) can hold rows of the ranges. The snapshot is
 * planned again with the time filter and-ed to the spec's: Iceberg prunes by partition
 * values and column bounds, as Druid's own interval filter would. Every split is kept
 * when that cannot be done safely (no io, no filter for this column type, a
 * missingValue, another snapshot selected). */
static int v2_keep(const emit_ctx *c, const dr_interval *rs, size_t nr, bool *keep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        keep[i] = true;
    if (c->full || !c->o->io || !c->o->plan || dr_spec_timestamp_spec(c->spec)->has_missing)
        return 0;
    json_t *tf = NULL;
    ICD_TRY(v1_time_filter(c, rs, nr, &tf));
    if (!tf) return 0;
    dr_spec *fs = NULL;
    dr_plan *fp = NULL;
    int rc = spec_with_filter(c, tf, &fs);
    json_decref(tf);
    dr_plan_opts po = {1, false, false, false}; /* (its paths only) */
    if (!rc) rc = dr_plan_build(fs, c->o->io, &po, &fp, c->err);
    const ice_snapshot *a = ice_scan_plan_snapshot(dr_plan_scan(c->o->plan));
    const ice_snapshot *b = fp ? ice_scan_plan_snapshot(dr_plan_scan(fp)) : NULL;
    if (!rc && a && b && a->snapshot_id == b->snapshot_id) {
        size_t m = dr_plan_split_count(fp);
        const char **paths = malloc((m ? m : 1) * sizeof *paths);
        if (!paths) rc = icd_fail_nomem(c->err);
        for (size_t i = 0; !rc && i < m; i++)
            paths[i] = ice_scan_plan_task(dr_plan_scan(fp), i)->data->path;
        if (!rc) {
            qsort(paths, m, sizeof *paths, cmp_str);
            const ice_scan_plan *sp = dr_plan_scan(c->o->plan);
            for (size_t i = 0; i < n && i < ice_scan_plan_task_count(sp); i++) {
                const char *path = ice_scan_plan_task(sp, i)->data->path;
                keep[i] = bsearch(&path, paths, m, sizeof *paths, cmp_str) != NULL;
            }
        }
        free(paths);
    }
    dr_plan_free(fp);
    dr_spec_free(fs);
    return rc;
}

/* v2: a copy of the rewritten http source keeping the splits that can hold rows of the
 * ranges (one range for MSQ, all of them for native). */
static int v2_source(const emit_ctx *c, const dr_interval *rs, size_t nr, json_t **out)
{
    json_t *io = io_config_of(c->spec, c->v2_doc);
    const json_t *src = io ? json_object_get(io, "inputSource") : NULL;
    const json_t *uris = json_object_get(src, "uris");
    size_t n = json_array_size(uris);
    json_t *copy = src ? json_deep_copy(src) : NULL;
    json_t *kept = json_array();
    bool *keep = calloc(n ? n : 1, sizeof *keep);
    int rc = (!copy || !kept || !keep) ? (src ? icd_fail_nomem(c->err)
                                              : icd_fail(c->err, ICD_EINTERNAL, NULL, -1,
                                                         "the rewritten spec has no inputSource"))
                                       : 0;
    if (!rc && c->union_keep && c->union_n == n)
        memcpy(keep, c->union_keep, n * sizeof *keep);
    else if (!rc)
        rc = v2_keep(c, rs, nr, keep, n);
    for (size_t i = 0; !rc && i < n; i++)
        if (keep[i] && json_array_append(kept, json_array_get(uris, i)))
            rc = icd_fail_nomem(c->err);
    /* Druid's http source needs a URI: with no split overlapping, keep the first one
     * (the WHERE / intervals filter drop its rows; the REPLACE still clears the range) */
    if (!rc && !json_array_size(kept) && n && json_array_append(kept, json_array_get(uris, 0)))
        rc = icd_fail_nomem(c->err);
    free(keep);
    if (!rc)
        rc = json_object_set_new(copy, "uris", kept) ? icd_fail_nomem(c->err) : 0;
    else
        json_decref(kept);
    if (rc) {
        json_decref(copy);
        return rc;
    }
    *out = copy;
    return 0;
}

/* v1: the spec's iceberg input source, pinned to the snapshot and pruned to the ranges. */
static int v1_source(const emit_ctx *c, const dr_interval *rs, size_t nr, json_t **out)
{
    json_t *src = json_deep_copy(dr_spec_input_source(c->spec));
    if (!src) return icd_fail_nomem(c->err);
    json_t *tf = NULL;
    /* The pruning filter leaves a residual on purpose (the WHERE / intervals filter the
     * rows), so it is added only when the user's residualFilterMode does not fail on
     * residuals; the mode itself is kept as written ("fail" keeps failing on the user's
     * own filter only). */
    int rc =
        dr_spec_residual_mode(c->spec) != DR_RESIDUAL_FAIL ? v1_time_filter(c, rs, nr, &tf) : 0;
    if (!rc && tf) {
        json_t *old = json_object_get(src, "icebergFilter");
        json_t *f = tf;
        if (old && !json_is_null(old))
            f = json_pack("{s:s,s:[O,o]}", "type", "and", "filters", old, tf);
        if (!f || json_object_set_new(src, "icebergFilter", f)) rc = icd_fail_nomem(c->err);
    }
    if (!rc && c->snap) {
        icd_buf b = ICD_BUF_INIT;
        dr_fmt_iso_ms(&b, c->snap->timestamp_ms);
        if (!icd_buf_ok(&b) || json_object_set_new(src, "snapshotTime", json_string(b.data)))
            rc = icd_fail_nomem(c->err);
        icd_buf_free(&b);
    }
    if (rc) {
        json_decref(src);
        return rc;
    }
    *out = src;
    return 0;
}

/* Files mode: raw + materialized files of the tasks that can hold rows of the ranges. */
static int files_source(const emit_ctx *c, const dr_interval *rs, size_t nr, json_t **out)
{
    size_t n = ice_scan_plan_task_count(dr_plan_scan(c->o->plan));
    bool *keep = calloc(n ? n : 1, sizeof *keep);
    if (!keep) return icd_fail_nomem(c->err);
    int rc = 0;
    if (c->union_keep && c->union_n == n)
        memcpy(keep, c->union_keep, n * sizeof *keep);
    else
        rc = v2_keep(c, rs, nr, keep, n);
    dr_rewrite_opts ro = {c->o->serve_url, c->o->auth_user, c->o->auth_password, true,
                          c->o->stage_to,  c->o->used};
    if (!rc) rc = dr_rewrite_files_source(c->o->plan, &ro, keep, out, c->err);
    free(keep);
    return rc;
}

static int source_for(const emit_ctx *c, const dr_interval *rs, size_t nr, json_t **out)
{
    if (c->files) return files_source(c, rs, nr, out);
    return c->v2 ? v2_source(c, rs, nr, out) : v1_source(c, rs, nr, out);
}

/* ---- native ---------------------------------------------------------------------------- */

/* The document as an index_parallel task (a bare spec is wrapped). */
static json_t *as_task(const dr_spec *s, json_t *doc)
{
    json_t *task = doc;
    if (dr_spec_shape(s) == DR_DOC_SPEC) {
        task = json_pack("{s:s,s:o}", "type", "index_parallel", "spec", doc);
        if (!task) return NULL;
    }
    json_object_set_new(task, "type", json_string("index_parallel"));
    json_t *spec = json_object_get(task, "spec");
    json_t *io = json_object_get(spec, "ioConfig");
    json_t *tc = json_object_get(spec, "tuningConfig");
    if (json_is_object(io)) json_object_set_new(io, "type", json_string("index_parallel"));
    if (json_is_object(tc)) json_object_set_new(tc, "type", json_string("index_parallel"));
    return task;
}

static int build_native(const emit_ctx *c, dr_emit_list *l)
{
    json_t *doc = c->v2 ? json_deep_copy(c->v2_doc) : json_deep_copy(dr_spec_document(c->spec));
    if (!doc) return icd_fail_nomem(c->err);
    json_t *src = NULL;
    int rc = source_for(c, c->ranges, c->n_ranges, &src);
    json_t *io = io_config_of(c->spec, doc);
    char ds_path[EMIT_PATH_MAX];
    snprintf(ds_path, sizeof ds_path, "%s", dr_spec_input_source_path(c->spec));
    /* "spec.ioConfig.inputSource" -> "spec.dataSchema" */
    char *io_dot = strstr(ds_path, "ioConfig");
    if (io_dot) strcpy(io_dot, "dataSchema");
    json_t *ds = io_dot ? dr_json_object_at(doc, ds_path) : NULL;
    if (!rc && (!io || !ds))
        rc = icd_fail(c->err, ICD_EINTERNAL, NULL, -1,
                      "the spec's ioConfig or dataSchema was not found");
    if (!rc) {
        json_object_set_new(io, "inputSource", src);
        src = NULL;
        json_object_set_new(io, "appendToExisting", json_false());
        json_object_set_new(io, "dropExisting", c->full ? json_false() : json_true());
        json_t *gs = json_object_get(ds, "granularitySpec");
        if (!json_is_object(gs)) {
            gs = json_object();
            if (!gs || json_object_set_new(ds, "granularitySpec", gs)) rc = icd_fail_nomem(c->err);
        }
        if (!rc && c->full) {
            json_object_del(gs, "intervals");
        } else if (!rc) {
            json_t *ivs = json_array();
            icd_buf b = ICD_BUF_INIT;
            for (size_t i = 0; ivs && i < c->n_ranges; i++) {
                icd_buf_clear(&b);
                fmt_interval(&b, &c->ranges[i]);
                if (!icd_buf_ok(&b) || json_array_append_new(ivs, json_string(b.data))) {
                    json_decref(ivs);
                    ivs = NULL;
                }
            }
            icd_buf_free(&b);
            if (!ivs || json_object_set_new(gs, "intervals", ivs)) rc = icd_fail_nomem(c->err);
        }
    }
    json_decref(src);
    json_t *task = rc ? NULL : as_task(c->spec, doc);
    if (!rc && !task) rc = icd_fail_nomem(c->err);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    if (json_is_object(c->o->context)) { /* the task's context (priority, lock type...) */
        json_t *tc = json_object_get(task, "context");
        if (!json_is_object(tc)) {
            tc = json_object();
            if (!tc || json_object_set_new(task, "context", tc)) rc = icd_fail_nomem(c->err);
        }
        if (!rc && json_object_update(tc, (json_t *)c->o->context)) rc = icd_fail_nomem(c->err);
    }
    l->items = rc ? NULL : calloc(1, sizeof *l->items);
    if (!l->items) {
        json_decref(task);
        return rc ? rc : icd_fail_nomem(c->err);
    }
    l->items[0] = (dr_emit_item){DR_EMIT_NATIVE, c->full, {0, 0}, NULL, task};
    l->n = 1;
    return 0;
}

/* ---- MSQ ------------------------------------------------------------------------------- */

/* The external columns and the SELECT list of one statement. */
typedef struct msq_cols {
    json_t *sig;    /* [{"name","type"}] */
    icd_buf select; /* ",\n  expr AS name" items after __time */
    icd_buf tsexpr; /* the row's timestamp (before queryGranularity) */
    size_t n_group; /* columns to GROUP BY (rollup), __time included */
    bool rollup;
} msq_cols;

static bool sig_has(const json_t *sig, const char *name)
{
    for (size_t i = 0; i < json_array_size(sig); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(sig, i), "name")), name))
            return true;
    return false;
}

static int sig_add(msq_cols *m, const char *name, const char *type, icd_error *err)
{
    if (sig_has(m->sig, name)) return 0;
    json_t *e = json_pack("{s:s,s:s}", "name", name, "type", type);
    if (!e || json_array_append_new(m->sig, e)) return icd_fail_nomem(err);
    return 0;
}

/* The Druid column type of an Iceberg type (what Druid's readers produce). */
static const char *druid_type_of(const ice_type *t)
{
    switch (t->kind) {
    case ICE_T_BOOLEAN:
    case ICE_T_INT:
    case ICE_T_LONG:
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
    case ICE_T_TIMESTAMP_NS:
    case ICE_T_TIMESTAMPTZ_NS:
        return "long";
    case ICE_T_FLOAT:
        return "float";
    case ICE_T_DOUBLE:
    case ICE_T_DECIMAL:
        return "double";
    case ICE_T_STRUCT:
    case ICE_T_LIST:
    case ICE_T_MAP:
    case ICE_T_VARIANT:
        return "COMPLEX<json>";
    default:
        return "string";
    }
}

static const ice_field *schema_field(const emit_ctx *c, const char *name)
{
    return c->schema ? ice_schema_find(c->schema, name, dr_spec_case_sensitive(c->spec)) : NULL;
}

/* Whether Druid's reader hands the timestamp column to the timestampSpec as a Java Long:
 * Iceberg int/long, timestamp and timestamptz (epoch millis), and date in Parquet files
 * (ParquetGroupConverter: epoch millis). Other types (strings, floating point, ORC/Avro
 * dates, nanosecond timestamps) are not translated. */
static bool ts_column_is_long(const emit_ctx *c)
{
    const ice_field *f = c->ts_field;
    if (!f) return false;
    switch (f->type->kind) {
    case ICE_T_INT:
    case ICE_T_LONG:
    case ICE_T_TIMESTAMP:
    case ICE_T_TIMESTAMPTZ:
        return true;
    case ICE_T_DATE: {
        const char *t = json_string_value(json_object_get(dr_spec_input_format(c->spec), "type"));
        return t && !strcmp(t, "parquet");
    }
    default:
        return false;
    }
}

/* __time: the timestampSpec as a SQL expression over the external column, only where it
 * provably equals Druid's native parse (TimestampParser.createNumericTimestampParser on a
 * Java Long, then MapInputRowParser's ETERNITY check):
 *   CASE WHEN col IS NULL THEN <missingValue> WHEN <ms in ETERNITY> THEN
 *        MILLIS_TO_TIMESTAMP(<ms>) END
 * so a row Druid rejects gets a NULL __time, which the WHERE drops. Strings are refused:
 * TIME_PARSE is not the native parser (no quote stripping or trimming, no numeric
 * fallback, no zone word, NULL on failure), nor is a Long read by "iso" or a Joda pattern
 * (Druid parses its decimal text, short digit runs being years). */
static int msq_timestamp(const emit_ctx *c, msq_cols *m)
{
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(c->spec);
    icd_buf col = ICD_BUF_INIT;
    icd_buf *e = &m->tsexpr;
    const char *type = "long";
    if (c->v2) { /* served rows carry __time in millis, computed with the timestampSpec */
        ICD_TRY(sig_add(m, "__time", "long", c->err));
        icd_buf_puts(e, "MILLIS_TO_TIMESTAMP(\"__time\")");
        return icd_buf_ok(e) ? 0 : icd_fail_nomem(c->err);
    }
    dr_ts_format f = ts->format;
    bool numeric = f == DR_TS_AUTO || f == DR_TS_MILLIS || f == DR_TS_POSIX || f == DR_TS_MICRO ||
                   f == DR_TS_NANO || f == DR_TS_RUBY;
    /* no plan (hand-made diffs, tests): no schema to check; the column is taken as a long */
    bool long_col = c->schema ? ts_column_is_long(c) : true;
    if (!long_col || !numeric)
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "--emit msq: timestampSpec {\"column\": \"%s\", \"format\": \"%s\"} on %s "
                        "has no SQL form equal to Druid's native parse (MSQ is emitted for "
                        "int/long/timestamp columns read with a numeric format or auto); use "
                        "--emit native",
                        ts->column, ts->format_text,
                        !c->schema || c->ts_field ? "this column's type"
                                                  : "a column not in the table schema");
    dr_sql_ident(&col, ts->column);
    const char *q = col.data ? col.data : "\"\"";
    icd_buf ms = ICD_BUF_INIT;
    switch (f) {
    case DR_TS_POSIX: /* the product wraps in SQL where TimeUnit saturates: bound the input */
        icd_buf_printf(&ms, "%s * 1000", q);
        break;
    case DR_TS_MICRO: /* Java division truncates toward zero, as Druid's long division */
        icd_buf_printf(&ms, "%s / 1000", q);
        break;
    case DR_TS_NANO:
        icd_buf_printf(&ms, "%s / 1000000", q);
        break;
    case DR_TS_RUBY: /* (long) (value * 1000.0) */
        type = "double";
        icd_buf_printf(&ms, "CAST(%s * 1000 AS BIGINT)", q);
        break;
    default: /* auto and millis on a Long: the value */
        icd_buf_puts(&ms, q);
        break;
    }
    icd_buf_puts(e, "CASE");
    if (ts->has_missing) {
        icd_buf_printf(e, " WHEN %s IS NULL THEN TIMESTAMP '", q);
        dr_fmt_sql_ts(e, ts->missing_ms);
        icd_buf_puts(e, "'");
    }
    if (f == DR_TS_POSIX)
        icd_buf_printf(e, " WHEN %s BETWEEN %lld AND %lld", q,
                       (long long)(DR_ETERNITY_START / 1000),
                       (long long)((DR_ETERNITY_END - 1) / 1000));
    else
        icd_buf_printf(e, " WHEN %s BETWEEN %lld AND %lld", ms.data ? ms.data : "",
                       (long long)DR_ETERNITY_START, (long long)(DR_ETERNITY_END - 1));
    icd_buf_printf(e, " THEN MILLIS_TO_TIMESTAMP(%s) END", ms.data ? ms.data : "");
    int rc = icd_buf_ok(&ms) ? 0 : icd_fail_nomem(c->err);
    icd_buf_free(&ms);
    icd_buf_free(&col);
    ICD_TRY(rc);
    ICD_TRY(sig_add(m, ts->column, type, c->err));
    return icd_buf_ok(e) ? 0 : icd_fail_nomem(c->err);
}

static bool is_excluded(const emit_ctx *c, const char *name)
{
    const dr_dimensions_spec *dd = dr_spec_dimensions(c->spec);
    if (!strcmp(name, dr_spec_timestamp_spec(c->spec)->column) || !strcmp(name, "__time"))
        return true;
    for (size_t i = 0; i < dd->n_exclusions; i++)
        if (!strcmp(dd->exclusions[i], name)) return true;
    for (size_t i = 0; i < dd->n_dims; i++)
        if (!strcmp(dd->dims[i].name, name)) return true;
    const char *const *mf;
    size_t nm = dr_spec_metric_fields(c->spec, &mf);
    for (size_t i = 0; i < nm; i++)
        if (!strcmp(mf[i], name)) return true;
    return false;
}

static int add_dim(const emit_ctx *c, msq_cols *m, const char *name, const char *type)
{
    ICD_TRY(sig_add(m, name, type, c->err));
    icd_buf_puts(&m->select, ",\n  ");
    dr_sql_ident(&m->select, name);
    m->n_group++;
    return icd_buf_ok(&m->select) ? 0 : icd_fail_nomem(c->err);
}

static int msq_dimensions(const emit_ctx *c, msq_cols *m)
{
    const dr_dimensions_spec *dd = dr_spec_dimensions(c->spec);
    if (json_array_size(dd->spatial))
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "--emit msq: spatialDimensions have no SQL form; use --emit native");
    for (size_t i = 0; i < dd->n_dims; i++) {
        const char *t = dd->dims[i].type;
        const char *sig;
        if (!strcmp(t, "string") || !strcmp(t, "long") || !strcmp(t, "float") ||
            !strcmp(t, "double"))
            sig = t;
        else if (!strcmp(t, "json"))
            sig = "COMPLEX<json>";
        else { /* auto: the type the reader produces */
            const ice_field *f = schema_field(c, dd->dims[i].name);
            sig = f ? druid_type_of(f->type) : "string";
        }
        ICD_TRY(add_dim(c, m, dd->dims[i].name, sig));
    }
    if (dd->n_dims && !dd->include_all_dimensions) return 0;
    /* schemaless / includeAllDimensions: the columns Druid would discover */
    if (!c->schema)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                        "--emit msq: the spec discovers its dimensions (schemaless); the table "
                        "schema is needed to list them");
    for (size_t i = 0; i < c->schema->root.nfields; i++) {
        const ice_field *f = &c->schema->root.fields[i];
        if (is_excluded(c, f->name)) continue;
        if (!dd->use_schema_discovery && !ice_type_is_primitive(f->type)) continue;
        /* classic discovery makes string dimensions; schema discovery keeps the type */
        ICD_TRY(
            add_dim(c, m, f->name, dd->use_schema_discovery ? druid_type_of(f->type) : "string"));
    }
    return 0;
}

/* One aggregator of metricsSpec: rollup gives an aggregate, otherwise the row's value. */
static int msq_metric(const emit_ctx *c, msq_cols *m, const json_t *agg, size_t i)
{
    const char *type = json_string_value(json_object_get(agg, "type"));
    const char *name = json_string_value(json_object_get(agg, "name"));
    const char *field = json_string_value(json_object_get(agg, "fieldName"));
    if (!type || !name)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1, "metricsSpec[%zu] has no type or name", i);
    static const struct {
        const char *type, *fn, *sig, *sql;
    } aggs[] = {
        {"longSum", "SUM", "long", "BIGINT"},     {"doubleSum", "SUM", "double", "DOUBLE"},
        {"floatSum", "SUM", "float", "FLOAT"},    {"longMin", "MIN", "long", "BIGINT"},
        {"doubleMin", "MIN", "double", "DOUBLE"}, {"floatMin", "MIN", "float", "FLOAT"},
        {"longMax", "MAX", "long", "BIGINT"},     {"doubleMax", "MAX", "double", "DOUBLE"},
        {"floatMax", "MAX", "float", "FLOAT"},
    };
    icd_buf *s = &m->select;
    icd_buf_puts(s, ",\n  ");
    if (!strcmp(type, "count")) {
        icd_buf_puts(s, m->rollup ? "COUNT(*)" : "1");
    } else {
        size_t k = 0;
        while (k < sizeof aggs / sizeof aggs[0] && strcmp(aggs[k].type, type))
            k++;
        if (k == sizeof aggs / sizeof aggs[0])
            return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                            "--emit msq: aggregator '%s' (metricsSpec[%zu]) has no SQL form in "
                            "icedruid; use --emit native",
                            type, i);
        if (!field)
            return icd_fail(c->err, ICD_EINVALID, NULL, -1, "metricsSpec[%zu] has no fieldName", i);
        ICD_TRY(sig_add(m, field, aggs[k].sig, c->err));
        if (m->rollup) icd_buf_printf(s, "%s(", aggs[k].fn);
        icd_buf_puts(s, "CAST(");
        dr_sql_ident(s, field);
        icd_buf_printf(s, " AS %s)", aggs[k].sql);
        if (m->rollup) icd_buf_putc(s, ')');
    }
    icd_buf_puts(s, " AS ");
    dr_sql_ident(s, name);
    return icd_buf_ok(s) ? 0 : icd_fail_nomem(c->err);
}

static int msq_columns(const emit_ctx *c, msq_cols *m)
{
    const dr_granularity_spec *gs = dr_spec_granularity(c->spec);
    const json_t *metrics = dr_spec_metrics(c->spec);
    m->rollup = gs->rollup; /* native rolls identical rows up even without metrics */
    m->n_group = 1;
    const json_t *tf = dr_spec_transform_spec(c->spec);
    if (json_array_size(dr_spec_transforms(c->spec)) || (tf && dr_spec_transform_filter(c->spec)))
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "--emit msq: the spec has a transformSpec, which icedruid does not "
                        "translate to SQL; use --emit native");
    ICD_TRY(msq_timestamp(c, m));
    ICD_TRY(msq_dimensions(c, m));
    for (size_t i = 0; i < json_array_size(metrics); i++)
        ICD_TRY(msq_metric(c, m, json_array_get(metrics, i), i));
    return 0;
}

/* PARTITIONED BY: the segmentGranularity, when Druid's planner takes it: ALL TIME or one of
 * GranularityType's standard period granularities without origin or time zone
 * (DruidSqlParserUtils.validateSupportedGranularityForPartitionedBy; Joda's Period equality
 * is field by field, so PT60M or PT3600S are not HOUR and are refused there). */
static int msq_partitioned_by(const emit_ctx *c, icd_buf *b)
{
    const dr_granularity *g = &dr_spec_granularity(c->spec)->segment;
    static const char *const keywords[][2] = {
        {"PT1H", "HOUR"}, {"P1D", "DAY"}, {"P1M", "MONTH"}, {"P1Y", "YEAR"}};
    static const char *const standard[] = {"PT1S",  "PT1M", "PT5M", "PT10M", "PT15M",
                                           "PT30M", "PT6H", "PT8H", "P1W",   "P3M"};
    icd_buf_puts(b, "\nPARTITIONED BY ");
    if (g->kind == DR_GRAN_ALL) {
        icd_buf_puts(b, "ALL TIME");
        return 0;
    }
    icd_buf t = ICD_BUF_INIT;
    bool ok = g->kind == DR_GRAN_PERIOD && !g->has_origin && !g->time_zone[0] &&
              dr_granularity_period_text(g, &t) && icd_buf_ok(&t);
    const char *text = ok ? t.data : "";
    for (size_t i = 0; ok && i < sizeof keywords / sizeof keywords[0]; i++)
        if (!strcmp(text, keywords[i][0])) {
            icd_buf_puts(b, keywords[i][1]);
            icd_buf_free(&t);
            return 0;
        }
    for (size_t i = 0; ok && i < sizeof standard / sizeof standard[0]; i++)
        if (!strcmp(text, standard[i])) {
            icd_buf_printf(b, "TIME_FLOOR(\"__time\", '%s')", text);
            icd_buf_free(&t);
            return 0;
        }
    icd_buf_free(&t);
    return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                    "--emit msq: segmentGranularity is not one of the standard granularities "
                    "PARTITIONED BY accepts (SECOND .. YEAR, ALL; no origin, time zone or other "
                    "period); use --emit native");
}

/* queryGranularity truncates __time (also without rollup). */
static int msq_time_column(const emit_ctx *c, const msq_cols *m, icd_buf *b)
{
    const dr_granularity *q = &dr_spec_granularity(c->spec)->query;
    if (q->kind == DR_GRAN_NONE) {
        icd_buf_append(b, m->tsexpr.data, m->tsexpr.len);
        return 0;
    }
    if (q->kind == DR_GRAN_ALL || q->has_origin || q->time_zone[0])
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "--emit msq: queryGranularity ALL or with an origin or time zone is not "
                        "translated; use --emit native");
    icd_buf_puts(b, "TIME_FLOOR(");
    icd_buf_append(b, m->tsexpr.data, m->tsexpr.len);
    icd_buf_puts(b, ", '");
    dr_granularity_period_text(q, b);
    icd_buf_puts(b, "')");
    return 0;
}

static void clustered_by(const emit_ctx *c, icd_buf *b)
{
    const json_t *ps = json_object_get(dr_spec_tuning_config(c->spec), "partitionsSpec");
    const json_t *dims = json_object_get(ps, "partitionDimensions");
    const json_t *one = json_object_get(ps, "partitionDimension");
    size_t n = json_array_size(dims);
    if (!n && !json_is_string(one)) return;
    icd_buf_puts(b, "\nCLUSTERED BY ");
    if (!n) {
        dr_sql_ident(b, json_string_value(one));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *d = json_string_value(json_array_get(dims, i));
        if (i) icd_buf_puts(b, ", ");
        dr_sql_ident(b, d ? d : "");
    }
}

static void extern_arg(icd_buf *b, const json_t *v, bool last)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    icd_buf_puts(b, "    ");
    if (text)
        dr_sql_string(b, text, strlen(text));
    else
        b->oom = true;
    icd_buf_puts(b, last ? "\n" : ",\n");
    free(text);
}

static int msq_statement(const emit_ctx *c, const msq_cols *m, const dr_interval *r,
                         const json_t *fmt, icd_buf *b)
{
    json_t *src = NULL;
    ICD_TRY(source_for(c, r, r ? 1 : 0, &src));
    /* MSQ slices a splittable source in two steps, the second calling the top source's
     * withSplit with its delegates' own per-file splits: a `combining` source (whose
     * withSplit expects its (delegate, split) pairs) fails with a ClassCastException
     * (ExternalInputSpecSlicer.splitsToSlice, Druid 26+). Native index_parallel reads it. */
    const char *stype = json_string_value(json_object_get(src, "type"));
    if (stype && !strcmp(stype, "combining")) {
        json_decref(src);
        return icd_fail(c->err, ICD_EUNSUPPORTED, NULL, -1,
                        "--emit msq: the rows would come from raw files and files served by "
                        "`icedruid serve` in one `combining` input source, which Druid's MSQ "
                        "cannot read (its slicer fails on `combining`); use --emit native "
                        "(index_parallel reads it), or --stage-to LOCATION (raw and staged "
                        "files in one warehouseSource)");
    }
    icd_buf_puts(b, "REPLACE INTO ");
    dr_sql_ident(b, dr_spec_data_source(c->spec));
    if (r) {
        icd_buf_puts(b, "\nOVERWRITE WHERE \"__time\" >= TIMESTAMP '");
        dr_fmt_sql_ts(b, r->start);
        icd_buf_puts(b, "' AND \"__time\" < TIMESTAMP '");
        dr_fmt_sql_ts(b, r->end);
        icd_buf_puts(b, "'");
    } else {
        icd_buf_puts(b, "\nOVERWRITE ALL");
    }
    icd_buf_puts(b, "\nSELECT\n  ");
    int rc = msq_time_column(c, m, b);
    icd_buf_puts(b, " AS \"__time\"");
    icd_buf_append(b, m->select.data, m->select.len);
    icd_buf_puts(b, "\nFROM TABLE(\n  EXTERN(\n");
    extern_arg(b, src, false);
    extern_arg(b, fmt, false);
    extern_arg(b, m->sig, true);
    icd_buf_puts(b, "  )\n)");
    json_decref(src);
    if (!r) { /* rows Druid's parser rejects have a NULL __time here */
        icd_buf_puts(b, "\nWHERE ");
        icd_buf_append(b, m->tsexpr.data, m->tsexpr.len);
        icd_buf_puts(b, " IS NOT NULL");
    }
    if (r) {
        icd_buf_puts(b, "\nWHERE ");
        icd_buf_append(b, m->tsexpr.data, m->tsexpr.len);
        icd_buf_puts(b, " >= TIMESTAMP '");
        dr_fmt_sql_ts(b, r->start);
        icd_buf_puts(b, "' AND ");
        icd_buf_append(b, m->tsexpr.data, m->tsexpr.len);
        icd_buf_puts(b, " < TIMESTAMP '");
        dr_fmt_sql_ts(b, r->end);
        icd_buf_puts(b, "'");
    }
    if (m->rollup) {
        icd_buf_puts(b, "\nGROUP BY ");
        for (size_t i = 1; i <= m->n_group; i++)
            icd_buf_printf(b, "%s%zu", i > 1 ? ", " : "", i);
    }
    if (!rc) rc = msq_partitioned_by(c, b);
    if (!rc) clustered_by(c, b);
    if (!rc && !icd_buf_ok(b)) rc = icd_fail_nomem(c->err);
    return rc;
}

static json_t *msq_context(const emit_ctx *c, bool rollup)
{
    json_t *ctx = json_object();
    if (!ctx) return NULL;
    if (rollup) { /* rollup stores intermediate aggregates, as native ingestion does */
        json_object_set_new(ctx, "finalizeAggregations", json_false());
        json_object_set_new(ctx, "groupByEnableMultiValueUnnesting", json_false());
    }
    if (json_is_object(c->o->context) && json_object_update(ctx, (json_t *)c->o->context)) {
        json_decref(ctx);
        return NULL;
    }
    return ctx;
}

/* v2 with many MSQ ranges: the splits of all ranges, computed once and used by every
 * statement (a superset per statement; the WHERE keeps the rows right). */
static int union_keep(emit_ctx *c)
{
    json_t *io = io_config_of(c->spec, c->v2_doc);
    size_t n = c->files
                   ? ice_scan_plan_task_count(dr_plan_scan(c->o->plan))
                   : json_array_size(json_object_get(json_object_get(io, "inputSource"), "uris"));
    c->union_keep = calloc(n ? n : 1, sizeof *c->union_keep);
    if (!c->union_keep) return icd_fail_nomem(c->err);
    c->union_n = n;
    return v2_keep(c, c->ranges, c->n_ranges, c->union_keep, n);
}

static int build_msq(emit_ctx *c, dr_emit_list *l)
{
    msq_cols m = {json_array(), ICD_BUF_INIT, ICD_BUF_INIT, 0, false};
    if (!m.sig) return icd_fail_nomem(c->err);
    int rc = msq_columns(c, &m);
    json_t *fmt = NULL;
    if (!rc && c->v2) {
        json_t *io = io_config_of(c->spec, c->v2_doc);
        fmt = json_incref(json_object_get(io, "inputFormat"));
    } else if (!rc) {
        fmt = json_incref((json_t *)dr_spec_input_format(c->spec));
    }
    if (!rc && !fmt)
        rc = icd_fail(c->err, ICD_EINVALID, NULL, -1,
                      "--emit msq: the spec has no ioConfig.inputFormat");
    size_t n = c->full ? 1 : c->n_ranges;
    if (!rc && !(l->items = calloc(n ? n : 1, sizeof *l->items))) rc = icd_fail_nomem(c->err);
    /* one plan per statement costs too much */
    if (!rc && (c->v2 || c->files) && n > EMIT_MAX_PLANS) rc = union_keep(c);
    icd_buf b = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < n; i++) {
        icd_buf_clear(&b);
        const dr_interval *r = c->full ? NULL : &c->ranges[i];
        rc = msq_statement(c, &m, r, fmt, &b);
        if (rc) break;
        dr_emit_item *it = &l->items[l->n];
        it->kind = DR_EMIT_MSQ;
        it->full = c->full;
        if (r) it->range = *r;
        it->sql = icd_buf_detach(&b);
        json_t *ctx = it->sql ? msq_context(c, m.rollup) : NULL;
        it->payload = ctx ? json_pack("{s:s,s:o}", "query", it->sql, "context", ctx) : NULL;
        l->n++;
        if (!it->payload) rc = icd_fail_nomem(c->err);
    }
    icd_buf_free(&b);
    json_decref(fmt);
    json_decref(m.sig);
    icd_buf_free(&m.select);
    icd_buf_free(&m.tsexpr);
    return rc;
}

/* ---- entry points ---------------------------------------------------------------------- */

void dr_emit_list_free(dr_emit_list *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].sql);
        json_decref(l->items[i].payload);
    }
    free(l->items);
    free(l->ranges);
    memset(l, 0, sizeof *l);
}

static int prepare_v2(emit_ctx *c)
{
    dr_rewrite_opts ro = {c->o->serve_url, c->o->auth_user, c->o->auth_password, false, NULL, NULL};
    if (!c->o->serve_url || !*c->o->serve_url)
        return icd_fail(c->err, ICD_EINVALID, NULL, -1,
                        "the snapshot to re-ingest has delete files (v2): Druid's iceberg input "
                        "source would bring deleted rows back, so the rows must come from "
                        "`icedruid serve`; give its URL with --serve-url");
    return dr_rewrite_spec(c->o->plan, &ro, &c->v2_doc, c->err);
}

int dr_emit_build(dr_emit_kind kind, const dr_spec *spec, const dr_diff *diff,
                  const dr_emit_opts *opts, dr_emit_list *out, icd_error *err)
{
    static const dr_emit_opts none = {0};
    memset(out, 0, sizeof *out);
    out->kind = kind;
    emit_ctx c = {0};
    c.kind = kind;
    c.spec = spec;
    c.o = opts ? opts : &none;
    c.err = err;
    c.full = diff == NULL;
    if (dr_spec_shape(spec) == DR_DOC_INPUT_SOURCE || !dr_spec_data_source(spec))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "the spec is a bare input source: re-ingestion needs a whole ingestion "
                        "spec (dataSchema.dataSource, timestampSpec, granularitySpec)");
    if (c.o->plan) {
        c.schema = dr_plan_schema(c.o->plan);
        c.snap = ice_scan_plan_snapshot(dr_plan_scan(c.o->plan));
        c.v2 = dr_plan_is_v2(c.o->plan);
        dr_rewrite_opts fo = {c.o->serve_url, NULL, NULL, c.o->files, c.o->stage_to, NULL};
        if (dr_rewrite_uses_files(c.o->plan, &fo)) {
            c.files = true;
            c.v2 = false; /* Druid reads the files with the user's own format and timestampSpec */
        }
        ICD_TRY(dr_rewrite_check_raw(c.o->plan, &fo, err)); /* Druid's iceberg source: raw reads */
    }
    if (c.schema) c.ts_field = schema_field(&c, dr_spec_timestamp_spec(spec)->column);
    if (diff) {
        ICD_TRY(dr_emit_ranges(spec, diff, c.o->replace_only, &out->ranges, &out->n_ranges, err));
        if (!out->n_ranges) return 0;
        /* Segment granularity ALL: the one bucket is everything */
        if (out->ranges[0].start == INT64_MIN || out->ranges[out->n_ranges - 1].end == INT64_MAX) {
            free(out->ranges);
            out->ranges = NULL;
            out->n_ranges = 0;
            c.full = true;
        }
    }
    c.ranges = out->ranges;
    c.n_ranges = out->n_ranges;
    out->v2 = c.v2;
    out->files = c.files;
    int rc = c.v2 ? prepare_v2(&c) : 0;
    if (!rc) rc = kind == DR_EMIT_MSQ ? build_msq(&c, out) : build_native(&c, out);
    json_decref(c.v2_doc);
    free(c.union_keep);
    if (rc) dr_emit_list_free(out);
    return rc;
}

int dr_emit_write(const dr_emit_list *l, icd_buf *out, icd_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        if (i) icd_buf_putc(out, '\n');
        if (l->items[i].sql) {
            /* no ';': Druid's SQL API rejects a trailing semicolon */
            icd_buf_puts(out, l->items[i].sql);
            icd_buf_putc(out, '\n');
            continue;
        }
        char *text = json_dumps(l->items[i].payload, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text) return icd_fail_nomem(err);
        icd_buf_puts(out, text);
        icd_buf_putc(out, '\n');
        free(text);
    }
    return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
}

static int emit_text(dr_emit_kind kind, const dr_spec *spec, const dr_diff *diff,
                     const dr_emit_opts *opts, icd_buf *out, icd_error *err)
{
    dr_emit_list l;
    ICD_TRY(dr_emit_build(kind, spec, diff, opts, &l, err));
    int rc = dr_emit_write(&l, out, err);
    dr_emit_list_free(&l);
    return rc;
}

int dr_emit_msq(const dr_spec *spec, const dr_diff *diff, const dr_emit_opts *opts, icd_buf *out,
                icd_error *err)
{
    return emit_text(DR_EMIT_MSQ, spec, diff, opts, out, err);
}

int dr_emit_native(const dr_spec *spec, const dr_diff *diff, const dr_emit_opts *opts, icd_buf *out,
                   icd_error *err)
{
    return emit_text(DR_EMIT_NATIVE, spec, diff, opts, out, err);
}
