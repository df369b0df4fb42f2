/*
 * `icedruid stage --spec SPEC.json --to LOCATION [--threads N] [--part-size BYTES]
 *  [--gc SNAPSHOT_ID] [--remap FROM=TO]...`: plans the spec's table, writes every data file
 * that cannot go to Druid raw as a delete-applied ("materialized") file under LOCATION
 * (a local/shared directory, or s3://bucket/prefix), skipping files already there, and
 * prints the ingestion spec to submit: the user's spec with the iceberg input source
 * replaced by its warehouseSource listing raw + staged files (druid/stage/stage.h). A summary
 * line (JSON) goes to stderr. With --gc, afterwards removes this table's staged files
 * under LOCATION that no snapshot after SNAPSHOT_ID needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

static int parse_i64(const char *cmd, const char *opt, const char *v, int64_t min, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < min)
        return cli_usage_error(cmd, "%s expects an integer >= %lld, got '%s'", opt, (long long)min,
                               v);
    *out = x;
    return CLI_OK;
}

/* The progress line over the materialized files (written or found staged). */
typedef struct stage_progress {
    pthread_mutex_t mu;
    cli_progress p;
} stage_progress;

static void on_file(void *ctx, int64_t source_bytes, uint64_t rows)
{
    stage_progress *sp = ctx;
    pthread_mutex_lock(&sp->mu);
    sp->p.files_done++;
    sp->p.bytes_done += source_bytes > 0 ? (uint64_t)source_bytes : 0;
    sp->p.rows += rows;
    cli_progress_show(&sp->p, false);
    pthread_mutex_unlock(&sp->mu);
}

int cmd_stage(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "threads,to,gc,part-size,project", NULL);
    int64_t part = 0, gc_after = 0;
    if (!rc && !a.to) rc = cli_usage_error(a.cmd, "expects --to LOCATION (a directory or s3://)");
    if (!rc && a.part_size) rc = parse_i64(a.cmd, "--part-size", a.part_size, 1024, &part);
    if (!rc && a.gc) rc = parse_i64(a.cmd, "--gc", a.gc, INT64_MIN, &gc_after);
    icd_druid_plan *plan = NULL;
    char *doc = NULL;
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_druid_plan(&a, &plan);
    icd_error err;
    icd_error_clear(&err);
    stage_progress sp = {.mu = PTHREAD_MUTEX_INITIALIZER};
    icd_druid_stage_stats s;
    memset(&s, 0, sizeof s);
    if (!rc) {
        icd_druid_stage_options o;
        icd_druid_stage_options_init(&o);
        o.to = a.to;
        o.threads = a.threads;
        o.part_bytes = (size_t)part;
        o.tmp_dir = getenv("TMPDIR");
        size_t files = 0;
        uint64_t bytes = 0;
        if (cli_progress_wanted() && !icd_druid_plan_materialized(plan, &files, &bytes, &err)) {
            cli_progress_init(&sp.p, "stage", files, bytes);
            o.on_file = on_file;
            o.on_file_ctx = &sp;
        }
        int failed = icd_druid_stage(&doc, &s, plan, a.storage, &o, &err);
        if (o.on_file) {
            if (failed)
                cli_progress_clear(&sp.p);
            else
                cli_progress_end(&sp.p);
        }
        if (failed) rc = cli_report(&err);
    }
    if (!rc && (cli_write_file(stdout, doc, strlen(doc), &err) ||
                cli_write_file(stdout, "\n", 1, &err) || cli_write_done(stdout, &err)))
        rc = cli_report(&err);
    if (!rc) {
        /* one JSON line: the files, then the row accounting of the files written (rows
         * read, removed by each kind of delete, emitted); on a terminal also the summary */
        char extra[512];
        snprintf(extra, sizeof extra,
                 "\"rawFiles\":%zu,\"stagedFiles\":%zu,\"writtenFiles\":%zu,\"skippedFiles\":%zu,"
                 "\"bytesWritten\":%" PRId64 ",\"rowsWritten\":%" PRId64 ",\"stagedBytes\":%" PRId64
                 ",\"materializedSourceBytes\":%" PRId64 ",\"rawBytes\":%" PRId64
                 ",\"tableBytes\":%" PRId64,
                 s.raw_files, s.staged_files, s.written_files, s.skipped_files, s.bytes_written,
                 s.rows_written, s.staged_bytes, s.source_bytes, s.raw_bytes, s.table_bytes);
        cli_print_scan_stats(&s.read, true, extra);
        if (cli_progress_wanted()) cli_print_scan_stats(&s.read, false, NULL);
    }
    if (!rc && a.gc) {
        size_t removed = 0, kept = 0;
        if (icd_druid_stage_gc(plan, a.storage, a.to, gc_after, &removed, &kept, &err))
            rc = cli_report(&err);
        else
            fprintf(stderr, "{\"gcRemoved\":%zu,\"gcKept\":%zu}\n", removed, kept);
    }
    icd_string_free(doc);
    icd_druid_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
