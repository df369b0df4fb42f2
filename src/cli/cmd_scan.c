/*
 * `icedruid scan TABLE [--snapshot-id ID | --as-of TIME | --ref NAME] [--columns a,b,c]
 *  [--remap FROM=TO]... [--threads N] [--stats]`: the table's surviving rows as NDJSON
 * (design.md §2/§3). A client of the public scan API (include/icedruid/scan.h):
 * icd_scan_run reads the tasks on up to N threads and hands over whole-row chunks, so
 * rows of different tasks never interleave within a line; its progress callback drives
 * the progress line. The table is opened by the command's table arguments (TABLE or a
 * --catalog file, --remap) through the public API too (cli_table_open).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/table_args.h"
#include "icedruid/icedruid.h"

typedef struct scan_out {
    FILE *out;
    bool failed;
    cli_progress progress;
} scan_out;

static int write_rows(void *ctx, const char *ndjson, size_t len, icd_error *err)
{
    scan_out *o = ctx;
    if (fwrite(ndjson, 1, len, o->out) != len) {
        o->failed = true;
        return cli_fail(err, ICD_EIO, NULL, "cannot write the output");
    }
    return 0;
}

static void on_task(void *ctx, const icd_task_info *task, const icd_scan_stats *st)
{
    scan_out *o = ctx;
    o->progress.files_done++;
    o->progress.bytes_done += (uint64_t)task->file_size;
    o->progress.rows = st->rows_emitted;
    cli_progress_show(&o->progress, false);
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

/* Counts of the whole run on stderr: the row accounting, then the plan's files, the
 * HTTP/S3 requests sent (retries included) and the response bytes they brought, and the
 * reads and bytes served by local files; metadata and manifests included. */
static void print_stats(icd_scan *scan, const icd_storage *storage, double secs)
{
    icd_scan_stats s;
    icd_scan_plan_info p;
    icd_storage_stats io;
    icd_scan_get_stats(scan, &s);
    icd_scan_get_plan_info(scan, &p);
    icd_storage_get_stats(storage, &io);
    char extra[512];
    snprintf(extra, sizeof extra,
             "\"data_files\":%zu,\"delete_files\":%zu,\"position_delete_files\":%zu,"
             "\"equality_delete_files\":%zu,\"deletion_vectors\":%zu,"
             "\"delete_files_loaded\":%llu,\"remote_requests\":%llu,\"remote_bytes\":%llu,"
             "\"local_reads\":%llu,\"local_bytes\":%llu,\"seconds\":%.3f",
             p.data_files, p.delete_files, p.position_delete_files, p.equality_delete_files,
             p.deletion_vectors, (unsigned long long)s.delete_files_loaded,
             (unsigned long long)io.remote_requests, (unsigned long long)io.remote_bytes,
             (unsigned long long)io.local_reads, (unsigned long long)io.local_bytes, secs);
    cli_print_scan_stats(&s, true, extra);
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
    icd_table *table = NULL;
    icd_scan *scan = NULL;
    char *copy = NULL;
    const char **names = NULL;
    size_t ncols = 0;
    scan_out o;
    memset(&o, 0, sizeof o);
    o.out = stdout;
    if (a.columns && split_columns(a.columns, &copy, &names, &ncols)) {
        rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        goto done;
    }
    if (cli_table_open(&a, &table, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    icd_scan_options opts;
    icd_scan_options_init(&opts);
    opts.snapshot = a.snapshot;
    opts.snapshot_id = a.snapshot_id;
    opts.as_of_ms = a.as_of_ms;
    opts.ref = a.ref;
    opts.columns = names;
    opts.ncolumns = ncols;
    opts.threads = a.threads;
    opts.case_insensitive = !a.case_sensitive;
    if (icd_scan_open(&scan, table, &opts, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    if ((rc = cli_open_output(a.output, &o.out))) goto done;
    icd_scan_plan_info plan;
    icd_scan_get_plan_info(scan, &plan);
    cli_progress_init(&o.progress, "scan", plan.data_files, plan.data_bytes);
    icd_scan_set_progress(scan, on_task, &o);
    int prc = icd_scan_run(scan, a.threads, write_rows, &o, &err);
    if (!prc)
        cli_progress_end(&o.progress);
    else
        cli_progress_clear(&o.progress);
    bool werr = fflush(o.out) != 0 || o.failed;
    if (prc && !o.failed)
        rc = cli_report(&err);
    else if (werr)
        rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
    int crc = cli_close_output(o.out, a.output);
    if (!rc) rc = crc;
    if (rc) goto done;
    if (a.stats) {
        print_stats(scan, a.storage, cli_now_s() - t0);
    } else if (o.progress.on) {
        icd_scan_stats s;
        icd_scan_get_stats(scan, &s);
        cli_print_scan_stats(&s, false, NULL);
    }
done:
    icd_scan_free(scan);
    icd_table_free(table);
    free(copy);
    free(names);
    cli_table_args_free(&a);
    return rc;
}
