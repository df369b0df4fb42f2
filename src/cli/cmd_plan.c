/*
 * `icedruid plan --spec SPEC.json [--remap FROM=TO]... [--threads N]`: the table-wide
 * decision Druid's iceberg input source makes, as JSON on stdout — v1 (no delete file
 * in the plan): the input source warehouseSource.create(paths) builds; v2: one
 * icebergFileTask split per data file (druid/plan.h).
 */
#include "cli/cli.h"
#include "cli/spec_args.h"

int cmd_plan(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "threads", NULL);
    dr_plan *plan = NULL;
    if (!rc) rc = cli_spec_load(&a);
    if (!rc) rc = cli_spec_plan(&a, &plan);
    if (!rc) {
        icd_error err;
        icd_error_clear(&err);
        cli_out out;
        cli_out_init(&out, stdout);
        int wrc = dr_plan_write(plan, &out.buf, &err);
        if (wrc) {
            icd_buf_free(&out.buf);
            rc = cli_report(&err);
        } else if (cli_out_finish(&out, &err)) {
            rc = cli_report(&err);
        }
    }
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
