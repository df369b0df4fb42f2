/*
 * `icedruid diff --spec SPEC.json --from-snapshot A [--to-snapshot B] [--granularity G]
 *  [--emit json|msq|native] [--serve-url URL | --stage-to LOCATION] [--rows]
 *  [--replace-only] [--remap FROM=TO]...
 *  [--threads N]`: the Druid segment intervals that changed between two snapshots of the
 * spec's table (druid/phase2/diff.h), as one JSON object on stdout. B defaults to the table's
 * current snapshot, G to the spec's granularitySpec.segmentGranularity (a name such as
 * DAY, or a granularity JSON object).
 *
 * --emit msq / native print the re-ingestion instead (druid/phase2/emit.h): MSQ REPLACE
 * statements, one per contiguous range, or one index_parallel task, reading snapshot B:
 * Druid's iceberg source when no file of B needs materializing; else, through the user's
 * own inputFormat, B's raw files (warehouseSource) and its materialized files — served by
 * `icedruid serve` at --serve-url (`combining` with `http`, --auth-user /
 * --auth-password-env for its basic auth) or staged under --stage-to LOCATION first
 * (`stage`'s names, so the first ingestion's staged files are reused; only the
 * materialized files the statements list, i.e. those of the touched intervals) — so re-ingested
 * intervals are built exactly like the first ingestion. --rows (and tables whose files to
 * materialize are ORC) reads the NDJSON splits of `serve --rows` instead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

typedef struct diff_args {
    const char *from, *to, *granularity, *emit, *stage_to;
    bool replace_only;
} diff_args;

static bool parse_id(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = v;
    return true;
}

/* Takes this command's own options out of argv (the rest goes to cli_spec_args_parse). */
static int take_own_args(int argc, char **argv, diff_args *d, int *out_argc)
{
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--replace-only")) {
            d->replace_only = true;
            continue;
        }
        const char **slot = !strcmp(argv[i], "--from-snapshot") ? &d->from
                            : !strcmp(argv[i], "--to-snapshot") ? &d->to
                            : !strcmp(argv[i], "--granularity") ? &d->granularity
                            : !strcmp(argv[i], "--emit")        ? &d->emit
                            : !strcmp(argv[i], "--stage-to")    ? &d->stage_to
                                                                : NULL;
        if (!slot) {
            argv[n++] = argv[i];
            if (!strcmp(argv[i], "--spec") || !strcmp(argv[i], "--remap") ||
                !strcmp(argv[i], "--threads")) {
                if (i + 1 < argc) argv[n++] = argv[++i];
            }
            continue;
        }
        if (i + 1 >= argc) return cli_usage_error("diff", "option '%s' needs a value", argv[i]);
        *slot = argv[++i];
    }
    *out_argc = n;
    return CLI_OK;
}

/* --granularity is checked before anything is read (a usage error). */
static int check_granularity(const char *text)
{
    icd_error err;
    icd_error_clear(&err);
    if (icd_druid_granularity_check(text, &err))
        return cli_usage_error("diff", "--%s", err.message);
    return CLI_OK;
}

/* Rows diff could not place (unparseable timestamps) are left out, as `read` leaves them. */
static void warn_unparseable(const icd_druid_diff *d)
{
    int64_t n = icd_druid_diff_rows_unparseable(d);
    if (n <= 0) return;
    fprintf(stderr,
            "icedruid: warning: %lld rows read have a timestamp the timestampSpec cannot "
            "parse; like `read`, diff leaves them out (they are not in Druid)\n",
            (long long)n);
}

/* --emit msq|native: the statements that re-ingest what changed, files staged first with
 * --stage-to (icd_druid_reingest_build checks what it can before the diff is computed). */
static int emit_statements(cli_spec_args *a, const diff_args *d, const icd_druid_diff_options *opts,
                           icd_error *err)
{
    icd_druid_reingest_options o;
    icd_druid_reingest_options_init(&o);
    o.kind = !strcmp(d->emit, "msq") ? ICD_DRUID_MSQ : ICD_DRUID_NATIVE;
    o.serve_url = a->serve_url;
    o.auth_user = a->auth_user;
    o.auth_password_env = a->auth_password_env;
    o.rows = a->rows;
    o.stage_to = d->stage_to;
    o.tmp_dir = getenv("TMPDIR");
    o.replace_only = d->replace_only;
    o.project = a->project;
    o.threads = a->threads;
    icd_druid_reingest *r = NULL;
    if (icd_druid_reingest_build(&r, a->dspec, a->storage, opts, &o, err)) return cli_report(err);
    const icd_druid_diff *diff = icd_druid_reingest_diff(r);
    warn_unparseable(diff);
    icd_druid_stage_info si;
    if (icd_druid_reingest_stage_info(r, &si))
        fprintf(stderr,
                "icedruid diff: staged %zu materialized file%s the statements read to %s "
                "(%zu written, %zu already there)\n",
                si.staged_files, si.staged_files == 1 ? "" : "s", si.location, si.written_files,
                si.skipped_files);
    int rc = CLI_OK;
    if (icd_druid_reingest_write(r, cli_write_file, stdout, err) || cli_write_done(stdout, err))
        rc = cli_report(err);
    if (!rc && !icd_druid_diff_count(diff, ICD_DRUID_REPLACE) &&
        (d->replace_only || !icd_druid_diff_count(diff, ICD_DRUID_APPEND)))
        fprintf(stderr, "icedruid diff: no interval to re-ingest\n");
    icd_druid_reingest_free(r);
    return rc;
}

/* The progress line: files of the two phases against all the files that changed (phase 2
 * re-reads some; the percentage counts phase 1, the files line both). */
typedef struct diff_progress {
    pthread_mutex_t lock;
    cli_progress p;
    bool started;
} diff_progress;

static void on_file(void *ctx, int phase, size_t nfiles, int64_t bytes)
{
    diff_progress *dp = ctx;
    pthread_mutex_lock(&dp->lock);
    if (!dp->started) {
        dp->p.files_total = nfiles;
        dp->started = true;
    }
    if (phase == 1) {
        dp->p.files_done++;
        dp->p.bytes_done += bytes > 0 ? (uint64_t)bytes : 0;
    }
    cli_progress_show(&dp->p, false);
    pthread_mutex_unlock(&dp->lock);
}

int cmd_diff(int argc, char **argv)
{
    diff_args d = {0};
    int nargc = 0;
    int rc = take_own_args(argc, argv, &d, &nargc);
    if (rc) return rc;
    icd_druid_diff_options opts;
    icd_druid_diff_options_init(&opts);
    if (!d.from) return cli_usage_error("diff", "expects --from-snapshot ID");
    if (!parse_id(d.from, &opts.from_snapshot))
        return cli_usage_error("diff", "--from-snapshot expects a snapshot id, got '%s'", d.from);
    if (d.to) {
        opts.has_to = 1;
        if (!parse_id(d.to, &opts.to_snapshot))
            return cli_usage_error("diff", "--to-snapshot expects a snapshot id, got '%s'", d.to);
    }
    if (d.emit && strcmp(d.emit, "json") && strcmp(d.emit, "msq") && strcmp(d.emit, "native"))
        return cli_usage_error("diff", "--emit expects json, msq or native, got '%s'", d.emit);
    bool statements = d.emit && strcmp(d.emit, "json");
    if (d.granularity) {
        rc = check_granularity(d.granularity);
        if (rc) return rc;
        opts.granularity = d.granularity;
    }
    cli_spec_args a;
    rc = cli_spec_args_parse(
        &a, nargc, argv,
        statements ? "threads,serve-url,rows,project,auth-user,auth-password-env" : "threads",
        NULL);
    if (!rc && d.stage_to && !statements)
        rc = cli_usage_error("diff", "--stage-to goes with --emit msq|native");
    if (!rc && d.stage_to && a.rows)
        rc = cli_usage_error("diff", "--stage-to stages files; --rows reads NDJSON splits: "
                                     "choose one");
    if (!rc && !!a.auth_user != !!a.auth_password_env)
        rc = cli_usage_error("diff", "--auth-user and --auth-password-env go together");
    if (!rc) rc = cli_spec_load(&a);
    opts.threads = a.threads;
    icd_error err;
    icd_error_clear(&err);
    if (!rc && statements) {
        rc = emit_statements(&a, &d, &opts, &err);
        cli_spec_args_free(&a);
        return rc;
    }
    diff_progress dp;
    memset(&dp, 0, sizeof dp);
    pthread_mutex_init(&dp.lock, NULL);
    cli_progress_init(&dp.p, "diff", 0, 0);
    if (dp.p.on) {
        opts.on_file = on_file;
        opts.on_file_ctx = &dp;
    }
    icd_druid_diff *diff = NULL;
    if (!rc) {
        int drc = icd_druid_diff_compute(&diff, a.dspec, a.storage, &opts, &err);
        if (dp.started && !drc)
            cli_progress_end(&dp.p);
        else
            cli_progress_clear(&dp.p);
        if (drc) rc = cli_report(&err);
    }
    pthread_mutex_destroy(&dp.lock);
    if (!rc) warn_unparseable(diff);
    if (!rc &&
        (icd_druid_diff_write(diff, cli_write_file, stdout, &err) || cli_write_done(stdout, &err)))
        rc = cli_report(&err);
    icd_druid_diff_free(diff);
    cli_spec_args_free(&a);
    return rc;
}
