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
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "druid/phase2/diff.h"
#include "druid/phase2/emit.h"
#include "druid/plan/rewrite.h"
#include "druid/stage/stage.h"
#include "druid/phase2/sync.h"

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

static int parse_granularity(const char *text, dr_granularity *g)
{
    icd_error err;
    icd_error_clear(&err);
    int rc;
    if (text[0] == '{' || text[0] == '"') {
        json_error_t je;
        json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
        if (!j) return cli_usage_error("diff", "--granularity: invalid JSON (%s)", je.text);
        rc = dr_granularity_parse(g, j, &err);
        json_decref(j);
    } else {
        rc = dr_granularity_named(g, text, &err);
    }
    if (rc && !strncmp(err.message, "No enum constant", 16)) {
        char names[400];
        dr_granularity_names(names, sizeof names);
        return cli_usage_error("diff",
                               "--granularity expects one of %s (any case) or a granularity "
                               "JSON object, got '%s'",
                               names, text);
    }
    if (rc) return cli_usage_error("diff", "--granularity: %s", err.message);
    return CLI_OK;
}

/* Rows diff could not place (unparseable timestamps) are left out, as `read` leaves them. */
static void warn_unparseable(const dr_diff *d)
{
    fprintf(stderr,
            "icedruid: warning: %lld rows read have a timestamp the timestampSpec cannot "
            "parse; like `read`, diff leaves them out (they are not in Druid)\n",
            (long long)d->rows_unparseable);
}

/* --stage-to: stages the materialized files the statements list (used[i]) and says so. */
static int stage_listed(cli_spec_args *a, const diff_args *d, dr_plan *plan, const bool *used,
                        const char *loc, icd_error *err)
{
    dr_stage *st = NULL;
    dr_stage_opts so = {d->stage_to, a->threads, 0, NULL, NULL, used, getenv("TMPDIR")};
    ICD_TRY(dr_stage_run(plan, a->io, &so, &st, err));
    int rc = 0;
    if (strcmp(dr_stage_location(st), loc)) /* the statements name files under loc */
        rc = icd_fail(err, ICD_EINTERNAL, loc, -1, "the stage location moved to %s",
                      dr_stage_location(st));
    const dr_stage_stats *s = dr_stage_get_stats(st);
    if (!rc)
        fprintf(stderr,
                "icedruid diff: staged %zu materialized file%s the statements read to %s "
                "(%zu written, %zu already there)\n",
                s->staged_files, s->staged_files == 1 ? "" : "s", loc, s->written_files,
                s->skipped_files);
    dr_stage_free(st);
    return rc;
}

/* --emit msq|native: plan B (the statements read it), diff A -> B, build the statements,
 * stage (--stage-to) the materialized files they list, print them. */
static int emit_statements(cli_spec_args *a, const diff_args *d, dr_diff_opts *opts, icd_error *err)
{
    dr_plan *plan = NULL;
    dr_spec *at = NULL;
    json_t *pw = NULL;
    dr_plan_opts po = {a->threads, false, a->project, false};
    if (dr_plan_at_snapshot(a->spec, a->io, opts->has_to, opts->to_snapshot, &po, &plan, &at, err))
        return cli_report(err);
    const ice_snapshot *b = ice_scan_plan_snapshot(dr_plan_scan(plan));
    int rc = CLI_OK;
    if (!b) rc = cli_report(&(icd_error){ICD_ENOTFOUND, -1, "", "the table has no snapshot"});
    if (!rc && a->auth_password_env &&
        !(pw = json_pack("{s:s,s:s}", "type", "environment", "variable", a->auth_password_env)))
        rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    if (!rc && (a->rows ? dr_plan_decide_rows(plan, err) : dr_plan_decide(plan, err)))
        rc = cli_report(err);
    if (!rc && !a->rows) { /* files Druid would read raw: refused before the diff is computed */
        dr_rewrite_opts ro = {a->serve_url, NULL, NULL, true, d->stage_to, NULL};
        if (dr_rewrite_check_raw(plan, &ro, err)) rc = cli_report(err);
    }
    bool staging = !rc && d->stage_to && !a->rows;
    size_t ntasks = ice_scan_plan_task_count(dr_plan_scan(plan));
    bool *used = staging ? calloc(ntasks ? ntasks : 1, sizeof *used) : NULL;
    char *loc = NULL;
    if (staging && !used) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    if (staging && !rc) { /* nothing listed yet: checks the destination, gives its name */
        dr_stage *check = NULL;
        dr_stage_opts so = {d->stage_to, a->threads, 0, NULL, NULL, used, getenv("TMPDIR")};
        if (dr_stage_run(plan, a->io, &so, &check, err)) rc = cli_report(err);
        if (!rc && !(loc = strdup(dr_stage_location(check))))
            rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        dr_stage_free(check);
    }
    dr_diff diff;
    memset(&diff, 0, sizeof diff);
    if (!rc) {
        opts->has_to = true;
        opts->to_snapshot = b->snapshot_id;
        if (dr_diff_compute(a->spec, a->io, opts, &diff, err)) rc = cli_report(err);
    }
    if (!rc && diff.rows_unparseable > 0) warn_unparseable(&diff);
    dr_emit_list list;
    memset(&list, 0, sizeof list);
    if (!rc) {
        dr_emit_opts eo = {0};
        eo.plan = plan;
        eo.io = a->io;
        eo.serve_url = a->serve_url;
        eo.auth_user = a->auth_user;
        eo.auth_password = pw;
        eo.replace_only = d->replace_only;
        eo.files = !a->rows;
        eo.stage_to = loc;
        eo.used = used;
        const dr_spec *spec = at ? at : a->spec; /* the one the plan selected B with */
        if (dr_emit_build(!strcmp(d->emit, "msq") ? DR_EMIT_MSQ : DR_EMIT_NATIVE, spec, &diff, &eo,
                          &list, err))
            rc = cli_report(err);
    }
    /* the statements are printed only once the files they list are staged */
    if (!rc && staging && list.files && stage_listed(a, d, plan, used, loc, err))
        rc = cli_report(err);
    if (!rc) {
        cli_out out;
        cli_out_init(&out, stdout);
        if (dr_emit_write(&list, &out.buf, err)) {
            icd_buf_free(&out.buf);
            rc = cli_report(err);
        } else if (cli_out_finish(&out, err)) {
            rc = cli_report(err);
        }
        if (!rc && !diff.n_replace && (d->replace_only || !diff.n_append))
            fprintf(stderr, "icedruid diff: no interval to re-ingest\n");
    }
    dr_emit_list_free(&list);
    dr_diff_free(&diff);
    json_decref(pw);
    free(used);
    free(loc);
    dr_plan_free(plan);
    dr_spec_free(at);
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
    dr_diff_opts opts = {0};
    dr_granularity g;
    if (!d.from) return cli_usage_error("diff", "expects --from-snapshot ID");
    if (!parse_id(d.from, &opts.from_snapshot))
        return cli_usage_error("diff", "--from-snapshot expects a snapshot id, got '%s'", d.from);
    if (d.to) {
        opts.has_to = true;
        if (!parse_id(d.to, &opts.to_snapshot))
            return cli_usage_error("diff", "--to-snapshot expects a snapshot id, got '%s'", d.to);
    }
    if (d.emit && strcmp(d.emit, "json") && strcmp(d.emit, "msq") && strcmp(d.emit, "native"))
        return cli_usage_error("diff", "--emit expects json, msq or native, got '%s'", d.emit);
    bool statements = d.emit && strcmp(d.emit, "json");
    if (d.granularity) {
        rc = parse_granularity(d.granularity, &g);
        if (rc) return rc;
        opts.granularity = &g;
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
    dr_diff diff;
    memset(&diff, 0, sizeof diff);
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
    if (!rc) {
        int drc = dr_diff_compute(a.spec, a.io, &opts, &diff, &err);
        if (dp.started && !drc)
            cli_progress_end(&dp.p);
        else
            cli_progress_clear(&dp.p);
        if (drc) rc = cli_report(&err);
    }
    pthread_mutex_destroy(&dp.lock);
    if (!rc && diff.rows_unparseable > 0) warn_unparseable(&diff);
    if (!rc) {
        cli_out out;
        cli_out_init(&out, stdout);
        if (dr_diff_write_json(&diff, &out.buf, &err)) {
            icd_buf_free(&out.buf);
            rc = cli_report(&err);
        } else if (cli_out_finish(&out, &err)) {
            rc = cli_report(&err);
        }
    }
    dr_diff_free(&diff);
    cli_spec_args_free(&a);
    return rc;
}
