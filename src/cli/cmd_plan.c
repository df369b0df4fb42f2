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
#include "druid/spec/spec_columns.h"
#include "iceberg/scan_plan.h"

static int check_line(bool ok, const char *what, const char *detail, const icd_error *err)
{
    if (ok) {
        printf("ok   %s: %s\n", what, detail);
        return 0;
    }
    char line[2400];
    icd_error_format(err, line, sizeof line);
    printf("FAIL %s: %s\n", what, line);
    return 1;
}

/* Opens `path` and reads its first byte. */
static int probe(icd_fileio *io, const char *path, icd_error *err)
{
    icd_file *f;
    ICD_TRY(icd_file_open(io, path, &f, err));
    unsigned char b;
    int rc = icd_file_size(f) > 0 ? icd_file_read_at(f, 0, &b, 1, err) : 0;
    icd_file_close(f);
    return rc;
}

static int run_check(cli_spec_args *a)
{
    icd_error err;
    icd_error_clear(&err);
    int failed = 0;
    char detail[1400];
    ice_metadata *md = NULL;
    bool ok = !dr_plan_load_metadata(a->spec, a->io, &md, &err);
    snprintf(detail, sizeof detail, "table %s.%s: %s", dr_spec_namespace(a->spec),
             dr_spec_table_name(a->spec), ok ? ice_metadata_file(md) : "");
    failed |= check_line(ok, "catalog", detail, &err);
    if (!ok) return CLI_FAILED;
    ok = !dr_spec_check_columns(a->spec, ice_metadata_current_schema(md), &err);
    failed |= check_line(ok, "columns",
                         "timestampSpec, dimensions, metric inputs and filter columns are in "
                         "the schema",
                         &err);
    ice_metadata_free(md);
    dr_plan *plan = NULL;
    dr_plan_opts po = {a->threads, a->druid_locations && !strcmp(a->druid_locations, "original"),
                       false, false};
    ok = !dr_plan_build(a->spec, a->io, &po, &plan, &err);
    if (!ok) {
        check_line(false, "plan", "", &err);
        return CLI_FAILED;
    }
    const ice_scan_plan *sp = dr_plan_scan(plan);
    size_t n = ice_scan_plan_task_count(sp), nd = 0;
    snprintf(detail, sizeof detail, "manifests read, %zu data file%s, %s", n, n == 1 ? "" : "s",
             dr_plan_is_v2(plan) ? "v2 (delete files: splits read by icedruid)"
                                 : "v1 (no delete files: Druid reads the data files)");
    failed |= check_line(true, "plan", detail, &err);
    ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const ice_scan_task *t = ice_scan_plan_task(sp, i);
        if (i == 0 && probe(a->io, t->data->path, &err)) ok = false;
        for (size_t k = 0; k < t->ndeletes && ok; k++, nd++)
            if (probe(a->io, t->deletes[k]->path, &err)) ok = false;
    }
    snprintf(detail, sizeof detail, "the first data file and %zu delete file reference%s read", nd,
             nd == 1 ? "" : "s");
    failed |= check_line(ok, "storage", detail, &err);
    if (!dr_plan_is_v2(plan)) {
        json_t *src = NULL;
        ok = !dr_plan_v1_source(plan, &src, &err);
        json_decref(src);
        snprintf(detail, sizeof detail,
                 "the locations handed to Druid fit the warehouseSource of type '%s'",
                 dr_spec_warehouse_source_type(a->spec) ? dr_spec_warehouse_source_type(a->spec)
                                                        : "?");
        failed |= check_line(ok, "locations", detail, &err);
    } else {
        failed |=
            check_line(true, "locations",
                       "splits are served by icedruid serve (rewrite-spec --serve-url)", &err);
    }
    dr_plan_free(plan);
    if (fflush(stdout)) return CLI_FAILED;
    return failed ? CLI_FAILED : CLI_OK;
}

int cmd_plan(int argc, char **argv)
{
    cli_spec_args a;
    int rc = cli_spec_args_parse(&a, argc, argv, "threads,check,druid-locations", NULL);
    dr_plan *plan = NULL;
    if (!rc) rc = cli_spec_load(&a);
    if (!rc && a.check) {
        rc = run_check(&a);
        cli_spec_args_free(&a);
        return rc;
    }
    a.stream_plan = true; /* the plan is written once: nothing per data file is kept */
    if (!rc) rc = cli_spec_plan(&a, &plan);
    if (!rc) {
        icd_error err;
        icd_error_clear(&err);
        icd_jsonw out;
        icd_jsonw_init_file(&out, stdout);
        int wrc = dr_plan_write(plan, &out, &err);
        icd_error ferr;
        icd_error_clear(&ferr);
        int frc = icd_jsonw_finish(&out, &ferr);
        if (wrc)
            rc = cli_report(&err);
        else if (frc)
            rc = cli_report(&ferr);
    }
    dr_plan_free(plan);
    cli_spec_args_free(&a);
    return rc;
}
