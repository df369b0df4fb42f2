/*
 * `icedruid plan --spec SPEC.json [--remap FROM=TO]... [--threads N] [--druid-locations
 * remapped|original] [--check]`: the table-wide decision Druid's iceberg input source makes,
 * as JSON on stdout — v1 (no delete file in the plan): the input source
 * warehouseSource.create(paths) builds; v2: one icebergFileTask split per data file
 * (druid/plan/plan.h).
 *
 * --check is a pre-flight instead: the catalog finds the table, the spec's columns are in
 * its schema, the manifests, the first data file and every delete file can be read, and
 * the locations handed to Druid fit the warehouseSource. One line per check ("ok" or
 * "FAIL" and why) on stdout; exit 1 when one failed.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "icedruid/icedruid.h"

static void check_line(void *ctx, const char *what, int ok, const char *detail)
{
    (void)ctx;
    printf("%s %s: %s\n", ok ? "ok  " : "FAIL", what, detail);
}

static int run_check(cli_spec_args *a)
{
    icd_error err;
    icd_error_clear(&err);
    icd_druid_plan_options po;
    cli_druid_plan_options(a, &po);
    int rc = icd_druid_check(a->dspec, a->storage, &po, check_line, NULL, &err);
    if (rc && rc != ICD_EINVALID) return cli_report(&err); /* the checks could not run */
    if (fflush(stdout)) return CLI_FAILED;
    return rc ? CLI_FAILED : CLI_OK;
}

int cmd_plan(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "threads,check,druid-locations", NULL);
    icd_druid_plan *plan = NULL;
    if (!rc) rc = cli_spec_load(&a);
    if (!rc && a.check) {
        rc = run_check(&a);
        cli_spec_args_free(&a);
        return rc;
    }
    a.stream_plan = true; /* the plan is written once: nothing per data file is kept */
    if (!rc) rc = cli_druid_plan(&a, &plan);
    icd_error err;
    icd_error_clear(&err);
    if (!rc &&
        (icd_druid_plan_write(plan, cli_write_file, stdout, &err) || cli_write_done(stdout, &err)))
        rc = cli_report(&err);
    icd_druid_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
