/*
 * column_summary: reads an Iceberg table's surviving rows as typed batches with
 * libicedruid and prints, per column, how many values are not null and, for the numeric
 * columns (int, long, decimal up to 18 digits, date, timestamps), their minimum and
 * maximum.
 *
 *   column_summary TABLE [FROM=TO]...
 *
 * TABLE is a table directory (Hadoop layout) or a metadata file; FROM=TO remaps locations
 * of a table written elsewhere (as `icedruid --remap`). One line per column:
 *   "NAME: N values, min A, max B"   (decimals with their scale; dates and timestamps as
 *                                     days / micro- or nanoseconds from 1970)
 *
 * Build against an installed libicedruid:
 *   cc column_summary.c $(pkg-config --cflags --libs libicedruid) -o column_summary
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <icedruid/icedruid.h>

typedef struct summary {
    size_t ncols;
    icd_column_info *cols;
    uint64_t *values;
    int64_t *min, *max;
} summary;

/* Called for each batch; calls never overlap, so the totals need no lock. */
static int add_batch(void *ctx, const icd_batch *b, icd_error *err)
{
    (void)err;
    summary *s = ctx;
    for (size_t c = 0; c < s->ncols; c++) {
        for (size_t r = 0; r < icd_batch_row_count(b); r++) {
            icd_value v;
            icd_batch_get(b, r, c, &v);
            if (v.kind == ICD_VALUE_NULL) continue;
            if (v.kind == ICD_VALUE_INT) {
                if (!s->values[c] || v.i < s->min[c]) s->min[c] = v.i;
                if (!s->values[c] || v.i > s->max[c]) s->max[c] = v.i;
            }
            s->values[c]++;
        }
    }
    return 0;
}

static void print_int(const icd_column_info *ci, int64_t v)
{
    if (ci->type != ICD_TYPE_DECIMAL || ci->scale <= 0) {
        printf("%" PRId64, v);
        return;
    }
    uint64_t p = 1, u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    for (int k = 0; k < ci->scale; k++)
        p *= 10;
    printf("%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", u / p, ci->scale, u % p);
}

static int fail(const icd_error *err)
{
    char line[2200];
    icd_error_format(err, line, sizeof line);
    fprintf(stderr, "column_summary: %s\n", line);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: column_summary TABLE [FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_storage *storage = NULL;
    icd_table *table = NULL;
    icd_scan *scan = NULL;
    summary s = {0};
    int rc = 1;
    if (icd_storage_new(&storage, &err)) goto out;
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "column_summary: expected FROM=TO, got '%s'\n", argv[i]);
            rc = 2;
            goto done;
        }
        *eq = '\0';
        if (icd_storage_add_remap(storage, argv[i], eq + 1, &err)) goto out;
    }
    if (icd_table_open(&table, storage, argv[1], &err) || icd_scan_open(&scan, table, NULL, &err))
        goto out;
    s.ncols = icd_scan_column_count(scan);
    s.cols = calloc(s.ncols + 1, sizeof *s.cols);
    s.values = calloc(s.ncols + 1, sizeof *s.values);
    s.min = calloc(s.ncols + 1, sizeof *s.min);
    s.max = calloc(s.ncols + 1, sizeof *s.max);
    if (!s.cols || !s.values || !s.min || !s.max) {
        fprintf(stderr, "column_summary: out of memory\n");
        goto done;
    }
    for (size_t c = 0; c < s.ncols; c++)
        if (icd_scan_column(scan, c, &s.cols[c], &err)) goto out;
    if (icd_scan_run_batches(scan, 2, add_batch, &s, &err)) goto out;
    for (size_t c = 0; c < s.ncols; c++) {
        const icd_column_info *ci = &s.cols[c];
        bool numeric = ci->type != ICD_TYPE_DECIMAL || ci->precision <= 18;
        printf("%s: %" PRIu64 " values", ci->name, s.values[c]);
        if (numeric && s.values[c] && ci->type >= ICD_TYPE_INT &&
            ci->type <= ICD_TYPE_TIMESTAMPTZ_NS && ci->type != ICD_TYPE_FLOAT &&
            ci->type != ICD_TYPE_DOUBLE) {
            printf(", min ");
            print_int(ci, s.min[c]);
            printf(", max ");
            print_int(ci, s.max[c]);
        }
        printf("\n");
    }
    rc = 0;
    goto done;
out:
    rc = fail(&err);
done:
    free(s.cols);
    free(s.values);
    free(s.min);
    free(s.max);
    icd_scan_free(scan);
    icd_table_free(table);
    icd_storage_free(storage);
    return rc;
}
