/*
 * `icedruid serve --spec SPEC.json [--listen 127.0.0.1:PORT] [--remap FROM=TO]...
 *  [--rows] [--cache-dir DIR] [serve options]`: plans the spec's table once, then serves
 * until SIGINT/SIGTERM (drained) (cli/serve_common.h, druid/serve/server.h):
 *
 *   files (default)  the materialized files of the plan by content address at
 *                    /files/TABLE/SNAPSHOT/NAME (static files with Range/ETag, regenerated
 *                    into the cache directory on demand, druid/serve/serve_files.h); /spec is
 *                    the user's spec reading raw files through its warehouseSource and the
 *                    served files through `http`, combined, with the user's inputFormat.
 *   --rows, and tables whose materialized files would be ORC (no ORC writer yet):
 *                    every split's rows at /splits/N (chunked NDJSON, streamed in bounded
 *                    memory by druid/serve/plan_provider.h), the list at /splits.
 * Both: /spec, /health and /metrics.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/serve_common.h"
#include "cli/spec_args.h"
#include "druid/serve/plan_provider.h"
#include "druid/serve/serve_files.h"

int cmd_serve(int argc, char **argv)
{
    cli_serve_opts so;
    cli_serve_opts_init(&so);
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "project", &so);
    dr_plan *plan = NULL;
    dr_plan_provider *pp = NULL;
    dr_serve_files *sf = NULL;
    json_t *pw = NULL;
    char *cache = NULL;
    if (!rc) rc = cli_serve_finish_opts(&so);
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_spec_plan(&a, &plan);
    if (!rc && so.auth_user) {
        /* the spec Druid gets reads the password from the same variable on its side */
        pw = json_pack("{s:s,s:s}", "type", "environment", "variable", CLI_SERVE_PASSWORD_ENV);
        if (!pw) rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    }
    icd_error err;
    icd_error_clear(&err);
    bool files = !so.rows;
    if (!rc && !files && dr_plan_decide_rows(plan, &err)) rc = cli_report(&err);
    if (!rc && files) {
        if (dr_plan_decide(plan, &err)) {
            rc = cli_report(&err);
        } else {
            const char *orc = NULL;
            size_t norc = dr_serve_files_orc(plan, &orc);
            if (norc) {
                fprintf(stderr,
                        "icedruid serve: %zu ORC data file%s must be materialized and icedruid "
                        "has no ORC writer yet: serving this table's rows as NDJSON splits "
                        "(/splits/N) instead of files\n",
                        norc, norc == 1 ? "" : "s");
                files = false;
            }
        }
    }
    if (!rc && files) {
        cache = cli_serve_cache_dir(&so);
        dr_serve_files_opts fo = {.cache_dir = cache,
                                  .cache_max_bytes = so.cache_max_bytes,
                                  .metadata_max_age_ms =
                                      so.has_metadata_max_age ? (int)so.metadata_max_age_ms : -1,
                                  .auth_user = so.auth_user,
                                  .auth_password = pw,
                                  .read_budget = CLI_READ_BUDGET(so.stream_memory),
                                  .log = cli_serve_log_line};
        if (!cache)
            rc = cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
        else if (dr_serve_files_new(plan, a.io, &fo, &sf, &err))
            rc = cli_report(&err);
    } else if (!rc) {
        /* one chunk queued in the provider: the server buffers ahead (--stream-buffer) */
        dr_plan_provider_opts po = {.auth_user = so.auth_user,
                                    .auth_password = pw,
                                    .queue_chunks = 1,
                                    .read_budget = CLI_READ_BUDGET(so.stream_memory),
                                    .decode_memory = so.decode_memory,
                                    .stream_memory = so.stream_memory,
                                    .log = cli_serve_log_line};
        if (dr_plan_provider_new(plan, a.io, &po, &pp, &err)) rc = cli_report(&err);
    }
    if (!rc) {
        dr_server_provider p;
        if (sf)
            dr_serve_files_get(sf, &p);
        else
            dr_plan_provider_get(pp, &p);
        rc = cli_serve_run(&so, &p);
    }
    dr_serve_files_free(sf);
    dr_plan_provider_free(pp);
    free(cache);
    json_decref(pw);
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    cli_serve_opts_free(&so);
    return rc;
}
