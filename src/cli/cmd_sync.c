/*
 * `icedruid sync --spec SPEC.json --state STATE.json [--druid URL] [--emit msq|native]
 *  [--serve-url URL] ...`: phase 2, keeping a Druid data source in step with deletes
 * (druid/phase2/sync.h). Plans the current snapshot, diffs it against the snapshot recorded in
 * the state file, prints the re-ingestion (MSQ REPLACE statements or a native task) on
 * stdout and, with --druid, submits it and records the new snapshot once Druid accepted
 * every submission.
 *
 * With --wait the tasks' status is polled and the snapshot recorded only once every task
 * succeeded (without it: once Druid accepted them). The rows are read from the raw and
 * materialized files of the snapshot through the user's inputFormat (druid/phase2/emit.h, files
 * mode); --serve-listen serves the materialized files from this process while Druid
 * reads them (druid/serve/serve_files.h); --rows reads NDJSON splits instead.
 *
 * Exit codes: 0 done (submitted and recorded, up to date, or printed only), 1 failed
 * (state unchanged unless said otherwise), 2 usage, 3 another sync holds the state lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/redact.h"
#include "cli/cli.h"
#include "cli/spec_args.h"
#include "druid/serve/plan_provider.h"
#include "druid/plan/rewrite.h"
#include "druid/serve/serve_files.h"
#include "druid/serve/server.h"
#include "druid/phase2/sync.h"
#include "druid/rows/timestamp.h"

#define CLI_BUSY 3
#define DRUID_PASSWORD_ENV "ICEDRUID_DRUID_PASSWORD"
/* Test hook: stop dead (SIGKILL) after Druid accepted everything, before the state is
 * written, to prove that a crash there is safe to repeat. */
#define CRASH_HOOK_ENV "ICEDRUID_SYNC_TEST_CRASH_BEFORE_STATE"

/* The options and their help: the "sync" entry of the command table (commands.c). */

typedef struct sync_args {
    const char *state;
    const char *druid;
    const char *druid_user;
    const char *emit;
    const char *context_text;
    const char *baseline;
    const char *wait_timeout;
    const char *serve_listen;
    const char *serve_public_url;
    bool serve_allow_remote;
    const char *poll_ms;
    bool wait;
    long wait_secs;
    long poll_every_ms;
    bool replace_only;
    bool full;
} sync_args;

/* Takes sync's own options out of argv; the rest goes to cli_spec_args_parse. */
static int split_args(int argc, char **argv, sync_args *s, char **rest, int *nrest)
{
    static const char *const with_value[] = {
        "--state",    "--druid",        "--druid-user", "--emit",         "--context",
        "--baseline", "--wait-timeout", "--poll-ms",    "--serve-listen", "--serve-public-url"};
    const char **slots[] = {&s->state,        &s->druid,           &s->druid_user,   &s->emit,
                            &s->context_text, &s->baseline,        &s->wait_timeout, &s->poll_ms,
                            &s->serve_listen, &s->serve_public_url};
    *nrest = 0;
    rest[(*nrest)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--replace-only")) {
            s->replace_only = true;
            continue;
        }
        if (!strcmp(argv[i], "--full")) {
            s->full = true;
            continue;
        }
        if (!strcmp(argv[i], "--serve-allow-remote")) {
            s->serve_allow_remote = true;
            continue;
        }
        if (!strcmp(argv[i], "--wait")) {
            s->wait = true;
            continue;
        }
        bool mine = false;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) {
            if (strcmp(argv[i], with_value[k])) continue;
            if (i + 1 >= argc)
                return cli_usage_error(argv[0], "option '%s' needs a value", argv[i]);
            *slots[k] = argv[++i];
            mine = true;
        }
        if (!mine) rest[(*nrest)++] = argv[i];
    }
    return CLI_OK;
}

static int check_args(const char *cmd, const sync_args *s, const cli_spec_args *a)
{
    if (!s->state) return cli_usage_error(cmd, "expects --state STATE.json");
    if (s->emit && strcmp(s->emit, "msq") && strcmp(s->emit, "native"))
        return cli_usage_error(cmd, "--emit expects msq or native, got '%s'", s->emit);
    if (!!a->auth_user != !!a->auth_password_env)
        return cli_usage_error(cmd, "--auth-user and --auth-password-env go together");
    if ((s->wait || s->wait_timeout || s->poll_ms) && !s->druid)
        return cli_usage_error(cmd, "--wait needs --druid");
    if (s->serve_listen && (!s->druid || a->serve_url))
        return cli_usage_error(cmd, "--serve-listen needs --druid and replaces --serve-url");
    if (s->serve_listen && a->auth_user && !getenv(a->auth_password_env))
        return cli_usage_error(cmd,
                               "--serve-listen with --auth-user reads the password from "
                               "$%s, which is not set",
                               a->auth_password_env);
    if (s->baseline && (s->full || s->druid))
        return cli_usage_error(cmd, "--baseline records a snapshot; it takes no --full or --druid");
    return CLI_OK;
}

static int parse_long(const char *cmd, const char *opt, const char *text, long lo, long hi,
                      long *out)
{
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (text && (errno || end == text || *end || v < lo || v > hi))
        return cli_usage_error(cmd, "%s expects %ld..%ld, got '%s'", opt, lo, hi, text);
    if (text) *out = v;
    return CLI_OK;
}

/* Polls every task until all SUCCEEDED (CLI_OK), one FAILED or the time is up. */
static int wait_all(const dr_druid_client *c, const dr_sync_job *job, char **ids, long timeout_s,
                    long poll_ms)
{
    int64_t deadline = dr_now_ms() + (int64_t)timeout_s * 1000;
    for (size_t i = 0; i < job->list.n; i++) {
        for (;;) {
            icd_error err;
            icd_error_clear(&err);
            bool done = false;
            if (dr_druid_task_status(c, ids[i], &done, &err)) {
                cli_report(&err);
                fprintf(stderr, "icedruid sync: %s: state unchanged; running sync again is safe\n",
                        job->data_source);
                return CLI_FAILED;
            }
            if (done) break;
            if (dr_now_ms() >= deadline) {
                fprintf(stderr,
                        "icedruid sync: %s: task %s still running after %ld s; state "
                        "unchanged (the next run submits the re-ingestion again)\n",
                        job->data_source, ids[i], timeout_s);
                return CLI_FAILED;
            }
            struct timespec ts = {poll_ms / 1000, (poll_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        fprintf(stderr, "icedruid sync: %s: task %s succeeded\n", job->data_source, ids[i]);
    }
    return CLI_OK;
}

static int parse_baseline(const char *cmd, const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end)
        return cli_usage_error(cmd, "--baseline expects a snapshot id, got '%s'", text);
    *out = (int64_t)v;
    return CLI_OK;
}

/* --baseline: the snapshot must exist in the table; record it without submitting. */
static int run_baseline(cli_spec_args *a, dr_state *st, int64_t id)
{
    dr_plan *plan = NULL;
    int rc = cli_spec_plan(a, &plan);
    if (rc) return rc;
    icd_error err;
    icd_error_clear(&err);
    const char *ds = dr_spec_data_source(a->spec);
    char table[600];
    snprintf(table, sizeof table, "%s.%s", dr_spec_namespace(a->spec), dr_spec_table_name(a->spec));
    if (!ds)
        rc = cli_report(&(icd_error){ICD_EINVALID, -1, "", "sync needs a whole ingestion spec"});
    else if (!ice_metadata_snapshot(dr_plan_metadata(plan), id))
        rc = cli_report(&(icd_error){ICD_ENOTFOUND, -1, "", "the table has no such snapshot"});
    else if (dr_state_record(st, ds, id, table, dr_now_ms(), NULL, 0, &err) ||
             dr_state_save(st, &err))
        rc = cli_report(&err);
    else
        fprintf(stderr, "icedruid sync: %s: recorded snapshot %" PRId64 " as ingested\n", ds, id);
    dr_plan_free(plan);
    return rc;
}

static void describe(const dr_sync_job *job)
{
    if (job->full) {
        fprintf(stderr, "icedruid sync: %s: full ingestion of snapshot %" PRId64 "%s\n",
                job->data_source, job->to_snapshot,
                job->has_from ? " (--full)" : " (no snapshot recorded yet)");
        return;
    }
    fprintf(stderr,
            "icedruid sync: %s: snapshot %" PRId64 " -> %" PRId64 ": %zu interval(s) with "
            "removed rows, %zu with new rows only; %zu range(s), %zu submission(s)%s\n",
            job->data_source, job->from_snapshot, job->to_snapshot, job->diff.n_replace,
            job->diff.n_append, job->list.n_ranges, job->list.n,
            job->list.v2 ? ", rows from icedruid serve" : "");
    if (job->diff.rows_unparseable > 0)
        fprintf(stderr,
                "icedruid sync: warning: %lld rows read have a timestamp the timestampSpec "
                "cannot parse; they are left out, as Druid leaves them out\n",
                (long long)job->diff.rows_unparseable);
}

static int print_list(const dr_emit_list *l)
{
    icd_buf b = ICD_BUF_INIT;
    icd_error err;
    icd_error_clear(&err);
    int rc = dr_emit_write(l, &b, &err) ? cli_report(&err) : CLI_OK;
    if (!rc && b.len && (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout)))
        rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
    icd_buf_free(&b);
    return rc;
}

/* Submits every item; CLI_OK when Druid accepted all of them. */
static int submit_all(const dr_druid_client *c, const dr_sync_job *job, char **ids)
{
    for (size_t i = 0; i < job->list.n; i++) {
        icd_error err;
        icd_error_clear(&err);
        if (dr_druid_submit(c, &job->list.items[i], &ids[i], &err)) {
            icd_error_wrap(&err, "submission %zu of %zu", i + 1, job->list.n);
            cli_report(&err);
            fprintf(stderr,
                    "icedruid sync: %s: state unchanged (%s); running sync again is safe: "
                    "REPLACE of the same intervals is idempotent\n",
                    job->data_source,
                    job->has_from ? "the recorded snapshot stays" : "no snapshot recorded");
            return CLI_FAILED;
        }
        fprintf(stderr, "icedruid sync: %s: Druid accepted task %s\n", job->data_source, ids[i]);
    }
    return CLI_OK;
}

static void serve_log(void *ctx, const char *line)
{
    (void)ctx;
    char buf[2400];
    snprintf(buf, sizeof buf, "%s", line);
    icd_redact_userinfo(buf, sizeof buf);
    fprintf(stderr, "icedruid sync: serve: %s\n", buf);
}

/* --serve-listen: the plan's splits served from this process for the tasks' lifetime. */
static int start_server(cli_spec_args *a, const sync_args *s, const dr_sync_job *job,
                        const json_t *pw, dr_plan_provider **pp, dr_serve_files **sf,
                        dr_server **srv)
{
    icd_error err;
    icd_error_clear(&err);
    dr_server_provider p;
    dr_rewrite_opts ro = {"http://x", NULL, NULL, !a->rows, NULL, NULL};
    if (a->rows ? dr_plan_decide_rows(job->plan, &err) : dr_plan_decide(job->plan, &err))
        return cli_report(&err);
    if (dr_rewrite_uses_files(job->plan, &ro)) { /* the materialized files, by content address */
        cli_serve_opts so;
        cli_serve_opts_init(&so);
        char *cache = cli_serve_cache_dir(&so);
        dr_serve_files_opts fo = {.cache_dir = cache,
                                  .metadata_max_age_ms = -1,
                                  .auth_user = a->auth_user,
                                  .auth_password = pw,
                                  .log = serve_log};
        int r = cache ? dr_serve_files_new(job->plan, a->io, &fo, sf, &err) : icd_fail_nomem(&err);
        free(cache);
        if (r) return cli_report(&err);
        dr_serve_files_get(*sf, &p);
    } else {
        dr_plan_provider_opts po = {
            .auth_user = a->auth_user, .auth_password = pw, .queue_chunks = 1, .log = serve_log};
        if (dr_plan_provider_new(job->plan, a->io, &po, pp, &err)) return cli_report(&err);
        dr_plan_provider_get(*pp, &p);
    }
    dr_server_config cfg = {
        .listen = s->serve_listen,
        .allow_remote = s->serve_allow_remote,
        .auth_user = a->auth_user,
        .auth_password = a->auth_user ? getenv(a->auth_password_env) : NULL,
        .public_url = s->serve_public_url,
        .on_error = serve_log,
    };
    if (dr_server_start(&cfg, &p, srv, &err)) {
        dr_plan_provider_free(*pp);
        *pp = NULL;
        dr_serve_files_free(*sf);
        *sf = NULL;
        return cli_report(&err);
    }
    if (*sf)
        fprintf(stderr,
                "icedruid sync: %s: serving %zu materialized file(s) of snapshot %" PRId64
                " at %s\n",
                job->data_source, dr_plan_materialized_count(job->plan), job->to_snapshot,
                dr_server_base_url(*srv));
    else
        fprintf(stderr, "icedruid sync: %s: serving %zu split(s) of snapshot %" PRId64 " at %s\n",
                job->data_source, dr_plan_split_count(job->plan), job->to_snapshot,
                dr_server_base_url(*srv));
    return CLI_OK;
}

static int run_sync(cli_spec_args *a, const sync_args *s, dr_state *st, const json_t *ctx,
                    const json_t *pw)
{
    icd_error err;
    icd_error_clear(&err);
    dr_sync_opts o = {0};
    /* the default follows the user's spec, a native ingestion spec: native stays native */
    o.kind = s->emit && !strcmp(s->emit, "msq") ? DR_EMIT_MSQ : DR_EMIT_NATIVE;
    o.emit.serve_url = a->serve_url;
    o.emit.auth_user = a->auth_user;
    o.emit.auth_password = pw;
    o.emit.replace_only = s->replace_only;
    o.emit.files = !a->rows;
    o.emit.context = ctx;
    o.full = s->full;
    o.threads = a->threads;
    o.project_staged = a->project;
    o.serve_later = s->serve_listen != NULL;
    dr_sync_job job;
    if (dr_sync_prepare(a->spec, a->io, st, &o, &job, &err)) return cli_report(&err);
    dr_plan_provider *pp = NULL;
    dr_serve_files *sf = NULL;
    dr_server *srv = NULL;
    if (o.serve_later && job.has_snapshot && !job.up_to_date) {
        bool need = dr_plan_is_v2(job.plan);
        if (!need && !a->rows) { /* files mode: also a v1 plan with a file to materialize */
            if (dr_plan_decide(job.plan, &err)) {
                dr_sync_job_free(&job);
                return cli_report(&err);
            }
            need = dr_plan_materialized_count(job.plan) > 0;
        }
        int r = need ? start_server(a, s, &job, pw, &pp, &sf, &srv) : CLI_OK;
        if (srv) o.emit.serve_url = dr_server_base_url(srv);
        if (r || dr_sync_emit(a->spec, a->io, &o, &job, &err)) {
            if (!r) cli_report(&err);
            dr_server_stop(srv);
            dr_plan_provider_free(pp);
            dr_serve_files_free(sf);
            dr_sync_job_free(&job);
            return CLI_FAILED;
        }
    }
    int rc = CLI_OK;
    if (!job.has_snapshot) {
        fprintf(stderr, "icedruid sync: %s: the table has no snapshot yet; nothing to ingest\n",
                job.data_source);
    } else if (job.up_to_date) {
        fprintf(stderr, "icedruid sync: %s: up to date at snapshot %" PRId64 "\n", job.data_source,
                job.to_snapshot);
    } else {
        describe(&job);
        rc = print_list(&job.list);
        char **ids = calloc(job.list.n + 1, sizeof *ids);
        if (!rc && !ids) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        if (!rc && !s->druid)
            fprintf(stderr,
                    "icedruid sync: %s: not submitted (give --druid URL to submit and "
                    "record snapshot %" PRId64 ")\n",
                    job.data_source, job.to_snapshot);
        if (!rc && s->druid) {
            const char *ca = getenv("SSL_CERT_FILE");
            if (!ca || !ca[0]) ca = getenv("CURL_CA_BUNDLE");
            dr_druid_client c = {
                s->druid, s->druid_user, s->druid_user ? getenv(DRUID_PASSWORD_ENV) : NULL, 0, 0,
                ca};
            rc = submit_all(&c, &job, ids);
            if (!rc && s->wait) rc = wait_all(&c, &job, ids, s->wait_secs, s->poll_every_ms);
            if (!rc && getenv(CRASH_HOOK_ENV)) raise(SIGKILL);
            if (!rc && (dr_state_record(st, job.data_source, job.to_snapshot, job.table,
                                        dr_now_ms(), (const char *const *)ids, job.list.n, &err) ||
                        dr_state_save(st, &err))) {
                cli_report(&err);
                fprintf(stderr,
                        "icedruid sync: %s: Druid accepted the re-ingestion but the "
                        "state was not written; the next run submits it again (safe: "
                        "REPLACE is idempotent)\n",
                        job.data_source);
                rc = CLI_FAILED;
            } else if (!rc) {
                fprintf(stderr, "icedruid sync: %s: recorded snapshot %" PRId64 "\n",
                        job.data_source, job.to_snapshot);
            }
        }
        for (size_t i = 0; ids && i < job.list.n; i++)
            free(ids[i]);
        free(ids);
    }
    dr_server_stop(srv); /* Druid's tasks are done (--serve-listen implies --wait) */
    dr_plan_provider_free(pp);
    dr_serve_files_free(sf);
    dr_sync_job_free(&job);
    return rc;
}

int cmd_sync(int argc, char **argv)
{
    sync_args s = {0};
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return CLI_FAILED;
    int nrest = 0;
    int rc = split_args(argc, argv, &s, rest, &nrest);
    cli_spec_args a;
    memset(&a, 0, sizeof a);
    if (!rc)
        rc = cli_spec_args_parse(
            &a, nrest, rest, "threads,serve-url,rows,project,auth-user,auth-password-env", NULL);
    if (!rc) rc = check_args(argv[0], &s, &a);
    int64_t baseline = 0;
    if (!rc && s.baseline) rc = parse_baseline(argv[0], s.baseline, &baseline);
    s.wait_secs = 21600;
    s.poll_every_ms = 5000;
    if (!rc)
        rc = parse_long(argv[0], "--wait-timeout", s.wait_timeout, 1, 30L * 86400, &s.wait_secs);
    if (!rc) rc = parse_long(argv[0], "--poll-ms", s.poll_ms, 10, 600000, &s.poll_every_ms);
    if (s.wait_timeout || s.poll_ms || s.serve_listen) s.wait = true;
    json_t *ctx = NULL, *pw = NULL;
    if (!rc && s.context_text) {
        ctx = json_loads(s.context_text, 0, NULL);
        if (!json_is_object(ctx)) rc = cli_usage_error(argv[0], "--context expects a JSON object");
    }
    if (!rc && a.auth_password_env) {
        pw = json_pack("{s:s,s:s}", "type", "environment", "variable", a.auth_password_env);
        if (!pw) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    }
    if (!rc) rc = cli_spec_load(&a);
    dr_state *st = NULL;
    if (!rc) {
        icd_error err;
        icd_error_clear(&err);
        bool busy = false;
        if (dr_state_open(s.state, &st, &busy, &err)) {
            cli_report(&err);
            rc = busy ? CLI_BUSY : CLI_FAILED;
        }
    }
    if (!rc) rc = s.baseline ? run_baseline(&a, st, baseline) : run_sync(&a, &s, st, ctx, pw);
    dr_state_close(st);
    json_decref(ctx);
    json_decref(pw);
    cli_spec_args_free(&a);
    free(rest);
    return rc;
}
