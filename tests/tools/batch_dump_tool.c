/*
 * batch_dump_tool: a table read both ways through the public API, for
 * tests/iceberg/test_batch_corpus.py to compare.
 *
 *   batch_dump_tool TABLE NDJSON_OUT TYPED_OUT [--remap FROM=TO]...
 *
 * Task by task, in plan order: NDJSON_OUT gets the task's rows from icd_scan_read_task
 * (`icedruid scan`'s JSON); TYPED_OUT gets the same rows from icd_scan_read_task_batches,
 * one line per row, written without any formatting of values so that the test can check
 * them with its own conversions:
 *
 *   first line  {"columns":[{"name":HEX,"id":N,"type":T,"precision":P,"scale":S}, ...]}
 *   then        [TASK,POSITION,V0,V1,...] with V = null | {"b":0|1} | {"i":N} |
 *               {"d":"HEXFLOAT"} | {"x":"HEX"} (bytes) | {"j":"HEX"} (a JSON text)
 *
 * (names and bytes in hex: no escaping to get wrong). It then reads the table again with
 * icd_scan_run_batches on 3 threads and checks that every task gives the same row count
 * and the same positions. Exit 0 when written and consistent, 1 on a mismatch, 2 with
 * "error MESSAGE" when the table cannot be opened or read (the corpus holds broken tables,
 * which the test expects to fail alike).
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
    printf("error %s\n", line);
    return 2;
}

static void hex(FILE *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

static int write_rows(void *ctx, const char *ndjson, size_t len, icd_error *err)
{
    (void)err;
    return fwrite(ndjson, 1, len, ctx) == len ? 0 : -1;
}

static int write_batch(void *ctx, const icd_batch *b, icd_error *err)
{
    (void)err;
    FILE *f = ctx;
    for (size_t r = 0; r < icd_batch_row_count(b); r++) {
        fprintf(f, "[%zu,%" PRId64, icd_batch_task(b), icd_batch_position(b, r));
        for (size_t c = 0; c < icd_batch_column_count(b); c++) {
            icd_value v;
            icd_batch_get(b, r, c, &v);
            switch (v.kind) {
            case ICD_VALUE_NULL:
                fputs(",null", f);
                break;
            case ICD_VALUE_BOOL:
                fprintf(f, ",{\"b\":%" PRId64 "}", v.i);
                break;
            case ICD_VALUE_INT:
                fprintf(f, ",{\"i\":%" PRId64 "}", v.i);
                break;
            case ICD_VALUE_DOUBLE:
                fprintf(f, ",{\"d\":\"%a\"}", v.d);
                break;
            case ICD_VALUE_BYTES:
            case ICD_VALUE_JSON:
                fprintf(f, ",{\"%c\":\"", v.kind == ICD_VALUE_BYTES ? 'x' : 'j');
                hex(f, v.p, v.n);
                fputs("\"}", f);
                break;
            }
        }
        fputs("]\n", f);
    }
    return ferror(f) ? -1 : 0;
}

/* Per task: rows and a sum of positions, from a parallel run. */
typedef struct tally {
    size_t *rows;
    int64_t *possum;
    size_t ntasks;
    int bad_order;
    int64_t *last; /* last position seen per task */
} tally;

static int count_batch(void *ctx, const icd_batch *b, icd_error *err)
{
    (void)err;
    tally *t = ctx;
    size_t k = icd_batch_task(b);
    if (k >= t->ntasks) return -1;
    for (size_t r = 0; r < icd_batch_row_count(b); r++) {
        int64_t p = icd_batch_position(b, r);
        if (p <= t->last[k]) t->bad_order = 1;
        t->last[k] = p;
        t->possum[k] += p;
    }
    t->rows[k] += icd_batch_row_count(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: batch_dump_tool TABLE NDJSON_OUT TYPED_OUT [--remap FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_storage *storage = NULL;
    icd_table *table = NULL;
    icd_scan *scan = NULL;
    if (icd_storage_new(&storage, &err)) return fail(&err);
    for (int i = 4; i + 1 < argc; i += 2) {
        char *eq = strchr(argv[i + 1], '=');
        if (strcmp(argv[i], "--remap") || !eq) {
            fprintf(stderr, "batch_dump_tool: expected --remap FROM=TO\n");
            return 2;
        }
        *eq = '\0';
        if (icd_storage_add_remap(storage, argv[i + 1], eq + 1, &err)) return fail(&err);
    }
    int rc = 2;
    FILE *nd = fopen(argv[2], "wb"), *typed = fopen(argv[3], "wb");
    tally t = {0};
    if (!nd || !typed) {
        perror("batch_dump_tool");
        goto done;
    }
    if (icd_table_open(&table, storage, argv[1], &err) || icd_scan_open(&scan, table, NULL, &err)) {
        rc = fail(&err);
        goto done;
    }
    fputs("{\"columns\":[", typed);
    for (size_t c = 0; c < icd_scan_column_count(scan); c++) {
        icd_column_info ci;
        if (icd_scan_column(scan, c, &ci, &err)) {
            rc = fail(&err);
            goto done;
        }
        fprintf(typed, "%s{\"name\":\"", c ? "," : "");
        hex(typed, ci.name, strlen(ci.name));
        fprintf(typed, "\",\"id\":%d,\"type\":%d,\"precision\":%d,\"scale\":%d}", (int)ci.field_id,
                (int)ci.type, (int)ci.precision, (int)ci.scale);
    }
    fputs("]}\n", typed);
    size_t n = icd_scan_task_count(scan);
    for (size_t i = 0; i < n; i++) {
        if (icd_scan_read_task(scan, i, write_rows, nd, &err) ||
            icd_scan_read_task_batches(scan, i, write_batch, typed, &err)) {
            rc = fail(&err);
            goto done;
        }
    }
    /* the parallel driver: the same rows and positions per task */
    t.ntasks = n;
    t.rows = calloc(n + 1, sizeof *t.rows);
    t.possum = calloc(n + 1, sizeof *t.possum);
    t.last = malloc((n + 1) * sizeof *t.last);
    if (!t.rows || !t.possum || !t.last) goto done;
    for (size_t i = 0; i < n; i++)
        t.last[i] = -1;
    if (icd_scan_run_batches(scan, 3, count_batch, &t, &err)) {
        rc = fail(&err);
        goto done;
    }
    if (t.bad_order) {
        printf("positions out of order in a parallel run\n");
        rc = 1;
        goto done;
    }
    fflush(typed);
    /* re-read the typed file's task and position columns to compare */
    FILE *in = fopen(argv[3], "rb");
    if (!in) goto done;
    size_t *rows = calloc(n + 1, sizeof *rows);
    int64_t *possum = calloc(n + 1, sizeof *possum);
    char line[1 << 16];
    rc = rows && possum ? 0 : 2;
    if (!fgets(line, sizeof line, in)) rc = 2; /* the columns line */
    int c;
    while (rc == 0 && (c = fgetc(in)) != EOF) {
        size_t task;
        int64_t pos;
        if (c != '[' || fscanf(in, "%zu,%" SCNd64, &task, &pos) != 2 || task >= n) {
            rc = 1;
            break;
        }
        rows[task]++;
        possum[task] += pos;
        while ((c = fgetc(in)) != EOF && c != '\n') {
        }
    }
    fclose(in);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (rows[i] != t.rows[i] || possum[i] != t.possum[i]) {
            printf("task %zu: %zu rows (position sum %" PRId64 ") read alone, %zu (%" PRId64
                   ") in a parallel run\n",
                   i, rows[i], possum[i], t.rows[i], t.possum[i]);
            rc = 1;
        }
    free(rows);
    free(possum);
done:
    if (nd) fclose(nd);
    if (typed) fclose(typed);
    free(t.rows);
    free(t.possum);
    free(t.last);
    icd_scan_free(scan);
    icd_table_free(table);
    icd_storage_free(storage);
    return rc;
}
