/*
 * The scan-wide delete cache and the loading rules shared by every format (see
 * delete_cache.h).
 */
#include "iceberg/deletes/delete_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/eq_key.h"

struct ice_delete_cache {
    pthread_mutex_t lock;  /* guards the map and entries' `loading`, never held while a
                            * delete file is read */
    pthread_cond_t loaded; /* broadcast when an entry finished loading */
    icd_map *cache;        /* key -> cache_entry* */
    cache_entry **entries;
    size_t nentries, cap;
};

int ice_delete_cache_new(ice_delete_cache **out, icd_error *err)
{
    *out = NULL;
    ice_delete_cache *c = calloc(1, sizeof *c);
    if (!c) return icd_fail_nomem(err);
    int rc = icd_map_new(&c->cache, 64, err);
    if (rc) {
        free(c);
        return rc;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->loaded, NULL);
    *out = c;
    return 0;
}

void ice_delete_cache_free(ice_delete_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->nentries; i++)
        ice_delete_entry_free(c->entries[i]);
    free(c->entries);
    icd_map_free(c->cache);
    pthread_cond_destroy(&c->loaded);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void ice_delete_entry_free(cache_entry *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->nposset; i++)
        ice_posset_free(e->possets[i]);
    free(e->possets);
    free(e->path_off);
    icd_buf_free(&e->paths);
    ice_eq_set_free(e->keys);
    ice_posset_free(e->dv);
    free(e->err);
    free(e);
}

/* Unsigned byte order, a prefix first (Iceberg's order of strings and binary; truncated
 * bounds keep lower <= value <= upper). */
static int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

const ice_posset *ice_delete_entry_positions(const cache_entry *e, const char *path, size_t len)
{
    size_t klen;
    const char *key = ice_location_key(path, len, &klen);
    size_t lo = 0, hi = e->nposset;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t o = e->path_off[mid];
        int c = bytes_cmp(e->paths.data + o, e->path_off[mid + 1] - o, key, klen);
        if (c == 0) return e->possets[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t ice_delete_entry_memory(const cache_entry *e)
{
    return sizeof *e + e->posset_cap * sizeof *e->possets + e->path_off_cap * sizeof *e->path_off +
           e->paths.cap;
}

int ice_delete_check_entry(const ice_content_file *df, uint64_t size, int64_t rows, bool size_warns,
                           icd_error *err)
{
    if (size > 0 && df->file_size > 0 && size != (uint64_t)df->file_size) {
        if (!size_warns)
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "the file has %llu bytes but its manifest entry says %lld "
                            "(truncated or replaced; ICEDRUID_SIZE_MISMATCH=warn reads it "
                            "if its record count and bounds agree)",
                            (unsigned long long)size, (long long)df->file_size);
        icd_warn(df->path,
                 "the file has %llu bytes but its manifest entry says %lld (read anyway: "
                 "ICEDRUID_SIZE_MISMATCH=warn)",
                 (unsigned long long)size, (long long)df->file_size);
    }
    if (rows >= 0 && df->record_count >= 0 && rows != df->record_count)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "the file has %lld %s but its manifest entry says %lld", (long long)rows,
                        df->content == ICE_CONTENT_DATA ? "rows" : "records",
                        (long long)df->record_count);
    return 0;
}

int ice_delete_open_entry(icd_fileio *io, const ice_content_file *df, icd_file **out,
                          icd_error *err)
{
    icd_file *f;
    ICD_TRY(icd_file_open(io, df->path, &f, err));
    /* Sizes of delete files are checked (a smaller valid file in the place of a delete
     * file brings deleted rows back); data files only by their row count: a data file
     * whose size differs cannot return a deleted row, and tables exist whose manifests
     * disagree with their data files by a few bytes (Impala's test data). */
    int rc = df->content == ICE_CONTENT_DATA
                 ? 0
                 : ice_delete_check_entry(df, icd_file_size(f), -1,
                                          icd_fileio_size_mismatch_warns(io), err);
    if (rc) {
        icd_file_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

static bool bound_i64(const uint8_t *p, uint32_t n, int64_t *out)
{
    if (n == 8) {
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--)
            u = u << 8 | p[i];
        *out = (int64_t)u;
        return true;
    }
    if (n == 4) {
        uint32_t u =
            (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        *out = (int32_t)u;
        return true;
    }
    return false;
}

int ice_rd_posload_init(ice_rd_posload *pl, cache_entry *e, const ice_content_file *df,
                        icd_error *err)
{
    memset(pl, 0, sizeof *pl);
    pl->e = e;
    pl->df = df;
    pl->path = (icd_buf)ICD_BUF_INIT;
    const ice_col_stats *ps = ice_content_file_stats(df, ICE_FIELD_DELETE_FILE_PATH);
    const ice_col_stats *qs = ice_content_file_stats(df, ICE_FIELD_DELETE_POS);
    if (ps && ps->has_lower)
        pl->path_lo = ice_location_key((const char *)ps->lower, ps->lower_len, &pl->path_lo_len);
    if (ps && ps->has_upper)
        pl->path_hi = ice_location_key((const char *)ps->upper, ps->upper_len, &pl->path_hi_len);
    pl->has_pos_lo = qs && qs->has_lower && bound_i64(qs->lower, qs->lower_len, &pl->pos_lo);
    pl->has_pos_hi = qs && qs->has_upper && bound_i64(qs->upper, qs->upper_len, &pl->pos_hi);
    return 0;
}

static int posload_flush(ice_rd_posload *pl, icd_error *err)
{
    int rc = pl->cur && pl->nrun ? ice_posset_add_many(pl->cur, pl->run, pl->nrun, err) : 0;
    pl->nrun = 0;
    return rc;
}

/* Appends a run to a C_POS entry: data file location key `key`, its position set ps. */
static int append_run(cache_entry *e, const char *key, size_t klen, ice_posset *ps, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(e->possets, e->posset_cap, e->nposset + 1, 1) ||
        ICD_ARRAY_RESERVE(e->path_off, e->path_off_cap, e->nposset + 2, 2))
        return icd_fail_nomem(err);
    if (e->nposset == 0) e->path_off[0] = 0;
    icd_buf_append(&e->paths, key, klen);
    if (!icd_buf_ok(&e->paths)) return icd_fail_nomem(err);
    e->possets[e->nposset++] = ps;
    e->path_off[e->nposset] = e->paths.len;
    return 0;
}

/* The location key of run i of a C_POS entry. */
static const char *run_key(const cache_entry *e, size_t i, size_t *len)
{
    *len = e->path_off[i + 1] - e->path_off[i];
    return e->paths.data + e->path_off[i];
}

/* The position set of data file `path`, created on first use. Records come sorted by
 * location key (ice_rd_posload_add checks it), so a path is either the last one added or
 * a new last one: the entry's arrays stay sorted without a map. */
static int posset_for(cache_entry *e, const char *path, size_t len, ice_posset **out,
                      icd_error *err)
{
    size_t klen, n;
    const char *key = ice_location_key(path, len, &klen);
    if (e->nposset) {
        const char *last = run_key(e, e->nposset - 1, &n);
        if (n == klen && !memcmp(last, key, klen)) {
            *out = e->possets[e->nposset - 1];
            return 0;
        }
    }
    ice_posset *ps;
    ICD_TRY(ice_posset_new(&ps, err));
    int rc = append_run(e, key, klen, ps, err);
    if (rc) {
        ice_posset_free(ps);
        return rc;
    }
    *out = ps;
    return 0;
}

int ice_rd_posload_add(ice_rd_posload *pl, const void *path, size_t len, int64_t pos, int64_t row,
                       icd_error *err)
{
    const ice_content_file *df = pl->df;
    pl->records++;
    if (pos < 0)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1, "negative position %lld in row %lld",
                        (long long)pos, (long long)row);
    /* Records of one data file come in a run: the path of the run's first record was
     * checked against the bounds and the order, so the others only compare equal to it. */
    bool same = pl->cur && len == pl->path.len && !memcmp(path, pl->path.data, len);
    size_t klen = 0;
    const char *k = NULL;
    if (!same) {
        /* Compared as location keys: writers differ in whether file_path values and their
         * bounds carry the scheme and authority (Impala: values with, bounds without). */
        k = ice_location_key(path, len, &klen);
        if ((pl->path_lo && bytes_cmp(k, klen, pl->path_lo, pl->path_lo_len) < 0) ||
            (pl->path_hi && bytes_cmp(k, klen, pl->path_hi, pl->path_hi_len) > 0))
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "row %lld: file_path '%.*s' is outside the bounds its manifest entry "
                            "records",
                            (long long)row, (int)(len > 200 ? 200 : len), (const char *)path);
    }
    if ((pl->has_pos_lo && pos < pl->pos_lo) || (pl->has_pos_hi && pos > pl->pos_hi))
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "row %lld: position %lld is outside the bounds its manifest entry "
                        "records",
                        (long long)row, (long long)pos);
    if (same) {
        if (pos < pl->last_pos)
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "row %lld: positions are not sorted (%lld after %lld; the spec "
                            "requires order by file_path, pos)",
                            (long long)row, (long long)pos, (long long)pl->last_pos);
    } else {
        size_t plen;
        const char *pk = pl->cur ? ice_location_key(pl->path.data, pl->path.len, &plen) : NULL;
        if (pk && bytes_cmp(k, klen, pk, plen) < 0)
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "row %lld: file_path values are not sorted (the spec requires "
                            "order by file_path, pos)",
                            (long long)row);
        ICD_TRY(posload_flush(pl, err));
        ICD_TRY(posset_for(pl->e, path, len, &pl->cur, err));
        icd_buf_clear(&pl->path);
        icd_buf_append(&pl->path, path, len);
        if (!icd_buf_ok(&pl->path)) return icd_fail_nomem(err);
    }
    if (ICD_ARRAY_RESERVE(pl->run, pl->runcap, pl->nrun + 1, 64)) return icd_fail_nomem(err);
    pl->run[pl->nrun++] = (uint64_t)pos;
    pl->last_pos = pos;
    return 0;
}

void ice_rd_posload_null_path(ice_rd_posload *pl)
{
    pl->records++;
    pl->null_paths++;
}

int ice_rd_posload_flush(ice_rd_posload *pl, icd_error *err)
{
    return posload_flush(pl, err);
}

int ice_rd_posload_join(cache_entry *e, int64_t last_pos, cache_entry *from, int64_t first_pos,
                        int64_t first_row, const ice_content_file *df, icd_error *err)
{
    if (e->nposset && from->nposset) {
        size_t klen, llen;
        const char *k = run_key(from, 0, &klen), *last = run_key(e, e->nposset - 1, &llen);
        int c = bytes_cmp(k, klen, last, llen);
        if (c < 0)
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "row %lld: file_path values are not sorted (the spec requires "
                            "order by file_path, pos)",
                            (long long)first_row);
        if (c == 0 && first_pos < last_pos)
            return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                            "row %lld: positions are not sorted (%lld after %lld; the spec "
                            "requires order by file_path, pos)",
                            (long long)first_row, (long long)first_pos, (long long)last_pos);
    }
    for (size_t i = 0; i < from->nposset; i++) {
        size_t klen, llen;
        const char *k = run_key(from, i, &klen);
        const char *last = e->nposset ? run_key(e, e->nposset - 1, &llen) : NULL;
        if (last && llen == klen && !memcmp(last, k, klen)) { /* a data file across units */
            ICD_TRY(ice_posset_union(e->possets[e->nposset - 1], from->possets[i], err));
            continue;
        }
        ICD_TRY(append_run(e, k, klen, from->possets[i], err));
        from->possets[i] = NULL; /* moved */
    }
    return 0;
}

int ice_rd_posload_finish(ice_rd_posload *pl, icd_error *err)
{
    ICD_TRY(posload_flush(pl, err));
    ICD_TRY(ice_delete_check_entry(pl->df, 0, pl->records, false, err));
    ICD_TRY(ice_rd_check_nulls(pl->df, ICE_FIELD_DELETE_FILE_PATH, pl->null_paths, err));
    for (size_t i = 0; i < pl->e->nposset; i++)
        ICD_TRY(ice_posset_freeze(pl->e->possets[i], err));
    if (pl->null_paths)
        icd_warn(pl->df->path,
                 "%lld of %lld position delete records have a null file_path and delete "
                 "nothing (skipped)",
                 (long long)pl->null_paths, (long long)pl->records);
    return 0;
}

void ice_rd_posload_free(ice_rd_posload *pl)
{
    icd_buf_free(&pl->path);
    free(pl->run);
    pl->run = NULL;
}

int ice_rd_eqload_init(ice_rd_eqload *el, ice_eq_set *set, const ice_content_file *df,
                       icd_error *err)
{
    memset(el, 0, sizeof *el);
    el->set = set;
    el->df = df;
    el->key = (icd_buf)ICD_BUF_INIT;
    el->nk = df->nequality_ids > 0 ? (size_t)df->nequality_ids : 0;
    el->nulls = calloc(el->nk ? el->nk : 1, sizeof *el->nulls);
    el->st = calloc(el->nk ? el->nk : 1, sizeof *el->st);
    if (!el->nulls || !el->st) return icd_fail_nomem(err);
    for (size_t k = 0; k < el->nk; k++)
        el->st[k] = ice_content_file_stats(df, df->equality_ids[k]);
    return 0;
}

static int check_bounds(const ice_content_file *df, int32_t field_id, const ice_col_stats *st,
                        const ice_tvalue *v, int64_t row, icd_error *err);

int ice_rd_eqload_batch(ice_rd_eqload *el, const ice_vbatch *b, icd_error *err)
{
    icd_buf *key = &el->key;
    for (size_t i = 0; i < b->nrows; i++) {
        key->len = 0;
        for (size_t k = 0; k < el->nk; k++) {
            const ice_tvalue *v = &b->cols[k].v[i];
            if (v->cls == ICE_TV_NULL)
                el->nulls[k]++;
            else if (el->st[k])
                ICD_TRY(check_bounds(el->df, el->df->equality_ids[k], el->st[k], v,
                                     b->first_row + (int64_t)i, err));
            ice_key_put(key, v);
        }
        if (!icd_buf_ok(key)) return icd_fail_nomem(err);
        ICD_TRY(ice_eq_set_add(el->set, key->data, key->len, err));
        el->records++;
    }
    return 0;
}

int ice_rd_eqload_check(const ice_content_file *df, int64_t records, const int64_t *nulls,
                        icd_error *err)
{
    ICD_TRY(ice_delete_check_entry(df, 0, records, false, err));
    for (int32_t k = 0; k < df->nequality_ids; k++)
        ICD_TRY(ice_rd_check_nulls(df, df->equality_ids[k], nulls[k], err));
    return 0;
}

void ice_rd_eqload_free(ice_rd_eqload *el)
{
    free(el->nulls);
    free((void *)el->st);
    el->nulls = NULL;
    el->st = NULL;
    icd_buf_free(&el->key);
}

int ice_rd_check_nulls(const ice_content_file *df, int32_t field_id, int64_t nulls, icd_error *err)
{
    const ice_col_stats *st = ice_content_file_stats(df, field_id);
    if (st && st->null_count >= 0 && st->null_count != nulls)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "the file has %lld null values in field id %d but its manifest entry says "
                        "%lld",
                        (long long)nulls, (int)field_id, (long long)st->null_count);
    return 0;
}

int ice_rd_check_key_bounds(const ice_content_file *df, size_t k, const ice_tvalue *v, int64_t row,
                            int64_t *nulls, icd_error *err)
{
    const ice_col_stats *st;
    int32_t field_id = df->equality_ids[k];
    if (v->cls == ICE_TV_NULL) nulls[k]++;
    if (v->cls == ICE_TV_NULL || !(st = ice_content_file_stats(df, field_id))) return 0;
    return check_bounds(df, field_id, st, v, row, err);
}

/* A non-null key value against its column's metrics `st`. */
static int check_bounds(const ice_content_file *df, int32_t field_id, const ice_col_stats *st,
                        const ice_tvalue *v, int64_t row, icd_error *err)
{
    bool below = false, above = false;
    int64_t b;
    switch (v->cls) {
    case ICE_TV_INT:
    case ICE_TV_DATE:
        below = st->has_lower && bound_i64(st->lower, st->lower_len, &b) && v->i < b;
        above = st->has_upper && bound_i64(st->upper, st->upper_len, &b) && v->i > b;
        break;
    case ICE_TV_STRING:
    case ICE_TV_BINARY:
        below = st->has_lower && bytes_cmp(v->p, v->n, st->lower, st->lower_len) < 0;
        above = st->has_upper && bytes_cmp(v->p, v->n, st->upper, st->upper_len) > 0;
        break;
    default:
        return 0;
    }
    if (below || above)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "equality delete row %lld: the value of field id %d is %s the %s bound "
                        "its manifest entry records",
                        (long long)row, (int)field_id, below ? "below" : "above",
                        below ? "lower" : "upper");
    return 0;
}

/* A deletion vector is read at its offset without the Puffin footer, so a Puffin file cut
 * after the blob would go unnoticed: its size must be the one the manifest recorded. */
int ice_delete_read_dv(icd_fileio *io, const ice_content_file *df, cache_entry *e, icd_error *err)
{
    icd_file *f;
    ICD_TRY(icd_file_open(io, df->path, &f, err));
    int rc =
        ice_delete_check_entry(df, icd_file_size(f), -1, icd_fileio_size_mismatch_warns(io), err);
    if (!rc)
        rc = ice_dv_read_at(f, df->content_offset, df->content_size, df->referenced_data_file,
                            df->record_count, &e->dv, err);
    icd_file_close(f);
    return rc;
}

void ice_delete_job_share(cache_entry *e, ice_load_job *j)
{
    pthread_mutex_lock(&e->cache->lock);
    j->active = 0;
    j->closed = false;
    e->job = j;
    pthread_cond_broadcast(&e->cache->loaded);
    pthread_mutex_unlock(&e->cache->lock);
}

void ice_delete_job_close(cache_entry *e)
{
    ice_delete_cache *r = e->cache;
    pthread_mutex_lock(&r->lock);
    if (e->job) {
        e->job->closed = true;
        while (e->job->active)
            pthread_cond_wait(&r->loaded, &r->lock);
        e->job = NULL;
    }
    pthread_mutex_unlock(&r->lock);
}

/* The loaded form of a delete file, loading it on first use. Each file is read exactly
 * once even when tasks race for it: the first task inserts an entry marked `loading` and
 * reads the file without holding the scan-wide lock, so a slow delete file delays only
 * the tasks that need that same file (they wait on `loaded`), never unrelated tasks. */
int ice_delete_cache_get(ice_delete_cache *r, const ice_content_file *df, ice_delete_loader load,
                         void *ctx, const cache_entry **out, bool *loaded, icd_error *err)
{
    char keybuf[64];
    icd_buf key = ICD_BUF_INIT;
    icd_buf_puts(&key, df->path);
    icd_buf_putc(&key, '\0');
    snprintf(keybuf, sizeof keybuf, "%lld", (long long)df->content_offset);
    icd_buf_puts(&key, keybuf);
    if (!icd_buf_ok(&key)) return icd_fail_nomem(err);
    uint64_t h = icd_hash_bytes(key.data, key.len);
    pthread_mutex_lock(&r->lock);
    uint64_t *slot = icd_map_find(r->cache, key.data, key.len, h);
    int rc = 0;
    cache_entry *e;
    if (slot) {
        e = icd_map_to_ptr(*slot);
        while (e->loading) {
            ice_load_job *j = e->job;
            if (j && !j->closed && atomic_load(&j->next) < j->nunits) {
                j->active++; /* the loader shares the file's units: read some of them */
                pthread_mutex_unlock(&r->lock);
                j->help(j);
                pthread_mutex_lock(&r->lock);
                j->active--;
                pthread_cond_broadcast(&r->loaded);
                continue;
            }
            if (e->building) { /* an equality index being built: help instead of waiting */
                e->helpers++;
                pthread_mutex_unlock(&r->lock);
                ice_eq_set_help(e->keys);
                pthread_mutex_lock(&r->lock);
                e->helpers--;
                pthread_cond_broadcast(&r->loaded);
                while (e->loading && e->building) /* the rest is others' partitions */
                    pthread_cond_wait(&r->loaded, &r->lock);
                continue;
            }
            pthread_cond_wait(&r->loaded, &r->lock);
        }
    } else {
        e = calloc(1, sizeof *e);
        if (!e) {
            rc = icd_fail_nomem(err);
            goto out;
        }
        if (ICD_ARRAY_RESERVE(r->entries, r->cap, r->nentries + 1, 16)) {
            free(e);
            rc = icd_fail_nomem(err);
            goto out;
        }
        if ((rc = icd_map_put(r->cache, key.data, key.len, h, icd_map_from_ptr(e), err))) {
            free(e);
            goto out;
        }
        r->entries[r->nentries++] = e;
        e->loading = true;
        e->cache = r;
        pthread_mutex_unlock(&r->lock);
        icd_error lerr;
        icd_error_clear(&lerr);
        int lrc = load(ctx, df, e, &lerr);
        if (!lrc && e->kind == C_EQ && e->keys) {
            /* the tasks waiting for this file build the index's partitions with us */
            ice_eq_set_seal(e->keys);
            pthread_mutex_lock(&r->lock);
            e->building = true;
            pthread_cond_broadcast(&r->loaded);
            pthread_mutex_unlock(&r->lock);
            ice_eq_set_build(e->keys, &lerr); /* its result: ice_eq_set_finish's below */
            pthread_mutex_lock(&r->lock);
            e->building = false;
            while (e->helpers)
                pthread_cond_wait(&r->loaded, &r->lock);
            pthread_mutex_unlock(&r->lock);
            lrc = ice_eq_set_finish(e->keys, &lerr);
        }
        if (lrc) icd_error_set_file(&lerr, df->path);
        pthread_mutex_lock(&r->lock);
        e->rc = lrc;
        if (lrc) e->err = malloc(sizeof *e->err); /* only failed entries keep an error */
        if (e->err) *e->err = lerr;
        e->loading = false;
        pthread_cond_broadcast(&r->loaded);
        *loaded = true;
    }
    if (e->rc) {
        rc = e->rc;
        if (e->err)
            *err = *e->err;
        else
            icd_fail_nomem(err);
    }
    *out = e;
out:
    pthread_mutex_unlock(&r->lock);
    icd_buf_free(&key);
    return rc;
}
