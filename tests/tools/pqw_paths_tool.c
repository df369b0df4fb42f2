/*
 * Test tool: the two ways the merge-on-read reader hands a Parquet data file's surviving
 * rows to the Parquet writer sink (src/iceberg/pq_write.c) must write the same bytes:
 * whole batches column by column (ice_row_sink.columns, what `stage` and `serve` use
 * whenever no column of the read schema is nested) and row by row (begin_row ... end_row,
 * the general path). For every Parquet data file of a table's current snapshot, writes
 * the Iceberg read of the file both ways, with the original file's schema mirrored as
 * `stage` does, and prints one line per file:
 *     same BYTES BATCHES PATH     identical output; BATCHES = whole batches taken
 *     DIFF BYTES1 BYTES2 PATH     the outputs differ
 *     error SAME|DIFF MESSAGE     both ways failed (SAME: with the same message)
 *     error ONE MESSAGE1 | MESSAGE2  only one way failed
 * and "files N same S" at the end. Exit 0 when every file is the same (or fails alike).
 *
 * Usage: pqw_paths_tool METADATA_JSON [--remap FROM=TO]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "iceberg/metadata.h"
#include "iceberg/pq_write.h"
#include "iceberg/reader.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"

static int buf_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    icd_buf_append(ctx, p, n);
    return icd_buf_ok(ctx) ? 0 : icd_fail_nomem(err);
}

/* counts the whole batches the reader hands over, then passes them on */
static size_t batches;
static int (*next_columns)(void *, const ice_sink_column *, size_t, size_t, const uint32_t *,
                           const int64_t *, icd_error *);
static int count_columns(void *ctx, const ice_sink_column *cols, size_t ncols, size_t nrows,
                         const uint32_t *rows, const int64_t *positions, icd_error *err)
{
    batches++;
    return next_columns(ctx, cols, ncols, nrows, rows, positions, err);
}

static int write_one(icd_fileio *io, const ice_scan_plan *plan, ice_scan_reader *r,
                     const ice_scan_task *t, bool columns, icd_buf *out, icd_error *err)
{
    const ice_schema *schema = ice_scan_plan_schema(plan);
    const ice_field *fields = schema->root.fields;
    size_t nfields = schema->root.nfields;
    pq_file *orig = NULL;
    ICD_TRY(pq_file_open(io, t->data->path, &orig, err));
    icd_arena arena = ICD_ARENA_INIT;
    pq_schema_element *els = NULL;
    size_t nels = 0;
    pq_write_options po = {0};
    pq_writer *w = NULL;
    ice_pqw_sink *ps = NULL;
    ice_read_stats rs;
    memset(&rs, 0, sizeof rs);
    int rc = ice_pqw_schema(fields, nfields, pq_file_schema(orig), &arena, &els, &nels, err);
    if (!rc) rc = pq_writer_new(els, nels, &po, buf_write, out, &w, err);
    if (!rc) rc = ice_pqw_sink_new(w, fields, nfields, &ps, err);
    if (!rc) {
        ice_row_sink s = *ice_pqw_sink_get(ps);
        next_columns = s.columns;
        s.columns = columns ? count_columns : NULL;
        rc = ice_scan_reader_read_task(r, t, &s, &rs, err);
    }
    if (!rc) rc = ice_pqw_sink_finish(ps, err);
    if (!rc) rc = pq_writer_close(w, err);
    ice_pqw_sink_free(ps);
    pq_writer_free(w);
    icd_arena_free(&arena);
    pq_file_close(orig);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pqw_paths_tool METADATA_JSON [--remap FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io = NULL;
    ice_metadata *md = NULL;
    ice_scan_plan *plan = NULL;
    ice_scan_reader *r = NULL;
    int rc = icd_fileio_new(&io, &err);
    for (int i = 2; !rc && i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--remap")) rc = icd_fileio_add_remap_arg(io, argv[i + 1], &err);
    if (!rc) rc = ice_metadata_load(io, argv[1], &md, &err);
    ice_scan_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.case_sensitive = true;
    if (!rc) rc = ice_scan_plan_build(io, md, &opts, &plan, &err);
    if (!rc) rc = ice_scan_reader_new(io, md, ice_scan_plan_schema(plan), NULL, 0, &r, &err);
    if (rc) {
        fprintf(stderr, "pqw_paths_tool: %s\n", err.message);
        return 2;
    }
    size_t files = 0, same = 0;
    for (size_t i = 0; i < ice_scan_plan_task_count(plan); i++) {
        const ice_scan_task *t = ice_scan_plan_task(plan, i);
        if (t->data->format != ICE_FORMAT_PARQUET) continue;
        files++;
        icd_buf a = ICD_BUF_INIT, b = ICD_BUF_INIT;
        icd_error ea, eb;
        icd_error_clear(&ea);
        icd_error_clear(&eb);
        batches = 0;
        int ra = write_one(io, plan, r, t, true, &a, &ea);
        int rb = write_one(io, plan, r, t, false, &b, &eb);
        if (ra && rb) {
            bool alike = !strcmp(ea.message, eb.message);
            printf("error %s %s\n", alike ? "SAME" : "DIFF", ea.message);
            same += alike;
        } else if (ra || rb) {
            printf("error ONE %s | %s\n", ra ? ea.message : "-", rb ? eb.message : "-");
        } else if (a.len == b.len && !memcmp(a.data, b.data, a.len)) {
            printf("same %zu %zu %s\n", a.len, batches, t->data->path);
            same++;
        } else {
            printf("DIFF %zu %zu %s\n", a.len, b.len, t->data->path);
        }
        icd_buf_free(&a);
        icd_buf_free(&b);
    }
    printf("files %zu same %zu\n", files, same);
    ice_scan_reader_free(r);
    ice_scan_plan_free(plan);
    ice_metadata_free(md);
    icd_fileio_free(io);
    return same == files ? 0 : 1;
}
