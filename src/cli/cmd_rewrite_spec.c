/*
 * `icedruid rewrite-spec --spec SPEC.json [--serve-url URL] [--rows] [--auth-user NAME
 *  --auth-password-env VAR] [--remap FROM=TO]...`: the ingestion spec to submit to Druid
 * (druid/plan/rewrite.h). No file to materialize: the user's spec reading the planned files
 * through its warehouseSource; files to materialize without --serve-url: an error (Druid
 * would read them raw), naming the first and why; else (default) a `combining` input source of the
 * raw files (warehouseSource) and the materialized files `icedruid serve` at URL serves by content
 * address (`http`), the user's inputFormat untouched; with --rows, or when a file to
 * materialize is ORC, an `http` input source over the NDJSON splits of `serve --rows`,
 * with the timestamp and dimension settings that give the same datasource. The
 * password of the `http` source is a PasswordProvider reading environment variable VAR
 * on the Druid side; icedruid never writes a password into a spec.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "druid/plan/rewrite.h"
#include "druid/serve/serve_files.h"

int cmd_rewrite_spec(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(
        &a, argc, argv,
        "threads,serve-url,rows,project,auth-user,auth-password-env,druid-locations", NULL);
    dr_plan *plan = NULL;
    json_t *pw = NULL, *doc = NULL;
    if (!rc && !!a.auth_user != !!a.auth_password_env)
        rc = cli_usage_error(a.cmd, "--auth-user and --auth-password-env go together");
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_spec_plan(&a, &plan);
    icd_error err;
    icd_error_clear(&err);
    if (!rc && a.auth_password_env) {
        pw = json_pack("{s:s,s:s}", "type", "environment", "variable", a.auth_password_env);
        if (!pw) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    }
    if (!rc && (a.rows ? dr_plan_decide_rows(plan, &err) : dr_plan_decide(plan, &err)))
        rc = cli_report(&err);
    if (!rc) {
        dr_rewrite_opts o = {a.serve_url, a.auth_user, pw, !a.rows, NULL, NULL};
        if (dr_rewrite_spec(plan, &o, &doc, &err)) {
            rc = cli_report(&err); /* one line: the error says what to give */
        } else {
            /* the spec was written: say why it reads splits rather than files */
            const char *orc = NULL;
            size_t norc = a.rows ? 0 : dr_serve_files_orc(plan, &orc);
            if (norc)
                fprintf(stderr,
                        "icedruid rewrite-spec: %zu ORC data file%s must be materialized and "
                        "icedruid has no ORC writer yet: the spec reads NDJSON splits (run "
                        "`icedruid serve --rows`)\n",
                        norc, norc == 1 ? "" : "s");
        }
    }
    if (!rc) {
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text || fputs(text, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout))
            rc = cli_report(&(icd_error){ICD_EIO, -1, "", "cannot write the output"});
        free(text);
    }
    json_decref(doc);
    json_decref(pw);
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
