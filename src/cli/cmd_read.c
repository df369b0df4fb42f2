/*
 * `icedruid read --spec SPEC.json [--split SPLIT.json] [--remap FROM=TO]... [--threads N]
 *  [-o FILE] [--limit N] [--stats]`: the table's rows (every split of the plan, or the one
 * split given) as Druid input rows, newline-delimited JSON (druid/rows/druid_sink.h).
 *
 * Unparseable timestamps are Druid parse exceptions: each is reported on stderr as
 * "icedruid: FILE: row N: Timestamp[...] is unparseable! ..." and its row skipped; more
 * than tuningConfig.maxParseExceptions fails the run. A residual filter fails the run
 * with residualFilterMode=fail and warns with warn. On a terminal, stderr shows progress
 * (data files done, rows written, rows removed by deletes); never on a pipe.
 * Tasks run on up to N threads; rows are written in whole-row chunks.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/parallel.h"
#include "cli/cli.h"
#include "cli/spec_args.h"
#include "druid/rows/druid_sink.h"
#include "druid/plan/split.h"
#include "iceberg/reader.h"
#include "io/http.h"

#define FLUSH_BYTES (1u << 18)

typedef struct read_run {
    const dr_spec *spec;
    const ice_schema *schema;  /* the projection's (the timestamp column is shipped or not) */
    const char **parquet_drop; /* dr_spec_parquet_undiscovered */
    size_t n_parquet_drop;
    const char **orc_drop, **avro_drop; /* dr_spec_undiscovered */
    size_t n_orc_drop, n_avro_drop;
    ice_scan_reader *reader;
    const ice_scan_task *const *tasks;
    size_t ntasks;
    FILE *out;
    pthread_mutex_t lock; /* output, parse exceptions, stats, progress */
    bool out_failed;
    dr_parse_exceptions pe;
    ice_read_stats stats;
    cli_progress progress;
    uint64_t limit; /* --limit N, 0 = all */
    bool limit_reached;
} read_run;

typedef struct task_ctx {
    read_run *run;
    dr_sink *sink;
    uint64_t rows_reported;
} task_ctx;

static int write_out(task_ctx *t, icd_buf *b, icd_error *err)
{
    read_run *run = t->run;
    if (!icd_buf_ok(b)) return icd_fail_nomem(err);
    pthread_mutex_lock(&run->lock);
    if (b->len && !run->out_failed && fwrite(b->data, 1, b->len, run->out) != b->len)
        run->out_failed = true;
    bool failed = run->out_failed;
    run->progress.rows += t->sink->rows - t->rows_reported;
    t->rows_reported = t->sink->rows;
    cli_progress_show(&run->progress, false);
    pthread_mutex_unlock(&run->lock);
    icd_buf_clear(b);
    return failed ? icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output") : 0;
}

static int on_row(void *ctx, icd_buf *b, icd_error *err)
{
    task_ctx *t = ctx;
    if (t->run->limit && t->sink->rows >= t->run->limit) { /* --limit: one thread, stop here */
        ICD_TRY(write_out(t, b, err));
        t->run->limit_reached = true;
        return icd_fail(err, ICD_ECANCELED, NULL, -1, "--limit reached");
    }
    return b->len >= FLUSH_BYTES ? write_out(ctx, b, err) : 0;
}

static int on_parse_exception(void *ctx, const icd_error *row_err, icd_error *err)
{
    read_run *run = ((task_ctx *)ctx)->run;
    pthread_mutex_lock(&run->lock);
    cli_progress_clear(&run->progress);
    cli_report(row_err);
    int rc = dr_parse_exceptions_add(&run->pe, row_err, err);
    pthread_mutex_unlock(&run->lock);
    return rc;
}

static int run_task(void *ctx, size_t i, icd_error *err)
{
    read_run *run = ctx;
    icd_buf buf = ICD_BUF_INIT;
    dr_sink sink;
    task_ctx t = {run, &sink, 0};
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
        if (!rc) rc = write_out(&t, &buf, err);
    }
    dr_sink_clear(&sink);
    icd_buf_free(&buf);
    pthread_mutex_lock(&run->lock);
    ice_read_stats_add(&run->stats, &st);
    run->progress.files_done++;
    run->progress.bytes_done += (uint64_t)run->tasks[i]->data->file_size;
    cli_progress_show(&run->progress, false);
    pthread_mutex_unlock(&run->lock);
    if (rc) ice_scan_reader_cancel(run->reader);
    return rc;
}

static int check_split_residual(const dr_spec *spec, const dr_split *split)
{
    if (!dr_split_has_residual(split)) return CLI_OK;
    if (dr_spec_residual_mode(spec) == DR_RESIDUAL_FAIL)
        return cli_report(&(icd_error){ICD_EINVALID, -1, "",
                                       "the split keeps a residual filter that needs row-level "
                                       "filtering and residualFilterMode is 'fail'"});
    if (dr_spec_residual_mode(spec) == DR_RESIDUAL_WARN)
        fprintf(stderr, "icedruid: warning: the split keeps a residual filter; rows that do not "
                        "match the icebergFilter are read too\n");
    return CLI_OK;
}

int cmd_read(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(
        &a, argc, argv, "threads,split,output,limit,stats,prune-row-groups,stream-memory", NULL);
    icd_error err;
    icd_error_clear(&err);
    dr_plan *plan = NULL;
    dr_split *split = NULL;
    const ice_scan_task **tasks = NULL;
    read_run run;
    memset(&run, 0, sizeof run);
    pthread_mutex_init(&run.lock, NULL);
    run.out = stdout;
    if (!rc) rc = cli_spec_load(&a);
    if (!rc && a.split_path) {
        if (dr_split_load(a.split_path, &split, &err)) rc = cli_report(&err);
        if (!rc) rc = check_split_residual(a.spec, split);
    } else if (!rc) {
        rc = cli_spec_plan(&a, &plan);
    }
    const ice_metadata *md = split  ? dr_split_metadata(split)
                             : plan ? dr_plan_metadata(plan)
                                    : NULL;
    const ice_schema *schema = split ? dr_split_schema(split) : plan ? dr_plan_schema(plan) : NULL;
    /* only the columns Druid's reader would keep (InputRowSchemas.createColumnsFilter) */
    const char **cols = NULL;
    size_t ncols = 0;
    if (!rc && dr_spec_columns_filter(a.spec, schema, &cols, &ncols, &err)) rc = cli_report(&err);
    run.schema = schema;
    if (!rc &&
        dr_spec_parquet_undiscovered(a.spec, schema, &run.parquet_drop, &run.n_parquet_drop, &err))
        rc = cli_report(&err);
    if (!rc && (dr_spec_undiscovered(a.spec, schema, DR_READER_ORC, &run.orc_drop, &run.n_orc_drop,
                                     &err) ||
                dr_spec_undiscovered(a.spec, schema, DR_READER_AVRO, &run.avro_drop,
                                     &run.n_avro_drop, &err)))
        rc = cli_report(&err);
    if (!rc && ice_scan_reader_new(a.io, md, schema, cols, ncols, &run.reader, &err))
        rc = cli_report(&err);
    if (!rc && run.reader)
        ice_scan_reader_set_read_budget(run.reader, CLI_READ_BUDGET(a.stream_memory));
    if (!rc && a.prune_row_groups && plan)
        ice_scan_reader_set_filter(run.reader, ice_scan_plan_filter(dr_plan_scan(plan)));
    free(cols);
    if (!rc) {
        run.ntasks = split ? 1 : dr_plan_split_count(plan);
        tasks = calloc(run.ntasks ? run.ntasks : 1, sizeof *tasks);
        if (!tasks) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        for (size_t i = 0; !rc && i < run.ntasks; i++)
            tasks[i] = split ? dr_split_task(split) : ice_scan_plan_task(dr_plan_scan(plan), i);
        run.tasks = tasks;
    }
    if (!rc) rc = cli_open_output(a.output, &run.out);
    if (!rc) {
        run.spec = a.spec;
        uint64_t bytes = 0;
        for (size_t i = 0; i < run.ntasks; i++)
            bytes += (uint64_t)tasks[i]->data->file_size;
        cli_progress_init(&run.progress, "read", run.ntasks, bytes);
        run.limit = a.limit;
        dr_parse_exceptions_init(&run.pe, dr_spec_max_parse_exceptions(a.spec));
        int prc = icd_parallel_for(run.ntasks, a.limit ? 1 : a.threads, run_task, &run, &err);
        if (run.limit_reached) prc = 0;
        if (!prc)
            cli_progress_end(&run.progress);
        else
            cli_progress_clear(&run.progress);
        if (fflush(run.out) != 0 || run.out_failed)
            rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
        else if (prc)
            rc = cli_report(&err);
        int crc = cli_close_output(run.out, a.output);
        if (!rc) rc = crc;
        if (!rc && a.stats) {
            icd_remote *r = icd_fileio_remote(a.io);
            char extra[256];
            snprintf(extra, sizeof extra,
                     "\"remote_requests\":%llu,\"remote_bytes\":%llu,\"local_reads\":%llu,"
                     "\"local_bytes\":%llu",
                     (unsigned long long)(r ? icd_remote_requests(r) : 0),
                     (unsigned long long)(r ? icd_remote_bytes(r) : 0),
                     (unsigned long long)icd_fileio_local_reads(a.io),
                     (unsigned long long)icd_fileio_local_bytes(a.io));
            cli_print_row_stats(&run.stats, true, extra);
        } else if (!rc && run.progress.on)
            cli_print_row_stats(&run.stats, false, NULL);
    }
    ice_scan_reader_free(run.reader);
    free(run.parquet_drop);
    free(run.orc_drop);
    free(run.avro_drop);
    pthread_mutex_destroy(&run.lock);
    free(tasks);
    dr_split_free(split);
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
