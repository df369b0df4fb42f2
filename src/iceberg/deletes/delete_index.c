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

#include "base/array.h"
#include "base/hash.h"
#include "iceberg/deletes/delete_index.h"

/* The sort key is kept in the entry itself (not only behind `f`), so a binary search step
 * touches the entry and the key bytes: with a million data files probing 100,000 deletes
 * the extra indirection was most of the planning time. */
typedef struct entry {
    const ice_content_file *f;
    const char *path; /* path key (dvs, path_pos) or the partition key (part_pos, part_eq) */
    uint32_t path_len;
    int32_t spec_id;
    int64_t seq; /* f->data_seq */
    /* part_pos: the location keys of the file's file_path bounds (NULL: no bound), found
     * once here rather than per data file of the partition */
    const char *lo, *hi;
    uint32_t lo_len, hi_len;
} entry;

/* A data file's lookup keys, computed once per ice_delete_index_for. */
typedef struct probe {
    const char *path; /* location key */
    size_t path_len;
    const ice_content_file *d;
} probe;

typedef struct list {
    entry *v;
    size_t n, cap;
    /* After sorting: (spec id, key) -> the run of entries with that key (start in the low
     * 32 bits, length in the high ones), so a lookup is one hash probe instead of a binary
     * search over every delete file. */
    icd_map *runs;
} list;

struct ice_delete_index {
    list dvs, path_pos, part_pos, part_eq, global_eq;
    /* A bit per fingerprint of the paths dvs and path_pos are keyed by (mask + 1 bits;
     * NULL: none): a data file whose path's bit is clear has no run in either, so its
     * lookup skips the probe hash and both map lookups (most data files have no delete
     * file of their own). */
    uint64_t *path_bits;
    size_t path_mask;
};

/* A cheap fingerprint of a path: its length and its last 32 bytes (paths of one table
 * differ near their ends), folded with rotations, then mixed. */
static inline uint64_t rotl64(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static uint64_t path_fp(const char *p, size_t n)
{
    uint64_t h = (uint64_t)n;
    if (n >= 8) {
        uint64_t w[4];
        for (size_t k = 0; k < 4; k++) /* (overlapping from the start when shorter) */
            memcpy(&w[k], p + (n >= 8 * (k + 1) ? n - 8 * (k + 1) : 0), 8);
        h ^= w[0] ^ rotl64(w[1], 17) ^ rotl64(w[2], 31) ^ rotl64(w[3], 47);
    } else {
        for (size_t i = 0; i < n; i++)
            h = rotl64(h, 8) ^ (uint8_t)p[i];
    }
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull; /* (splitmix64's finalizer) */
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

/* The fingerprint bits of dvs' and path_pos' keys; without memory, none (no skipping). */
static void path_bits_build(ice_delete_index *ix)
{
    size_t n = ix->dvs.n + ix->path_pos.n, bits = 1024;
    while (bits < n * 16 && bits < ((size_t)1 << 30))
        bits *= 2;
    ix->path_bits = calloc(bits / 64, sizeof *ix->path_bits);
    if (!ix->path_bits) return;
    ix->path_mask = bits - 1;
    const list *ls[2] = {&ix->dvs, &ix->path_pos};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < ls[l]->n; i++) {
            size_t b = (size_t)path_fp(ls[l]->v[i].path, ls[l]->v[i].path_len) & ix->path_mask;
            ix->path_bits[b / 64] |= (uint64_t)1 << (b % 64);
        }
}

/* False only when no run of dvs or path_pos has the key. */
static bool path_may_have(const ice_delete_index *ix, const char *key, size_t len)
{
    if (!ix->path_bits) return true;
    size_t b = (size_t)path_fp(key, len) & ix->path_mask;
    return (ix->path_bits[b / 64] >> (b % 64)) & 1;
}

/* The run key of (spec id, key bytes) in `buf` (at least 4 + len bytes). */
static size_t run_key(uint8_t *buf, int32_t spec_id, const char *key, size_t len)
{
    memcpy(buf, &spec_id, 4);
    if (len) memcpy(buf + 4, key, len);
    return 4 + len;
}

/* by_spec: partition-keyed lists (runs of one spec id and key); path-keyed lists group by
 * the path alone and key their runs with spec id 0. */
static int index_runs(list *l, bool by_spec, icd_error *err)
{
    if (!l->n) return 0;
    ICD_TRY(icd_map_new(&l->runs, l->n, err));
    uint8_t small[256];
    for (size_t i = 0; i < l->n;) {
        size_t j = i + 1;
        while (j < l->n && (!by_spec || l->v[j].spec_id == l->v[i].spec_id) &&
               l->v[j].path_len == l->v[i].path_len &&
               !memcmp(l->v[j].path, l->v[i].path, l->v[i].path_len))
            j++;
        size_t klen = 4 + (size_t)l->v[i].path_len;
        uint8_t *k = klen <= sizeof small ? small : malloc(klen);
        if (!k) return icd_fail_nomem(err);
        run_key(k, by_spec ? l->v[i].spec_id : 0, l->v[i].path, l->v[i].path_len);
        int rc = icd_map_put(l->runs, k, klen, icd_hash_bytes(k, klen),
                             (uint64_t)i | ((uint64_t)(j - i) << 32), err);
        if (k != small) free(k);
        if (rc) return rc;
        i = j;
    }
    return 0;
}

/* A lookup key of the runs maps, built and hashed once per data file for the two lists
 * keyed alike (dvs and path_pos by path; part_pos and part_eq by partition). */
typedef struct run_probe {
    uint8_t small[256];
    uint8_t *k; /* small or allocated; NULL: no memory (the lists are scanned whole) */
    size_t len;
    uint64_t hash;
} run_probe;

static void run_probe_init(run_probe *p, int32_t spec_id, const char *key, size_t len)
{
    p->len = 4 + len;
    p->k = p->len <= sizeof p->small ? p->small : malloc(p->len);
    if (!p->k) return;
    run_key(p->k, spec_id, key, len);
    p->hash = icd_hash_bytes(p->k, p->len);
}

static void run_probe_free(run_probe *p)
{
    if (p->k != p->small) free(p->k);
}

/* The runs map value (start | length << 32) of the probe's key in l, 0 when none (a run
 * is never empty). The probe has its key. */
static uint64_t run_lookup(const list *l, const run_probe *p)
{
    if (!l->runs) return 0;
    const uint64_t *v = icd_map_find(l->runs, p->k, p->len, p->hash);
    return v ? *v : 0;
}

/* The entries of run v whose sequence number is >= min_seq: [*lo, *hi). */
static void run_from(const list *l, uint64_t v, int64_t min_seq, size_t *lo, size_t *hi)
{
    size_t a = (size_t)(v & 0xffffffffu), b = a + (size_t)(v >> 32);
    *hi = b;
    while (a < b) { /* first entry of the run with seq >= min_seq */
        size_t mid = a + (b - a) / 2;
        if (l->v[mid].seq < min_seq)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
}

/* The run of entries with the probe's key whose sequence number is >= min_seq: [*lo, *hi). */
static void find_run(const list *l, const run_probe *p, int64_t min_seq, size_t *lo, size_t *hi)
{
    *lo = *hi = 0;
    if (!l->runs) return;
    if (!p->k) { /* no memory for the probe key: fall back to scanning every entry */
        *hi = l->n;
        return;
    }
    run_from(l, run_lookup(l, p), min_seq, lo, hi);
}

/* ---- the partition memo --------------------------------------------------------------- */

#define PART_MEMO 4096 /* (a power of two) */

/* One partition key's runs in part_pos and part_eq, by the key's address. */
typedef struct part_memo {
    uint64_t gen; /* the memo's generation it was filled in */
    const uint8_t *key;
    uint32_t len;
    int32_t spec_id;
    uint64_t pos, eq;
} part_memo;

struct ice_delete_memo {
    uint64_t gen;
    part_memo slot[PART_MEMO];
};

ice_delete_memo *ice_delete_memo_new(void)
{
    ice_delete_memo *m = calloc(1, sizeof *m);
    if (m) m->gen = 1;
    return m;
}

void ice_delete_memo_clear(ice_delete_memo *m)
{
    if (m) m->gen++;
}

void ice_delete_memo_free(ice_delete_memo *m)
{
    free(m);
}

static part_memo *memo_slot(ice_delete_memo *m, const ice_content_file *d)
{
    uint64_t a = (uint64_t)(uintptr_t)d->partition_key;
    return &m->slot[(size_t)((a * 0x9E3779B97F4A7C15ull) >> 32) & (PART_MEMO - 1)];
}

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
    if (ICD_ARRAY_RESERVE(l->v, l->cap, l->n + 1, 16)) return icd_fail_nomem(err);
    if (!path) { /* partition-keyed lists */
        path = (const char *)f->partition_key;
        path_len = f->partition_key_len;
    }
    entry *e = &l->v[l->n++];
    *e = (entry){f, path, (uint32_t)path_len, f->spec_id, f->data_seq, NULL, NULL, 0, 0};
    const ice_col_stats *st = f->content == ICE_CONTENT_POSITION_DELETES
                                  ? ice_content_file_stats(f, ICE_FIELD_DELETE_FILE_PATH)
                                  : NULL;
    /* compare location keys: bounds may name files as hdfs://nn/a while metadata says /a */
    size_t n;
    if (st && st->has_lower) {
        e->lo = ice_location_key((const char *)st->lower, st->lower_len, &n);
        e->lo_len = (uint32_t)n;
    }
    if (st && st->has_upper) {
        e->hi = ice_location_key((const char *)st->upper, st->upper_len, &n);
        e->hi_len = (uint32_t)n;
    }
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
    return c ? c : cmp_seq(a->seq, b->seq);
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
    return c ? c : cmp_seq(a->seq, b->seq);
}

static int cmp_seq_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    return cmp_seq(a->seq, b->seq);
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
    icd_map_free(ix->dvs.runs);
    icd_map_free(ix->path_pos.runs);
    icd_map_free(ix->part_pos.runs);
    icd_map_free(ix->part_eq.runs);
    free(ix->path_bits);
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
    int rc = index_runs(&ix->dvs, false, err);
    if (!rc) rc = index_runs(&ix->path_pos, false, err);
    if (!rc) rc = index_runs(&ix->part_pos, true, err);
    if (!rc) rc = index_runs(&ix->part_eq, true, err);
    if (rc) {
        ice_delete_index_free(ix);
        return rc;
    }
    if (ix->dvs.n || ix->path_pos.n) path_bits_build(ix);
    *out = ix;
    return 0;
}

/* First index in [0, n) whose entry is not "before" the probe, by `before`. */
typedef int (*before_fn)(const entry *e, const probe *p, int64_t min_seq);

static size_t lower_bound(const list *l, before_fn before, const probe *p, int64_t min_seq)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(&l->v[mid], p, min_seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int seq_before(const entry *e, const probe *p, int64_t min_seq)
{
    (void)p;
    return e->seq < min_seq;
}

static inline int append(const ice_content_file ***out, size_t *n, size_t *cap,
                         const ice_content_file *f, icd_error *err)
{
    if (ICD_ARRAY_RESERVE(*out, *cap, *n + 1, 8)) return icd_fail_nomem(err);
    (*out)[(*n)++] = f;
    return 0;
}

/* Position files whose file_path bounds exclude the data file's location key cannot
 * apply. */
static bool bounds_may_contain(const entry *e, const char *key, size_t len)
{
    if (e->lo && cmp_bytes(key, len, e->lo, e->lo_len) < 0) return false;
    if (e->hi && cmp_bytes(key, len, e->hi, e->hi_len) > 0) return false;
    return true;
}

int ice_delete_index_for(const ice_delete_index *ix, const ice_content_file *d,
                         const ice_content_file ***out, size_t *n, size_t *cap, icd_error *err)
{
    return ice_delete_index_for_memo(ix, NULL, d, out, n, cap, err);
}

int ice_delete_index_for_memo(const ice_delete_index *ix, ice_delete_memo *memo,
                              const ice_content_file *d, const ice_content_file ***out, size_t *n,
                              size_t *cap, icd_error *err)
{
    size_t dlen = strlen(d->path), plen, lo, hi;
    const char *pkey = ice_location_key(d->path, dlen, &plen);
    int64_t seq = d->data_seq;
    int rc = 0;

    /* A DV with seq >= seq(D) replaces every position delete file for D. */
    bool have_dv = false;
    /* (a key too long for the probe's own room is looked up as before: without memory
     * for it the lists are scanned whole) */
    bool may = plen + 4 > sizeof(((run_probe *)NULL)->small) || path_may_have(ix, pkey, plen);
    if ((ix->dvs.runs || ix->path_pos.runs) && may) {
        run_probe by_path;
        run_probe_init(&by_path, 0, pkey, plen);
        find_run(&ix->dvs, &by_path, seq, &lo, &hi);
        if (lo < hi) {
            rc = append(out, n, cap, ix->dvs.v[lo].f, err);
            have_dv = true;
        }
        if (!have_dv) {
            find_run(&ix->path_pos, &by_path, seq, &lo, &hi);
            for (size_t i = lo; i < hi && !rc; i++)
                rc = append(out, n, cap, ix->path_pos.v[i].f, err);
        }
        run_probe_free(&by_path);
        if (rc) return rc;
    }

    /* Equality deletes need a strictly greater sequence number. */
    int64_t eq_min = seq == INT64_MAX ? seq : seq + 1;
    if ((!have_dv && ix->part_pos.runs) || ix->part_eq.runs) {
        /* the runs of the data file's partition: from the memo when a file with the same
         * key (at the same address) asked before, else found and kept there */
        size_t plo = 0, phi = 0, elo, ehi;
        part_memo *ms = memo ? memo_slot(memo, d) : NULL;
        if (ms && ms->gen == memo->gen && ms->key == d->partition_key &&
            ms->len == d->partition_key_len && ms->spec_id == d->spec_id) {
            if (!have_dv) run_from(&ix->part_pos, ms->pos, seq, &plo, &phi);
            run_from(&ix->part_eq, ms->eq, eq_min, &elo, &ehi);
        } else {
            run_probe by_part;
            run_probe_init(&by_part, d->spec_id, (const char *)d->partition_key,
                           d->partition_key_len);
            if (ms && by_part.k) {
                *ms = (part_memo){memo->gen,
                                  d->partition_key,
                                  d->partition_key_len,
                                  d->spec_id,
                                  run_lookup(&ix->part_pos, &by_part),
                                  run_lookup(&ix->part_eq, &by_part)};
                if (!have_dv) run_from(&ix->part_pos, ms->pos, seq, &plo, &phi);
                run_from(&ix->part_eq, ms->eq, eq_min, &elo, &ehi);
            } else {
                if (!have_dv) find_run(&ix->part_pos, &by_part, seq, &plo, &phi);
                find_run(&ix->part_eq, &by_part, eq_min, &elo, &ehi);
            }
            run_probe_free(&by_part);
        }
        for (size_t i = plo; i < phi; i++) { /* the bounds live apart: fetch them together */
            __builtin_prefetch(ix->part_pos.v[i].lo);
            __builtin_prefetch(ix->part_pos.v[i].hi);
        }
        for (size_t i = plo; i < phi && !rc; i++)
            if (bounds_may_contain(&ix->part_pos.v[i], pkey, plen))
                rc = append(out, n, cap, ix->part_pos.v[i].f, err);
        for (size_t i = elo; i < ehi && !rc; i++)
            rc = append(out, n, cap, ix->part_eq.v[i].f, err);
        if (rc) return rc;
    }
    probe pr = {pkey, plen, d};
    for (size_t i = lower_bound(&ix->global_eq, seq_before, &pr, eq_min); i < ix->global_eq.n; i++)
        ICD_TRY(append(out, n, cap, ix->global_eq.v[i].f, err));
    return 0;
}

ice_delete_index_counts ice_delete_index_count(const ice_delete_index *ix)
{
    ice_delete_index_counts c = {ix->dvs.n, ix->path_pos.n + ix->part_pos.n,
                                 ix->part_eq.n + ix->global_eq.n, ix->global_eq.n};
    return c;
}
