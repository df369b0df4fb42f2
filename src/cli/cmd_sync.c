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

#include <jansson.h>

#include "cli/cli.h"
#include "cli/serve_common.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

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

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Polls every task until all SUCCEEDED (CLI_OK), one FAILED or the time is up. */
static int wait_all(const icd_druid_client *c, const icd_druid_sync_info *job, char **ids,
                    long timeout_s, long poll_ms)
{
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
    for (size_t i = 0; i < job->submissions; i++) {
        for (;;) {
            icd_error err;
            icd_error_clear(&err);
            int done = 0;
            if (icd_druid_task_status(c, ids[i], &done, &err)) {
                cli_report(&err);
                fprintf(stderr, "icedruid sync: %s: state unchanged; running sync again is safe\n",
                        job->data_source);
                return CLI_FAILED;
            }
            if (done) break;
            if (now_ms() >= deadline) {
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
static int run_baseline(cli_spec_args *a, icd_druid_state *st, int64_t id)
{
    icd_error err;
    icd_error_clear(&err);
    if (icd_druid_state_set_baseline(st, a->dspec, a->storage, id, &err)) return cli_report(&err);
    fprintf(stderr, "icedruid sync: %s: recorded snapshot %" PRId64 " as ingested\n",
            icd_druid_spec_data_source(a->dspec), id);
    return CLI_OK;
}

static void describe(const icd_druid_sync *j, const icd_druid_sync_info *job)
{
    if (job->status == ICD_DRUID_SYNC_FULL) {
        fprintf(stderr, "icedruid sync: %s: full ingestion of snapshot %" PRId64 "%s\n",
                job->data_source, job->to_snapshot,
                job->has_from ? " (--full)" : " (no snapshot recorded yet)");
        return;
    }
    const icd_druid_diff *d = icd_druid_sync_diff(j);
    fprintf(stderr,
            "icedruid sync: %s: snapshot %" PRId64 " -> %" PRId64 ": %zu interval(s) with "
            "removed rows, %zu with new rows only; %zu range(s), %zu submission(s)%s\n",
            job->data_source, job->from_snapshot, job->to_snapshot,
            d ? icd_druid_diff_count(d, ICD_DRUID_REPLACE) : 0,
            d ? icd_druid_diff_count(d, ICD_DRUID_APPEND) : 0, job->ranges, job->submissions,
            job->rows_from_serve ? ", rows from icedruid serve" : "");
    if (d && icd_druid_diff_rows_unparseable(d) > 0)
        fprintf(stderr,
                "icedruid sync: warning: %lld rows read have a timestamp the timestampSpec "
                "cannot parse; they are left out, as Druid leaves them out\n",
                (long long)icd_druid_diff_rows_unparseable(d));
}

static int print_list(const icd_druid_sync *j)
{
    icd_error err;
    icd_error_clear(&err);
    if (icd_druid_sync_write(j, cli_write_file, stdout, &err) || cli_write_done(stdout, &err))
        return cli_report(&err);
    return CLI_OK;
}

/* Submits every item; CLI_OK when Druid accepted all of them. */
static int submit_all(const icd_druid_client *c, const icd_druid_sync *j,
                      const icd_druid_sync_info *job, char **ids)
{
    for (size_t i = 0; i < job->submissions; i++) {
        icd_error err;
        icd_error_clear(&err);
        if (icd_druid_sync_submit(j, c, i, &ids[i], &err)) {
            char msg[sizeof err.message + 64]; /* "submission I of N: " before the message */
            snprintf(msg, sizeof msg, "submission %zu of %zu: %s", i + 1, job->submissions,
                     err.message);
            size_t len = strlen(msg);
            if (len >= sizeof err.message) len = sizeof err.message - 1;
            memcpy(err.message, msg, len);
            err.message[len] = '\0';
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

/* --serve-listen: snapshot C's files (or splits) served from this process for the tasks'
 * lifetime. */
static int start_server(cli_spec_args *a, const sync_args *s, icd_druid_sync *j,
                        icd_druid_server **srv)
{
    icd_error err;
    icd_error_clear(&err);
    icd_druid_sync_info job;
    icd_druid_sync_get_info(j, &job);
    cli_serve_opts co;
    cli_serve_opts_init(&co);
    icd_druid_server_options so;
    icd_druid_server_options_init(&so);
    char *cache = cli_serve_cache_dir(&co);
    if (!cache) return cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    so.cache_dir = cache;
    so.listen = s->serve_listen;
    so.allow_remote = s->serve_allow_remote;
    so.public_url = s->serve_public_url;
    so.auth_user = a->auth_user;
    so.auth_password = a->auth_user ? getenv(a->auth_password_env) : NULL;
    so.auth_password_env = a->auth_password_env;
    so.rows = a->rows;
    so.on_log = serve_log;
    int rc = icd_druid_server_start(srv, icd_druid_sync_plan(j), a->storage, &so, &err);
    free(cache);
    if (rc) return cli_report(&err);
    fprintf(stderr, "icedruid sync: %s: serving %zu %s of snapshot %" PRId64 " at %s\n",
            job.data_source, icd_druid_server_count(*srv),
            icd_druid_server_serves_files(*srv) ? "materialized file(s)" : "split(s)",
            job.to_snapshot, icd_druid_server_url(*srv));
    return CLI_OK;
}

static int run_sync(cli_spec_args *a, const sync_args *s, icd_druid_state *st)
{
    icd_error err;
    icd_error_clear(&err);
    icd_druid_sync_options o;
    icd_druid_sync_options_init(&o);
    /* the default follows the user's spec, a native ingestion spec: native stays native */
    o.kind = s->emit && !strcmp(s->emit, "msq") ? ICD_DRUID_MSQ : ICD_DRUID_NATIVE;
    o.serve_url = a->serve_url;
    o.auth_user = a->auth_user;
    o.auth_password_env = a->auth_password_env;
    o.rows = a->rows;
    o.replace_only = s->replace_only;
    o.context_json = s->context_text;
    o.full = s->full;
    o.threads = a->threads;
    o.project = a->project;
    o.serve_later = s->serve_listen != NULL;
    icd_druid_sync *j = NULL;
    if (icd_druid_sync_prepare(&j, a->dspec, a->storage, st, &o, &err)) return cli_report(&err);
    icd_druid_sync_info job;
    icd_druid_sync_get_info(j, &job);
    icd_druid_server *srv = NULL;
    if (o.serve_later && job.status >= ICD_DRUID_SYNC_FULL) {
        int r = job.needs_server ? start_server(a, s, j, &srv) : CLI_OK;
        if (r || icd_druid_sync_emit(j, srv ? icd_druid_server_url(srv) : NULL, &err)) {
            if (!r) cli_report(&err);
            icd_druid_server_stop(srv);
            icd_druid_sync_free(j);
            return CLI_FAILED;
        }
        icd_druid_sync_get_info(j, &job);
    }
    int rc = CLI_OK;
    if (job.status == ICD_DRUID_SYNC_NO_SNAPSHOT) {
        fprintf(stderr, "icedruid sync: %s: the table has no snapshot yet; nothing to ingest\n",
                job.data_source);
    } else if (job.status == ICD_DRUID_SYNC_UP_TO_DATE) {
        fprintf(stderr, "icedruid sync: %s: up to date at snapshot %" PRId64 "\n", job.data_source,
                job.to_snapshot);
    } else {
        describe(j, &job);
        rc = print_list(j);
        char **ids = calloc(job.submissions + 1, sizeof *ids);
        if (!rc && !ids) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        if (!rc && !s->druid)
            fprintf(stderr,
                    "icedruid sync: %s: not submitted (give --druid URL to submit and "
                    "record snapshot %" PRId64 ")\n",
                    job.data_source, job.to_snapshot);
        if (!rc && s->druid) {
            const char *ca = getenv("SSL_CERT_FILE");
            if (!ca || !ca[0]) ca = getenv("CURL_CA_BUNDLE");
            icd_druid_client c;
            icd_druid_client_init(&c);
            c.url = s->druid;
            c.user = s->druid_user;
            c.password = s->druid_user ? getenv(DRUID_PASSWORD_ENV) : NULL;
            c.ca_file = ca;
            rc = submit_all(&c, j, &job, ids);
            if (!rc && s->wait) rc = wait_all(&c, &job, ids, s->wait_secs, s->poll_every_ms);
            if (!rc && getenv(CRASH_HOOK_ENV)) raise(SIGKILL);
            if (!rc &&
                icd_druid_sync_record(j, st, (const char *const *)ids, job.submissions, &err)) {
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
        for (size_t i = 0; ids && i < job.submissions; i++)
            icd_string_free(ids[i]);
        free(ids);
    }
    icd_druid_server_stop(srv); /* Druid's tasks are done (--serve-listen implies --wait) */
    icd_druid_sync_free(j);
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
    if (!rc && s.context_text) {
        json_t *ctx = json_loads(s.context_text, 0, NULL);
        if (!json_is_object(ctx)) rc = cli_usage_error(argv[0], "--context expects a JSON object");
        json_decref(ctx);
    }
    if (!rc) rc = cli_spec_load(&a);
    icd_druid_state *st = NULL;
    if (!rc) {
        icd_error err;
        icd_error_clear(&err);
        int busy = 0;
        if (icd_druid_state_open(&st, s.state, &busy, &err)) {
            cli_report(&err);
            rc = busy ? CLI_BUSY : CLI_FAILED;
        }
    }
    if (!rc) rc = s.baseline ? run_baseline(&a, st, baseline) : run_sync(&a, &s, st);
    icd_druid_state_close(st);
    cli_spec_args_free(&a);
    free(rest);
    return rc;
}
