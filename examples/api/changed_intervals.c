/*
 * changed_intervals: phase 2 with libicedruid's Druid API — which Druid intervals of a
 * data source must be re-ingested because rows were deleted, updated or added in its
 * Iceberg table since snapshot A, and the MSQ statements that do it.
 *
 *   changed_intervals SPEC.json SNAPSHOT_A SERVE_URL [FROM=TO]...
 *
 * SPEC.json is the Druid ingestion spec (its `iceberg` input source names the table);
 * SERVE_URL is where `icedruid serve` hands Druid the delete-applied files. Prints one
 * line per interval ("replace START/END -N +M" or "append START/END +M", epoch ms), then
 * the statements.
 *
 * Build against an installed libicedruid:
 *   cc changed_intervals.c $(pkg-config --cflags --libs libicedruid) -o changed_intervals
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <icedruid/icedruid.h>

static int fail(const icd_error *err)
{
    char line[2200];
    icd_error_format(err, line, sizeof line);
    fprintf(stderr, "changed_intervals: %s\n", line);
    return 1;
}

static int to_stdout(void *ctx, const char *data, size_t len, icd_error *err)
{
    (void)ctx;
    (void)err;
    return fwrite(data, 1, len, stdout) == len ? 0 : ICD_EIO;
}

static void print_intervals(const icd_druid_diff *d, icd_druid_change kind, const char *name)
{
    for (size_t i = 0; i < icd_druid_diff_count(d, kind); i++) {
        const icd_druid_interval *iv = icd_druid_diff_interval(d, kind, i);
        printf("%s %" PRId64 "/%" PRId64, name, iv->start_ms, iv->end_ms);
        if (kind == ICD_DRUID_REPLACE) printf(" -%" PRId64, iv->rows_removed);
        printf(" +%" PRId64 "\n", iv->rows_added);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: changed_intervals SPEC.json SNAPSHOT_A SERVE_URL [FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_storage *storage = NULL;
    icd_druid_spec *spec = NULL;
    icd_druid_reingest *r = NULL;
    int rc = icd_storage_new(&storage, &err);
    for (int i = 4; !rc && i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "changed_intervals: expected FROM=TO, got '%s'\n", argv[i]);
            rc = ICD_EINVALID;
            break;
        }
        *eq = '\0';
        rc = icd_storage_add_remap(storage, argv[i], eq + 1, &err);
    }
    if (!rc) rc = icd_druid_spec_load(&spec, argv[1], &err);
    icd_druid_diff_options d;
    icd_druid_diff_options_init(&d);
    d.from_snapshot = strtoll(argv[2], NULL, 10);
    icd_druid_reingest_options o;
    icd_druid_reingest_options_init(&o);
    o.kind = ICD_DRUID_MSQ;
    o.serve_url = argv[3];
    /* the diff A -> current snapshot, then the statements that re-ingest it */
    if (!rc) rc = icd_druid_reingest_build(&r, spec, storage, &d, &o, &err);
    if (!rc) {
        const icd_druid_diff *diff = icd_druid_reingest_diff(r);
        printf("%s: snapshot %" PRId64 " -> %" PRId64 "\n", icd_druid_spec_data_source(spec),
               icd_druid_diff_from_snapshot(diff), icd_druid_diff_to_snapshot(diff));
        print_intervals(diff, ICD_DRUID_REPLACE, "replace");
        print_intervals(diff, ICD_DRUID_APPEND, "append");
        rc = icd_druid_reingest_write(r, to_stdout, NULL, &err);
    }
    if (rc && err.code) fail(&err);
    icd_druid_reingest_free(r);
    icd_druid_spec_free(spec);
    icd_storage_free(storage);
    return rc ? 1 : 0;
}
