/*
 * `icedruid scan TABLE [--snapshot-id ID | --as-of TIME | --ref NAME] [--columns a,b,c]
 *  [--remap FROM=TO]... [--threads N] [--stats]`: the table's surviving rows as NDJSON
 * (design.md §2/§3). Tasks run on up to N threads; each task's rows stay in file order
 * and are written in whole-row chunks, so rows of different tasks never interleave
 * within a line.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/parallel.h"
#include "cli/cli.h"
#include "cli/table_args.h"
#include "iceberg/reader.h"
#include "iceberg/scan_json.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"
#include "io/http.h"

typedef struct scan_run {
    ice_scan_reader *reader;
    const ice_scan_plan *plan;
    FILE *out;
    pthread_mutex_t out_lock;
    bool out_failed;
    pthread_mutex_t stats_lock; /* stats and progress */
    ice_read_stats stats;
    cli_progress progress;
} scan_run;

typedef struct task_out {
    scan_run *run;
} task_out;

static int write_out(scan_run *run, icd_buf *b, icd_error *err)
{
    if (!icd_buf_ok(b)) return icd_fail_nomem(err);
    if (!b->len) return 0;
    pthread_mutex_lock(&run->out_lock);
    if (!run->out_failed && fwrite(b->data, 1, b->len, run->out) != b->len) run->out_failed = true;
    bool failed = run->out_failed;
    pthread_mutex_unlock(&run->out_lock);
    icd_buf_clear(b);
    return failed ? icd_fail(err, ICD_EIO, NULL, -1, "cannot write the output") : 0;
}

static int on_row(void *ctx, icd_buf *b, icd_error *err)
{
    return b->len >= (1u << 18) ? write_out(ctx, b, err) : 0;
}

static int run_task(void *ctx, size_t i, icd_error *err)
{
    scan_run *run = ctx;
    icd_buf buf = ICD_BUF_INIT;
    ice_scan_json j = {0};
    j.out = &buf;
    j.on_row = on_row;
    j.on_row_ctx = run;
    ice_row_sink sink;
    ice_scan_json_sink(&j, &sink);
    ice_read_stats st = {0};
    int rc =
        ice_scan_reader_read_task(run->reader, ice_scan_plan_task(run->plan, i), &sink, &st, err);
    if (!rc) rc = write_out(run, &buf, err);
    ice_scan_json_free(&j);
    icd_buf_free(&buf);
    pthread_mutex_lock(&run->stats_lock);
    ice_read_stats_add(&run->stats, &st);
    run->progress.files_done++;
    run->progress.bytes_done += (uint64_t)ice_scan_plan_task(run->plan, i)->data->file_size;
    run->progress.rows = run->stats.rows_emitted;
    cli_progress_show(&run->progress, false);
    pthread_mutex_unlock(&run->stats_lock);
    if (rc) ice_scan_reader_cancel(run->reader);
    return rc;
}

/* Splits "a,b,c" into an array of names (malloc'd, pointing into a copy). */
static int split_columns(const char *list, char **copy, const char ***names, size_t *n)
{
    *copy = strdup(list);
    if (!*copy) return -1;
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *names = calloc(cap, sizeof **names);
    if (!*names) return -1;
    *n = 0;
    for (char *tok = strtok(*copy, ","); tok; tok = strtok(NULL, ","))
        if (*tok) (*names)[(*n)++] = tok;
    return 0;
}

/* Counts of the whole run on stderr: the row accounting, then the plan's files and the
 * HTTP/S3 requests sent (retries included) and the response bytes they brought, metadata
 * and manifests included. */
static void print_stats(const scan_run *run, const ice_scan_plan *plan, icd_fileio *io, double secs)
{
    ice_scan_counts c = ice_scan_plan_counts(plan);
    const ice_read_stats *s = &run->stats;
    icd_remote *r = icd_fileio_remote(io);
    char extra[512];
    snprintf(extra, sizeof extra,
             "\"data_files\":%zu,\"delete_files\":%zu,\"position_delete_files\":%zu,"
             "\"equality_delete_files\":%zu,\"deletion_vectors\":%zu,"
             "\"delete_files_loaded\":%llu,\"remote_requests\":%llu,\"remote_bytes\":%llu,"
             "\"seconds\":%.3f",
             c.data_files, c.delete_files, c.position_delete_files, c.equality_delete_files,
             c.deletion_vectors, (unsigned long long)s->delete_files_loaded,
             (unsigned long long)(r ? icd_remote_requests(r) : 0),
             (unsigned long long)(r ? icd_remote_bytes(r) : 0), secs);
    cli_print_row_stats(s, true, extra);
}

/* A catalog with caseSensitive=false (Druid's option): each --columns name becomes the
 * schema's spelling of the one top-level column it matches ignoring case; a name that
 * matches several columns is an error, one that matches none is left for the reader to
 * report. The names then point into the schema. */
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

int cmd_scan(int argc, char **argv)
{
    double t0 = cli_now_s();
    cli_table_args a;
    int rc =
        cli_table_args_parse(&a, argc, argv, "snapshot-id,as-of,ref,columns,threads,stats,output");
    if (rc) {
        cli_table_args_free(&a);
        return rc;
    }
    icd_error err;
    icd_error_clear(&err);
    ice_metadata *md = NULL;
    ice_scan_plan *plan = NULL;
    char *copy = NULL;
    const char **names = NULL;
    size_t ncols = 0;
    scan_run run;
    memset(&run, 0, sizeof run);
    run.out = stdout;
    pthread_mutex_init(&run.out_lock, NULL);
    pthread_mutex_init(&run.stats_lock, NULL);
    if (a.columns && split_columns(a.columns, &copy, &names, &ncols)) {
        rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        goto done;
    }
    ice_scan_opts opts = {a.select, NULL, true, a.threads, false};
    if (cli_table_load(&a, &md, &err) || ice_scan_plan_build(a.io, md, &opts, &plan, &err) ||
        (!a.case_sensitive && fold_column_names(ice_scan_plan_schema(plan), names, ncols, &err)) ||
        ice_scan_reader_new(a.io, md, ice_scan_plan_schema(plan), names, ncols, &run.reader,
                            &err)) {
        rc = cli_report(&err);
        goto done;
    }
    run.plan = plan;
    if ((rc = cli_open_output(a.output, &run.out))) goto done;
    size_t ntasks = ice_scan_plan_task_count(plan);
    uint64_t bytes = 0;
    for (size_t i = 0; i < ntasks; i++)
        bytes += (uint64_t)ice_scan_plan_task(plan, i)->data->file_size;
    cli_progress_init(&run.progress, "scan", ntasks, bytes);
    int prc = icd_parallel_for(ntasks, a.threads, run_task, &run, &err);
    if (!prc)
        cli_progress_end(&run.progress);
    else
        cli_progress_clear(&run.progress);
    bool werr = fflush(run.out) != 0 || run.out_failed;
    if (prc)
        rc = cli_report(&err);
    else if (werr)
        rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
    int crc = cli_close_output(run.out, a.output);
    if (!rc) rc = crc;
    if (rc) goto done;
    if (a.stats)
        print_stats(&run, plan, a.io, cli_now_s() - t0);
    else if (run.progress.on)
        cli_print_row_stats(&run.stats, false, NULL);
done:
    ice_scan_reader_free(run.reader);
    pthread_mutex_destroy(&run.out_lock);
    pthread_mutex_destroy(&run.stats_lock);
    ice_scan_plan_free(plan);
    ice_metadata_free(md);
    free(copy);
    free(names);
    cli_table_args_free(&a);
    return rc;
}
