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
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

int cmd_rewrite_spec(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(
        &a, argc, argv,
        "threads,serve-url,rows,project,auth-user,auth-password-env,druid-locations", NULL);
    icd_druid_plan *plan = NULL;
    char *doc = NULL;
    if (!rc && !!a.auth_user != !!a.auth_password_env)
        rc = cli_usage_error(a.cmd, "--auth-user and --auth-password-env go together");
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_druid_plan(&a, &plan);
    icd_error err;
    icd_error_clear(&err);
    if (!rc) {
        icd_druid_rewrite_options o;
        icd_druid_rewrite_options_init(&o);
        o.serve_url = a.serve_url;
        o.auth_user = a.auth_user;
        o.auth_password_env = a.auth_password_env;
        o.rows = a.rows;
        size_t norc = 0;
        if (icd_druid_rewrite(&doc, &norc, plan, &o, &err)) {
            rc = cli_report(&err); /* one line: the error says what to give */
        } else if (norc) { /* the spec was written: say why it reads splits rather than files */
            fprintf(stderr,
                    "icedruid rewrite-spec: %zu ORC data file%s must be materialized and "
                    "icedruid has no ORC writer yet: the spec reads NDJSON splits (run "
                    "`icedruid serve --rows`)\n",
                    norc, norc == 1 ? "" : "s");
        }
    }
    if (!rc && (cli_write_file(stdout, doc, strlen(doc), &err) ||
                cli_write_file(stdout, "\n", 1, &err) || cli_write_done(stdout, &err)))
        rc = cli_report(&err);
    icd_string_free(doc);
    icd_druid_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
