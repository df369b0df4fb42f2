/*
 * The entry cache of a scan stream (see scan_cache.h). One record per data manifest: its
 * partition tuples copied once (files of one partition share one tuple, as the manifest
 * reader made them), then per entry, as varints: status, format, the lengths of the
 * prefix and of the suffix its path shares with the previous path (paths of one table
 * mostly differ in a few characters), the middle of the path, the tuple's index,
 * record count, file size, data and file sequence numbers, snapshot id (less the
 * manifest's added snapshot id), first row id and sort order id. A flags byte first says
 * which of these values differ from the previous entry's: only those are written (the
 * path's three parts and the file size always are), since files of one manifest mostly
 * share their status, format, counts, sequence numbers and snapshot.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bits.h"
#include "base/buf.h"
#include "base/hash.h"
#include "base/varint.h"
#include "iceberg/literal.h"
#include "iceberg/scan_cache.h"

/* The most bytes the records of one stream may take (a million data files take ~40). */
#define ENTRY_CACHE_MAX_BYTES ((size_t)128 << 20)

/* Every field of ice_content_file is either recorded or checked to have the value a
 * rebuilt entry gets: a new field must be added to both (this fails until it is). */
_Static_assert(sizeof(ice_content_file) == 152, "ice_content_file changed: see scan_cache.c");

typedef struct cached_tuple {
    const ice_literal *vals;
    const uint8_t *key;
    uint32_t key_len;
} cached_tuple;

struct ice_cached_manifest {
    const char *path; /* the manifest's (the same pointer on replay) */
    const uint8_t *rec;
    size_t len, n;
    cached_tuple *tuples;
    size_t ntuples;
    int32_t npartition;
    size_t max_path;
    size_t path_bytes; /* the entries' paths with their NULs (replay allocates them at once) */
};

void ice_entry_cache_clear(ice_entry_cache *c)
{
    icd_arena_free(&c->arena);
    free(c->m);
    c->m = NULL;
    c->nm = c->cap_m = 0;
    c->bytes = 0;
    c->complete = false;
}

static void turn_off(ice_entry_cache *c)
{
    ice_entry_cache_clear(c);
    c->off = true;
}

/* An entry the record rebuilds exactly. */
static bool recordable(const ice_manifest_file *mf, const ice_content_file *f, int32_t npartition)
{
    return f->content == ICE_CONTENT_DATA && f->path && f->manifest_path == mf->path &&
           f->spec_id == mf->spec_id && f->npartition == npartition && f->nequality_ids == 0 &&
           !f->equality_ids && !f->referenced_data_file && f->content_offset == -1 &&
           f->content_size == -1 && !f->stats && f->nstats == 0 &&
           (f->partition_key || f->partition_key_len == 0);
}

/* A copy of a partition tuple in the cache's arena; false when it holds a value that is
 * not a plain one (or no memory). */
static bool copy_tuple(icd_arena *a, const ice_content_file *f, cached_tuple *t)
{
    t->vals = NULL;
    t->key = (const uint8_t *)"";
    t->key_len = f->partition_key_len;
    if (f->partition_key_len) {
        uint8_t *k = icd_arena_alloc(a, f->partition_key_len);
        if (!k) return false;
        memcpy(k, f->partition_key, f->partition_key_len);
        t->key = k;
    }
    if (!f->partition) return true;
    size_t n = (size_t)f->npartition;
    ice_literal *v = icd_arena_alloc(a, (n ? n : 1) * sizeof *v);
    if (!v) return false;
    for (size_t i = 0; i < n; i++) {
        v[i] = f->partition[i];
        switch (v[i].kind) {
        case ICE_T_STRING:
        case ICE_T_UUID:
        case ICE_T_FIXED:
        case ICE_T_BINARY:
        case ICE_T_DECIMAL:
            if (!v[i].is_null && v[i].v.bytes.ptr && v[i].v.bytes.len) {
                uint8_t *b = icd_arena_alloc(a, v[i].v.bytes.len);
                if (!b) return false;
                memcpy(b, v[i].v.bytes.ptr, v[i].v.bytes.len);
                v[i].v.bytes.ptr = b;
            }
            break;
        case ICE_T_BOOLEAN:
        case ICE_T_INT:
        case ICE_T_LONG:
        case ICE_T_FLOAT:
        case ICE_T_DOUBLE:
        case ICE_T_DATE:
        case ICE_T_TIME:
        case ICE_T_TIMESTAMP:
        case ICE_T_TIMESTAMPTZ:
        case ICE_T_TIMESTAMP_NS:
        case ICE_T_TIMESTAMPTZ_NS:
            break;
        default: /* (nested values and the v3 types are not partition values) */
            return false;
        }
    }
    t->vals = v;
    return true;
}

/* Writes the varint of v at p; returns the end (at most 10 bytes). */
static inline uint8_t *put_u(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Tuple pointer -> its index in the record: open addressing, power-of-two slots. */
typedef struct tuple_table {
    struct {
        const void *key;
        size_t idx;
    } * slot;
    size_t mask, n;
} tuple_table;

static bool tuple_table_grow(tuple_table *t)
{
    size_t cap = t->slot ? (t->mask + 1) * 2 : 256;
    tuple_table g = {calloc(cap, sizeof *t->slot), cap - 1, t->n};
    if (!g.slot) return false;
    for (size_t i = 0; t->slot && i <= t->mask; i++) {
        if (!t->slot[i].key) continue;
        size_t h = (size_t)icd_hash_u64((uint64_t)(uintptr_t)t->slot[i].key) & g.mask;
        while (g.slot[h].key)
            h = (h + 1) & g.mask;
        g.slot[h] = t->slot[i];
    }
    free(t->slot);
    *t = g;
    return true;
}

/* The slot of `key` (NULL keys are kept at a fixed index by the caller). */
static size_t *tuple_table_find(tuple_table *t, const void *key, bool *fresh)
{
    if ((t->n + 1) * 2 > t->mask + 1 && !tuple_table_grow(t)) return NULL;
    size_t h = (size_t)icd_hash_u64((uint64_t)(uintptr_t)key) & t->mask;
    while (t->slot[h].key && t->slot[h].key != key)
        h = (h + 1) & t->mask;
    *fresh = !t->slot[h].key;
    if (*fresh) {
        t->slot[h].key = key;
        t->n++;
    }
    return &t->slot[h].idx;
}

/* The most bytes one entry's record takes besides the middle of its path. */
#define ENTRY_FIXED_MAX (1 + 13 * 10)

/* The values of an entry the flags byte covers, in record order (as varints: zigzag for
 * the signed ones), and the flag of each; V_ROW_ID's flag covers V_SORT_ORDER too. */
enum {
    V_STATUS,
    V_FORMAT,
    V_TUPLE,
    V_RECORDS,
    V_DATA_SEQ,
    V_FILE_SEQ,
    V_SNAPSHOT,
    V_ROW_ID,
    V_SORT_ORDER,
    V_COUNT
};
#define V_FLAGS 8

void ice_entry_cache_record(ice_entry_cache *c, const ice_manifest_file *mf,
                            const ice_manifest_entry *e, size_t n)
{
    if (c->off) return;
    c->arena.large_own_chunks = true; /* (filled once, then kept) */
    if (ICD_ARRAY_RESERVE(c->m, c->cap_m, c->nm + 1, 64)) {
        turn_off(c);
        return;
    }
    ice_cached_manifest *cm = &c->m[c->nm];
    memset(cm, 0, sizeof *cm);
    cm->path = mf->path;
    cm->n = n;
    cm->npartition = n ? e[0].file.npartition : 0;
    icd_buf rec = ICD_BUF_INIT;
    if (n) icd_buf_grow(&rec, n * 24); /* (about what an entry takes: fewer regrowths) */
    tuple_table seen = {NULL, 0, 0};
    size_t null_idx = SIZE_MAX; /* the index of the NULL tuple (unpartitioned) */
    cached_tuple *tuples = NULL;
    size_t ntuples = 0, cap_tuples = 0;
    /* the key of the entry each tuple was copied from (an entry with the same key pointer
     * has the same key bytes: not compared again) */
    const uint8_t **src_keys = NULL;
    size_t cap_src = 0;
    const char *prev = "";
    size_t prev_len = 0;
    bool ok = true;
    const ice_literal *last_vals = NULL;
    size_t last_idx = SIZE_MAX;
    uint64_t prev_v[V_COUNT] = {0}; /* (the previous entry's values; zeros before the first) */
    for (size_t i = 0; i < n && ok; i++) {
        const ice_content_file *f = &e[i].file;
        if (!recordable(mf, f, cm->npartition) || e[i].status < 0 || e[i].status > 2) {
            ok = false;
            break;
        }
        size_t idx;
        if (last_idx != SIZE_MAX && f->partition == last_vals) {
            idx = last_idx;
        } else {
            bool fresh = false;
            size_t *slot = f->partition ? tuple_table_find(&seen, f->partition, &fresh) : &null_idx;
            if (!slot) {
                ok = false;
                break;
            }
            if (!f->partition) fresh = null_idx == SIZE_MAX;
            if (fresh) {
                if (ICD_ARRAY_RESERVE(tuples, cap_tuples, ntuples + 1, 64) ||
                    ICD_ARRAY_RESERVE(src_keys, cap_src, ntuples + 1, 64) ||
                    !copy_tuple(&c->arena, f, &tuples[ntuples])) {
                    ok = false;
                    break;
                }
                src_keys[ntuples] = f->partition_key;
                *slot = ntuples++;
            }
            idx = *slot;
            last_vals = f->partition;
            last_idx = idx;
        }
        /* (files that share a tuple pointer share its key: the reader made them so) */
        if (tuples[idx].key_len != f->partition_key_len ||
            (f->partition_key_len && f->partition_key != src_keys[idx] &&
             memcmp(tuples[idx].key, f->partition_key, f->partition_key_len))) {
            ok = false;
            break;
        }
        size_t len = strlen(f->path), same = 0, tail = 0;
        /* 8 bytes at a time; the first word that differs says how many of its bytes agree
         * (little-endian loads: the lowest set bit of the difference is the first byte
         * that differs, its highest the last), else 1 byte at a time near the ends */
        bool done = false;
        while (same + 8 <= len && same + 8 <= prev_len) {
            uint64_t d = icd_load_le64((const uint8_t *)f->path + same) ^
                         icd_load_le64((const uint8_t *)prev + same);
            if (d) {
                same += (size_t)__builtin_ctzll(d) / 8;
                done = true;
                break;
            }
            same += 8;
        }
        while (!done && same < len && same < prev_len && f->path[same] == prev[same])
            same++;
        done = false;
        while (tail + 8 <= len - same && tail + 8 <= prev_len - same) {
            uint64_t d = icd_load_le64((const uint8_t *)f->path + len - tail - 8) ^
                         icd_load_le64((const uint8_t *)prev + prev_len - tail - 8);
            if (d) {
                tail += (size_t)__builtin_clzll(d) / 8;
                done = true;
                break;
            }
            tail += 8;
        }
        while (!done && tail < len - same && tail < prev_len - same &&
               f->path[len - 1 - tail] == prev[prev_len - 1 - tail])
            tail++;
        if (len > cm->max_path) cm->max_path = len;
        cm->path_bytes += len + 1;
        size_t mid = len - same - tail;
        if (rec.len + mid + ENTRY_FIXED_MAX + 1 > rec.cap &&
            !icd_buf_grow(&rec, mid + ENTRY_FIXED_MAX + 1)) {
            ok = false;
            break;
        }
        uint64_t v[V_COUNT] = {(uint64_t)e[i].status,
                               (uint64_t)f->format,
                               idx,
                               icd_zigzag64(f->record_count),
                               icd_zigzag64(f->data_seq),
                               icd_zigzag64(f->file_seq),
                               (uint64_t)f->snapshot_id - (uint64_t)mf->added_snapshot_id,
                               icd_zigzag64(f->first_row_id),
                               icd_zigzag64(f->sort_order_id)};
        unsigned flags = 0;
        for (int k = 0; k < V_FLAGS; k++)
            if (v[k] != prev_v[k]) flags |= 1u << k;
        if (v[V_SORT_ORDER] != prev_v[V_SORT_ORDER]) flags |= 1u << V_ROW_ID;
        uint8_t *w = (uint8_t *)rec.data + rec.len;
        *w++ = (uint8_t)flags;
        w = put_u(w, same);
        w = put_u(w, tail);
        w = put_u(w, mid);
        memcpy(w, f->path + same, mid);
        w += mid;
        w = put_u(w, icd_zigzag64(f->file_size));
        for (unsigned f8 = flags; f8; f8 &= f8 - 1) /* (the set flags, lowest first) */
            w = put_u(w, v[__builtin_ctz(f8)]);
        if (flags & (1u << V_ROW_ID)) w = put_u(w, v[V_SORT_ORDER]);
        memcpy(prev_v, v, sizeof v);
        rec.len = (size_t)(w - (uint8_t *)rec.data);
        prev = f->path;
        prev_len = len;
    }
    free(seen.slot);
    if (ok && !icd_buf_ok(&rec)) ok = false;
    if (ok && rec.len) {
        uint8_t *r = icd_arena_alloc(&c->arena, rec.len);
        cached_tuple *t = icd_arena_alloc(&c->arena, (ntuples ? ntuples : 1) * sizeof *t);
        if (r && t) {
            memcpy(r, rec.data, rec.len);
            if (ntuples) memcpy(t, tuples, ntuples * sizeof *t);
            cm->rec = r;
            cm->len = rec.len;
            cm->tuples = t;
            cm->ntuples = ntuples;
        } else {
            ok = false;
        }
    }
    icd_buf_free(&rec);
    free(tuples);
    free((void *)src_keys);
    if (!ok || c->arena.total > ENTRY_CACHE_MAX_BYTES) {
        turn_off(c);
        return;
    }
    c->nm++;
}

/* (the records are our own: only a bug makes one run short; inlined at each of replay's
 * reads, which a call per value would cost more than the read) */
static inline __attribute__((always_inline)) uint64_t get_u(const uint8_t **p, const uint8_t *end,
                                                            bool *bad)
{
    if (*p < end && **p < 0x80) return *(*p)++;
    uint64_t v = 0;
    int k = icd_uleb128_decode(*p, end, &v); /* (ten bytes left: a word at a time) */
    if (k < 0) {
        *bad = true;
        return 0;
    }
    *p += k;
    return v;
}

/* Copies n bytes without a library call for the short runs a path is made of. */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
    if (n >= 16) {
        size_t i = 0;
        for (; i + 16 < n; i += 16)
            memcpy(d + i, s + i, 16);
        memcpy(d + n - 16, s + n - 16, 16); /* (the last 16, overlapping) */
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* Value k of the record (as written: zigzag for the signed ones) into the entry's fields;
 * false for a tuple index the record does not have. */
static inline bool set_value(ice_manifest_entry *e, int k, uint64_t u,
                             const ice_cached_manifest *cm, const ice_manifest_file *mf)
{
    ice_content_file *f = &e->file;
    switch (k) {
    case V_STATUS:
        e->status = (int)u;
        break;
    case V_FORMAT:
        f->format = (ice_file_format)u;
        break;
    case V_TUPLE: {
        if (u >= cm->ntuples) return false;
        const cached_tuple *t = &cm->tuples[u];
        f->partition = t->vals;
        f->partition_key = t->key;
        f->partition_key_len = t->key_len;
        break;
    }
    case V_RECORDS:
        f->record_count = icd_unzigzag64(u);
        break;
    case V_DATA_SEQ:
        f->data_seq = icd_unzigzag64(u);
        break;
    case V_FILE_SEQ:
        f->file_seq = icd_unzigzag64(u);
        break;
    case V_SNAPSHOT:
        f->snapshot_id = (int64_t)(u + (uint64_t)mf->added_snapshot_id);
        break;
    case V_ROW_ID:
        f->first_row_id = icd_unzigzag64(u);
        break;
    default: /* V_SORT_ORDER */
        f->sort_order_id = (int32_t)icd_unzigzag64(u);
        break;
    }
    return true;
}

int ice_entry_cache_replay(const ice_entry_cache *c, size_t k, const ice_manifest_file *mf,
                           icd_arena *arena, ice_manifest_entry **out, size_t *n, icd_error *err)
{
    *out = NULL;
    *n = 0;
    if (k >= c->nm || c->m[k].path != mf->path)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                        "the scan's entry cache does not hold manifest %s", mf->path);
    const ice_cached_manifest *cm = &c->m[k];
    if (!cm->n) return 0;
    ice_manifest_entry *v = icd_arena_alloc(arena, cm->n * sizeof *v);
    if (!v) return icd_fail_nomem(err);
    /* the paths back to back in one allocation (the record knows their total) */
    char *paths = icd_arena_stralloc(arena, cm->path_bytes ? cm->path_bytes - 1 : 0);
    if (!paths) return icd_fail_nomem(err);
    size_t paths_left = cm->path_bytes;
    const uint8_t *p = cm->rec, *end = cm->rec + cm->len;
    const char *prev = ""; /* the previous entry's path (in the arena) */
    size_t prev_len = 0;
    /* The entry as the flagged values left it (they change rarely: most entries of a
     * manifest share them), copied whole for each entry, which then gets its path and
     * size; starts with the values the record's writer started from (zeros). */
    ice_manifest_entry cur;
    memset(&cur, 0, sizeof cur);
    for (int j = 0; j < V_COUNT; j++)
        set_value(&cur, j, 0, cm, mf);
    cur.file.path = NULL;
    cur.file.manifest_path = mf->path;
    cur.file.content = ICE_CONTENT_DATA;
    cur.file.npartition = cm->npartition;
    cur.file.spec_id = mf->spec_id;
    cur.file.content_offset = -1;
    cur.file.content_size = -1;
    bool bad = cm->ntuples == 0; /* (the tuple index starts at 0) */
    for (size_t i = 0; i < cm->n && !bad; i++) {
        if (p >= end) {
            bad = true;
            break;
        }
        unsigned flags = *p++;
        uint64_t same = get_u(&p, end, &bad), tail = get_u(&p, end, &bad);
        uint64_t mid = get_u(&p, end, &bad);
        if (bad || same + tail > prev_len || same + mid + tail > cm->max_path ||
            mid > (uint64_t)(end - p) || same + mid + tail >= paths_left) {
            bad = true;
            break;
        }
        /* the path straight into the arena: the previous one's prefix and suffix around
         * the record's middle */
        size_t len = (size_t)(same + mid + tail);
        char *path = paths;
        paths += len + 1;
        paths_left -= len + 1;
        copy_bytes(path, prev, (size_t)same);
        copy_bytes(path + same, (const char *)p, (size_t)mid);
        copy_bytes(path + same + mid, prev + prev_len - tail, (size_t)tail);
        path[len] = '\0';
        p += mid;
        prev = path;
        prev_len = len;
        int64_t size = icd_unzigzag64(get_u(&p, end, &bad));
        for (unsigned f8 = flags; f8; f8 &= f8 - 1) { /* (the set flags, lowest first) */
            uint64_t u = get_u(&p, end, &bad);
            if (!set_value(&cur, __builtin_ctz(f8), u, cm, mf)) bad = true;
        }
        if (flags & (1u << V_ROW_ID)) {
            uint64_t u = get_u(&p, end, &bad);
            if (!set_value(&cur, V_SORT_ORDER, u, cm, mf)) bad = true;
        }
        if (bad) break;
        ice_manifest_entry *e = &v[i];
        *e = cur;
        e->file.path = path;
        e->file.file_size = size;
    }
    if (bad || p != end)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                        "the scan's entry cache record of manifest %s is damaged", mf->path);
    *out = v;
    *n = cm->n;
    return 0;
}
