/*
 * `icedruid read --spec SPEC.json [--split SPLIT.json] [--remap FROM=TO]... [--threads N]
 *  [-o FILE] [--no-progress]`: the table's rows (every split of the plan, or the one
 * split given) as Druid input rows, newline-delimited JSON (druid/druid_sink.h).
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
#include "druid/druid_sink.h"
#include "druid/split.h"
#include "iceberg/reader.h"

#define FLUSH_BYTES (1u << 18)

typedef struct read_run {
    const dr_spec *spec;
    const ice_schema *schema;  /* the projection's (the timestamp column is shipped or not) */
    const char **parquet_drop; /* dr_spec_parquet_undiscovered */
    size_t n_parquet_drop;
    ice_scan_reader *reader;
    const ice_scan_task *const *tasks;
    size_t ntasks;
    FILE *out;
    pthread_mutex_t lock; /* output, parse exceptions, stats, progress */
    bool out_failed;
    dr_parse_exceptions pe;
    ice_read_stats stats;
    /* progress */
    bool progress;
    bool progress_shown;
    size_t files_done;
    uint64_t rows;
    double last_print;
} read_run;

typedef struct task_ctx {
    read_run *run;
    dr_sink *sink;
    uint64_t rows_reported;
} task_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Under run->lock. */
static void show_progress(read_run *run, bool force)
{
    if (!run->progress) return;
    double t = now_s();
    if (!force && t - run->last_print < 0.2) return;
    run->last_print = t;
    run->progress_shown = true;
    fprintf(
        stderr, "\ricedruid read: data files %zu/%zu, rows %llu, removed by deletes %llu ",
        run->files_done, run->ntasks, (unsigned long long)run->rows,
        (unsigned long long)(run->stats.rows_deleted_position + run->stats.rows_deleted_equality));
}

static int write_out(task_ctx *t, icd_buf *b, icd_error *err)
{
    read_run *run = t->run;
    if (!icd_buf_ok(b)) return icd_fail_nomem(err);
    pthread_mutex_lock(&run->lock);
    if (b->len && !run->out_failed && fwrite(b->data, 1, b->len, run->out) != b->len)
        run->out_failed = true;
    bool failed = run->out_failed;
    run->rows += t->sink->rows - t->rows_reported;
    t->rows_reported = t->sink->rows;
    show_progress(run, false);
    pthread_mutex_unlock(&run->lock);
    icd_buf_clear(b);
    return failed ? icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output") : 0;
}

static int on_row(void *ctx, icd_buf *b, icd_error *err)
{
    return b->len >= FLUSH_BYTES ? write_out(ctx, b, err) : 0;
}

static int on_parse_exception(void *ctx, const icd_error *row_err, icd_error *err)
{
    read_run *run = ((task_ctx *)ctx)->run;
    pthread_mutex_lock(&run->lock);
    if (run->progress_shown) fputc('\n', stderr);
    run->progress_shown = false;
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
    run->files_done++;
    show_progress(run, false);
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

static int open_output(const cli_spec_args *a, FILE **out)
{
    *out = stdout;
    if (!a->output || !strcmp(a->output, "-")) return CLI_OK;
    *out = fopen(a->output, "wb");
    if (!*out) {
        icd_error err;
        icd_fail(&err, ICD_EIO, a->output, -1, "cannot create the output file");
        return cli_report(&err);
    }
    return CLI_OK;
}

int cmd_read(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "threads,split,output,no-progress", NULL);
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
    if (!rc && ice_scan_reader_new(a.io, md, schema, cols, ncols, &run.reader, &err))
        rc = cli_report(&err);
    free(cols);
    if (!rc) {
        run.ntasks = split ? 1 : dr_plan_split_count(plan);
        tasks = calloc(run.ntasks ? run.ntasks : 1, sizeof *tasks);
        if (!tasks) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        for (size_t i = 0; !rc && i < run.ntasks; i++)
            tasks[i] = split ? dr_split_task(split) : ice_scan_plan_task(dr_plan_scan(plan), i);
        run.tasks = tasks;
    }
    if (!rc) rc = open_output(&a, &run.out);
    if (!rc) {
        run.spec = a.spec;
        run.progress = !a.progress_off && isatty(STDERR_FILENO);
        run.last_print = now_s();
        dr_parse_exceptions_init(&run.pe, dr_spec_max_parse_exceptions(a.spec));
        int prc = icd_parallel_for(run.ntasks, a.threads, run_task, &run, &err);
        if (run.progress_shown) {
            show_progress(&run, true);
            fputc('\n', stderr);
        }
        if (fflush(run.out) != 0 || run.out_failed)
            rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
        else if (prc)
            rc = cli_report(&err);
        if (run.out != stdout && fclose(run.out) != 0 && !rc)
            rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
    }
    ice_scan_reader_free(run.reader);
    free(run.parquet_drop);
    pthread_mutex_destroy(&run.lock);
    free(tasks);
    dr_split_free(split);
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
