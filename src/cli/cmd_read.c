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
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

typedef struct read_out {
    FILE *out;
    bool failed;
    cli_progress progress;
} read_out;

/* Whole rows of one data file (calls never overlap). */
static int write_rows(void *ctx, const char *ndjson, size_t len, icd_error *err)
{
    read_out *o = ctx;
    if (fwrite(ndjson, 1, len, o->out) != len) {
        o->failed = true;
        return cli_fail(err, ICD_EIO, NULL, "cannot write the output");
    }
    for (const char *p = ndjson, *end = ndjson + len; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        o->progress.rows++;
    cli_progress_show(&o->progress, false);
    return 0;
}

static void on_parse_exception(void *ctx, const icd_error *row)
{
    read_out *o = ctx;
    cli_progress_clear(&o->progress);
    cli_report(row);
}

static void on_progress(void *ctx, size_t files_done, size_t files_total, uint64_t bytes_done,
                        uint64_t bytes_total)
{
    read_out *o = ctx;
    if (files_done == 0) cli_progress_init(&o->progress, "read", files_total, bytes_total);
    o->progress.files_done = files_done;
    o->progress.bytes_done = bytes_done;
    cli_progress_show(&o->progress, false);
}

static void on_warning(void *ctx, const char *message)
{
    (void)ctx;
    fprintf(stderr, "icedruid: warning: %s\n", message);
}

int cmd_read(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(
        &a, argc, argv, "threads,split,output,limit,stats,prune-row-groups,stream-memory", NULL);
    icd_error err;
    icd_error_clear(&err);
    icd_druid_plan *plan = NULL;
    read_out out = {stdout, false, {0}};
    if (!rc) rc = cli_spec_load(&a);
    if (!rc && !a.split_path) rc = cli_druid_plan(&a, &plan);
    if (!rc) rc = cli_open_output(a.output, &out.out);
    if (!rc) {
        icd_druid_read_options o;
        icd_druid_read_options_init(&o);
        o.threads = a.threads;
        o.limit = a.limit;
        o.stream_memory = a.stream_memory;
        o.prune_row_groups = a.prune_row_groups;
        o.on_parse_exception = on_parse_exception;
        o.on_progress = on_progress;
        o.on_warning = on_warning;
        o.ctx = &out;
        icd_scan_stats stats;
        int prc = a.split_path
                      ? icd_druid_read_split_file(a.dspec, a.storage, a.split_path, &o, write_rows,
                                                  &out, &stats, &err)
                      : icd_druid_read_plan(plan, a.storage, &o, write_rows, &out, &stats, &err);
        if (!prc)
            cli_progress_end(&out.progress);
        else
            cli_progress_clear(&out.progress);
        if (fflush(out.out) != 0 || out.failed)
            rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
        else if (prc)
            rc = cli_report(&err);
        int crc = cli_close_output(out.out, a.output);
        if (!rc) rc = crc;
        if (!rc && a.stats) {
            icd_storage_stats io;
            icd_storage_get_stats(a.storage, &io);
            char extra[256];
            snprintf(extra, sizeof extra,
                     "\"remote_requests\":%llu,\"remote_bytes\":%llu,\"local_reads\":%llu,"
                     "\"local_bytes\":%llu",
                     (unsigned long long)io.remote_requests, (unsigned long long)io.remote_bytes,
                     (unsigned long long)io.local_reads, (unsigned long long)io.local_bytes);
            cli_print_scan_stats(&stats, true, extra);
        } else if (!rc && out.progress.on) {
            cli_print_scan_stats(&stats, false, NULL);
        }
    }
    icd_druid_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
