/*
 * Scan planning (see scan_plan.h). Every step keeps the spec's guarantees: a manifest or
 * file is only skipped when it provably cannot contribute a row or a delete, never on a
 * guess, because a skipped delete file means deleted rows come back.
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/parallel.h"
#include "iceberg/deletes/delete_index.h"
#include "iceberg/expr.h"
#include "iceberg/partition.h"
#include "iceberg/scan_plan.h"

struct ice_scan_plan {
    const ice_metadata *md;
    const ice_snapshot *snapshot;
    const ice_schema *schema;
    icd_arena arena;            /* manifest list, tasks */
    icd_arena *manifest_arenas; /* one per manifest read (parallel reads) */
    size_t nmanifest_arenas;
    ice_scan_task *tasks;
    size_t ntasks;
    const ice_content_file **task_deletes; /* every task's delete list, back to back */
    ice_scan_counts counts;
    bool residual;
    const char *residual_text;
    bool has_deletes;
    const ice_bound_expr *filter; /* bound row filter, NULL without one */
};

/* The filter projected inclusively through one partition spec (computed once per spec). */
typedef struct spec_proj {
    int32_t spec_id;
    const ice_partition_spec *spec;
    const ice_bound_expr *inclusive;
} spec_proj;

typedef struct filter_ctx {
    ice_scan_plan *p;
    spec_proj *projs;
    size_t nprojs;
} filter_ctx;

typedef struct read_job {
    icd_fileio *io;
    const ice_metadata *md;
    const char *list;             /* the manifest list they are listed in (errors) */
    const ice_manifest_file *mfs; /* the manifests to read */
    const size_t *which;          /* indexes into mfs */
    icd_arena *arenas;            /* one per job item */
    ice_manifest_entry **entries;
    size_t *nentries;
    bool keep_stats; /* data manifests: column metrics for the filter */
} read_job;

static int read_one(void *ctx, size_t i, icd_error *err)
{
    read_job *j = ctx;
    const ice_manifest_file *mf = &j->mfs[j->which[i]];
    /* file_path bounds of position deletes are always kept; other stats only matter for
     * filters, which the pruning step reads */
    ice_manifest_read_opts opts = {j->keep_stats && !mf->is_delete_manifest, false};
    int rc = ice_manifest_read(j->io, j->md, mf, &opts, &j->arenas[i], &j->entries[i],
                               &j->nentries[i], err);
    /* a damaged manifest list can name a manifest that is not there: say where it is listed */
    if (rc && j->list && !strstr(err->message, j->list))
        icd_error_append(err, " (listed in the manifest list %s)", j->list);
    return rc;
}

static bool manifest_has_live_files(const ice_manifest_file *mf)
{
    /* null counts mean "unknown": assume files */
    return !(mf->added_files == 0 && mf->existing_files == 0);
}

void ice_scan_plan_free(ice_scan_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nmanifest_arenas; i++)
        icd_arena_free(&p->manifest_arenas[i]);
    free(p->manifest_arenas);
    free(p->tasks);
    free((void *)p->task_deletes);
    icd_arena_free(&p->arena);
    free(p);
}

/* ---- the row filter ------------------------------------------------------------------ */

static bool filter_is_trivial(const ice_scan_plan *p)
{
    return !p->filter || p->filter->op == ICE_EXPR_TRUE;
}

/* The inclusive projection of the filter through spec `spec_id`, computed on first use.
 * NULL projection (spec unknown to the metadata) means "cannot prune". */
static int projection_for(filter_ctx *c, int32_t spec_id, const spec_proj **out, icd_error *err)
{
    for (size_t i = 0; i < c->nprojs; i++)
        if (c->projs[i].spec_id == spec_id) {
            *out = &c->projs[i];
            return 0;
        }
    spec_proj *np = realloc(c->projs, (c->nprojs + 1) * sizeof *np);
    if (!np) return icd_fail_nomem(err);
    c->projs = np;
    spec_proj *sp = &np[c->nprojs];
    sp->spec_id = spec_id;
    sp->spec = ice_metadata_spec(c->p->md, spec_id);
    sp->inclusive = NULL;
    if (sp->spec)
        ICD_TRY(ice_expr_project(c->p->filter, sp->spec, c->p->schema, false, &c->p->arena,
                                 &sp->inclusive, err));
    c->nprojs++;
    *out = sp;
    return 0;
}

/* False when the data manifest's partition summaries exclude every match. */
static int manifest_may_match(filter_ctx *c, const ice_manifest_file *mf, bool *out, icd_error *err)
{
    *out = true;
    if (filter_is_trivial(c->p) || mf->is_delete_manifest)
        return 0; /* delete manifests are never pruned by a row filter */
    const spec_proj *sp;
    ICD_TRY(projection_for(c, mf->spec_id, &sp, err));
    if (!sp->inclusive) return 0;
    return ice_manifest_may_match(sp->inclusive, mf, out, err);
}

/* False when a data file's partition tuple or column metrics exclude every match. */
static int file_may_match(filter_ctx *c, const ice_content_file *f, bool *out, icd_error *err)
{
    *out = true;
    if (filter_is_trivial(c->p)) return 0;
    const spec_proj *sp;
    ICD_TRY(projection_for(c, f->spec_id, &sp, err));
    if (sp->inclusive && !ice_partition_eval(sp->inclusive, f, false)) {
        *out = false;
        return 0;
    }
    return ice_metrics_may_match(c->p->filter, f, out, err);
}

/* The task's residual: what the file's partition leaves of the filter. The plan keeps
 * the text of the first one that is not TRUE. */
static int set_residual(ice_scan_plan *p, ice_scan_task *t, icd_error *err)
{
    if (filter_is_trivial(p)) return 0;
    const ice_partition_spec *spec = ice_metadata_spec(p->md, t->data->spec_id);
    icd_arena scratch = ICD_ARENA_INIT;
    const ice_bound_expr *r = NULL;
    int rc = ice_expr_residual(p->filter, spec, p->schema, t->data, &scratch, &r, err);
    if (!rc && r->op != ICE_EXPR_TRUE) {
        t->has_residual = true;
        if (!p->residual) {
            icd_buf b = ICD_BUF_INIT;
            ice_bound_expr_to_text(&b, r);
            p->residual_text =
                icd_buf_ok(&b) && b.data ? icd_arena_strdup(&p->arena, b.data) : NULL;
            icd_buf_free(&b);
            if (!p->residual_text) rc = icd_fail_nomem(err);
            p->residual = true;
        }
    }
    icd_arena_free(&scratch);
    return rc;
}

static int build_tasks(ice_scan_plan *p, const ice_content_file **data, size_t ndata,
                       const ice_content_file **dels, size_t ndels, icd_error *err)
{
    size_t nspecs = ice_metadata_spec_count(p->md);
    ice_spec_info *specs = calloc(nspecs ? nspecs : 1, sizeof *specs);
    if (!specs) return icd_fail_nomem(err);
    for (size_t i = 0; i < nspecs; i++) {
        const ice_partition_spec *s = ice_metadata_spec_at(p->md, i);
        specs[i].spec_id = s->spec_id;
        specs[i].unpartitioned = ice_partition_spec_is_unpartitioned(s);
    }
    ice_delete_index *ix = NULL;
    int rc = ice_delete_index_build(dels, ndels, specs, nspecs, &ix, err);
    free(specs);
    if (rc) return rc;

    p->tasks = calloc(ndata ? ndata : 1, sizeof *p->tasks);
    if (!p->tasks) {
        ice_delete_index_free(ix);
        return icd_fail_nomem(err);
    }
    const ice_content_file **tmp = NULL;
    size_t cap = 0, total = 0;
    for (size_t i = 0; i < ndata && !rc; i++) {
        /* the lists go back to back into one vector (`total` so far); the tasks point
         * into it once it stops moving */
        size_t before = total;
        rc = ice_delete_index_for(ix, data[i], &tmp, &total, &cap, err);
        if (rc) break;
        if (total > before) p->has_deletes = true;
        p->tasks[p->ntasks++] = (ice_scan_task){data[i], NULL, total - before, false};
        rc = set_residual(p, &p->tasks[p->ntasks - 1], err);
    }
    ice_delete_index_free(ix);
    if (rc) {
        free((void *)tmp);
        return rc;
    }
    if (total && total < cap) { /* exact size: a million tasks hold millions of pairs */
        const ice_content_file **exact = realloc((void *)tmp, total * sizeof *exact);
        if (exact) tmp = exact;
    }
    p->task_deletes = tmp;
    size_t off = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        p->tasks[i].deletes = p->tasks[i].ndeletes ? tmp + off : NULL;
        off += p->tasks[i].ndeletes;
    }
    return 0;
}

/* Counts the distinct delete files that some task uses, by kind (a set of the pointers:
 * the (data, delete) pairs can be millions, the delete files far fewer). */
static int count_used_deletes(ice_scan_plan *p, icd_error *err)
{
    icd_map *seen = NULL;
    ICD_TRY(icd_map_new(&seen, 0, err));
    int rc = 0;
    for (size_t i = 0; i < p->ntasks && !rc; i++)
        for (size_t k = 0; k < p->tasks[i].ndeletes && !rc; k++) {
            const ice_content_file *f = p->tasks[i].deletes[k];
            bool fresh = false;
            uint64_t *slot;
            rc = icd_map_upsert(seen, &f, sizeof f, icd_hash_u64((uint64_t)(uintptr_t)f), &slot,
                                &fresh, err);
            if (rc || !fresh) continue;
            p->counts.delete_files++;
            if (ice_is_dv(f))
                p->counts.deletion_vectors++;
            else if (f->content == ICE_CONTENT_POSITION_DELETES)
                p->counts.position_delete_files++;
            else
                p->counts.equality_delete_files++;
        }
    icd_map_free(seen);
    return rc;
}

int ice_scan_plan_build(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                        ice_scan_plan **out, icd_error *err)
{
    *out = NULL;
    ice_scan_plan *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->md = md;
    int rc = ice_metadata_select_snapshot(md, &opts->select, &p->snapshot, err);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    rc = ice_metadata_read_schema(md, &opts->select, p->snapshot, &p->schema, err);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    if (opts->filter && p->schema) { /* bind first: a bad filter fails even on empty tables */
        ice_bound_expr *bound = NULL;
        rc = ice_expr_bind(opts->filter, p->schema, opts->case_sensitive, &p->arena, &bound, err);
        if (rc) {
            ice_scan_plan_free(p);
            return rc;
        }
        p->filter = bound;
    }
    if (!p->snapshot) { /* a table without snapshots has no rows */
        *out = p;
        return 0;
    }

    ice_manifest_file *mfs = NULL;
    size_t nmf = 0;
    rc = ice_manifest_list_read(io, md, p->snapshot, &p->arena, &mfs, &nmf, err);
    if (rc == ICD_ENOTFOUND) ice_metadata_hint_moved(md, err);
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
    filter_ctx fc = {p, NULL, 0};
    size_t pruned_files = 0; /* files of pruned manifests, from manifest-list counts */
    for (size_t i = 0; i < nmf; i++) {
        if (!manifest_has_live_files(&mfs[i])) continue;
        if (mfs[i].is_delete_manifest && mfs[i].sequence_number < min_data_seq &&
            min_data_seq != INT64_MAX)
            continue;
        bool may = true;
        rc = manifest_may_match(&fc, &mfs[i], &may, err);
        if (rc) {
            free(fc.projs);
            free(which);
            ice_scan_plan_free(p);
            return rc;
        }
        if (!may) {
            p->counts.manifests_pruned++;
            if (mfs[i].added_files > 0) pruned_files += (size_t)mfs[i].added_files;
            if (mfs[i].existing_files > 0) pruned_files += (size_t)mfs[i].existing_files;
            continue;
        }
        which[nwhich++] = i;
    }

    read_job job = {io,   md,    p->snapshot->manifest_list,
                    mfs,  which, NULL,
                    NULL, NULL,  opts->keep_stats || !filter_is_trivial(p)};
    job.arenas = calloc(nwhich ? nwhich : 1, sizeof *job.arenas);
    job.entries = calloc(nwhich ? nwhich : 1, sizeof *job.entries);
    job.nentries = calloc(nwhich ? nwhich : 1, sizeof *job.nentries);
    p->manifest_arenas = job.arenas;
    p->nmanifest_arenas = nwhich;
    for (size_t i = 0; job.arenas && i < nwhich; i++)
        job.arenas[i].large_own_chunks = true; /* kept as long as the plan */
    if (!job.arenas || !job.entries || !job.nentries) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    rc = icd_parallel_for(nwhich, opts->threads, read_one, &job, err);
    if (rc) goto done;
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
    for (size_t i = 0; i < nwhich && !rc; i++)
        for (size_t k = 0; k < job.nentries[i] && !rc; k++) {
            const ice_content_file *f = &job.entries[i][k].file;
            if (mfs[which[i]].is_delete_manifest) {
                dels[xi++] = f;
                continue;
            }
            bool may = true;
            rc = file_may_match(&fc, f, &may, err);
            if (may)
                data[di++] = f;
            else
                p->counts.data_files_pruned++;
        }
    if (rc) {
        free((void *)data);
        free((void *)dels);
        goto done;
    }
    p->counts.data_files_total = ndata + pruned_files;
    ndata = di;
    p->counts.delete_files_total = ndels;
    rc = build_tasks(p, data, ndata, dels, ndels, err);
    free((void *)data);
    free((void *)dels);
    if (!rc) {
        p->counts.data_files = p->ntasks;
        rc = count_used_deletes(p, err);
    }
done:
    free(fc.projs);
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

const ice_snapshot *ice_scan_plan_snapshot(const ice_scan_plan *p)
{
    return p->snapshot;
}
const ice_schema *ice_scan_plan_schema(const ice_scan_plan *p)
{
    return p->schema;
}
size_t ice_scan_plan_task_count(const ice_scan_plan *p)
{
    return p->ntasks;
}
const ice_scan_task *ice_scan_plan_task(const ice_scan_plan *p, size_t i)
{
    return &p->tasks[i];
}
ice_scan_counts ice_scan_plan_counts(const ice_scan_plan *p)
{
    return p->counts;
}
void ice_scan_plan_prefetch(const ice_scan_plan *p, size_t i)
{
    if (i + 2 < p->ntasks)
        for (size_t k = 0; k < p->tasks[i + 2].ndeletes; k++)
            __builtin_prefetch(p->tasks[i + 2].deletes[k]);
    if (i + 1 < p->ntasks)
        for (size_t k = 0; k < p->tasks[i + 1].ndeletes; k++)
            __builtin_prefetch(p->tasks[i + 1].deletes[k]->path);
}

bool ice_scan_plan_has_deletes(const ice_scan_plan *p)
{
    return p->has_deletes;
}

bool ice_scan_plan_has_residual(const ice_scan_plan *p, const char **text)
{
    if (text) *text = p->residual_text;
    return p->residual;
}

const ice_bound_expr *ice_scan_plan_filter(const ice_scan_plan *p)
{
    return p->filter;
}
