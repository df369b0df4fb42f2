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
#include "cli/cli.h"
#include "cli/serve_common.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

int cmd_serve(int argc, char **argv)
{
    cli_serve_opts so;
    cli_serve_opts_init(&so);
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "project", &so);
    icd_druid_plan *plan = NULL;
    if (!rc) rc = cli_serve_finish_opts(&so);
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_druid_plan(&a, &plan);
    if (!rc) rc = cli_serve_run(&so, plan, a.storage);
    icd_druid_plan_free(plan);
    cli_spec_args_free(&a);
    cli_serve_opts_free(&so);
    return rc;
}
