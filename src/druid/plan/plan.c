/*
 * Druid ingestion planning (see plan.h): the first step of every spec-driven command.
 * spec -> catalog -> table metadata -> snapshot -> Iceberg scan plan -> the v1/v2
 * decision, then either the warehouse input source Druid reads natively (v1) or one
 * self-contained split per data file that the merge-on-read reader consumes (v2,
 * read back by split.c).
 */
#include "druid/plan/plan.h"
#include "druid/spec/spec_columns.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/jsonw.h"
#include "base/ptrtext.h"
#include "druid/plan/catalog_load.h"
#include "druid/plan/stage_decide.h"
#include "druid/plan/to_iceberg.h"
#include "iceberg/literal.h"
#include "iceberg/partition.h"
#include "iceberg/schema.h"

struct dr_plan {
    const dr_spec *spec;
    icd_fileio *io;
    ice_metadata *md;
    ice_scan_plan *scan;     /* materialized, or NULL and: */
    ice_scan_stream *stream; /* streamed (dr_plan_opts.stream) */
    bool v2;
    bool residual;
    icd_buf residual_text;
    icd_arena filter_arena;  /* the Iceberg form of the icebergFilter */
    dr_plan_file *decisions; /* per task: raw or materialized, and why */
    size_t ndecisions;
    icd_map *reasons;    /* the distinct reason texts the decisions point into */
    bool druid_original; /* dr_plan_opts.druid_original_locations */
    bool project;        /* dr_plan_opts.project_staged */
    dr_stage_cols stage;
};

/* The scan's facts, materialized or streamed. */
static const ice_schema *plan_schema(const dr_plan *p)
{
    return p->scan ? ice_scan_plan_schema(p->scan) : ice_scan_stream_schema(p->stream);
}
static const ice_snapshot *plan_snapshot(const dr_plan *p)
{
    return p->scan ? ice_scan_plan_snapshot(p->scan) : ice_scan_stream_snapshot(p->stream);
}
static ice_scan_counts plan_counts(const dr_plan *p)
{
    return p->scan ? ice_scan_plan_counts(p->scan) : ice_scan_stream_counts(p->stream);
}
static size_t plan_task_count(const dr_plan *p)
{
    return p->scan ? ice_scan_plan_task_count(p->scan) : 0;
}

/* Hands the tasks to `fn` in plan order: the materialized ones as one batch, or a run of
 * the stream. */
static int each_task(const dr_plan *p, ice_scan_consumer fn, void *ctx, icd_error *err)
{
    if (p->stream) return ice_scan_stream_run(p->stream, fn, ctx, err);
    ice_scan_batch b = {ice_scan_plan_task_count(p->scan) ? ice_scan_plan_task(p->scan, 0) : NULL,
                        ice_scan_plan_task_count(p->scan), 0, NULL};
    return fn(ctx, &b, err);
}

/* The same for a consumer that reads the data files only (a streamed plan does not look
 * its delete files up again). */
static int each_data_file(const dr_plan *p, ice_scan_consumer fn, void *ctx, icd_error *err)
{
    if (p->stream) return ice_scan_stream_run_data(p->stream, fn, ctx, err);
    ice_scan_batch b = {ice_scan_plan_task_count(p->scan) ? ice_scan_plan_task(p->scan, 0) : NULL,
                        ice_scan_plan_task_count(p->scan), 0, NULL};
    return fn(ctx, &b, err);
}

/* ---- what materialized files hold ---------------------------------------------------- */

/* The schema with only the top-level fields named in `names` (in its own order); its
 * identifier fields are left out (a projection is not a table schema). */
static int project_schema(const ice_schema *s, const char *const *names, size_t n, ice_schema **out,
                          icd_error *err)
{
    icd_buf b = ICD_BUF_INIT;
    ice_schema_to_json(&b, s);
    json_t *j = icd_buf_ok(&b) ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    icd_buf_free(&b);
    json_t *fields = j ? json_object_get(j, "fields") : NULL;
    json_t *kept = json_array();
    int rc = 0;
    if (!j || !json_is_array(fields) || !kept) rc = icd_fail_nomem(err);
    for (size_t i = 0; !rc && i < json_array_size(fields); i++) {
        json_t *f = json_array_get(fields, i);
        const char *name = json_string_value(json_object_get(f, "name"));
        for (size_t k = 0; name && k < n; k++)
            if (!strcmp(names[k], name)) {
                if (json_array_append(kept, f)) rc = icd_fail_nomem(err);
                break;
            }
    }
    if (!rc && json_object_set(j, "fields", kept)) rc = icd_fail_nomem(err);
    if (!rc) json_object_del(j, "identifier-field-ids"); /* (-1: there were none) */
    char *text = rc ? NULL : json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!rc && !text) rc = icd_fail_nomem(err);
    if (!rc) rc = ice_schema_parse(text, strlen(text), "the projected read schema", out, err);
    free(text);
    json_decref(kept);
    json_decref(j);
    return rc;
}

int dr_stage_cols_init(dr_stage_cols *c, const dr_spec *spec, bool project,
                       const ice_schema *schema, icd_error *err)
{
    memset(c, 0, sizeof *c);
    c->schema = schema;
    if (!project || !schema) return 0;
    ICD_TRY(dr_spec_columns_filter(spec, schema, &c->names, &c->n, err));
    if (!c->names) return 0; /* every column kept */
    int rc = project_schema(schema, c->names, c->n, &c->owned, err);
    if (rc) {
        dr_stage_cols_free(c);
        return rc;
    }
    c->schema = c->owned;
    return 0;
}

void dr_stage_cols_free(dr_stage_cols *c)
{
    free(c->names);
    ice_schema_free(c->owned);
    memset(c, 0, sizeof *c);
}

/* ---- table resolution ---------------------------------------------------------------- */

static int load_table(dr_plan *p, icd_error *err)
{
    return dr_catalog_load(dr_spec_catalog(p->spec), dr_spec_namespace(p->spec),
                           dr_spec_table_name(p->spec), p->io, &p->md, err);
}

int dr_plan_load_metadata(const dr_spec *spec, icd_fileio *io, ice_metadata **out, icd_error *err)
{
    *out = NULL;
    return dr_catalog_load(dr_spec_catalog(spec), dr_spec_namespace(spec), dr_spec_table_name(spec),
                           io, out, err);
}

/* ---- planning ------------------------------------------------------------------------ */

/* The spec's icebergFilter as an Iceberg expression: the planner binds it to the snapshot's
 * schema, prunes manifests and data files that cannot match, and reports what remains
 * to be checked on rows (the residual). */
static int plan_filter(dr_plan *p, const ice_expr **out, icd_error *err)
{
    *out = NULL;
    if (!dr_spec_filter(p->spec)) return 0;
    dr_pred *pred = NULL;
    ICD_TRY(dr_spec_filter_pred(p->spec, &pred, err));
    int rc = dr_pred_to_ice_expr(pred, &p->filter_arena, out, err);
    dr_pred_free(pred);
    return rc;
}

static int check_residual(dr_plan *p, icd_error *err)
{
    const char *text = NULL;
    if (p->scan ? ice_scan_plan_has_residual(p->scan, &text)
                : ice_scan_stream_has_residual(p->stream, &text)) {
        p->residual = true;
        icd_buf_puts(&p->residual_text, text ? text : "?");
    }
    if (!icd_buf_ok(&p->residual_text)) return icd_fail_nomem(err);
    if (p->residual && dr_spec_residual_mode(p->spec) == DR_RESIDUAL_FAIL)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "Iceberg filter produced residual expression that requires row-level "
                        "filtering. This typically means the filter is on a non-partition "
                        "column. Residual rows may be ingested unless filtered by "
                        "transformSpec. Residual filter: [%s] (residualFilterMode is 'fail')",
                        p->residual_text.data ? p->residual_text.data : "");
    return 0;
}

/* The per-file raw / materialized decisions (stage_decide.h) of a run of tasks, appended
 * to p->decisions. */
#define REASON_MEMO 256 /* (a power of two) */

typedef struct decide_run {
    dr_plan *p;
    dr_decide_ctx *c;
    size_t cap;
    /* reason key (stage_decide.h) -> its text in p->reasons: direct-mapped, so the tasks
     * whose reason is one of a few delete-count texts skip the hashing of it */
    struct {
        uint64_t key;
        const char *text;
    } memo[REASON_MEMO];
} decide_run;

static size_t memo_slot(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 56) & (REASON_MEMO - 1);
}

/* The one copy in p->reasons of the decision's reason. */
static int intern_reason(decide_run *r, const dr_file_decision *fd, const char **out,
                         icd_error *err)
{
    dr_plan *p = r->p;
    size_t m = memo_slot(fd->reason_key);
    if (fd->reason_key && r->memo[m].key == fd->reason_key) {
        *out = r->memo[m].text;
        return 0;
    }
    size_t len = strlen(fd->reason) + 1;
    uint64_t *slot;
    bool fresh;
    ICD_TRY(icd_map_upsert(p->reasons, fd->reason, len, icd_hash_bytes(fd->reason, len), &slot,
                           &fresh, err));
    if (fresh) *slot = icd_map_count(p->reasons) - 1;
    *out = (const char *)icd_map_at(p->reasons, *slot).key;
    if (fd->reason_key) {
        r->memo[m].key = fd->reason_key;
        r->memo[m].text = *out;
    }
    return 0;
}

static int decide_batch(void *ctx, ice_scan_batch *batch, icd_error *err)
{
    decide_run *r = ctx;
    dr_plan *p = r->p;
    size_t n = batch->first + batch->ntasks;
    if (n > r->cap) {
        size_t nc = r->cap + r->cap / 2 > n ? r->cap + r->cap / 2 : n;
        dr_plan_file *v = realloc(p->decisions, (nc ? nc : 1) * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        p->decisions = v;
        r->cap = nc;
    }
    if (batch->ntasks && !r->c) { /* (an empty plan opens no decider) */
        ICD_TRY(dr_decide_new(p->io, p->md, plan_schema(p), &r->c, err));
        ICD_TRY(icd_map_new(&p->reasons, 64, err));
    }
    dr_file_decision fd;
    for (size_t j = 0; j < batch->ntasks; j++) {
        const ice_scan_task *t = &batch->tasks[j];
        dr_plan_file *dec = &p->decisions[batch->first + j];
        /* a task its delete files decide, whose reason text is known already: the decision
         * dr_decide_task would make (materialized, from the metadata), without making the
         * text again */
        uint64_t key = dr_decide_deletes_key(t);
        size_t m = memo_slot(key);
        if (key && r->memo[m].key == key) {
            *dec = (dr_plan_file){false, false, r->memo[m].text};
        } else {
            ICD_TRY(dr_decide_task(r->c, t, &fd, err));
            /* a million tasks share a few hundred reason texts: keep each once */
            const char *reason;
            ICD_TRY(intern_reason(r, &fd, &reason, err));
            *dec = (dr_plan_file){fd.raw, fd.from_footer, reason};
        }
        /* A file that must be materialized in a format icedruid cannot write (ORC) reaches
         * Druid as NDJSON splits, deletes or not: its raw read is not the Iceberg read. */
        ice_file_format f = t->data->format;
        if (!dec->raw && f != ICE_FORMAT_PARQUET && f != ICE_FORMAT_AVRO) p->v2 = true;
    }
    p->ndecisions = n;
    return 0;
}

/* The per-file raw / materialized decision (stage_decide.h), once per task, on first
 * use (commands that do not need it never open a data file while planning); a streamed
 * plan makes them while it is built. */
int dr_plan_decide(dr_plan *p, icd_error *err)
{
    if (p->decisions) return 0;
    decide_run *r = calloc(1, sizeof *r);
    if (!r) return icd_fail_nomem(err);
    r->p = p;
    p->ndecisions = 0;
    p->decisions = calloc(1, sizeof *p->decisions);
    if (!p->decisions) {
        free(r);
        return icd_fail_nomem(err);
    }
    int rc = each_task(p, decide_batch, r, err);
    dr_decide_free(r->c);
    free(r);
    if (rc) {
        free(p->decisions);
        p->decisions = NULL;
        p->ndecisions = 0;
    }
    return rc;
}

int dr_plan_decide_rows(dr_plan *p, icd_error *err)
{
    if (p->v2) return 0; /* every split is read by icedruid already */
    ICD_TRY(dr_plan_decide(p, err));
    size_t n = p->ndecisions;
    for (size_t i = 0; !p->v2 && i < n; i++)
        if (!p->decisions[i].raw) p->v2 = true;
    return 0;
}

int dr_plan_build(const dr_spec *spec, icd_fileio *io, const dr_plan_opts *opts, dr_plan **out,
                  icd_error *err)
{
    *out = NULL;
    dr_plan *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->spec = spec;
    p->io = io;
    p->druid_original = opts && opts->druid_original_locations;
    p->project = opts && opts->project_staged;
    int rc = load_table(p, err);
    ice_scan_opts so = {0};
    so.select.kind = ICE_SELECT_CURRENT;
    if (dr_spec_has_snapshot_time(spec)) {
        so.select.kind = ICE_SELECT_AS_OF;
        so.select.timestamp_ms = dr_spec_snapshot_time_ms(spec);
    }
    so.case_sensitive = dr_spec_case_sensitive(spec);
    so.threads = opts && opts->threads > 1 ? opts->threads : 1;
    if (!rc) rc = plan_filter(p, &so.filter, err);
    bool stream = opts && opts->stream;
    if (!rc && !stream) rc = ice_scan_plan_build(io, p->md, &so, &p->scan, err);
    if (!rc && stream) rc = ice_scan_stream_open(io, p->md, &so, &p->stream, err);
    if (!rc) rc = dr_spec_check_columns(spec, plan_schema(p), err);
    if (!rc) rc = dr_stage_cols_init(&p->stage, spec, p->project, plan_schema(p), err);
    if (!rc && stream) rc = dr_plan_decide(p, err); /* the first run of the stream */
    if (!rc) {
        p->v2 |=
            p->scan ? ice_scan_plan_has_deletes(p->scan) : ice_scan_stream_has_deletes(p->stream);
        rc = check_residual(p, err);
    }
    if (!rc && p->v2 && dr_spec_use_arrow_reader(spec))
        rc = icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                      "useArrowReader is true but the snapshot has delete files; the Arrow "
                      "reader rejects them (set useArrowReader to false to read with deletes)");
    if (rc) {
        dr_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void dr_plan_free(dr_plan *p)
{
    if (!p) return;
    dr_stage_cols_free(&p->stage);
    ice_scan_plan_free(p->scan);
    ice_scan_stream_free(p->stream);
    ice_metadata_free(p->md);
    icd_buf_free(&p->residual_text);
    icd_arena_free(&p->filter_arena);
    free(p->decisions);
    icd_map_free(p->reasons);
    free(p);
}

const dr_spec *dr_plan_spec(const dr_plan *p)
{
    return p->spec;
}
const ice_metadata *dr_plan_metadata(const dr_plan *p)
{
    return p->md;
}
const ice_scan_plan *dr_plan_scan(const dr_plan *p)
{
    return p->scan;
}
const ice_schema *dr_plan_schema(const dr_plan *p)
{
    return plan_schema(p);
}
const dr_stage_cols *dr_plan_stage_cols(const dr_plan *p)
{
    return &p->stage;
}
bool dr_plan_projects_staged(const dr_plan *p)
{
    return p->project;
}
bool dr_plan_is_v2(const dr_plan *p)
{
    return p->v2;
}
size_t dr_plan_split_count(const dr_plan *p)
{
    return plan_task_count(p);
}

const dr_plan_file *dr_plan_decision(const dr_plan *p, size_t i)
{
    return p->scan && p->decisions && i < p->ndecisions ? &p->decisions[i] : NULL;
}

size_t dr_plan_materialized_count(const dr_plan *p)
{
    size_t n = 0;
    for (size_t i = 0; p->decisions && i < p->ndecisions; i++)
        n += !p->decisions[i].raw;
    return n;
}

bool dr_plan_residual(const dr_plan *p, const char **text)
{
    if (text) *text = p->residual_text.data ? p->residual_text.data : "";
    return p->residual;
}

/* ---- v1: the warehouse input source -------------------------------------------------- */

typedef struct ws_kind {
    const char *type;
    const char *list_key;
} ws_kind;

static const ws_kind WS_KINDS[] = {
    {"local", "files"}, {"s3", "uris"},           {"hdfs", "paths"},
    {"google", "uris"}, {"azureStorage", "uris"}, {"azure", "uris"},
};

/* Keys of the input sources that name other ways to list objects: dropped from the copy,
 * since create(paths) builds a source from the paths alone. */
static const char *const LIST_KEYS[] = {"files",   "uris",    "paths", "prefixes",
                                        "objects", "baseDir", "filter"};

int dr_warehouse_source_create(const json_t *ws, const char *const *paths, size_t n, json_t **out,
                               icd_error *err)
{
    *out = NULL;
    const char *type = json_string_value(json_object_get(ws, "type"));
    const ws_kind *k = NULL;
    for (size_t i = 0; type && i < sizeof WS_KINDS / sizeof WS_KINDS[0]; i++)
        if (!strcmp(type, WS_KINDS[i].type)) k = &WS_KINDS[i];
    if (!k)
        return icd_fail(err, ICD_EUNSUPPORTED, NULL, -1,
                        "warehouseSource type '%s': icedruid does not know how Druid builds it "
                        "from file paths (local, s3, hdfs, google, azureStorage)",
                        type ? type : "(none)");
    json_t *o = json_deep_copy(ws);
    json_t *list = json_array();
    if (!o || !list) {
        json_decref(o);
        json_decref(list);
        return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < sizeof LIST_KEYS / sizeof LIST_KEYS[0]; i++)
        json_object_del(o, LIST_KEYS[i]);
    bool s3 = !strcmp(k->type, "s3");
    for (size_t i = 0; i < n; i++) {
        const char *path = paths[i];
        char *fixed = NULL;
        if (s3 && !strncmp(path, "s3a://", 6)) { /* Druid: replace(path, "s3a://", "s3://") */
            size_t len = strlen(path);
            fixed = malloc(len);
            if (fixed) {
                memcpy(fixed, "s3://", 5);
                memcpy(fixed + 5, path + 6, len - 5);
            }
        }
        if ((s3 && !strncmp(path, "s3a://", 6) && !fixed) ||
            json_array_append_new(list, json_string(fixed ? fixed : path))) {
            free(fixed);
            json_decref(o);
            json_decref(list);
            return icd_fail_nomem(err);
        }
        free(fixed);
    }
    if (json_object_set_new(o, k->list_key, list)) {
        json_decref(o);
        return icd_fail_nomem(err);
    }
    *out = o;
    return 0;
}

/* Does a location handed to Druid fit the warehouseSource it goes into? */
static bool has_prefix(const char *s, const char *const *prefixes)
{
    for (size_t i = 0; prefixes[i]; i++)
        if (!strncmp(s, prefixes[i], strlen(prefixes[i]))) return true;
    return false;
}

static int check_fits(const char *type, const char *loc, const char *own, bool original,
                      icd_error *err)
{
    static const char *const S3[] = {"s3://", "s3a://", NULL};
    static const char *const GS[] = {"gs://", NULL};
    static const char *const AZ[] = {"azure://", "azureStorage://", "wasb://", "wasbs://",
                                     "abfs://",  "abfss://",        NULL};
    const char *const *want = NULL;
    const char *shape = NULL;
    bool ok = true;
    if (!type) return 0;
    if (!strcmp(type, "local")) {
        ok = !strstr(loc, "://") && loc[0] == '/';
        shape = "absolute file paths";
    } else if (!strcmp(type, "s3")) {
        want = S3;
        shape = "s3:// or s3a:// URIs";
    } else if (!strcmp(type, "google")) {
        want = GS;
        shape = "gs:// URIs";
    } else if (!strcmp(type, "azure") || !strcmp(type, "azureStorage")) {
        want = AZ;
        shape = "azure://, wasb(s):// or abfs(s):// URIs";
    } else if (!strcmp(type, "hdfs")) {
        ok = strstr(loc, "://") != NULL;
        shape = "Hadoop filesystem URIs (hdfs://...)";
    }
    if (want) ok = has_prefix(loc, want);
    if (ok) return 0;
    bool remapped = strcmp(loc, own) != 0;
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "the location '%s' handed to Druid does not fit the warehouseSource of type "
                    "'%s', which takes %s%s%s%s",
                    loc, type, shape, remapped && !original ? "; it is what --remap made of '" : "",
                    remapped && !original ? own : "",
                    remapped && !original
                        ? "': give --druid-locations original to hand Druid the table's own "
                          "locations while icedruid reads the remapped copy"
                        : "");
}

/* A data file as another reader names it (dr_plan_task_location). */
static char *location_of(const dr_plan *p, const char *own)
{
    const json_t *ws = dr_spec_warehouse_source(p->spec);
    const char *type = ws ? json_string_value(json_object_get(ws, "type")) : NULL;
    char *r = p->druid_original ? strdup(own) : icd_fileio_resolve(p->io, own);
    bool local = type && !strcmp(type, "local");
    if (r && local && !strncmp(r, "file:", 5)) { /* Druid's local source takes paths */
        const char *q = r + 5;
        if (!strncmp(q, "//", 2)) q += 2;
        memmove(r, q, strlen(q) + 1);
    }
    if (r && local) { /* Druid's workers need absolute file names */
        char *a = dr_absolute_path(r);
        free(r);
        r = a;
    }
    return r;
}

char *dr_plan_task_location(const dr_plan *p, size_t i)
{
    return location_of(p, ice_scan_plan_task(p->scan, i)->data->path);
}

/* The v1 input source for data files `own` (their own locations). */
static int v1_source(const dr_plan *p, const char *const *own_paths, size_t n, json_t **out,
                     icd_error *err)
{
    *out = NULL;
    const json_t *ws = dr_spec_warehouse_source(p->spec);
    if (!ws)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "the spec has no warehouseSource: the v1 path needs one to hand the "
                        "data files to Druid");
    char **paths = calloc(n ? n : 1, sizeof *paths);
    if (!paths) return icd_fail_nomem(err);
    const char *type = json_string_value(json_object_get(ws, "type"));
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *own = own_paths[i];
        paths[i] = location_of(p, own);
        if (!paths[i])
            rc = icd_fail_nomem(err);
        else
            rc = check_fits(type, paths[i], own, p->druid_original, err);
    }
    if (!rc) rc = dr_warehouse_source_create(ws, (const char *const *)paths, n, out, err);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

int dr_plan_v1_source(const dr_plan *p, json_t **out, icd_error *err)
{
    size_t n = plan_task_count(p);
    const char **own = calloc(n ? n : 1, sizeof *own);
    if (!own) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++)
        own[i] = ice_scan_plan_task(p->scan, i)->data->path;
    int rc = v1_source(p, own, n, out, err);
    free((void *)own);
    return rc;
}

/* ---- v2: split JSON ------------------------------------------------------------------ */

static void put_key(icd_buf *b, const char *k, bool first)
{
    if (!first) icd_buf_putc(b, ',');
    icd_json_cstr(b, k);
    icd_buf_putc(b, ':');
}

/* A constant key (or other literal text): its length is known at compile time. */
#define put_lit(b, text) icd_buf_append((b), (text), sizeof(text) - 1)

static void put_str_or_null(icd_buf *b, const char *s)
{
    if (s)
        icd_json_cstr(b, s);
    else
        icd_buf_puts(b, "null");
}

/* A JSON text as a JSON string value (tableSchemaJson and friends). */
static void put_json_as_string(icd_buf *b, void (*fn)(icd_buf *, const void *), const void *arg)
{
    icd_buf tmp = ICD_BUF_INIT;
    fn(&tmp, arg);
    if (!icd_buf_ok(&tmp))
        b->oom = true;
    else
        icd_json_str(b, tmp.data ? tmp.data : "", tmp.len);
    icd_buf_free(&tmp);
}

static void schema_json(icd_buf *b, const void *s)
{
    ice_schema_to_json(b, s);
}
static void spec_json(icd_buf *b, const void *s)
{
    ice_partition_spec_to_json(b, s);
}

/* A file format as a JSON string (the names are Iceberg's FileFormat names). */
static void put_format(icd_buf *b, ice_file_format f)
{
    switch (f) {
    case ICE_FORMAT_PARQUET:
        put_lit(b, "\"PARQUET\"");
        break;
    case ICE_FORMAT_AVRO:
        put_lit(b, "\"AVRO\"");
        break;
    case ICE_FORMAT_ORC:
        put_lit(b, "\"ORC\"");
        break;
    case ICE_FORMAT_PUFFIN:
        put_lit(b, "\"PUFFIN\"");
        break;
    default:
        put_lit(b, "\"UNKNOWN\"");
    }
}

/* (an icd_ptr_text writer: key is the delete file) */
static void put_delete(icd_buf *b, const void *key)
{
    const ice_content_file *d = key;
    icd_buf_putc(b, '{');
    put_lit(b, "\"path\":");
    icd_json_cstr(b, d->path);
    if (d->content == ICE_CONTENT_EQUALITY_DELETES)
        put_lit(b, ",\"content\":\"EQUALITY_DELETES\",\"format\":");
    else
        put_lit(b, ",\"content\":\"POSITION_DELETES\",\"format\":");
    put_format(b, d->format);
    put_lit(b, ",\"equalityFieldIds\":");
    icd_buf_putc(b, '[');
    for (int32_t i = 0; d->content == ICE_CONTENT_EQUALITY_DELETES && i < d->nequality_ids; i++) {
        if (i) icd_buf_putc(b, ',');
        icd_json_i64(b, d->equality_ids[i]);
    }
    icd_buf_putc(b, ']');
    put_lit(b, ",\"fileSizeInBytes\":");
    icd_json_i64(b, d->file_size);
    put_lit(b, ",\"recordCount\":");
    icd_json_i64(b, d->record_count);
    put_lit(b, ",\"sequenceNumber\":");
    icd_json_i64(b, d->data_seq);
    put_lit(b, ",\"referencedDataFile\":");
    put_str_or_null(b, d->referenced_data_file);
    put_lit(b, ",\"contentOffset\":");
    if (ice_is_dv(d))
        icd_json_i64(b, d->content_offset);
    else
        icd_buf_puts(b, "null");
    put_lit(b, ",\"contentSizeInBytes\":");
    if (ice_is_dv(d))
        icd_json_i64(b, d->content_size);
    else
        icd_buf_puts(b, "null");
    icd_buf_putc(b, '}');
}

/* Schemas other than the selected one that define an equality-delete key field the
 * selected schema lacks (a dropped column still keys old deletes). */
#define KNOWN_IDS 16

/* known (may be NULL): *nknown equality field ids found in `schema` before, kept here for
 * the next call (a plan's deletes share their key fields). */
static void put_key_schemas(icd_buf *b, const ice_scan_task *t, const ice_schema *schema,
                            const ice_metadata *md, int32_t *known_ids, size_t *nknown)
{
    const ice_schema *extra[16];
    size_t n = 0;
    for (size_t k = 0; k < t->ndeletes; k++) {
        const ice_content_file *d = t->deletes[k];
        for (int32_t i = 0; i < d->nequality_ids; i++) {
            int32_t id = d->equality_ids[i];
            bool known = false;
            for (size_t j = 0; known_ids && j < *nknown && !known; j++)
                known = known_ids[j] == id;
            if (known) continue;
            if (ice_schema_field(schema, id)) {
                if (known_ids && *nknown < KNOWN_IDS) known_ids[(*nknown)++] = id;
                continue;
            }
            bool have = false;
            for (size_t e = 0; e < n; e++)
                have |= ice_schema_field(extra[e], id) != NULL;
            for (size_t s = 0; !have && n < 16 && s < ice_metadata_schema_count(md); s++) {
                const ice_schema *cand = ice_metadata_schema_at(md, s);
                if (ice_schema_field(cand, id)) {
                    extra[n++] = cand;
                    have = true;
                }
            }
        }
    }
    icd_buf_putc(b, '[');
    for (size_t e = 0; e < n; e++) {
        if (e) icd_buf_putc(b, ',');
        put_json_as_string(b, schema_json, extra[e]);
    }
    icd_buf_putc(b, ']');
}

/* The escaped partitionSpecJson string of each spec, computed once per plan output. */
typedef struct spec_text {
    int32_t spec_id;
    icd_buf text; /* the JSON string value, quoted */
    /* what a split of the spec writes around it: after its delete files, up to its key
     * schemas (`],"partitionSpecJson":` text `,"equalityKeySchemasJson":`) */
    icd_buf tail;
    /* its partition fields' keys as put_key writes them, back to back: field i's ends at
     * key_end[i] */
    icd_buf keys;
    size_t *key_end, nkeys;
} spec_text;

/* What put_split writes the same for many splits: each spec's JSON, and each delete
 * file's JSON (a delete file applies to many data files, a global equality delete to
 * every one), kept by the entry's address -- delete files live as long as the plan --
 * within ICD_PTR_TEXT_MAX bytes, beyond which they are formatted each time. */

/* put_counts' text of the last three fields, and their values (len 0: none yet). */
typedef struct counts_text {
    int64_t records, seq;
    int32_t spec_id;
    size_t len;
    char text[64 + 3 * ICD_JSON_I64_MAX];
} counts_text;

/* A partition tuple's text ({name: value, ...}), kept by the tuple's address for one batch
 * of tasks (whose arena may hold the tuple: the texts go at the next batch);
 * direct-mapped. */
#define PART_SLOTS 1024
#define PART_TEXT_MAX ((size_t)1 << 20)
typedef struct part_text {
    const ice_literal *vals;
    uint32_t gen; /* the batch it was kept in */
    int32_t spec_id, n;
    uint32_t off, len;
} part_text;

/* The spec of the previous split and its texts (an index into specs: -1 none), for the
 * next one of the same spec id (a manifest's files share theirs). */
typedef struct last_spec {
    bool set;
    int32_t spec_id;
    const ice_partition_spec *spec;
    ptrdiff_t st;
} last_spec;

typedef struct split_cache {
    last_spec last;
    part_text *parts; /* PART_SLOTS of them (NULL: not kept) */
    uint32_t gen;
    icd_buf part_text;
    counts_text counts;
    spec_text *specs;
    size_t nspecs;
    icd_ptr_text dels;
    /* equality field ids found in the read schema (put_key_schemas looks them up once) */
    int32_t known_ids[KNOWN_IDS];
    size_t nknown;
} split_cache;

static void split_cache_free(split_cache *c)
{
    free(c->parts);
    icd_buf_free(&c->part_text);
    for (size_t i = 0; i < c->nspecs; i++) {
        icd_buf_free(&c->specs[i].text);
        icd_buf_free(&c->specs[i].tail);
        icd_buf_free(&c->specs[i].keys);
        free(c->specs[i].key_end);
    }
    free(c->specs);
    icd_ptr_text_free(&c->dels);
}

/* The partition tuple as {name: single-value JSON}, in spec order; `st` (may be NULL)
 * holds the spec's keys as put_key writes them. */
static void put_partition(icd_buf *b, const ice_content_file *f, const ice_partition_spec *spec,
                          const spec_text *st)
{
    icd_buf_putc(b, '{');
    for (int32_t i = 0; i < f->npartition; i++) {
        if (st && (size_t)i < st->nkeys) {
            size_t from = i ? st->key_end[i - 1] : 0;
            icd_buf_append(b, st->keys.data + from, st->key_end[i] - from);
        } else {
            put_key(b, spec && (size_t)i < spec->nfields ? spec->fields[i].name : "?", i == 0);
        }
        const ice_literal *l = &f->partition[i];
        if (!l->is_null && l->kind == ICE_T_STRING) /* (what the call below writes for it) */
            icd_json_str(b, (const char *)l->v.bytes.ptr, l->v.bytes.len);
        else
            ice_literal_to_single_value_json(b, l);
    }
    icd_buf_putc(b, '}');
}

/* put_partition from the text kept for the tuple in this batch (else written and kept). */
static void put_partition_kept(icd_buf *b, const ice_content_file *f,
                               const ice_partition_spec *spec, const spec_text *st, split_cache *c)
{
    uint64_t h = (uint64_t)(uintptr_t)f->partition * 0x9E3779B97F4A7C15ull;
    part_text *t = &c->parts[(h >> 32) & (PART_SLOTS - 1)];
    if (t->gen == c->gen && t->vals == f->partition && t->spec_id == f->spec_id &&
        t->n == f->npartition) {
        icd_buf_append(b, c->part_text.data + t->off, t->len);
        return;
    }
    size_t at = b->len;
    put_partition(b, f, spec, st);
    size_t n = b->len - at;
    if (!icd_buf_ok(b) || c->part_text.len + n > PART_TEXT_MAX) return;
    size_t off = c->part_text.len;
    icd_buf_append(&c->part_text, b->data + at, n);
    if (!icd_buf_ok(&c->part_text)) return;
    *t = (part_text){f->partition, c->gen, f->spec_id, f->npartition, (uint32_t)off, (uint32_t)n};
}

/* The cached texts of `spec` (made on first use); NULL when out of memory (b->oom set). */
static spec_text *spec_cached(split_cache *c, const ice_partition_spec *spec, icd_buf *b)
{
    for (size_t i = 0; i < c->nspecs; i++)
        if (c->specs[i].spec_id == spec->spec_id) return &c->specs[i];
    spec_text *v = realloc(c->specs, (c->nspecs + 1) * sizeof *v);
    if (!v) {
        b->oom = true;
        return NULL;
    }
    c->specs = v;
    spec_text *t = &v[c->nspecs++];
    memset(t, 0, sizeof *t);
    t->spec_id = spec->spec_id;
    put_json_as_string(&t->text, spec_json, spec);
    put_lit(&t->tail, "],\"partitionSpecJson\":");
    icd_buf_append(&t->tail, t->text.data, t->text.len);
    put_lit(&t->tail, ",\"equalityKeySchemasJson\":");
    t->key_end = malloc((spec->nfields ? spec->nfields : 1) * sizeof *t->key_end);
    if (!t->key_end) b->oom = true;
    for (size_t i = 0; t->key_end && i < spec->nfields; i++) {
        put_key(&t->keys, spec->fields[i].name, i == 0);
        t->key_end[i] = t->keys.len;
    }
    if (t->key_end) t->nkeys = spec->nfields;
    if (!icd_buf_ok(&t->text) || !icd_buf_ok(&t->tail) || !icd_buf_ok(&t->keys)) b->oom = true;
    return b->oom ? NULL : t;
}

static void put_spec_json(icd_buf *b, const ice_partition_spec *spec, split_cache *c)
{
    if (!spec) {
        icd_buf_puts(b, "null");
        return;
    }
    if (!c) {
        put_json_as_string(b, spec_json, spec);
        return;
    }
    spec_text *t = spec_cached(c, spec, b);
    if (t) icd_buf_append(b, t->text.data, t->text.len);
}

/* The fields every split of a plan shares. In `plan` output they are written once, as
 * "splitCommon"; a self-contained split (dr_plan_split_json) carries them itself. */
static int put_common_fields(const dr_plan *p, icd_buf *b, bool first, icd_error *err)
{
    const ice_snapshot *snap = plan_snapshot(p);
    put_key(b, "tableSchemaJson", first);
    put_json_as_string(b, schema_json, plan_schema(p));
    put_lit(b, ",\"tableNamespace\":");
    icd_json_cstr(b, dr_spec_namespace(p->spec));
    put_lit(b, ",\"tableName\":");
    icd_json_cstr(b, dr_spec_table_name(p->spec));
    put_lit(b, ",\"warehouseSource\":");
    const json_t *ws = dr_spec_warehouse_source(p->spec);
    char *wtext = ws ? json_dumps(ws, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    if (ws && !wtext) return icd_fail_nomem(err);
    icd_buf_puts(b, wtext ? wtext : "null");
    free(wtext);
    /* what the reader needs beyond the upstream fields */
    put_lit(b, ",\"formatVersion\":");
    icd_json_i64(b, ice_metadata_format_version(p->md));
    put_lit(b, ",\"tableLocation\":");
    icd_json_cstr(b, ice_metadata_location(p->md));
    put_lit(b, ",\"snapshotId\":");
    if (snap)
        icd_json_i64(b, snap->snapshot_id);
    else
        icd_buf_puts(b, "null");
    put_lit(b, ",\"nameMappingJson\":");
    put_str_or_null(b, ice_metadata_property(p->md, "schema.name-mapping.default"));
    return 0;
}

/* A constant text at o (no NUL); the end. */
#define AT_LIT(o, text) (memcpy((o), (text), sizeof(text) - 1), (o) + sizeof(text) - 1)

static const char K1[] = ",\"dataFileSizeInBytes\":", K2[] = ",\"dataFileRecordCount\":",
                  K3[] = ",\"dataSequenceNumber\":", K4[] = ",\"specId\":";
_Static_assert(sizeof K2 + sizeof K3 + sizeof K4 <= 64, "counts_text.text is too short");

/* A split's size, count, sequence number and spec id fields, written into room made once
 * for all four (their keys' lengths are known, their digits at most ICD_JSON_I64_MAX).
 * `m` (may be NULL): the last three fields' text of the previous split, copied when its
 * values are the same (the files of a manifest mostly share them). */
static void put_counts(icd_buf *b, const ice_content_file *d, counts_text *m)
{
    size_t most = sizeof K1 + sizeof K2 + sizeof K3 + sizeof K4 + 4 * ICD_JSON_I64_MAX;
    if (b->len + most + 1 > b->cap && !icd_buf_grow(b, most + 1)) return;
    char *o = b->data + b->len;
    o = AT_LIT(o, K1);
    o = icd_json_i64_at(o, d->file_size);
    if (m && m->len && m->records == d->record_count && m->seq == d->data_seq &&
        m->spec_id == d->spec_id) {
        memcpy(o, m->text, m->len);
        o += m->len;
    } else {
        char *from = o;
        o = AT_LIT(o, K2);
        o = icd_json_i64_at(o, d->record_count);
        o = AT_LIT(o, K3);
        o = icd_json_i64_at(o, d->data_seq);
        o = AT_LIT(o, K4);
        o = icd_json_i64_at(o, d->spec_id);
        if (m) {
            m->records = d->record_count;
            m->seq = d->data_seq;
            m->spec_id = d->spec_id;
            m->len = (size_t)(o - from);
            memcpy(m->text, from, m->len);
        }
    }
    *o = '\0';
    b->len = (size_t)(o - b->data);
}

/* The task's delete files comma-separated, when every one's text is kept: found first,
 * then copied into room made once; false (nothing written) when one is not kept. */
#define KEPT_DELETES_MAX 32
static bool put_kept_deletes(const icd_ptr_text *dels, const ice_scan_task *t, icd_buf *b)
{
    const icd_ptr_text_slot *s[KEPT_DELETES_MAX];
    size_t n = t->ndeletes, total = n;
    if (n > KEPT_DELETES_MAX) return false;
    for (size_t k = 0; k < n; k++) {
        if (!(s[k] = icd_ptr_text_find(dels, t->deletes[k]))) return false;
        total += s[k]->len;
    }
    if (b->len + total + 1 > b->cap && !icd_buf_grow(b, total + 1)) return true; /* (oom) */
    char *o = b->data + b->len;
    for (size_t k = 0; k < n; k++) {
        if (k) *o++ = ',';
        memcpy(o, dels->text.data + s[k]->off, s[k]->len);
        o += s[k]->len;
    }
    *o = '\0';
    b->len = (size_t)(o - b->data);
    return true;
}

/* Split i; `cache` NULL = self-contained (with the common fields). */
static int put_split(const dr_plan *p, const ice_scan_task *t, icd_buf *b, split_cache *cache,
                     icd_error *err)
{
    const ice_content_file *d = t->data;
    const ice_schema *schema = plan_schema(p);
    const ice_partition_spec *spec;
    spec_text *st = NULL;
    if (cache && cache->last.set && cache->last.spec_id == d->spec_id) {
        spec = cache->last.spec;
        st = cache->last.st < 0 ? NULL : &cache->specs[cache->last.st];
    } else {
        spec = ice_metadata_spec(p->md, d->spec_id);
        st = cache && spec ? spec_cached(cache, spec, b) : NULL;
        if (cache && (st || !spec))
            cache->last = (last_spec){true, d->spec_id, spec, st ? st - cache->specs : -1};
    }
    put_lit(b, "{\"type\":\"icebergFileTask\",\"dataFilePath\":");
    icd_json_cstr(b, d->path);
    put_lit(b, ",\"fileFormat\":");
    put_format(b, d->format);
    put_counts(b, d, cache ? &cache->counts : NULL);
    put_lit(b, ",\"partition\":");
    if (cache && st && d->partition && cache->parts) /* (st is only set with a cache) */
        put_partition_kept(b, d, spec, st, cache);
    else
        put_partition(b, d, spec, st);
    put_lit(b, ",\"deleteFiles\":[");
    if (!cache || !put_kept_deletes(&cache->dels, t, b)) {
        for (size_t k = 0; k < t->ndeletes; k++) {
            if (k) icd_buf_putc(b, ',');
            if (cache)
                icd_ptr_text_put(&cache->dels, b, t->deletes[k], put_delete);
            else
                put_delete(b, t->deletes[k]);
        }
    }
    if (st) { /* `]`, the spec's JSON and the next key, kept as one text */
        icd_buf_append(b, st->tail.data, st->tail.len);
    } else {
        icd_buf_putc(b, ']');
        if (!cache) ICD_TRY(put_common_fields(p, b, false, err));
        put_lit(b, ",\"partitionSpecJson\":");
        put_spec_json(b, spec, cache);
        put_lit(b, ",\"equalityKeySchemasJson\":");
    }
    put_key_schemas(b, t, schema, p->md, cache ? cache->known_ids : NULL,
                    cache ? &cache->nknown : NULL);
    if (p->residual || t->has_residual)
        put_lit(b, ",\"hasResidual\":true}");
    else
        put_lit(b, ",\"hasResidual\":false}");
    return icd_buf_ok(b) ? 0 : icd_fail_nomem(err);
}

int dr_plan_split_json(const dr_plan *p, size_t i, icd_buf *b, icd_error *err)
{
    if (i >= plan_task_count(p))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "split %zu does not exist (%zu splits)", i,
                        plan_task_count(p));
    return put_split(p, ice_scan_plan_task(p->scan, i), b, NULL, err);
}

/* A file's text after its path, kept by what makes it (a million files share a few
 * hundred): direct-mapped, within TAILS_MAX_BYTES of text. */
#define TAIL_SLOTS 256
#define TAILS_MAX_BYTES ((size_t)1 << 20)
typedef struct file_tail {
    const char *reason; /* (interned: compared by address; NULL for raw files) */
    uint8_t kind;       /* put_delivery's case + 1 (0: the slot is empty) */
    uint8_t format;
    uint32_t off, len;
} file_tail;

/* The "files" list of `plan`, one run of the tasks; v1 keeps the data files' own paths
 * for the input source. */
typedef struct files_writer {
    const dr_plan *p;
    icd_jsonw *w;
    char **own; /* v1 */
    size_t nown, cap_own;
    icd_ptr_text reasons; /* each interned reason's JSON string, by its address */
    file_tail tails[TAIL_SLOTS];
    icd_buf tail_text;
} files_writer;

/* (an icd_ptr_text writer: key is an interned reason text) */
static void put_reason(icd_buf *b, const void *key)
{
    icd_json_cstr(b, key);
}

/* A file's "decision" to "delivery" fields, as one text per case: raw or materialized,
 * decided by the footer or the metadata, and how Druid gets the file -- raw through the
 * warehouseSource, materialized files staged (Parquet, Avro) or served as NDJSON rows
 * (ORC: no ORC writer yet). */
static size_t delivery_case(const dr_plan_file *fd, ice_file_format f)
{
    return fd->raw ? (fd->from_footer ? 0 : 1)
                   : 2 + (fd->from_footer ? 0 : 2) + (f == ICE_FORMAT_ORC ? 1 : 0);
}

static void put_delivery(icd_buf *b, const dr_plan_file *fd, ice_file_format f)
{
#define DELIVERY(dec, by, del)                                                                     \
    ",\"decision\":\"" dec "\",\"decidedBy\":\"" by "\",\"delivery\":\"" del "\""
#define TEXT(dec, by, del)                                                                         \
    {                                                                                              \
        DELIVERY(dec, by, del), sizeof(DELIVERY(dec, by, del)) - 1                                 \
    }
    static const struct {
        const char *text;
        size_t len;
    } CASES[6] = {
        TEXT("raw", "footer", "warehouseSource"),
        TEXT("raw", "metadata", "warehouseSource"),
        TEXT("materialized", "footer", "staged"),
        TEXT("materialized", "footer", "served (ORC: no ORC writer yet)"),
        TEXT("materialized", "metadata", "staged"),
        TEXT("materialized", "metadata", "served (ORC: no ORC writer yet)"),
    };
#undef TEXT
#undef DELIVERY
    size_t i = delivery_case(fd, f);
    icd_buf_append(b, CASES[i].text, CASES[i].len);
}

/* What follows a file's path: its format, decision, delivery and reason, and the `}`. */
static void put_file_fields(files_writer *fw, icd_buf *b, const dr_plan_file *fd, ice_file_format f)
{
    put_lit(b, ",\"format\":");
    put_format(b, f);
    put_delivery(b, fd, f);
    if (!fd->raw) {
        put_lit(b, ",\"reason\":");
        icd_ptr_text_put(&fw->reasons, b, fd->reason, put_reason);
    }
    icd_buf_putc(b, '}');
}

/* put_file_fields, from the kept text when there is one (else written and kept). */
static void put_file_tail(files_writer *fw, icd_buf *b, const dr_plan_file *fd, ice_file_format f)
{
    const char *reason = fd->raw ? NULL : fd->reason;
    uint8_t kind = (uint8_t)(delivery_case(fd, f) + 1), format = (uint8_t)f;
    uint64_t h =
        ((uint64_t)(uintptr_t)reason ^ (uint64_t)kind << 8 ^ format) * 0x9E3779B97F4A7C15ull;
    file_tail *t = &fw->tails[h >> 56 & (TAIL_SLOTS - 1)];
    if (t->kind == kind && t->format == format && t->reason == reason && (unsigned)f <= 0xff) {
        icd_buf_append(b, fw->tail_text.data + t->off, t->len);
        return;
    }
    size_t at = b->len;
    put_file_fields(fw, b, fd, f);
    size_t n = b->len - at;
    if (!icd_buf_ok(b) || (unsigned)f > 0xff || fw->tail_text.len + n > TAILS_MAX_BYTES) return;
    size_t off = fw->tail_text.len;
    icd_buf_append(&fw->tail_text, b->data + at, n);
    if (!icd_buf_ok(&fw->tail_text)) return;
    *t = (file_tail){reason, kind, format, (uint32_t)off, (uint32_t)n};
}

static int put_files(void *ctx, ice_scan_batch *batch, icd_error *err)
{
    files_writer *fw = ctx;
    icd_buf *b = &fw->w->buf;
    if (!fw->p->v2 && fw->nown + batch->ntasks > fw->cap_own) {
        size_t nc = fw->cap_own + fw->cap_own / 2;
        if (nc < fw->nown + batch->ntasks) nc = fw->nown + batch->ntasks;
        char **v = realloc(fw->own, nc * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        fw->own = v;
        fw->cap_own = nc;
    }
    for (size_t j = 0; j < batch->ntasks; j++) {
        size_t i = batch->first + j;
        const ice_content_file *d = batch->tasks[j].data;
        if (i >= fw->p->ndecisions) /* (the stream gave other tasks than in its first run) */
            return icd_fail(err, ICD_EINVALID, NULL, -1, "the plan changed while it was written");
        const dr_plan_file *fd = &fw->p->decisions[i];
        if (!fw->p->v2 && !(fw->own[fw->nown++] = strdup(d->path))) return icd_fail_nomem(err);
        if (i)
            put_lit(b, ",\n{\"path\":");
        else
            put_lit(b, "\n{\"path\":");
        icd_json_cstr(b, d->path);
        put_file_tail(fw, b, fd, d->format);
        icd_jsonw_maybe_flush(fw->w);
    }
    return 0;
}

/* The "splits" list of `plan`, one run of the tasks. */
typedef struct splits_writer {
    const dr_plan *p;
    icd_jsonw *w;
    split_cache cache;
} splits_writer;

static int put_splits(void *ctx, ice_scan_batch *batch, icd_error *err)
{
    splits_writer *sw = ctx;
    icd_buf *b = &sw->w->buf;
    /* (the partition texts of the previous batch go: its tuples may have gone with it) */
    split_cache *c = &sw->cache;
    if (!c->parts && !c->gen) c->parts = calloc(PART_SLOTS, sizeof *c->parts); /* (optional) */
    c->gen++;
    icd_buf_clear(&c->part_text);
    for (size_t j = 0; j < batch->ntasks; j++) {
        /* (the delete files only: their texts are kept, their paths rarely read) */
        ice_scan_tasks_prefetch_deletes(batch->tasks, batch->ntasks, j);
        if (batch->first + j)
            put_lit(b, ",\n");
        else
            put_lit(b, "\n");
        ICD_TRY(put_split(sw->p, &batch->tasks[j], b, &sw->cache, err));
        icd_jsonw_maybe_flush(sw->w);
    }
    return 0;
}

static int put_v1_source(const dr_plan *p, files_writer *fw, icd_buf *b, icd_error *err)
{
    json_t *src = NULL;
    ICD_TRY(v1_source(p, (const char *const *)fw->own, fw->nown, &src, err));
    char *text = json_dumps(src, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(src);
    if (!text) return icd_fail_nomem(err);
    icd_buf_puts(b, ",\"inputSource\":");
    icd_buf_puts(b, text);
    free(text);
    icd_buf_puts(b, "}\n");
    return icd_buf_ok(b) ? 0 : icd_fail_nomem(err);
}

int dr_plan_write(dr_plan *p, icd_jsonw *w, icd_error *err)
{
    ICD_TRY(dr_plan_decide(p, err));
    icd_buf *b = &w->buf;
    const ice_snapshot *snap = plan_snapshot(p);
    ice_scan_counts c = plan_counts(p);
    icd_buf_printf(b, "{\"mode\":\"%s\",\"snapshotId\":", p->v2 ? "v2" : "v1");
    if (snap)
        icd_json_i64(b, snap->snapshot_id);
    else
        icd_buf_puts(b, "null");
    /* the id as a string too: jq 1.6 and JavaScript read JSON numbers as doubles */
    if (snap)
        icd_buf_printf(b, ",\"snapshotIdStr\":\"%lld\"", (long long)snap->snapshot_id);
    else
        icd_buf_puts(b, ",\"snapshotIdStr\":null");
    icd_buf_printf(b, ",\"dataFiles\":%zu,\"deleteFiles\":%zu", c.data_files, c.delete_files);
    size_t nmat = dr_plan_materialized_count(p);
    icd_buf_printf(b, ",\"rawFiles\":%zu,\"materializedFiles\":%zu,\"files\":[",
                   c.data_files - nmat, nmat);
    files_writer fw = {p, w, NULL, 0, 0, {0}, {{0}}, ICD_BUF_INIT};
    icd_ptr_text_init(&fw.reasons, ICD_PTR_TEXT_MAX);
    int rc = each_data_file(p, put_files, &fw, err);
    icd_ptr_text_free(&fw.reasons);
    icd_buf_free(&fw.tail_text);
    if (!rc) {
        icd_buf_puts(b, "\n]");
        if (!p->v2) rc = put_v1_source(p, &fw, b, err);
    }
    for (size_t i = 0; i < fw.nown; i++)
        free(fw.own[i]);
    free(fw.own);
    if (rc || !p->v2) return rc;
    /* v2: the fields all splits share once, then the splits */
    icd_buf_puts(b, ",\"splitCommon\":{");
    ICD_TRY(put_common_fields(p, b, true, err));
    icd_buf_puts(b, "},\"splits\":[");
    splits_writer sw = {p, w, {{0}, NULL, 0, ICD_BUF_INIT, {0}, NULL, 0, {0}, {0}, 0}};
    icd_ptr_text_init(&sw.cache.dels, ICD_PTR_TEXT_MAX);
    rc = each_task(p, put_splits, &sw, err);
    split_cache_free(&sw.cache);
    if (rc) return rc;
    icd_buf_puts(b, "\n]}\n");
    return icd_buf_ok(b) ? 0 : icd_fail_nomem(err);
}

icd_fileio *dr_plan_io(const dr_plan *p)
{
    return p->io;
}
