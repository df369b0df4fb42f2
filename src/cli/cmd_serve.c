/*
 * `icedruid serve --spec SPEC.json [--listen 127.0.0.1:PORT] [--remap FROM=TO]...
 *  [serve options]`: plans the spec's table once, then serves every split's rows at
 * /splits/N (chunked NDJSON, streamed in bounded memory by druid/plan_provider.h), the
 * list at /splits, the rewritten ingestion spec pointing at this server at /spec and
 * /health and /metrics, until SIGINT/SIGTERM (drained) (cli/serve_common.h,
 * druid/server.h).
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/serve_common.h"
#include "cli/spec_args.h"
#include "druid/plan_provider.h"

int cmd_serve(int argc, char **argv)
{
    cli_serve_opts so;
    cli_serve_opts_init(&so);
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "", &so);
    dr_plan *plan = NULL;
    dr_plan_provider *pp = NULL;
    json_t *pw = NULL;
    if (!rc) rc = cli_serve_finish_opts(&so);
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_spec_plan(&a, &plan);
    if (!rc && so.auth_user) {
        /* the spec Druid gets reads the password from the same variable on its side */
        pw = json_pack("{s:s,s:s}", "type", "environment", "variable", CLI_SERVE_PASSWORD_ENV);
        if (!pw) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    }
    if (!rc) {
        icd_error err;
        icd_error_clear(&err);
        /* one chunk queued in the provider: the server buffers ahead (--stream-buffer) */
        dr_plan_provider_opts po = {.auth_user = so.auth_user,
                                    .auth_password = pw,
                                    .queue_chunks = 1,
                                    .log = cli_serve_log_line};
        if (dr_plan_provider_new(plan, a.io, &po, &pp, &err)) rc = cli_report(&err);
    }
    if (!rc) {
        dr_server_provider p;
        dr_plan_provider_get(pp, &p);
        rc = cli_serve_run(&so, &p);
    }
    dr_plan_provider_free(pp);
    json_decref(pw);
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    cli_serve_opts_free(&so);
    return rc;
}
