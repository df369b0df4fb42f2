/*
 * Test tool: a streamed plan must give what the materialized plan gives (scan_plan.h,
 * plan.h; `tasks` and `plan` stream, the other commands materialize).
 *
 *   plan_stream_tool tasks METADATA_JSON THREADS [--remap FROM=TO]...
 *       ice_scan_plan_build against two runs of ice_scan_stream_run (and one of
 *       ice_scan_stream_run_data): the same tasks in the same order (data file, delete
 *       files, residual), the same counts, residual and has_deletes.
 *       Prints "tasks N same" or the first difference.
 *   plan_stream_tool plan SPEC_JSON THREADS [--remap FROM=TO]...
 *       dr_plan_write of a materialized and of a streamed dr_plan: the same bytes.
 *       Prints "plan BYTES same" or where they differ.
 *
 * Exit 0 when the same, 1 when they differ, 2 on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonw.h"
#include "druid/plan/plan.h"
#include "druid/spec/spec.h"
#include "iceberg/metadata.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"

typedef struct cmp_ctx {
    const ice_scan_plan *plan;
    bool data_only; /* a run without delete lookups */
    size_t seen;
    bool differ;
} cmp_ctx;

static void differ(cmp_ctx *c, size_t i, const char *what)
{
    if (!c->differ) printf("DIFF task %zu: %s\n", i, what);
    c->differ = true;
}

static int compare_batch(void *ctx, ice_scan_batch *b, icd_error *err)
{
    (void)err;
    cmp_ctx *c = ctx;
    if (b->first != c->seen) differ(c, b->first, "batch does not follow the previous one");
    for (size_t j = 0; j < b->ntasks; j++) {
        size_t i = b->first + j;
        if (i >= ice_scan_plan_task_count(c->plan)) {
            differ(c, i, "more tasks than the materialized plan");
            break;
        }
        const ice_scan_task *m = ice_scan_plan_task(c->plan, i), *s = &b->tasks[j];
        if (strcmp(m->data->path, s->data->path)) differ(c, i, "data file");
        if (m->has_residual != s->has_residual) differ(c, i, "residual");
        if (c->data_only) {
            if (s->ndeletes) differ(c, i, "delete files in a data-only run");
            continue;
        }
        if (m->ndeletes != s->ndeletes) {
            differ(c, i, "number of delete files");
            continue;
        }
        for (size_t k = 0; k < s->ndeletes; k++)
            if (strcmp(m->deletes[k]->path, s->deletes[k]->path)) differ(c, i, "delete file");
    }
    c->seen += b->ntasks;
    return 0;
}

static bool same_counts(ice_scan_counts a, ice_scan_counts b)
{
    return a.manifests_total == b.manifests_total && a.manifests_read == b.manifests_read &&
           a.manifests_pruned == b.manifests_pruned && a.data_files_pruned == b.data_files_pruned &&
           a.data_files_total == b.data_files_total && a.data_files == b.data_files &&
           a.delete_files_total == b.delete_files_total && a.delete_files == b.delete_files &&
           a.position_delete_files == b.position_delete_files &&
           a.equality_delete_files == b.equality_delete_files &&
           a.deletion_vectors == b.deletion_vectors;
}

static int run_tasks(icd_fileio *io, const char *metadata, int threads, bool *same, icd_error *err)
{
    ice_metadata *md = NULL;
    ICD_TRY(ice_metadata_load(io, metadata, &md, err));
    ice_scan_opts opts = {{0}, NULL, true, threads, false, false};
    opts.select.kind = ICE_SELECT_CURRENT;
    ice_scan_plan *plan = NULL;
    ice_scan_stream *st = NULL;
    int rc = ice_scan_plan_build(io, md, &opts, &plan, err);
    if (!rc) rc = ice_scan_stream_open(io, md, &opts, &st, err);
    *same = true;
    for (int run = 0; run < 3 && !rc && *same; run++) {
        cmp_ctx c = {plan, run == 1, 0, false};
        rc = run == 1 ? ice_scan_stream_run_data(st, compare_batch, &c, err)
                      : ice_scan_stream_run(st, compare_batch, &c, err);
        if (rc) break;
        if (c.seen != ice_scan_plan_task_count(plan)) differ(&c, c.seen, "fewer tasks");
        const char *t1 = NULL, *t2 = NULL;
        bool r1 = ice_scan_plan_has_residual(plan, &t1), r2 = ice_scan_stream_has_residual(st, &t2);
        if (!same_counts(ice_scan_plan_counts(plan), ice_scan_stream_counts(st)))
            differ(&c, c.seen, "counts");
        if (r1 != r2 || (t1 && t2 && strcmp(t1, t2)) || (!t1 != !t2))
            differ(&c, c.seen, "plan residual");
        if (ice_scan_plan_has_deletes(plan) != ice_scan_stream_has_deletes(st))
            differ(&c, c.seen, "has_deletes");
        *same = !c.differ;
    }
    if (!rc && *same) printf("tasks %zu same\n", ice_scan_plan_task_count(plan));
    ice_scan_stream_free(st);
    ice_scan_plan_free(plan);
    ice_metadata_free(md);
    return rc;
}

static int write_plan(const dr_spec *spec, icd_fileio *io, int threads, bool stream, icd_buf *out,
                      icd_error *err)
{
    dr_plan_opts po = {threads, false, false, stream};
    dr_plan *p = NULL;
    ICD_TRY(dr_plan_build(spec, io, &po, &p, err));
    icd_jsonw w;
    icd_jsonw_init(&w, NULL, NULL); /* (no sink: the text stays in w.buf) */
    int rc = dr_plan_write(p, &w, err);
    dr_plan_free(p);
    if (!rc && !icd_buf_ok(&w.buf)) rc = icd_fail_nomem(err);
    *out = w.buf;
    return rc;
}

static int run_plan(icd_fileio *io, const char *spec_path, int threads, bool *same, icd_error *err)
{
    dr_spec *spec = NULL;
    ICD_TRY(dr_spec_load(&spec, spec_path, NULL, err));
    icd_buf a = ICD_BUF_INIT, b = ICD_BUF_INIT;
    int rc = write_plan(spec, io, threads, false, &a, err);
    if (!rc) rc = write_plan(spec, io, threads, true, &b, err);
    *same = false;
    if (!rc) {
        size_t i = 0;
        while (i < a.len && i < b.len && a.data[i] == b.data[i])
            i++;
        if (i == a.len && i == b.len) {
            printf("plan %zu same\n", a.len);
            *same = true;
        } else {
            printf("DIFF plan at byte %zu (%zu and %zu bytes)\n", i, a.len, b.len);
        }
    }
    icd_buf_free(&a);
    icd_buf_free(&b);
    dr_spec_free(spec);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "tasks") && strcmp(argv[1], "plan"))) {
        fprintf(stderr, "usage: plan_stream_tool tasks|plan METADATA_JSON|SPEC_JSON THREADS "
                        "[--remap FROM=TO]...\n");
        return 2;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io = NULL;
    int rc = icd_fileio_new(&io, &err);
    for (int i = 4; !rc && i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--remap")) rc = icd_fileio_add_remap_arg(io, argv[i + 1], &err);
    int threads = atoi(argv[3]);
    bool same = false;
    if (!rc)
        rc = !strcmp(argv[1], "tasks") ? run_tasks(io, argv[2], threads, &same, &err)
                                       : run_plan(io, argv[2], threads, &same, &err);
    icd_fileio_free(io);
    if (rc) {
        char line[2400];
        icd_error_format(&err, line, sizeof line);
        printf("error %s\n", line);
        return 2;
    }
    return same ? 0 : 1;
}
