/*
 * The public scan API (include/icedruid/scan.h) over the planner (iceberg/scan_plan.h) and
 * the merge-on-read reader (iceberg/reader.h): a task's rows go through the scan JSON
 * writer (iceberg/scan_json.h, design.md §3) in chunks of whole lines, or through a sink
 * that only counts. icd_scan_run is the parallel driver (base/parallel.h) that
 * `icedruid scan` uses: one task (or, with fewer tasks than threads can share, one part
 * of a task: a range of its row groups or stripes) per worker at a time, callbacks
 * serialised by one lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "base/buf.h"
#include "base/parallel.h"
#include "iceberg/reader.h"
#include "iceberg/scan_json.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"
#include "iceberg/types.h"

/* Chunks handed to the caller hold at least this many bytes (except the last of a task). */
#define CHUNK_BYTES (1u << 18)

struct icd_scan {
    icd_table *table; /* borrowed */
    ice_scan_plan *plan;
    ice_scan_reader *reader;
    size_t next_task;
    pthread_mutex_t lock; /* stats and the progress callback */
    ice_read_stats stats;
    icd_progress_fn progress;
    void *progress_ctx;
    uint64_t data_bytes;      /* the tasks' file sizes, added up once when planned */
    const ice_field **fields; /* the reader's columns, in output order */
    size_t nfields;
};

void icd_scan_options_init(icd_scan_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_SCAN_OPTIONS_VERSION;
    o->snapshot = ICD_SNAPSHOT_CURRENT;
    o->threads = 1;
}

static int selector_from(const icd_scan_options *o, ice_snapshot_selector *sel, icd_error *err)
{
    memset(sel, 0, sizeof *sel);
    switch (o->snapshot) {
    case ICD_SNAPSHOT_CURRENT:
        sel->kind = ICE_SELECT_CURRENT;
        return 0;
    case ICD_SNAPSHOT_ID:
        sel->kind = ICE_SELECT_ID;
        sel->snapshot_id = o->snapshot_id;
        return 0;
    case ICD_SNAPSHOT_AS_OF:
        sel->kind = ICE_SELECT_AS_OF;
        sel->timestamp_ms = o->as_of_ms;
        return 0;
    case ICD_SNAPSHOT_REF:
        if (!o->ref || !o->ref[0])
            return icd_fail(err, ICD_EINVALID, NULL, -1, "ICD_SNAPSHOT_REF needs a ref name");
        sel->kind = ICE_SELECT_REF;
        sel->ref = o->ref;
        return 0;
    }
    return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown snapshot selection %d", (int)o->snapshot);
}

/* caseSensitive=false (Druid's catalog option): each name becomes the schema's spelling
 * of the one top-level column it matches ignoring case (names[] then point into the
 * schema); a name matching several is an error, one matching none is left for the reader
 * to report. */
static int fold_column_names(const ice_schema *schema, const char **names, size_t n, icd_error *err)
{
    const ice_type *root = &schema->root;
    for (size_t i = 0; i < n; i++) {
        const char *match = NULL;
        for (size_t k = 0; k < root->nfields; k++) {
            if (strcasecmp(root->fields[k].name, names[i])) continue;
            if (match)
                return icd_fail(err, ICD_EINVALID, NULL, -1,
                                "column '%s' matches both '%s' and '%s' ignoring case "
                                "(the catalog has caseSensitive=false)",
                                names[i], match, root->fields[k].name);
            match = root->fields[k].name;
        }
        if (match) names[i] = match;
    }
    return 0;
}

int icd_scan_open(icd_scan **out, icd_table *t, const icd_scan_options *o, icd_error *err)
{
    *out = NULL;
    icd_scan_options defaults;
    if (!o) {
        icd_scan_options_init(&defaults);
        o = &defaults;
    }
    if (!t) return icd_fail(err, ICD_EINVALID, NULL, -1, "no table");
    if (o->version < 1 || o->version > ICD_SCAN_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1,
                        "icd_scan_options version %d is not 1 to %d (call icd_scan_options_init)",
                        o->version, ICD_SCAN_OPTIONS_VERSION);
    bool fold = o->version >= 2 && o->case_insensitive; /* version 1 has no such field */
    if (o->ncolumns && !o->columns)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "ncolumns is %zu but columns is NULL",
                        o->ncolumns);
    ice_scan_opts opts = {0};
    ICD_TRY(selector_from(o, &opts.select, err));
    opts.case_sensitive = true;
    opts.threads = o->threads;
    icd_scan *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->table = t;
    pthread_mutex_init(&s->lock, NULL);
    const char **names = NULL;
    int rc = ice_scan_plan_build(t->storage->io, t->md, &opts, &s->plan, err);
    if (rc == 0 && o->ncolumns) {
        names = malloc(o->ncolumns * sizeof *names);
        if (!names) rc = icd_fail_nomem(err);
        for (size_t i = 0; !rc && i < o->ncolumns; i++)
            names[i] = o->columns[i];
        if (!rc && fold)
            rc = fold_column_names(ice_scan_plan_schema(s->plan), names, o->ncolumns, err);
    }
    if (rc == 0)
        rc = ice_scan_reader_new(t->storage->io, t->md, ice_scan_plan_schema(s->plan),
                                 o->ncolumns ? names : NULL, o->ncolumns, &s->reader, err);
    free(names);
    for (size_t i = 0; rc == 0 && i < ice_scan_plan_task_count(s->plan); i++)
        s->data_bytes += (uint64_t)ice_scan_plan_task(s->plan, i)->data->file_size;
    if (rc == 0) {
        s->nfields = ice_scan_reader_field_count(s->reader);
        s->fields = malloc((s->nfields ? s->nfields : 1) * sizeof *s->fields);
        if (!s->fields) rc = icd_fail_nomem(err);
        for (size_t i = 0; rc == 0 && i < s->nfields; i++)
            s->fields[i] = ice_scan_reader_field(s->reader, i);
    }
    if (rc) {
        icd_scan_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void icd_scan_free(icd_scan *s)
{
    if (!s) return;
    ice_scan_reader_free(s->reader);
    ice_scan_plan_free(s->plan);
    free(s->fields);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int icd_scan_snapshot(const icd_scan *s, int64_t *snapshot_id, icd_error *err)
{
    const ice_snapshot *snap = ice_scan_plan_snapshot(s->plan);
    if (!snap)
        return icd_fail(err, ICD_ENOTFOUND, ice_metadata_file(s->table->md), -1,
                        "the table has no snapshot to read");
    *snapshot_id = snap->snapshot_id;
    return 0;
}

static void task_info(const icd_scan *s, size_t i, icd_task_info *out)
{
    const ice_scan_task *t = ice_scan_plan_task(s->plan, i);
    memset(out, 0, sizeof *out);
    out->index = i;
    out->data_file = t->data->path;
    out->file_format = ice_file_format_name(t->data->format);
    out->record_count = t->data->record_count;
    out->file_size = t->data->file_size;
    for (size_t k = 0; k < t->ndeletes; k++) {
        const ice_content_file *d = t->deletes[k];
        if (ice_is_dv(d))
            out->deletion_vectors++;
        else if (d->content == ICE_CONTENT_POSITION_DELETES)
            out->position_deletes++;
        else
            out->equality_deletes++;
    }
}

size_t icd_scan_task_count(const icd_scan *s)
{
    return ice_scan_plan_task_count(s->plan);
}

int icd_scan_next_task(icd_scan *s, icd_task_info *out, icd_error *err)
{
    (void)err;
    if (s->next_task >= ice_scan_plan_task_count(s->plan)) return ICD_ITEROVER;
    size_t i = s->next_task++;
    task_info(s, i, out);
    return 0;
}

/* --- reading: the rows of one task to a caller's callback, or only counted --- */

typedef struct task_output {
    icd_rows_fn fn;
    void *ctx;
    pthread_mutex_t *serialise; /* icd_scan_run: one callback at a time; NULL otherwise */
    icd_buf buf;
    int failed; /* the callback's code, once it failed */
    icd_error cb_err;
} task_output;

int icd_api_callback_result(int rc, const icd_error *cb_err, const char *what, icd_error *err)
{
    if (!rc) return 0;
    int code = rc < 0 ? rc : ICD_ECANCELED;
    if (cb_err->code) {
        *err = *cb_err;
        return code;
    }
    return icd_fail(err, code, NULL, -1, "the %s callback stopped the read (%d)", what, rc);
}

static int deliver(task_output *o, icd_error *err)
{
    if (!icd_buf_ok(&o->buf)) return icd_fail_nomem(err);
    if (!o->buf.len) return 0;
    if (o->serialise) pthread_mutex_lock(o->serialise);
    icd_error_clear(&o->cb_err);
    int rc = o->fn(o->ctx, o->buf.data, o->buf.len, &o->cb_err);
    if (o->serialise) pthread_mutex_unlock(o->serialise);
    icd_buf_clear(&o->buf);
    if (rc) o->failed = rc;
    return icd_api_callback_result(rc, &o->cb_err, "row", err);
}

static int on_row(void *ctx, icd_buf *b, icd_error *err)
{
    (void)b;
    task_output *o = ctx;
    return o->buf.len >= CHUNK_BYTES ? deliver(o, err) : 0;
}

/* The counting sink: every value callback does nothing. */
static void nop_begin(void *c, const char *f, int64_t p)
{
    (void)c, (void)f, (void)p;
}
static void nop_field(void *c, const char *n, size_t l)
{
    (void)c, (void)n, (void)l;
}
static void nop_void(void *c)
{
    (void)c;
}
static void nop_bool(void *c, bool v)
{
    (void)c, (void)v;
}
static void nop_i64(void *c, int64_t v)
{
    (void)c, (void)v;
}
static void nop_f32(void *c, float v)
{
    (void)c, (void)v;
}
static void nop_f64(void *c, double v)
{
    (void)c, (void)v;
}
static void nop_dec(void *c, int64_t v, int s)
{
    (void)c, (void)v, (void)s;
}
static void nop_decbe(void *c, const uint8_t *p, size_t n, int s)
{
    (void)c, (void)p, (void)n, (void)s;
}
static void nop_i32(void *c, int32_t v)
{
    (void)c, (void)v;
}
static void nop_ts(void *c, int64_t v, int d, bool u)
{
    (void)c, (void)v, (void)d, (void)u;
}
static void nop_str(void *c, const char *s, size_t n)
{
    (void)c, (void)s, (void)n;
}
static void nop_uuid(void *c, const uint8_t v[16])
{
    (void)c, (void)v;
}
static void nop_bin(void *c, const uint8_t *p, size_t n)
{
    (void)c, (void)p, (void)n;
}
static int nop_end(void *c, icd_error *e)
{
    (void)c, (void)e;
    return 0;
}

static const ice_row_sink COUNT_SINK = {
    .begin_row = nop_begin,
    .field = nop_field,
    .null_value = nop_void,
    .boolean = nop_bool,
    .i64 = nop_i64,
    .f32 = nop_f32,
    .f64 = nop_f64,
    .decimal_i64 = nop_dec,
    .decimal_be = nop_decbe,
    .date = nop_i32,
    .time = nop_i64,
    .timestamp = nop_ts,
    .string = nop_str,
    .uuid = nop_uuid,
    .binary = nop_bin,
    .struct_begin = nop_void,
    .struct_end = nop_void,
    .list_begin = nop_void,
    .list_end = nop_void,
    .map_begin = nop_void,
    .map_end = nop_void,
    .raw_json = nop_str,
    .end_row = nop_end,
};

void icd_api_read_stats(const ice_read_stats *in, icd_scan_stats *out)
{
    memset(out, 0, sizeof *out);
    out->data_files = in->data_files;
    out->delete_files_loaded = in->delete_files_loaded;
    out->rows_read = in->rows_read;
    out->rows_deleted_position = in->rows_deleted_position;
    out->rows_deleted_equality = in->rows_deleted_equality;
    out->rows_emitted = in->rows_emitted;
    out->rows_deleted_dv = in->rows_deleted_dv;
    out->row_groups_read = in->row_groups_read;
    out->row_groups_skipped = in->row_groups_skipped;
    out->rows_unparseable = in->rows_skipped;
}

/* Where a read's rows go: NDJSON chunks (rows), typed batches (batches), or nowhere
 * (both NULL: counted only). */
typedef struct read_target {
    icd_rows_fn rows;
    icd_batch_fn batches;
    void *ctx;
} read_target;

static int read_batches(icd_scan *s, size_t index, const read_target *to,
                        pthread_mutex_t *serialise, ice_read_stats *st, icd_error *err)
{
    icd_batch *b;
    ice_row_sink sink;
    ICD_TRY(icd_api_batch_new(&b, (const ice_field *const *)s->fields, s->nfields, index,
                              to->batches, to->ctx, serialise, &sink, err));
    int rc =
        ice_scan_reader_read_task(s->reader, ice_scan_plan_task(s->plan, index), &sink, st, err);
    if (rc == 0) rc = icd_api_batch_finish(b, err);
    icd_api_batch_free(b);
    return rc;
}

/* Reads task `index`, or part `part` of `nparts` of it (ice_scan_reader_read_task_part).
 * `left` (parts only): the task's parts not yet done; the one that ends last reports the
 * task to the progress callback. */
static int read_task(icd_scan *s, size_t index, unsigned part, unsigned nparts, atomic_uint *left,
                     const read_target *to, pthread_mutex_t *serialise, icd_error *err)
{
    if (index >= ice_scan_plan_task_count(s->plan))
        return icd_fail(err, ICD_EINVALID, NULL, -1, "task %zu does not exist (the scan has %zu)",
                        index, ice_scan_plan_task_count(s->plan));
    const ice_scan_task *task = ice_scan_plan_task(s->plan, index);
    ice_read_stats st = {0};
    icd_rows_fn fn = to->rows;
    void *ctx = to->ctx;
    int rc;
    if (to->batches) {
        rc = read_batches(s, index, to, serialise, &st, err);
    } else if (!fn) {
        rc = ice_scan_reader_read_task_part(s->reader, task, part, nparts, &COUNT_SINK, &st, err);
    } else {
        task_output o = {fn, ctx, serialise, ICD_BUF_INIT, 0, {0}};
        ice_scan_json j = {0};
        j.out = &o.buf;
        j.on_row = on_row;
        j.on_row_ctx = &o;
        ice_row_sink sink;
        ice_scan_json_sink(&j, &sink);
        rc = ice_scan_reader_read_task_part(s->reader, task, part, nparts, &sink, &st, err);
        if (rc == 0) rc = deliver(&o, err);
        ice_scan_json_free(&j);
        icd_buf_free(&o.buf);
    }
    if (serialise) pthread_mutex_lock(serialise); /* the progress call: never beside fn */
    pthread_mutex_lock(&s->lock);
    ice_read_stats_add(&s->stats, &st);
    bool done = !left || atomic_fetch_sub(left, 1) == 1; /* the task's last part ended */
    icd_progress_fn progress = serialise && done ? s->progress : NULL; /* icd_scan_run */
    void *pctx = s->progress_ctx;
    icd_scan_stats so_far;
    if (progress) icd_api_read_stats(&s->stats, &so_far);
    pthread_mutex_unlock(&s->lock);
    if (progress) {
        icd_task_info ti;
        task_info(s, index, &ti);
        progress(pctx, &ti, &so_far);
    }
    if (serialise) pthread_mutex_unlock(serialise);
    return rc;
}

int icd_scan_read_task(icd_scan *s, size_t index, icd_rows_fn fn, void *ctx, icd_error *err)
{
    read_target to = {fn, NULL, ctx};
    return read_task(s, index, 0, 1, NULL, &to, NULL, err);
}

int icd_scan_read_task_batches(icd_scan *s, size_t index, icd_batch_fn fn, void *ctx,
                               icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no batch callback");
    read_target to = {NULL, fn, ctx};
    return read_task(s, index, 0, 1, NULL, &to, NULL, err);
}

typedef struct run_ctx {
    icd_scan *scan;
    read_target to;
    pthread_mutex_t serialise;
    unsigned nparts;   /* parts per task: item i is part i % nparts of task i / nparts */
    atomic_uint *left; /* nparts > 1: parts of each task not yet read */
} run_ctx;

static int run_one(void *ctx, size_t i, icd_error *err)
{
    run_ctx *r = ctx;
    size_t task = i / r->nparts;
    unsigned part = (unsigned)(i % r->nparts);
    int rc = read_task(r->scan, task, part, r->nparts, r->left ? &r->left[task] : NULL, &r->to,
                       &r->serialise, err);
    if (rc) ice_scan_reader_cancel(r->scan->reader);
    return rc;
}

/* Parts per task for `threads` threads: with few tasks (a handful of big files) each is
 * read as up to PARTS_MAX ranges of its row groups or stripes, so that about PARTS_PER_THREAD items
 * per thread keep every thread busy to the end (a task per item left the last file to one thread).
 * Typed batches promise a task's batches in row order: never split. */
#define PARTS_PER_THREAD 16
#define PARTS_MAX 8
static unsigned parts_per_task(size_t ntasks, int threads, const read_target *to)
{
    if (threads <= 1 || to->batches || ntasks == 0) return 1;
    size_t want = (size_t)threads * PARTS_PER_THREAD;
    if (ntasks >= want) return 1;
    size_t p = (want + ntasks - 1) / ntasks;
    return p > PARTS_MAX ? PARTS_MAX : (unsigned)p;
}

static int run(icd_scan *s, int threads, const read_target *to, icd_error *err)
{
    size_t nt = ice_scan_plan_task_count(s->plan);
    run_ctx r = {s, *to, PTHREAD_MUTEX_INITIALIZER, parts_per_task(nt, threads, to), NULL};
    if (r.nparts > 1) {
        r.left = malloc(nt * sizeof *r.left);
        if (!r.left) return icd_fail_nomem(err);
        for (size_t i = 0; i < nt; i++)
            atomic_init(&r.left[i], r.nparts);
    }
    int rc = icd_parallel_for(nt * r.nparts, threads < 1 ? 1 : threads, run_one, &r, err);
    free(r.left);
    pthread_mutex_destroy(&r.serialise);
    return rc;
}

int icd_scan_run(icd_scan *s, int threads, icd_rows_fn fn, void *ctx, icd_error *err)
{
    read_target to = {fn, NULL, ctx};
    return run(s, threads, &to, err);
}

int icd_scan_run_batches(icd_scan *s, int threads, icd_batch_fn fn, void *ctx, icd_error *err)
{
    if (!fn) return icd_fail(err, ICD_EINVALID, NULL, -1, "no batch callback");
    read_target to = {NULL, fn, ctx};
    return run(s, threads, &to, err);
}

/* --- the columns --- */

size_t icd_scan_column_count(const icd_scan *s)
{
    return s->nfields;
}

static icd_type_id type_id(ice_type_kind k)
{
    switch (k) {
    case ICE_T_BOOLEAN:
        return ICD_TYPE_BOOLEAN;
    case ICE_T_INT:
        return ICD_TYPE_INT;
    case ICE_T_LONG:
        return ICD_TYPE_LONG;
    case ICE_T_FLOAT:
        return ICD_TYPE_FLOAT;
    case ICE_T_DOUBLE:
        return ICD_TYPE_DOUBLE;
    case ICE_T_DECIMAL:
        return ICD_TYPE_DECIMAL;
    case ICE_T_DATE:
        return ICD_TYPE_DATE;
    case ICE_T_TIME:
        return ICD_TYPE_TIME;
    case ICE_T_TIMESTAMP:
        return ICD_TYPE_TIMESTAMP;
    case ICE_T_TIMESTAMPTZ:
        return ICD_TYPE_TIMESTAMPTZ;
    case ICE_T_TIMESTAMP_NS:
        return ICD_TYPE_TIMESTAMP_NS;
    case ICE_T_TIMESTAMPTZ_NS:
        return ICD_TYPE_TIMESTAMPTZ_NS;
    case ICE_T_STRING:
        return ICD_TYPE_STRING;
    case ICE_T_UUID:
        return ICD_TYPE_UUID;
    case ICE_T_FIXED:
        return ICD_TYPE_FIXED;
    case ICE_T_BINARY:
        return ICD_TYPE_BINARY;
    case ICE_T_STRUCT:
        return ICD_TYPE_STRUCT;
    case ICE_T_LIST:
        return ICD_TYPE_LIST;
    case ICE_T_MAP:
        return ICD_TYPE_MAP;
    case ICE_T_VARIANT:
        return ICD_TYPE_VARIANT;
    case ICE_T_UNKNOWN:
        return ICD_TYPE_UNKNOWN;
    default:
        return ICD_TYPE_OTHER;
    }
}

int icd_scan_column(const icd_scan *s, size_t i, icd_column_info *out, icd_error *err)
{
    memset(out, 0, sizeof *out);
    if (i >= s->nfields)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "column %zu does not exist (the scan has %zu)",
                        i, s->nfields);
    const ice_field *f = s->fields[i];
    out->name = f->name;
    out->field_id = f->id;
    out->type = type_id(f->type->kind);
    out->precision = f->type->precision;
    out->scale = f->type->scale;
    out->length = f->type->length;
    out->required = f->required;
    return 0;
}

void icd_scan_get_stats(icd_scan *s, icd_scan_stats *out)
{
    pthread_mutex_lock(&s->lock);
    icd_api_read_stats(&s->stats, out);
    pthread_mutex_unlock(&s->lock);
}

void icd_scan_get_plan_info(const icd_scan *s, icd_scan_plan_info *out)
{
    memset(out, 0, sizeof *out);
    ice_scan_counts c = ice_scan_plan_counts(s->plan);
    out->data_files = c.data_files;
    out->delete_files = c.delete_files;
    out->position_delete_files = c.position_delete_files;
    out->equality_delete_files = c.equality_delete_files;
    out->deletion_vectors = c.deletion_vectors;
    out->data_bytes = s->data_bytes;
}

void icd_scan_set_progress(icd_scan *s, icd_progress_fn fn, void *ctx)
{
    pthread_mutex_lock(&s->lock);
    s->progress = fn;
    s->progress_ctx = fn ? ctx : NULL;
    pthread_mutex_unlock(&s->lock);
}
