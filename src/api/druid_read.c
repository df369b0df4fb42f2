/*
 * Druid input rows through the public API (icd_druid_read_plan, icd_druid_read_split):
 * the read driver. Data files are read on N threads (base/parallel.h) through one
 * merge-on-read reader (iceberg/reader.h) into Druid's row writer (druid/rows/druid_sink.h);
 * each thread hands whole rows to the caller's callback under one lock, so lines never
 * interleave. Parse exceptions are counted against the spec's maxParseExceptions.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/parallel.h"
#include "druid/plan/plan.h"
#include "druid/plan/split.h"
#include "druid/rows/druid_sink.h"
#include "druid/spec/spec.h"
#include "druid/spec/spec_columns.h"
#include "iceberg/reader.h"
#include "iceberg/scan_plan.h"
#include "icedruid/druid.h"

#define FLUSH_BYTES (1u << 18)
#define STREAM_MEMORY_DEFAULT ((size_t)16 << 20)

typedef struct read_run {
    const dr_spec *spec;
    const icd_druid_read_options *o;
    icd_rows_fn fn;
    void *ctx;
    const ice_schema *schema;  /* the projection's (the timestamp column is shipped or not) */
    const char **parquet_drop; /* dr_spec_parquet_undiscovered */
    size_t n_parquet_drop;
    const char **orc_drop, **avro_drop; /* dr_spec_undiscovered */
    size_t n_orc_drop, n_avro_drop;
    ice_scan_reader *reader;
    const ice_scan_task *const *tasks;
    size_t ntasks;
    pthread_mutex_t lock; /* the callbacks, parse exceptions, stats, progress */
    dr_parse_exceptions pe;
    ice_read_stats stats;
    size_t files_done;
    uint64_t bytes_done, bytes_total;
    bool limit_reached;
} read_run;

typedef struct task_ctx {
    read_run *run;
    dr_sink *sink;
} task_ctx;

static int hand_over(task_ctx *t, icd_buf *b, icd_error *err)
{
    read_run *run = t->run;
    if (!icd_buf_ok(b)) return icd_fail_nomem(err);
    int rc = 0;
    if (b->len && run->fn) {
        pthread_mutex_lock(&run->lock);
        rc = run->fn(run->ctx, b->data, b->len, err);
        pthread_mutex_unlock(&run->lock);
        if (rc && !err->code) icd_fail(err, rc, NULL, -1, "the rows were refused");
    }
    icd_buf_clear(b);
    return rc;
}

static int on_row(void *ctx, icd_buf *b, icd_error *err)
{
    task_ctx *t = ctx;
    uint64_t limit = t->run->o->limit;
    if (limit && t->sink->rows >= limit) { /* one thread: stop here */
        ICD_TRY(hand_over(t, b, err));
        t->run->limit_reached = true;
        return icd_fail(err, ICD_ECANCELED, NULL, -1, "the row limit was reached");
    }
    return b->len >= FLUSH_BYTES ? hand_over(t, b, err) : 0;
}

static int on_parse_exception(void *ctx, const icd_error *row_err, icd_error *err)
{
    read_run *run = ((task_ctx *)ctx)->run;
    pthread_mutex_lock(&run->lock);
    if (run->o->on_parse_exception) run->o->on_parse_exception(run->o->ctx, row_err);
    int rc = dr_parse_exceptions_add(&run->pe, row_err, err);
    pthread_mutex_unlock(&run->lock);
    return rc;
}

static void progress(read_run *run)
{
    if (run->o->on_progress)
        run->o->on_progress(run->o->ctx, run->files_done, run->ntasks, run->bytes_done,
                            run->bytes_total);
}

static int run_task(void *ctx, size_t i, icd_error *err)
{
    read_run *run = ctx;
    icd_buf buf = ICD_BUF_INIT;
    dr_sink sink;
    task_ctx t = {run, &sink};
    int rc = dr_sink_init(&sink, dr_spec_timestamp_spec(run->spec), run->reader, &buf, err);
    ice_read_stats st = {0};
    if (!rc) {
        dr_row_set_binary_as_string(sink.w, dr_spec_binary_as_string(run->spec));
        sink.parquet_drop = run->parquet_drop;
        sink.n_parquet_drop = run->n_parquet_drop;
        sink.orc_drop = run->orc_drop;
        sink.n_orc_drop = run->n_orc_drop;
        sink.avro_drop = run->avro_drop;
        sink.n_avro_drop = run->n_avro_drop;
        dr_row_set_omit_timestamp_column(sink.w,
                                         !dr_spec_timestamp_column_shipped(run->spec, run->schema));
        sink.on_row = on_row;
        sink.on_parse_exception = on_parse_exception;
        sink.ctx = &t;
        ice_row_sink rs;
        dr_sink_row_sink(&sink, &rs);
        rc = ice_scan_reader_read_task(run->reader, run->tasks[i], &rs, &st, err);
        if (!rc) rc = hand_over(&t, &buf, err);
    }
    dr_sink_clear(&sink);
    icd_buf_free(&buf);
    pthread_mutex_lock(&run->lock);
    ice_read_stats_add(&run->stats, &st);
    run->files_done++;
    run->bytes_done += (uint64_t)run->tasks[i]->data->file_size;
    progress(run);
    pthread_mutex_unlock(&run->lock);
    if (rc) ice_scan_reader_cancel(run->reader);
    return rc;
}

/* The reader of the columns Druid's reader keeps (InputRowSchemas.createColumnsFilter),
 * and the columns each format's reader leaves undiscovered. */
static int prepare(read_run *run, icd_fileio *io, const ice_metadata *md, const ice_schema *schema,
                   icd_error *err)
{
    const dr_spec *spec = run->spec;
    run->schema = schema;
    const char **cols = NULL;
    size_t ncols = 0;
    ICD_TRY(dr_spec_columns_filter(spec, schema, &cols, &ncols, err));
    int rc =
        dr_spec_parquet_undiscovered(spec, schema, &run->parquet_drop, &run->n_parquet_drop, err);
    if (!rc)
        rc = dr_spec_undiscovered(spec, schema, DR_READER_ORC, &run->orc_drop, &run->n_orc_drop,
                                  err);
    if (!rc)
        rc = dr_spec_undiscovered(spec, schema, DR_READER_AVRO, &run->avro_drop, &run->n_avro_drop,
                                  err);
    if (!rc) rc = ice_scan_reader_new(io, md, schema, cols, ncols, &run->reader, err);
    free(cols);
    if (rc) return rc;
    size_t mem = run->o->stream_memory ? run->o->stream_memory : STREAM_MEMORY_DEFAULT;
    ice_scan_reader_set_read_budget(run->reader, mem / 8);
    return 0;
}

static int run_all(read_run *run, icd_scan_stats *stats, icd_error *err)
{
    for (size_t i = 0; i < run->ntasks; i++)
        run->bytes_total += (uint64_t)run->tasks[i]->data->file_size;
    dr_parse_exceptions_init(&run->pe, dr_spec_max_parse_exceptions(run->spec));
    progress(run);
    int threads = run->o->limit ? 1 : run->o->threads;
    int rc = icd_parallel_for(run->ntasks, threads, run_task, run, err);
    if (run->limit_reached) rc = 0;
    if (stats) icd_api_read_stats(&run->stats, stats);
    return rc;
}

static void run_free(read_run *run)
{
    ice_scan_reader_free(run->reader);
    free(run->parquet_drop);
    free(run->orc_drop);
    free(run->avro_drop);
    pthread_mutex_destroy(&run->lock);
}

void icd_druid_read_options_init(icd_druid_read_options *o)
{
    memset(o, 0, sizeof *o);
    o->version = ICD_DRUID_READ_OPTIONS_VERSION;
    o->threads = 1;
}

static int start(read_run *run, const dr_spec *spec, const icd_druid_read_options *o,
                 icd_rows_fn fn, void *ctx, icd_scan_stats *stats, icd_error *err)
{
    memset(run, 0, sizeof *run);
    if (stats) memset(stats, 0, sizeof *stats);
    if (!o || o->version != ICD_DRUID_READ_OPTIONS_VERSION)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "unknown read options version");
    run->spec = spec;
    run->o = o;
    run->fn = fn;
    run->ctx = ctx;
    pthread_mutex_init(&run->lock, NULL);
    return 0;
}

int icd_druid_read_plan(icd_druid_plan *p, icd_storage *storage, const icd_druid_read_options *o,
                        icd_rows_fn fn, void *ctx, icd_scan_stats *stats, icd_error *err)
{
    if (!p || !storage) return icd_fail(err, ICD_EINVALID, NULL, -1, "no plan or storage");
    const ice_scan_plan *scan = dr_plan_scan(p->plan);
    if (!scan) return icd_fail(err, ICD_EINVALID, NULL, -1, "a streamed plan cannot be read");
    read_run run;
    ICD_TRY(start(&run, p->spec, o, fn, ctx, stats, err));
    run.ntasks = dr_plan_split_count(p->plan);
    const ice_scan_task **tasks = calloc(run.ntasks ? run.ntasks : 1, sizeof *tasks);
    int rc = tasks ? 0 : icd_fail_nomem(err);
    for (size_t i = 0; !rc && i < run.ntasks; i++)
        tasks[i] = ice_scan_plan_task(scan, i);
    run.tasks = tasks;
    if (!rc)
        rc = prepare(&run, storage->io, dr_plan_metadata(p->plan), dr_plan_schema(p->plan), err);
    if (!rc && o->prune_row_groups)
        ice_scan_reader_set_filter(run.reader, ice_scan_plan_filter(scan));
    if (!rc) rc = run_all(&run, stats, err);
    run_free(&run);
    free(tasks);
    return rc;
}

/* Reads one parsed split (taken over: freed here). */
static int read_split(const icd_druid_spec *spec, icd_storage *storage, dr_split *split,
                      const char *origin, const icd_druid_read_options *o, icd_rows_fn fn,
                      void *ctx, icd_scan_stats *stats, icd_error *err)
{
    const dr_spec *s = icd_api_dr_spec((icd_druid_spec *)spec);
    read_run run;
    int rc = start(&run, s, o, fn, ctx, stats, err);
    if (rc) {
        dr_split_free(split);
        return rc;
    }
    if (dr_split_has_residual(split)) {
        if (dr_spec_residual_mode(s) == DR_RESIDUAL_FAIL)
            rc = icd_fail(err, ICD_EINVALID, origin, -1,
                          "the split keeps a residual filter that needs row-level filtering and "
                          "residualFilterMode is 'fail'");
        else if (dr_spec_residual_mode(s) == DR_RESIDUAL_WARN && o->on_warning)
            o->on_warning(o->ctx, "the split keeps a residual filter; rows that do not match the "
                                  "icebergFilter are read too");
    }
    const ice_scan_task *task = dr_split_task(split);
    run.ntasks = 1;
    run.tasks = &task;
    if (!rc) rc = prepare(&run, storage->io, dr_split_metadata(split), dr_split_schema(split), err);
    if (!rc) rc = run_all(&run, stats, err);
    run_free(&run);
    dr_split_free(split);
    return rc;
}

int icd_druid_read_split(const icd_druid_spec *spec, icd_storage *storage, const char *split_json,
                         size_t len, const char *origin, const icd_druid_read_options *o,
                         icd_rows_fn fn, void *ctx, icd_scan_stats *stats, icd_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (!spec || !storage || !split_json)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec, storage or split");
    dr_split *split = NULL;
    ICD_TRY(dr_split_parse(split_json, len, origin, &split, err));
    return read_split(spec, storage, split, origin, o, fn, ctx, stats, err);
}

int icd_druid_read_split_file(const icd_druid_spec *spec, icd_storage *storage, const char *path,
                              const icd_druid_read_options *o, icd_rows_fn fn, void *ctx,
                              icd_scan_stats *stats, icd_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (!spec || !storage || !path)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "no spec, storage or split file");
    dr_split *split = NULL;
    ICD_TRY(dr_split_load(path, &split, err));
    return read_split(spec, storage, split, path, o, fn, ctx, stats, err);
}
