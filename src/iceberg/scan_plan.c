/*
 * Scan planning (see scan_plan.h). Every step keeps the spec's guarantees: a manifest or
 * file is only skipped when it provably cannot contribute a row or a delete, never on a
 * guess, because a skipped delete file means deleted rows come back.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/parallel.h"
#include "iceberg/deletes/delete_index.h"
#include "iceberg/expr.h"
#include "iceberg/partition.h"
#include "iceberg/scan_cache.h"
#include "iceberg/scan_plan.h"

/* The delete files of every task of a run with deletes, in task order. Runs of a stream
 * visit the same manifests in the same order and make the same tasks, so the first such
 * run records each task's list and later runs (the plan's counts, then its tasks; the
 * plan's decisions, then its splits) replay them instead of looking every data file up in
 * the delete index again -- with a million data files those lookups, each a few cache
 * misses, were the biggest cost of a run after decoding. Held as long as the stream,
 * within MEMO_MAX_BYTES (beyond it nothing is recorded and every run looks up). */
#define MEMO_MAX_BYTES ((size_t)128 << 20)

typedef struct dels_memo {
    uint32_t *n; /* per task: how many delete files */
    size_t ntasks, cap_n;
    uint32_t *v; /* the lists, back to back: each delete file by its number (del_by_num) */
    size_t nv, cap_v;
    size_t at_task, at_v; /* replay position */
    bool complete;        /* a run recorded every task */
    bool off;             /* not recorded (over the limit, or a materialized plan) */
    /* what the recording run learnt about the delete files it used */
    size_t delete_files, position_delete_files, equality_delete_files, deletion_vectors;
    bool has_deletes;
} dels_memo;

static void memo_clear(dels_memo *m)
{
    free(m->n);
    free(m->v);
    m->n = NULL;
    m->v = NULL;
    m->ntasks = m->cap_n = m->nv = m->cap_v = 0;
    m->complete = false;
}

/* Makes room for one task's list of n while recording (false: not recording, or over the
 * limit, which stops recording for good); memo_push then appends its numbers. */
static bool memo_record(dels_memo *m, size_t n)
{
    if (m->off) return false;
    size_t bytes = (m->ntasks + 1) * sizeof *m->n + (m->nv + n) * sizeof *m->v;
    if (n > UINT32_MAX || bytes > MEMO_MAX_BYTES ||
        ICD_ARRAY_RESERVE(m->n, m->cap_n, m->ntasks + 1, 1024) ||
        (n && ICD_ARRAY_RESERVE(m->v, m->cap_v, m->nv + n, 4096))) {
        memo_clear(m);
        m->off = true; /* (no memory for it is not an error: runs look up) */
        return false;
    }
    m->n[m->ntasks++] = (uint32_t)n;
    return true;
}

struct ice_scan_stream {
    icd_fileio *io;
    const ice_metadata *md;
    const ice_snapshot *snapshot;
    const ice_schema *schema;
    icd_arena arena;              /* manifest list, bound filter, projections, residual */
    const ice_bound_expr *filter; /* bound row filter, NULL without one */
    struct spec_proj *projs;      /* the filter projected per partition spec */
    size_t nprojs;
    const ice_manifest_file *mfs; /* the manifest list */
    size_t *data_mfs;             /* the data manifests to read (indexes into mfs), in order */
    size_t ndata_mfs;
    icd_arena *del_arenas; /* the delete manifests' entries, kept as long as the stream */
    size_t ndel_arenas;
    struct del_range *del_ranges; /* where each delete manifest's entries are, by address */
    size_t ndel_ranges, ndels;
    const ice_content_file **del_by_num; /* the delete files by number (see del_range) */
    ice_delete_index *ix;
    int threads;
    bool keep_stats;
    size_t pruned_files;  /* files of pruned manifests, from manifest-list counts */
    ice_scan_counts base; /* what is known before the data manifests are read */
    /* the last run */
    ice_scan_counts counts;
    bool residual;
    const char *residual_text;
    bool has_deletes;
    dels_memo memo;
    ice_entry_cache cache; /* the data manifests' entries, for the runs after the first */
};

struct ice_scan_plan {
    ice_scan_stream *s;
    icd_arena *manifest_arenas; /* the data manifests' entries, taken from the stream */
    size_t nmanifest_arenas, cap_arenas;
    ice_scan_task *tasks;
    size_t ntasks, cap_tasks;
    const ice_content_file **task_deletes; /* every task's delete list, back to back */
    size_t ndeletes, cap_deletes;
};

/* The filter projected inclusively through one partition spec (computed once per spec). */
typedef struct spec_proj {
    int32_t spec_id;
    const ice_partition_spec *spec;
    const ice_bound_expr *inclusive;
} spec_proj;

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
    ice_manifest_read_opts opts = {j->keep_stats && !mf->is_delete_manifest, false, false};
    j->arenas[i].large_own_chunks = true; /* filled once, then kept or freed */
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

void ice_scan_stream_free(ice_scan_stream *s)
{
    if (!s) return;
    ice_delete_index_free(s->ix);
    for (size_t i = 0; i < s->ndel_arenas; i++)
        icd_arena_free(&s->del_arenas[i]);
    free(s->del_arenas);
    free(s->del_ranges);
    free((void *)s->del_by_num);
    free(s->data_mfs);
    free(s->projs);
    memo_clear(&s->memo);
    ice_entry_cache_clear(&s->cache);
    icd_arena_free(&s->arena);
    free(s);
}

/* ---- the row filter ------------------------------------------------------------------ */

static bool filter_is_trivial(const ice_scan_stream *s)
{
    return !s->filter || s->filter->op == ICE_EXPR_TRUE;
}

/* The inclusive projection of the filter through spec `spec_id`, computed on first use.
 * NULL projection (spec unknown to the metadata) means "cannot prune". */
static int projection_for(ice_scan_stream *s, int32_t spec_id, const spec_proj **out,
                          icd_error *err)
{
    for (size_t i = 0; i < s->nprojs; i++)
        if (s->projs[i].spec_id == spec_id) {
            *out = &s->projs[i];
            return 0;
        }
    spec_proj *np = realloc(s->projs, (s->nprojs + 1) * sizeof *np);
    if (!np) return icd_fail_nomem(err);
    s->projs = np;
    spec_proj *sp = &np[s->nprojs];
    sp->spec_id = spec_id;
    sp->spec = ice_metadata_spec(s->md, spec_id);
    sp->inclusive = NULL;
    if (sp->spec)
        ICD_TRY(ice_expr_project(s->filter, sp->spec, s->schema, false, &s->arena, &sp->inclusive,
                                 err));
    s->nprojs++;
    *out = sp;
    return 0;
}

/* False when the data manifest's partition summaries exclude every match. */
static int manifest_may_match(ice_scan_stream *s, const ice_manifest_file *mf, bool *out,
                              icd_error *err)
{
    *out = true;
    if (filter_is_trivial(s) || mf->is_delete_manifest)
        return 0; /* delete manifests are never pruned by a row filter */
    const spec_proj *sp;
    ICD_TRY(projection_for(s, mf->spec_id, &sp, err));
    if (!sp->inclusive) return 0;
    return ice_manifest_may_match(sp->inclusive, mf, out, err);
}

/* False when a data file's partition tuple or column metrics exclude every match. */
static int file_may_match(ice_scan_stream *s, const ice_content_file *f, bool *out, icd_error *err)
{
    *out = true;
    if (filter_is_trivial(s)) return 0;
    const spec_proj *sp;
    ICD_TRY(projection_for(s, f->spec_id, &sp, err));
    if (sp->inclusive && !ice_partition_eval(sp->inclusive, f, false)) {
        *out = false;
        return 0;
    }
    return ice_metrics_may_match(s->filter, f, out, err);
}

/* The task's residual: what the file's partition leaves of the filter. The stream keeps
 * the text of the first one that is not TRUE. */
static int set_residual(ice_scan_stream *s, ice_scan_task *t, icd_error *err)
{
    if (filter_is_trivial(s)) return 0;
    const ice_partition_spec *spec = ice_metadata_spec(s->md, t->data->spec_id);
    icd_arena scratch = ICD_ARENA_INIT;
    const ice_bound_expr *r = NULL;
    int rc = ice_expr_residual(s->filter, spec, s->schema, t->data, &scratch, &r, err);
    if (!rc && r->op != ICE_EXPR_TRUE) {
        t->has_residual = true;
        if (!s->residual && !s->residual_text) { /* (a second run has the text) */
            icd_buf b = ICD_BUF_INIT;
            ice_bound_expr_to_text(&b, r);
            s->residual_text =
                icd_buf_ok(&b) && b.data ? icd_arena_strdup(&s->arena, b.data) : NULL;
            icd_buf_free(&b);
            if (!s->residual_text) rc = icd_fail_nomem(err);
        }
        s->residual = true;
    }
    icd_arena_free(&scratch);
    return rc;
}

/* ---- opening: the manifest list, the delete manifests, the delete index -------------- */

static int build_index(ice_scan_stream *s, const ice_content_file **dels, size_t ndels,
                       icd_error *err)
{
    size_t nspecs = ice_metadata_spec_count(s->md);
    ice_spec_info *specs = calloc(nspecs ? nspecs : 1, sizeof *specs);
    if (!specs) return icd_fail_nomem(err);
    for (size_t i = 0; i < nspecs; i++) {
        const ice_partition_spec *sp = ice_metadata_spec_at(s->md, i);
        specs[i].spec_id = sp->spec_id;
        specs[i].unpartitioned = ice_partition_spec_is_unpartitioned(sp);
    }
    int rc = ice_delete_index_build(dels, ndels, specs, nspecs, &s->ix, err);
    free(specs);
    return rc;
}

/* A delete manifest's entries: a delete file's number among the stream's delete files is
 * `base` plus its entry's place in the manifest (runs count the distinct delete files they use by
 * number). */
typedef struct del_range {
    uintptr_t start, end; /* the addresses of the first entry and of the end */
    size_t base;
} del_range;

static int cmp_range(const void *a, const void *b)
{
    const del_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int index_ranges(ice_scan_stream *s, ice_manifest_entry *const *entries,
                        const size_t *nentries, size_t n, icd_error *err)
{
    s->del_ranges = malloc((n ? n : 1) * sizeof *s->del_ranges);
    if (!s->del_ranges) return icd_fail_nomem(err);
    size_t base = 0;
    for (size_t i = 0; i < n; i++) {
        if (!nentries[i]) continue;
        del_range *r = &s->del_ranges[s->ndel_ranges++];
        r->start = (uintptr_t)entries[i];
        r->end = (uintptr_t)(entries[i] + nentries[i]);
        r->base = base;
        base += nentries[i];
    }
    s->ndels = base;
    qsort(s->del_ranges, s->ndel_ranges, sizeof *s->del_ranges, cmp_range);
    return 0;
}

/* Reads the delete manifests among `which` (in parallel) and indexes their files. */
static int read_deletes(ice_scan_stream *s, const size_t *which, size_t n, icd_error *err)
{
    read_job job = {s->io, s->md, s->snapshot->manifest_list, s->mfs, which, NULL, NULL,
                    NULL,  false};
    s->del_arenas = calloc(n ? n : 1, sizeof *s->del_arenas);
    job.entries = calloc(n ? n : 1, sizeof *job.entries);
    job.nentries = calloc(n ? n : 1, sizeof *job.nentries);
    job.arenas = s->del_arenas;
    s->ndel_arenas = n;
    int rc = 0;
    const ice_content_file **dels = NULL;
    if (!s->del_arenas || !job.entries || !job.nentries) {
        if (!s->del_arenas) s->ndel_arenas = 0;
        rc = icd_fail_nomem(err);
        goto done;
    }
    rc = icd_parallel_for(n, s->threads, read_one, &job, err);
    if (rc) goto done;
    size_t ndels = 0;
    for (size_t i = 0; i < n; i++)
        ndels += job.nentries[i];
    dels = malloc((ndels ? ndels : 1) * sizeof *dels);
    if (!dels) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    size_t xi = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < job.nentries[i]; k++)
            dels[xi++] = &job.entries[i][k].file;
    s->base.delete_files_total = ndels;
    rc = index_ranges(s, job.entries, job.nentries, n, err);
    if (rc) goto done;
    rc = build_index(s, dels, ndels, err);
    s->del_by_num = dels; /* (numbered as index_ranges numbers them: manifest, then entry) */
    dels = NULL;
done:
    free((void *)dels);
    free(job.entries);
    free(job.nentries);
    return rc;
}

int ice_scan_stream_open(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                         ice_scan_stream **out, icd_error *err)
{
    *out = NULL;
    ice_scan_stream *s = calloc(1, sizeof *s);
    if (!s) return icd_fail_nomem(err);
    s->io = io;
    s->md = md;
    s->threads = opts->threads > 1 ? opts->threads : 1;
    int rc = ice_metadata_select_snapshot(md, &opts->select, &s->snapshot, err);
    if (!rc) rc = ice_metadata_read_schema(md, &opts->select, s->snapshot, &s->schema, err);
    if (!rc && opts->filter && s->schema) { /* bind first: a bad filter fails even on empty
                                             * tables */
        ice_bound_expr *bound = NULL;
        rc = ice_expr_bind(opts->filter, s->schema, opts->case_sensitive, &s->arena, &bound, err);
        s->filter = bound;
    }
    s->keep_stats = opts->keep_stats || !filter_is_trivial(s);
    s->cache.off = s->keep_stats || opts->single_run; /* (column statistics are not recorded) */
    s->memo.off = opts->single_run;
    if (rc || !s->snapshot) { /* a table without snapshots has no rows */
        if (rc) ice_scan_stream_free(s);
        *out = rc ? NULL : s;
        return rc;
    }

    ice_manifest_file *mfs = NULL;
    size_t nmf = 0;
    rc = ice_manifest_list_read(io, md, s->snapshot, &s->arena, &mfs, &nmf, err);
    if (rc == ICD_ENOTFOUND) ice_metadata_hint_moved(md, err);
    if (rc) {
        ice_scan_stream_free(s);
        return rc;
    }
    s->mfs = mfs;
    s->base.manifests_total = nmf;

    /* Delete manifests whose sequence number is below every data manifest's smallest
     * data sequence number cannot hold a delete that applies (positions need
     * seq(data) <= seq(delete), equalities seq(data) < seq(delete)). */
    int64_t min_data_seq = INT64_MAX;
    for (size_t i = 0; i < nmf; i++)
        if (!mfs[i].is_delete_manifest && manifest_has_live_files(&mfs[i]) &&
            mfs[i].min_sequence_number < min_data_seq)
            min_data_seq = mfs[i].min_sequence_number;
    size_t *dwhich = malloc((nmf ? nmf : 1) * sizeof *dwhich);
    s->data_mfs = malloc((nmf ? nmf : 1) * sizeof *s->data_mfs);
    if (!dwhich || !s->data_mfs) {
        free(dwhich);
        ice_scan_stream_free(s);
        return icd_fail_nomem(err);
    }
    size_t ndwhich = 0;
    for (size_t i = 0; i < nmf; i++) {
        if (!manifest_has_live_files(&mfs[i])) continue;
        if (mfs[i].is_delete_manifest && mfs[i].sequence_number < min_data_seq &&
            min_data_seq != INT64_MAX)
            continue;
        bool may = true;
        rc = manifest_may_match(s, &mfs[i], &may, err);
        if (rc) break;
        if (!may) {
            s->base.manifests_pruned++;
            if (mfs[i].added_files > 0) s->pruned_files += (size_t)mfs[i].added_files;
            if (mfs[i].existing_files > 0) s->pruned_files += (size_t)mfs[i].existing_files;
            continue;
        }
        if (mfs[i].is_delete_manifest)
            dwhich[ndwhich++] = i;
        else
            s->data_mfs[s->ndata_mfs++] = i;
    }
    s->base.manifests_read = ndwhich + s->ndata_mfs;
    if (!rc) rc = read_deletes(s, dwhich, ndwhich, err);
    free(dwhich);
    if (rc) {
        ice_scan_stream_free(s);
        return rc;
    }
    if (s->ndels > UINT32_MAX) s->memo.off = true; /* (its numbers are 32 bits) */
    s->counts = s->base;
    *out = s;
    return 0;
}

/* ---- running: the data manifests, one window at a time ------------------------------- */

/* The distinct delete files some task uses, by kind: one flag per delete file of the
 * stream, found by the file's address (the (data, delete) pairs can be millions, the
 * delete files far fewer). */
#define USED_MEMO 65536 /* (a power of two; 1 MiB) */

typedef struct used_set {
    uint8_t *seen; /* s->ndels flags */
    const del_range *last;
    /* delete file address -> its flag, direct-mapped: a delete file applies to many tasks
     * (the binary search over the ranges is for the first time, mostly) */
    struct {
        uintptr_t a;
        size_t i;
    } * memo;
} used_set;

/* Marks delete file f used; *num: its number. */
static int note_used(ice_scan_stream *s, used_set *u, const ice_content_file *f, uint32_t *num,
                     icd_error *err)
{
    uintptr_t a = (uintptr_t)f;
    size_t m = (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 32) & (USED_MEMO - 1);
    size_t i;
    if (u->memo && u->memo[m].a == a) {
        i = u->memo[m].i; /* (an address the search below found) */
    } else {
        const del_range *r = u->last;
        if (!r || a < r->start || a >= r->end) {
            size_t lo = 0, hi = s->ndel_ranges;
            while (lo < hi) { /* the last range starting at or before a */
                size_t mid = lo + (hi - lo) / 2;
                if (s->del_ranges[mid].start <= a)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            r = lo ? &s->del_ranges[lo - 1] : NULL;
            if (!r || a >= r->end)
                return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                                "a task's delete file %s is not one the scan read", f->path);
            u->last = r;
        }
        i = r->base + (size_t)(a - r->start) / sizeof(ice_manifest_entry);
        if (u->memo) {
            u->memo[m].a = a;
            u->memo[m].i = i;
        }
    }
    *num = (uint32_t)i;
    if (u->seen[i]) return 0;
    u->seen[i] = 1;
    s->counts.delete_files++;
    if (ice_is_dv(f))
        s->counts.deletion_vectors++;
    else if (f->content == ICE_CONTENT_POSITION_DELETES)
        s->counts.position_delete_files++;
    else
        s->counts.equality_delete_files++;
    return 0;
}

/* Growable vectors of a run, reused from one manifest to the next. */
typedef struct run_bufs {
    ice_scan_task *tasks;
    size_t cap_tasks;
    const ice_content_file **dels;
    size_t ndels, cap_dels;
    ice_delete_memo *dmemo; /* the index's partition lookups (NULL: none) */
} run_bufs;

/* How a run with deletes gets each task's delete files (see dels_memo). */
typedef enum { DELS_LOOKUP, DELS_RECORD, DELS_REPLAY } dels_mode;

/* Task's delete files from the memo, appended to rb->dels. */
static int memo_replay(const ice_scan_stream *s, dels_memo *m, run_bufs *rb, icd_error *err)
{
    if (m->at_task >= m->ntasks)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                        "a run of the scan made more tasks than the first one (%zu)", m->ntasks);
    size_t n = m->n[m->at_task++];
    if (ICD_ARRAY_RESERVE(rb->dels, rb->cap_dels, rb->ndels + n, 64)) return icd_fail_nomem(err);
    for (size_t k = 0; k < n; k++) /* (numbers note_used gave: below s->ndels) */
        rb->dels[rb->ndels + k] = s->del_by_num[m->v[m->at_v + k]];
    rb->ndels += n;
    m->at_v += n;
    return 0;
}

/* One data manifest's entries -> its tasks in rb (pruned files are left out). */
static int manifest_tasks(ice_scan_stream *s, const ice_manifest_entry *entries, size_t n,
                          run_bufs *rb, used_set *u, bool deletes, dels_mode mode, size_t *ntasks,
                          icd_error *err)
{
    *ntasks = 0;
    if (n > rb->cap_tasks) {
        ice_scan_task *t = realloc(rb->tasks, n * sizeof *t);
        if (!t) return icd_fail_nomem(err);
        rb->tasks = t;
        rb->cap_tasks = n;
    }
    rb->ndels = 0;
    ice_delete_memo_clear(rb->dmemo); /* (another manifest's partition keys) */
    s->counts.data_files_total += n;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const ice_content_file *f = &entries[i].file;
        bool may = true;
        rc = file_may_match(s, f, &may, err);
        if (rc) break;
        if (!may) {
            s->counts.data_files_pruned++;
            continue;
        }
        /* the lists go back to back into one vector; the tasks point into it once it
         * stops moving */
        size_t before = rb->ndels;
        if (deletes && mode == DELS_REPLAY) {
            /* (the counts of the delete files used are the recording run's) */
            if ((rc = memo_replay(s, &s->memo, rb, err))) break;
        } else {
            if (deletes)
                rc = ice_delete_index_for_memo(s->ix, rb->dmemo, f, &rb->dels, &rb->ndels,
                                               &rb->cap_dels, err);
            if (rc) break;
            bool rec = mode == DELS_RECORD && memo_record(&s->memo, rb->ndels - before);
            if (rb->ndels > before) s->has_deletes = true;
            for (size_t k = before; k < rb->ndels && !rc; k++) {
                uint32_t num = 0;
                rc = note_used(s, u, rb->dels[k], &num, err);
                if (rec) s->memo.v[s->memo.nv++] = num;
            }
        }
        ice_scan_task *t = &rb->tasks[(*ntasks)++];
        *t = (ice_scan_task){f, NULL, rb->ndels - before, false};
        if (!rc) rc = set_residual(s, t, err);
    }
    if (rc) return rc;
    size_t off = 0;
    for (size_t i = 0; i < *ntasks; i++) {
        rb->tasks[i].deletes = rb->tasks[i].ndeletes ? rb->dels + off : NULL;
        off += rb->tasks[i].ndeletes;
    }
    return 0;
}

static int run(ice_scan_stream *s, bool deletes, ice_scan_consumer fn, void *ctx, icd_error *err)
{
    ice_scan_counts before = s->counts;
    s->counts = s->base;
    s->counts.data_files_total = s->pruned_files;
    if (!deletes) { /* (what only a run with the delete files knows) */
        s->counts.delete_files = before.delete_files;
        s->counts.position_delete_files = before.position_delete_files;
        s->counts.equality_delete_files = before.equality_delete_files;
        s->counts.deletion_vectors = before.deletion_vectors;
    }
    s->residual = false;
    if (deletes) s->has_deletes = false;
    if (!s->ndata_mfs) return 0;
    dels_memo *memo = &s->memo;
    dels_mode mode = DELS_LOOKUP;
    if (deletes && memo->complete) {
        mode = DELS_REPLAY;
        memo->at_task = memo->at_v = 0;
    } else if (deletes && !memo->off) {
        mode = DELS_RECORD;
        memo_clear(memo);
    }
    /* the data manifests' entries: read and recorded, or rebuilt from the record */
    ice_entry_cache *cache = &s->cache;
    bool replay = cache->complete, record = !replay && !cache->off;
    if (record) ice_entry_cache_clear(cache);
    /* a window of `threads` manifests read in parallel, then handed on in order */
    size_t window = (size_t)s->threads;
    if (window > s->ndata_mfs) window = s->ndata_mfs;
    read_job job = {s->io, s->md,        s->snapshot->manifest_list, s->mfs, NULL, NULL, NULL,
                    NULL,  s->keep_stats};
    job.arenas = calloc(window, sizeof *job.arenas);
    job.entries = calloc(window, sizeof *job.entries);
    job.nentries = calloc(window, sizeof *job.nentries);
    used_set u;
    memset(&u, 0, sizeof u);
    run_bufs rb = {NULL, 0, NULL, 0, 0, NULL};
    int rc = 0;
    if (!job.arenas || !job.entries || !job.nentries)
        rc = icd_fail_nomem(err);
    else if (!(u.seen = calloc(s->ndels ? s->ndels : 1, 1)))
        rc = icd_fail_nomem(err);
    if (!rc && deletes && s->ndels) u.memo = calloc(USED_MEMO, sizeof *u.memo); /* (optional) */
    if (!rc && deletes && mode != DELS_REPLAY && s->ix)
        rb.dmemo = ice_delete_memo_new(); /* (too) */
    size_t first = 0;
    for (size_t w = 0; w < s->ndata_mfs && !rc; w += window) {
        size_t m = s->ndata_mfs - w < window ? s->ndata_mfs - w : window;
        job.which = s->data_mfs + w;
        if (replay) {
            for (size_t k = 0; k < m && !rc; k++) {
                job.arenas[k].large_own_chunks = true;
                rc = ice_entry_cache_replay(cache, w + k, &s->mfs[job.which[k]], &job.arenas[k],
                                            &job.entries[k], &job.nentries[k], err);
            }
        } else {
            rc = icd_parallel_for(m, s->threads, read_one, &job, err);
        }
        for (size_t k = 0; k < m && !rc && record; k++)
            ice_entry_cache_record(cache, &s->mfs[job.which[k]], job.entries[k], job.nentries[k]);
        for (size_t k = 0; k < m && !rc; k++) {
            size_t nt = 0;
            rc = manifest_tasks(s, job.entries[k], job.nentries[k], &rb, &u, deletes, mode, &nt,
                                err);
            if (rc) break;
            ice_scan_batch b = {rb.tasks, nt, first, &job.arenas[k]};
            rc = fn(ctx, &b, err);
            first += nt;
            icd_arena_free(&job.arenas[k]);
        }
        for (size_t k = 0; k < m; k++) /* (after a failure) */
            icd_arena_free(&job.arenas[k]);
    }
    s->counts.data_files = first;
    if (record && !rc && !cache->off)
        cache->complete = true;
    else if (record)
        ice_entry_cache_clear(cache);
    if (mode == DELS_RECORD && !rc && !memo->off) {
        memo->complete = true;
        memo->delete_files = s->counts.delete_files;
        memo->position_delete_files = s->counts.position_delete_files;
        memo->equality_delete_files = s->counts.equality_delete_files;
        memo->deletion_vectors = s->counts.deletion_vectors;
        memo->has_deletes = s->has_deletes;
    } else if (mode == DELS_RECORD) {
        memo_clear(memo);
    } else if (mode == DELS_REPLAY && !rc) {
        if (memo->at_task != memo->ntasks)
            rc = icd_fail(err, ICD_EINTERNAL, NULL, -1,
                          "a run of the scan made %zu tasks, the first one %zu", memo->at_task,
                          memo->ntasks);
        s->counts.delete_files = memo->delete_files;
        s->counts.position_delete_files = memo->position_delete_files;
        s->counts.equality_delete_files = memo->equality_delete_files;
        s->counts.deletion_vectors = memo->deletion_vectors;
        s->has_deletes = memo->has_deletes;
    }
    free(rb.tasks);
    free((void *)rb.dels);
    ice_delete_memo_free(rb.dmemo);
    free(u.seen);
    free(u.memo);
    free(job.arenas);
    free(job.entries);
    free(job.nentries);
    return rc;
}

int ice_scan_stream_run(ice_scan_stream *s, ice_scan_consumer fn, void *ctx, icd_error *err)
{
    return run(s, true, fn, ctx, err);
}

int ice_scan_stream_run_data(ice_scan_stream *s, ice_scan_consumer fn, void *ctx, icd_error *err)
{
    return run(s, false, fn, ctx, err);
}

const ice_snapshot *ice_scan_stream_snapshot(const ice_scan_stream *s)
{
    return s->snapshot;
}
const ice_schema *ice_scan_stream_schema(const ice_scan_stream *s)
{
    return s->schema;
}
const ice_bound_expr *ice_scan_stream_filter(const ice_scan_stream *s)
{
    return s->filter;
}
ice_scan_counts ice_scan_stream_counts(const ice_scan_stream *s)
{
    return s->counts;
}
bool ice_scan_stream_has_residual(const ice_scan_stream *s, const char **text)
{
    if (text) *text = s->residual ? s->residual_text : NULL;
    return s->residual;
}
bool ice_scan_stream_has_deletes(const ice_scan_stream *s)
{
    return s->has_deletes;
}

/* ---- the materialized plan: the stream collected -------------------------------------- */

void ice_scan_plan_free(ice_scan_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nmanifest_arenas; i++)
        icd_arena_free(&p->manifest_arenas[i]);
    free(p->manifest_arenas);
    free(p->tasks);
    free((void *)p->task_deletes);
    ice_scan_stream_free(p->s);
    free(p);
}

/* Grows *v (elements of `size` bytes) to hold `need`, by half again. */
static int grow(void **v, size_t *cap, size_t need, size_t size, icd_error *err)
{
    if (need <= *cap) return 0;
    size_t nc = *cap + *cap / 2;
    if (nc < need) nc = need;
    if (nc < 16) nc = 16;
    void *nv = realloc(*v, nc * size);
    if (!nv) return icd_fail_nomem(err);
    *v = nv;
    *cap = nc;
    return 0;
}

static int collect(void *ctx, ice_scan_batch *b, icd_error *err)
{
    ice_scan_plan *p = ctx;
    size_t nd = 0;
    for (size_t i = 0; i < b->ntasks; i++)
        nd += b->tasks[i].ndeletes;
    ICD_TRY(grow((void **)&p->tasks, &p->cap_tasks, p->ntasks + b->ntasks, sizeof *p->tasks, err));
    ICD_TRY(grow((void **)&p->task_deletes, &p->cap_deletes, p->ndeletes + nd,
                 sizeof *p->task_deletes, err));
    ICD_TRY(grow((void **)&p->manifest_arenas, &p->cap_arenas, p->nmanifest_arenas + 1,
                 sizeof *p->manifest_arenas, err));
    for (size_t i = 0; i < b->ntasks; i++) {
        const ice_scan_task *t = &b->tasks[i];
        if (t->ndeletes)
            memcpy((void *)(p->task_deletes + p->ndeletes), (const void *)t->deletes,
                   t->ndeletes * sizeof *t->deletes);
        p->tasks[p->ntasks] = *t;
        p->tasks[p->ntasks++].deletes = NULL; /* set once task_deletes stops moving */
        p->ndeletes += t->ndeletes;
    }
    p->manifest_arenas[p->nmanifest_arenas++] = *b->arena; /* the data files stay */
    *b->arena = (icd_arena)ICD_ARENA_INIT;
    return 0;
}

int ice_scan_plan_build(icd_fileio *io, const ice_metadata *md, const ice_scan_opts *opts,
                        ice_scan_plan **out, icd_error *err)
{
    *out = NULL;
    ice_scan_plan *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    int rc = ice_scan_stream_open(io, md, opts, &p->s, err);
    /* the manifest list's file counts size the task vector (a grown one would need half
     * as much again while it is copied); too many when files are pruned: trimmed below */
    size_t hint = 0;
    for (size_t i = 0; !rc && i < p->s->ndata_mfs; i++) {
        const ice_manifest_file *mf = &p->s->mfs[p->s->data_mfs[i]];
        if (mf->added_files > 0) hint += (size_t)mf->added_files;
        if (mf->existing_files > 0) hint += (size_t)mf->existing_files;
    }
    if (hint && (p->tasks = malloc(hint * sizeof *p->tasks))) p->cap_tasks = hint;
    if (!rc) p->s->memo.off = true; /* (one run: the plan keeps the lists itself) */
    if (!rc) p->s->cache.off = true;
    if (!rc) rc = ice_scan_stream_run(p->s, collect, p, err);
    if (rc) {
        ice_scan_plan_free(p);
        return rc;
    }
    /* exact sizes: a million tasks hold millions of pairs */
    if (p->ndeletes && p->ndeletes < p->cap_deletes) {
        const ice_content_file **exact =
            realloc((void *)p->task_deletes, p->ndeletes * sizeof *exact);
        if (exact) p->task_deletes = exact;
    }
    if (p->ntasks && p->ntasks < p->cap_tasks) {
        ice_scan_task *exact = realloc(p->tasks, p->ntasks * sizeof *exact);
        if (exact) p->tasks = exact;
    }
    size_t off = 0;
    for (size_t i = 0; i < p->ntasks; i++) {
        p->tasks[i].deletes = p->tasks[i].ndeletes ? p->task_deletes + off : NULL;
        off += p->tasks[i].ndeletes;
    }
    /* the index is only needed while tasks are made */
    ice_delete_index_free(p->s->ix);
    p->s->ix = NULL;
    *out = p;
    return 0;
}

const ice_snapshot *ice_scan_plan_snapshot(const ice_scan_plan *p)
{
    return p->s->snapshot;
}
const ice_schema *ice_scan_plan_schema(const ice_scan_plan *p)
{
    return p->s->schema;
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
    return p->s->counts;
}
void ice_scan_plan_prefetch(const ice_scan_plan *p, size_t i)
{
    ice_scan_tasks_prefetch(p->tasks, p->ntasks, i);
}

bool ice_scan_plan_has_deletes(const ice_scan_plan *p)
{
    return p->s->has_deletes;
}

bool ice_scan_plan_has_residual(const ice_scan_plan *p, const char **text)
{
    return ice_scan_stream_has_residual(p->s, text);
}

const ice_bound_expr *ice_scan_plan_filter(const ice_scan_plan *p)
{
    return p->s->filter;
}
