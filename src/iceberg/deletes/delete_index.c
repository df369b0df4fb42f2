/*
 * Delete-file index (see delete_index.h for the rules). Each kind of delete lives in its
 * own array sorted by (key, data sequence number); a data file's lookup is a binary search
 * to the first entry with its key and a high enough sequence number, then a scan while the
 * key matches:
 *
 *   dvs        key = referenced data file path          (unique per path)
 *   path_pos   key = targeted path (file-scoped position deletes)
 *   part_pos   key = (spec id, partition tuple)         (partition-scoped position deletes)
 *   part_eq    key = (spec id, partition tuple)
 *   global_eq  no key (unpartitioned spec)
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/deletes/delete_index.h"

typedef struct entry {
    const ice_content_file *f;
    const char *path; /* path key (dvs, path_pos) */
    size_t path_len;
} entry;

typedef struct list {
    entry *v;
    size_t n, cap;
} list;

struct ice_delete_index {
    list dvs, path_pos, part_pos, part_eq, global_eq;
};

const char *ice_position_delete_target(const ice_content_file *f, size_t *len)
{
    if (f->referenced_data_file)
        return ice_location_key(f->referenced_data_file, strlen(f->referenced_data_file), len);
    const ice_col_stats *s = ice_content_file_stats(f, ICE_FIELD_DELETE_FILE_PATH);
    if (s && s->has_lower && s->has_upper && s->lower_len == s->upper_len &&
        memcmp(s->lower, s->upper, s->lower_len) == 0) {
        return ice_location_key((const char *)s->lower, s->lower_len, len);
    }
    *len = 0;
    return NULL;
}

static int push(list *l, const ice_content_file *f, const char *path, size_t path_len,
                icd_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (entry){f, path, path_len};
    return 0;
}

static int cmp_bytes(const void *a, size_t an, const void *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

static int cmp_seq(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_path_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    int c = cmp_bytes(a->path, a->path_len, b->path, b->path_len);
    return c ? c : cmp_seq(a->f->data_seq, b->f->data_seq);
}

static int cmp_partition(const ice_content_file *a, const ice_content_file *b)
{
    if (a->spec_id != b->spec_id) return a->spec_id < b->spec_id ? -1 : 1;
    return cmp_bytes(a->partition_key, a->partition_key_len, b->partition_key,
                     b->partition_key_len);
}

static int cmp_part_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    int c = cmp_partition(a->f, b->f);
    return c ? c : cmp_seq(a->f->data_seq, b->f->data_seq);
}

static int cmp_seq_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    return cmp_seq(a->f->data_seq, b->f->data_seq);
}

static const ice_spec_info *find_spec(const ice_spec_info *specs, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (specs[i].spec_id == id) return &specs[i];
    return NULL;
}

void ice_delete_index_free(ice_delete_index *ix)
{
    if (!ix) return;
    free(ix->dvs.v);
    free(ix->path_pos.v);
    free(ix->part_pos.v);
    free(ix->part_eq.v);
    free(ix->global_eq.v);
    free(ix);
}

static int add_delete(ice_delete_index *ix, const ice_content_file *f, const ice_spec_info *specs,
                      size_t nspecs, icd_error *err)
{
    if (f->content == ICE_CONTENT_POSITION_DELETES) {
        if (ice_is_dv(f)) {
            if (!f->referenced_data_file)
                return icd_fail(err, ICD_ECORRUPT, f->manifest_path, -1,
                                "deletion vector %s has no referenced_data_file", f->path);
            size_t klen;
            const char *k =
                ice_location_key(f->referenced_data_file, strlen(f->referenced_data_file), &klen);
            return push(&ix->dvs, f, k, klen, err);
        }
        size_t len;
        const char *target = ice_position_delete_target(f, &len);
        if (target) return push(&ix->path_pos, f, target, len, err);
        return push(&ix->part_pos, f, NULL, 0, err);
    }
    if (f->content != ICE_CONTENT_EQUALITY_DELETES)
        return icd_fail(err, ICD_EINTERNAL, f->manifest_path, -1, "%s is not a delete file",
                        f->path);
    const ice_spec_info *spec = find_spec(specs, nspecs, f->spec_id);
    if (!spec)
        return icd_fail(err, ICD_ECORRUPT, f->manifest_path, -1,
                        "equality delete file %s uses partition spec id %d, which the table "
                        "metadata does not define",
                        f->path, (int)f->spec_id);
    return push(spec->unpartitioned ? &ix->global_eq : &ix->part_eq, f, NULL, 0, err);
}

int ice_delete_index_build(const ice_content_file *const *deletes, size_t n,
                           const ice_spec_info *specs, size_t nspecs, ice_delete_index **out,
                           icd_error *err)
{
    *out = NULL;
    ice_delete_index *ix = calloc(1, sizeof *ix);
    if (!ix) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++) {
        int rc = add_delete(ix, deletes[i], specs, nspecs, err);
        if (rc) {
            ice_delete_index_free(ix);
            return rc;
        }
    }
    if (ix->dvs.n) qsort(ix->dvs.v, ix->dvs.n, sizeof(entry), cmp_path_entry);
    if (ix->path_pos.n) qsort(ix->path_pos.v, ix->path_pos.n, sizeof(entry), cmp_path_entry);
    if (ix->part_pos.n) qsort(ix->part_pos.v, ix->part_pos.n, sizeof(entry), cmp_part_entry);
    if (ix->part_eq.n) qsort(ix->part_eq.v, ix->part_eq.n, sizeof(entry), cmp_part_entry);
    if (ix->global_eq.n) qsort(ix->global_eq.v, ix->global_eq.n, sizeof(entry), cmp_seq_entry);
    for (size_t i = 1; i < ix->dvs.n; i++) {
        const entry *a = &ix->dvs.v[i - 1], *b = &ix->dvs.v[i];
        if (a->path_len == b->path_len && !memcmp(a->path, b->path, a->path_len)) {
            int rc = icd_fail(err, ICD_ECORRUPT, b->f->manifest_path, -1,
                              "two deletion vectors for data file %s (%s at offset %lld and %s "
                              "at offset %lld); a snapshot may hold at most one",
                              b->path, a->f->path, (long long)a->f->content_offset, b->f->path,
                              (long long)b->f->content_offset);
            ice_delete_index_free(ix);
            return rc;
        }
    }
    *out = ix;
    return 0;
}

/* First index in [0, n) whose entry is not "before" the probe, by `before`. */
typedef int (*before_fn)(const entry *e, const ice_content_file *data, int64_t min_seq);

static size_t lower_bound(const list *l, before_fn before, const ice_content_file *data,
                          int64_t min_seq)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(&l->v[mid], data, min_seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int path_before(const entry *e, const ice_content_file *d, int64_t min_seq)
{
    size_t klen;
    const char *k = ice_location_key(d->path, strlen(d->path), &klen);
    int c = cmp_bytes(e->path, e->path_len, k, klen);
    return c < 0 || (c == 0 && e->f->data_seq < min_seq);
}

static int part_before(const entry *e, const ice_content_file *d, int64_t min_seq)
{
    int c = cmp_partition(e->f, d);
    return c < 0 || (c == 0 && e->f->data_seq < min_seq);
}

static int seq_before(const entry *e, const ice_content_file *d, int64_t min_seq)
{
    (void)d;
    return e->f->data_seq < min_seq;
}

static int append(const ice_content_file ***out, size_t *n, size_t *cap, const ice_content_file *f,
                  icd_error *err)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        const ice_content_file **v = realloc((void *)*out, c * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        *out = v;
        *cap = c;
    }
    (*out)[(*n)++] = f;
    return 0;
}

/* Position files whose file_path bounds exclude the data file's path cannot apply. */
static bool bounds_may_contain(const ice_content_file *f, const char *path, size_t len)
{
    const ice_col_stats *s = ice_content_file_stats(f, ICE_FIELD_DELETE_FILE_PATH);
    if (!s) return true;
    /* compare location keys: bounds may name files as hdfs://nn/a while metadata says /a */
    size_t klen, blen;
    const char *k = ice_location_key(path, len, &klen), *b;
    if (s->has_lower) {
        b = ice_location_key((const char *)s->lower, s->lower_len, &blen);
        if (cmp_bytes(k, klen, b, blen) < 0) return false;
    }
    if (s->has_upper) {
        b = ice_location_key((const char *)s->upper, s->upper_len, &blen);
        if (cmp_bytes(k, klen, b, blen) > 0) return false;
    }
    return true;
}

int ice_delete_index_for(const ice_delete_index *ix, const ice_content_file *d,
                         const ice_content_file ***out, size_t *n, size_t *cap, icd_error *err)
{
    size_t plen;
    const char *pkey = ice_location_key(d->path, strlen(d->path), &plen);
    int64_t seq = d->data_seq;

    /* A DV with seq >= seq(D) replaces every position delete file for D. */
    bool have_dv = false;
    size_t i = lower_bound(&ix->dvs, path_before, d, seq);
    if (i < ix->dvs.n && ix->dvs.v[i].path_len == plen && !memcmp(ix->dvs.v[i].path, pkey, plen)) {
        ICD_TRY(append(out, n, cap, ix->dvs.v[i].f, err));
        have_dv = true;
    }

    if (!have_dv) {
        for (i = lower_bound(&ix->path_pos, path_before, d, seq); i < ix->path_pos.n; i++) {
            const entry *e = &ix->path_pos.v[i];
            if (e->path_len != plen || memcmp(e->path, pkey, plen)) break;
            ICD_TRY(append(out, n, cap, e->f, err));
        }
        for (i = lower_bound(&ix->part_pos, part_before, d, seq); i < ix->part_pos.n; i++) {
            const entry *e = &ix->part_pos.v[i];
            if (cmp_partition(e->f, d)) break;
            if (bounds_may_contain(e->f, d->path, strlen(d->path)))
                ICD_TRY(append(out, n, cap, e->f, err));
        }
    }

    /* Equality deletes need a strictly greater sequence number. */
    int64_t eq_min = seq == INT64_MAX ? seq : seq + 1;
    for (i = lower_bound(&ix->part_eq, part_before, d, eq_min); i < ix->part_eq.n; i++) {
        const entry *e = &ix->part_eq.v[i];
        if (cmp_partition(e->f, d)) break;
        ICD_TRY(append(out, n, cap, e->f, err));
    }
    for (i = lower_bound(&ix->global_eq, seq_before, d, eq_min); i < ix->global_eq.n; i++)
        ICD_TRY(append(out, n, cap, ix->global_eq.v[i].f, err));
    return 0;
}

ice_delete_index_counts ice_delete_index_count(const ice_delete_index *ix)
{
    ice_delete_index_counts c = {ix->dvs.n, ix->path_pos.n + ix->part_pos.n,
                                 ix->part_eq.n + ix->global_eq.n, ix->global_eq.n};
    return c;
}
