/*
 * Scan planning (see scan_plan.h). Every step keeps the spec's guarantees: a manifest or
 * file is only skipped when it provably cannot contribute a row or a delete, never on a
 * guess, because a skipped delete file means deleted rows come back.
 */
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "iceberg/delete_index.h"
#include "iceberg/partition.h"
#include "iceberg/scan_plan.h"

struct ice_scan_plan {
    const ice_metadata *md;
    const ice_snapshot *snapshot;
    const ice_schema *schema;
    icd_arena arena;          /* manifest list, tasks */
    icd_arena *manifest_arenas; /* one per manifest read (parallel reads) */
    size_t nmanifest_arenas;
    ice_scan_task *tasks;
    size_t ntasks;
    ice_scan_counts counts;
    bool residual;
    const char *residual_text;
    bool has_deletes;
};

typedef struct read_job {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_manifest_file *mfs; /* the manifests to read */
    const size_t *which;          /* indexes into mfs */
    icd_arena *arenas;            /* one per job item */
    ice_manifest_entry **entries;
    size_t *nentries;
} read_job;

static int read_one(void *ctx, size_t i, icd_error *err)
{
    read_job *j = ctx;
    const ice_manifest_file *mf = &j->mfs[j->which[i]];
    /* file_path bounds of position deletes are always kept; other stats only matter for
     * filters, which the pruning step reads */
    ice_manifest_read_opts opts = {false, false};
    return ice_manifest_read(j->io, j->md, mf, &opts, &j->arenas[i], &j->entries[i],
                             &j->nentries[i], err);
}

static bool manifest_has_live_files(const ice_manifest_file *mf)
{
    /* null counts mean "unknown": assume files */
    return !(mf->added_files == 0 && mf->existing_files == 0);
}

void ice_scan_plan_free(ice_scan_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nmanifest_arenas; i++)
        icd_arena_free(&p->manifest_arenas[i]);
    free(p->manifest_arenas);
    free(p->tasks);
    icd_arena_free(&p->arena);
    free(p);
}

static int build_tasks(ice_scan_plan *p, const ice_content_file **data, size_t ndata,
                       const ice_content_file **dels, size_t ndels, icd_error *err)
{
    size_t nspecs = ice_metadata_spec_count(p->md);
    ice_spec_info *specs = calloc(nspecs ? nspecs : 1, sizeof *specs);
    if (!specs)
        return icd_fail_nomem(err);
    for (size_t i = 0; i < nspecs; i++) {
        const ice_partition_spec *s = ice_metadata_spec_at(p->md, i);
        specs[i].spec_id = s->spec_id;
        specs[i].unpartitioned = ice_partition_spec_is_unpartitioned(s);
    }
    ice_delete_index *ix = NULL;
    int rc = ice_delete_index_build(dels, ndels, specs, nspecs, &ix, err);
    free(specs);
    if (rc)
        return rc;

    p->tasks = calloc(ndata ? ndata : 1, sizeof *p->tasks);
    if (!p->tasks) {
        ice_delete_index_free(ix);
        return icd_fail_nomem(err);
    }
    const ice_content_file **tmp = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < ndata && !rc; i++) {
        size_t n = 0;
        rc = ice_delete_index_for(ix, data[i], &tmp, &n, &cap, err);
        if (rc)
            break;
        const ice_content_file **v = NULL;
        if (n) {
            v = icd_arena_alloc(&p->arena, n * sizeof *v);
            if (!v) {
                rc = icd_fail_nomem(err);
                break;
            }
            memcpy(v, tmp, n * sizeof *v);
            p->has_deletes = true;
        }
        p->tasks[p->ntasks++] = (ice_scan_task){data[i], v, n, false};
    }
    free((void *)tmp);
    ice_delete_index_free(ix);
    return rc;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const void *const *)a, y = (uintptr_t) * (const void *const *)b;
    return x < y ? -1 : x > y;
}

/* Counts the distinct delete files that some task uses, by kind. */
static int count_used_deletes(ice_scan_plan *p, icd_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        total += p->tasks[i].ndeletes;
    if (!total)
        return 0;
    const ice_content_file **all = malloc(total * sizeof *all);
    if (!all)
        return icd_fail_nomem(err);
    size_t n = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        for (size_t k = 0; k < p->tasks[i].ndeletes; k++)
            all[n++] = p->tasks[i].deletes[k];
    qsort(all, n, sizeof *all, cmp_ptr);
    for (size_t i = 0; i < n; i++) {
        if (i && all[i] == all[i - 1])
            continue;
        p->counts.delete_files++;
        if (ice_is_dv(all[i]))
            p->counts.deletion_vectors++;
        else if (all[i]->content == ICE_CONTENT_POSITION_DELETES)
            p->counts.position_delete_files++;
        else
            p->counts.equality_delete_files++;
    }
    free(all);
    return 0;
}

int ice_scan_plan_build(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                        ice_scan_plan **out, icd_error *err)
{
    *out = NULL;
    ice_scan_plan *p = calloc(1, sizeof *p);
    if (!p)
        return icd_fail_nomem(err);
    p->md = md;
    int rc = ice_metadata_select_snapshot(md, &opts->select, &p->snapshot, err);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    p->schema = ice_metadata_snapshot_schema(md, p->snapshot);
    if (!p->snapshot) { /* a table without snapshots has no rows */
        *out = p;
        return 0;
    }

    ice_manifest_file *mfs = NULL;
    size_t nmf = 0;
    rc = ice_manifest_list_read(io, md, p->snapshot, &p->arena, &mfs, &nmf, err);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    p->counts.manifests_total = nmf;

    /* Delete manifests whose sequence number is below every data manifest's smallest
     * data sequence number cannot hold a delete that applies (positions need
     * seq(data) <= seq(delete), equalities seq(data) < seq(delete)). */
    int64_t min_data_seq = INT64_MAX;
    for (size_t i = 0; i < nmf; i++)
        if (!mfs[i].is_delete_manifest && manifest_has_live_files(&mfs[i]) &&
            mfs[i].min_sequence_number < min_data_seq)
            min_data_seq = mfs[i].min_sequence_number;
    size_t *which = malloc((nmf ? nmf : 1) * sizeof *which);
    size_t nwhich = 0;
    if (!which) {
        ice_scan_plan_free(p);
        return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < nmf; i++) {
        if (!manifest_has_live_files(&mfs[i]))
            continue;
        if (mfs[i].is_delete_manifest && mfs[i].sequence_number < min_data_seq &&
            min_data_seq != INT64_MAX)
            continue;
        which[nwhich++] = i;
    }

    read_job job = {io, md, mfs, which, NULL, NULL, NULL};
    job.arenas = calloc(nwhich ? nwhich : 1, sizeof *job.arenas);
    job.entries = calloc(nwhich ? nwhich : 1, sizeof *job.entries);
    job.nentries = calloc(nwhich ? nwhich : 1, sizeof *job.nentries);
    p->manifest_arenas = job.arenas;
    p->nmanifest_arenas = nwhich;
    if (!job.arenas || !job.entries || !job.nentries) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    rc = icd_parallel_for(nwhich, opts->threads, read_one, &job, err);
    if (rc)
        goto done;
    p->counts.manifests_read = nwhich;

    size_t ndata = 0, ndels = 0;
    for (size_t i = 0; i < nwhich; i++)
        *(mfs[which[i]].is_delete_manifest ? &ndels : &ndata) += job.nentries[i];
    const ice_content_file **data = malloc((ndata ? ndata : 1) * sizeof *data);
    const ice_content_file **dels = malloc((ndels ? ndels : 1) * sizeof *dels);
    if (!data || !dels) {
        free((void *)data);
        free((void *)dels);
        rc = icd_fail_nomem(err);
        goto done;
    }
    size_t di = 0, xi = 0;
    for (size_t i = 0; i < nwhich; i++)
        for (size_t k = 0; k < job.nentries[i]; k++) {
            const ice_content_file *f = &job.entries[i][k].file;
            if (mfs[which[i]].is_delete_manifest)
                dels[xi++] = f;
            else
                data[di++] = f;
        }
    p->counts.data_files_total = ndata;
    p->counts.delete_files_total = ndels;
    rc = build_tasks(p, data, ndata, dels, ndels, err);
    free((void *)data);
    free((void *)dels);
    if (!rc) {
        p->counts.data_files = p->ntasks;
        rc = count_used_deletes(p, err);
    }
done:
    free(which);
    free(job.entries);
    free(job.nentries);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

const ice_snapshot *ice_scan_plan_snapshot(const ice_scan_plan *p) { return p->snapshot; }
const ice_schema *ice_scan_plan_schema(const ice_scan_plan *p) { return p->schema; }
size_t ice_scan_plan_task_count(const ice_scan_plan *p) { return p->ntasks; }
const ice_scan_task *ice_scan_plan_task(const ice_scan_plan *p, size_t i) { return &p->tasks[i]; }
ice_scan_counts ice_scan_plan_counts(const ice_scan_plan *p) { return p->counts; }
bool ice_scan_plan_has_deletes(const ice_scan_plan *p) { return p->has_deletes; }

bool ice_scan_plan_has_residual(const ice_scan_plan *p, const char **text)
{
    if (text)
        *text = p->residual_text;
    return p->residual;
}
