/*
 * Spec rewriting (see rewrite.h): the last step of planning, producing what the user
 * POSTs to Druid's task endpoint. Works on a deep copy of the original document so that
 * every field icedruid does not need to change passes through untouched.
 */
#include "druid/plan/rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "druid/spec/jsonget.h"
#include "druid/serve/serve_files.h"
#include "druid/serve/server.h"
#include "druid/stage/stage.h"
#include "iceberg/schema.h"

#define DR_REWRITE_PATH 512

/* Splits "a.b.inputSource" into the parent path "a.b" (in `parent`). */
static void parent_path(const char *path, char *parent, size_t cap)
{
    const char *dot = strrchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : 0;
    if (n >= cap) n = cap - 1;
    memcpy(parent, path, n);
    parent[n] = '\0';
}

static int build_http_source(const dr_plan *p, const dr_rewrite_opts *o, json_t **out,
                             icd_error *err)
{
    if (!o || !o->serve_url || !*o->serve_url)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "%s: the rewritten spec reads the splits from `icedruid serve`; give "
                        "its URL with --serve-url",
                        ice_scan_plan_has_deletes(dr_plan_scan(p))
                            ? "the table has delete files (v2)"
                            : "icedruid reads this table's rows (v2: a file must be "
                              "materialized that Druid cannot be given as a file)");
    json_t *src = json_object();
    json_t *uris = json_array();
    int rc = (!src || !uris) ? icd_fail_nomem(err) : 0;
    icd_buf url = ICD_BUF_INIT;
    size_t base_len = strlen(o->serve_url);
    while (base_len && o->serve_url[base_len - 1] == '/')
        base_len--;
    char *base = strndup(o->serve_url, base_len);
    if (!base && !rc) rc = icd_fail_nomem(err);
    for (size_t i = 0; !rc && i < dr_plan_split_count(p); i++) {
        icd_buf_clear(&url);
        dr_server_split_url(&url, base, i);
        if (!icd_buf_ok(&url) || json_array_append_new(uris, json_stringn(url.data, url.len)))
            rc = icd_fail_nomem(err);
    }
    free(base);
    icd_buf_free(&url);
    if (!rc) {
        json_object_set_new(src, "type", json_string("http"));
        json_object_set_new(src, "uris", uris);
        uris = NULL;
        if (o->auth_user)
            json_object_set_new(src, "httpAuthenticationUsername", json_string(o->auth_user));
        if (o->auth_password)
            json_object_set(src, "httpAuthenticationPassword", (json_t *)o->auth_password);
        *out = src;
        return 0;
    }
    json_decref(src);
    json_decref(uris);
    return rc;
}

static bool has_string(const json_t *arr, const char *s)
{
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (!strcmp(json_string_value(json_array_get(arr, i))
                        ? json_string_value(json_array_get(arr, i))
                        : "",
                    s))
            return true;
    return false;
}

/* dataSchema edits of the v2 path: __time timestampSpec, exclusions. */
static int rewrite_data_schema(const dr_plan *p, json_t *ds, icd_error *err)
{
    json_t *ts = json_pack("{s:s,s:s}", "column", "__time", "format", "millis");
    json_t *excl = NULL;
    int rc = ts ? dr_spec_rewrite_exclusions(dr_plan_spec(p), &excl, err) : icd_fail_nomem(err);
    if (rc) {
        json_decref(ts);
        return rc;
    }
    /* Schemaless discovery: Druid's Parquet reader discovers only primitive root columns
     * (unless nested discovery is on) while its JSON reader also takes lists of
     * literals; exclude the nested columns so both paths discover the same. */
    const dr_dimensions_spec *dd = dr_spec_dimensions(dr_plan_spec(p));
    const ice_schema *schema = dr_plan_schema(p);
    if (schema && (dd->n_dims == 0 || dd->include_all_dimensions) && !dd->use_schema_discovery) {
        for (size_t i = 0; i < schema->root.nfields; i++) {
            const ice_field *f = &schema->root.fields[i];
            if (ice_type_is_primitive(f->type) || has_string(excl, f->name)) continue;
            if (json_array_append_new(excl, json_string(f->name))) {
                json_decref(ts);
                json_decref(excl);
                return icd_fail_nomem(err);
            }
        }
    }
    json_object_set_new(ds, "timestampSpec", ts);
    json_t *dims = json_object_get(ds, "dimensionsSpec");
    if (!json_is_object(dims)) {
        dims = json_object();
        if (!dims) {
            json_decref(excl);
            return icd_fail_nomem(err);
        }
        json_object_set_new(ds, "dimensionsSpec", dims);
    }
    if (json_array_size(excl))
        json_object_set_new(dims, "dimensionExclusions", excl);
    else
        json_decref(excl);
    return 0;
}

static int rewrite_v2(const dr_plan *p, const dr_rewrite_opts *o, json_t *doc, json_t **out,
                      icd_error *err)
{
    const dr_spec *s = dr_plan_spec(p);
    json_t *src = NULL;
    int rc = build_http_source(p, o, &src, err);
    if (rc) { /* the copy of the spec is ours to free on every path */
        json_decref(doc);
        return rc;
    }
    if (dr_spec_shape(s) == DR_DOC_INPUT_SOURCE) {
        json_decref(doc);
        *out = src;
        return 0;
    }
    char io_path[DR_REWRITE_PATH], root_path[DR_REWRITE_PATH];
    parent_path(dr_spec_input_source_path(s), io_path, sizeof io_path);
    parent_path(io_path, root_path, sizeof root_path);
    json_t *io = dr_json_object_at(doc, io_path);
    json_t *root = dr_json_object_at(doc, root_path);
    if (!io || !root) {
        json_decref(src);
        json_decref(doc);
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "the spec's ioConfig was not found");
    }
    json_object_set_new(io, "inputSource", src);
    /* keepNullColumns: the Parquet reader discovers columns whatever their values */
    /* featureSpec: the served rows keep NaN and +-Infinity as Jackson's non-numeric
     * numbers (JSON has none), which Druid's json reader accepts only with this feature */
    json_t *fmt = json_pack("{s:s,s:b,s:{s:b}}", "type", "json", "keepNullColumns", 1,
                            "featureSpec", "ALLOW_NON_NUMERIC_NUMBERS", 1);
    const json_t *old = json_object_get(io, "inputFormat");
    const json_t *flatten = json_is_object(old) ? json_object_get(old, "flattenSpec") : NULL;
    if (fmt && flatten) json_object_set(fmt, "flattenSpec", (json_t *)flatten);
    if (!fmt) {
        json_decref(doc);
        return icd_fail_nomem(err);
    }
    json_object_set_new(io, "inputFormat", fmt);
    json_t *ds = json_object_get(root, "dataSchema");
    if (!json_is_object(ds)) {
        ds = json_object();
        json_object_set_new(root, "dataSchema", ds);
    }
    rc = ds ? rewrite_data_schema(p, ds, err) : icd_fail_nomem(err);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

int dr_rewrite_with_source(const dr_plan *p, json_t *src, json_t **out, icd_error *err)
{
    *out = NULL;
    const dr_spec *s = dr_plan_spec(p);
    if (dr_spec_shape(s) == DR_DOC_INPUT_SOURCE) {
        *out = src;
        return 0;
    }
    json_t *doc = json_deep_copy(dr_spec_document(s));
    if (!doc) {
        json_decref(src);
        return icd_fail_nomem(err);
    }
    char io_path[DR_REWRITE_PATH];
    parent_path(dr_spec_input_source_path(s), io_path, sizeof io_path);
    json_t *io = dr_json_object_at(doc, io_path);
    if (!io) {
        json_decref(src);
        json_decref(doc);
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "the spec's ioConfig was not found");
    }
    json_object_set_new(io, "inputSource", src);
    *out = doc;
    return 0;
}

static int rewrite_v1(const dr_plan *p, json_t *doc, json_t **out, icd_error *err)
{
    if (dr_plan_split_count(p) == 0) { /* Druid's own iceberg source reads nothing */
        *out = doc;
        return 0;
    }
    json_decref(doc);
    json_t *src = NULL;
    ICD_TRY(dr_plan_v1_source(p, &src, err));
    return dr_rewrite_with_source(p, src, out, err);
}

bool dr_rewrite_uses_files(const dr_plan *p, const dr_rewrite_opts *o)
{
    bool where = o && ((o->serve_url && *o->serve_url) || o->stage_to);
    return where && o->files && dr_plan_split_count(p) && dr_plan_decision(p, 0) &&
           dr_plan_materialized_count(p) && !dr_serve_files_orc(p, NULL);
}

int dr_rewrite_check_raw(const dr_plan *p, const dr_rewrite_opts *o, icd_error *err)
{
    bool where = o && ((o->serve_url && *o->serve_url) || o->stage_to);
    size_t m = dr_plan_materialized_count(p);
    if (where || !o || !o->files || dr_plan_is_v2(p) || !m || !dr_plan_decision(p, 0) ||
        dr_serve_files_orc(p, NULL))
        return 0;
    size_t n = dr_plan_split_count(p), first = 0;
    while (first < n && dr_plan_decision(p, first)->raw)
        first++;
    if (first == n) return 0;
    char *loc = dr_plan_task_location(p, first);
    const dr_plan_file *d = dr_plan_decision(p, first);
    char more[64] = "";
    if (m > 1) snprintf(more, sizeof more, " (and %zu more data files)", m - 1);
    int rc = icd_fail(err, ICD_EINVALID, loc ? loc : "", -1,
                      "cannot be read raw: %s%s; Druid would read it as written (wrong or missing "
                      "values), so its rows must come from a materialized file: give the URL of "
                      "`icedruid serve` with --serve-url, or stage the files (`icedruid stage "
                      "--to LOCATION`; `diff --stage-to`)",
                      d->reason && *d->reason ? d->reason : "see `icedruid plan`", more);
    free(loc);
    return rc;
}

int dr_rewrite_files_source(const dr_plan *p, const dr_rewrite_opts *o, const bool *keep,
                            json_t **out, icd_error *err)
{
    *out = NULL;
    if (!o || ((!o->serve_url || !*o->serve_url) && !o->stage_to))
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "some data files must be materialized (deletes or schema changes): the "
                        "spec reads them from `icedruid serve`; give its URL with --serve-url "
                        "(or stage them with `icedruid stage`)");
    const ice_scan_plan *sp = dr_plan_scan(p);
    size_t n = ice_scan_plan_task_count(sp), kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += !keep || keep[i];
    const char *bu = o->stage_to ? o->stage_to : o->serve_url;
    size_t base_len = strlen(bu);
    while (base_len > 1 && bu[base_len - 1] == '/')
        base_len--;
    char *base = strndup(bu, base_len);
    char **raw = calloc(n ? n : 1, sizeof *raw);
    json_t *uris = json_array();
    int rc = (!base || !raw || !uris) ? icd_fail_nomem(err) : 0;
    size_t nraw = 0;
    icd_buf name = ICD_BUF_INIT, url = ICD_BUF_INIT;
    for (size_t i = 0; !rc && i < n; i++) {
        if (kept ? keep && !keep[i] : i > 0) continue;
        const dr_plan_file *d = dr_plan_decision(p, i);
        if (!d) {
            rc = icd_fail(err, ICD_EINTERNAL, NULL, -1, "the plan was not decided");
            break;
        }
        if (o->used) o->used[i] = true;
        if (d->raw) {
            if (!(raw[nraw++] = dr_plan_task_location(p, i))) rc = icd_fail_nomem(err);
            continue;
        }
        icd_buf_clear(&name);
        icd_buf_clear(&url);
        rc = dr_stage_name(dr_plan_metadata(p), dr_plan_stage_cols(p)->schema,
                           ice_scan_plan_task(sp, i), &name, err);
        if (rc) break;
        if (o->stage_to) { /* staged: listed with the raw files */
            icd_buf_printf(&url, "%s/%s", base, name.data);
            if (!icd_buf_ok(&url) || !(raw[nraw++] = strdup(url.data))) rc = icd_fail_nomem(err);
            continue;
        }
        dr_serve_files_url(&url, base, p, name.data);
        if (!icd_buf_ok(&url) || json_array_append_new(uris, json_stringn(url.data, url.len)))
            rc = icd_fail_nomem(err);
    }
    icd_buf_free(&name);
    icd_buf_free(&url);
    json_t *ws = NULL, *http = NULL;
    if (!rc && nraw)
        rc = dr_warehouse_source_create(dr_spec_warehouse_source(dr_plan_spec(p)),
                                        (const char *const *)raw, nraw, &ws, err);
    if (!rc && json_array_size(uris)) {
        http = json_pack("{s:s,s:O}", "type", "http", "uris", uris);
        if (!http) rc = icd_fail_nomem(err);
        if (!rc && o->auth_user)
            json_object_set_new(http, "httpAuthenticationUsername", json_string(o->auth_user));
        if (!rc && o->auth_password)
            json_object_set(http, "httpAuthenticationPassword", (json_t *)o->auth_password);
    }
    if (!rc) {
        if (ws && http) {
            *out = json_pack("{s:s,s:[o,o]}", "type", "combining", "delegates", ws, http);
            ws = http = NULL;
            if (!*out) rc = icd_fail_nomem(err);
        } else {
            *out = ws ? ws : http;
            ws = http = NULL;
        }
    }
    json_decref(ws);
    json_decref(http);
    json_decref(uris);
    for (size_t i = 0; i < nraw; i++)
        free(raw[i]);
    free(raw);
    free(base);
    return rc;
}

int dr_rewrite_spec(const dr_plan *p, const dr_rewrite_opts *o, json_t **out, icd_error *err)
{
    *out = NULL;
    ICD_TRY(dr_rewrite_check_raw(p, o, err));
    if (dr_rewrite_uses_files(p, o)) {
        json_t *src = NULL;
        ICD_TRY(dr_rewrite_files_source(p, o, NULL, &src, err));
        return dr_rewrite_with_source(p, src, out, err);
    }
    json_t *doc = json_deep_copy(dr_spec_document(dr_plan_spec(p)));
    if (!doc) return icd_fail_nomem(err);
    return dr_plan_is_v2(p) ? rewrite_v2(p, o, doc, out, err) : rewrite_v1(p, doc, out, err);
}

int dr_rewrite_spec_text(const dr_plan *p, const dr_rewrite_opts *o, icd_buf *out, icd_error *err)
{
    json_t *doc = NULL;
    ICD_TRY(dr_rewrite_spec(p, o, &doc, err));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (!text) return icd_fail_nomem(err);
    icd_buf_puts(out, text);
    icd_buf_putc(out, '\n');
    free(text);
    return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
}
