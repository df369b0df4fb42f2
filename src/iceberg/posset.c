/*
 * ice_posset (see posset.h): deleted row positions of one data file as a sorted array of
 * (high 32 bits, 32-bit CRoaring bitmap) pairs — the 64-bit layout of deletion vectors.
 * Almost every data file has fewer than 2^32 rows, so the array usually has one entry and
 * the key search is a single comparison. The batch filter (ice_posset_apply) counts the
 * deletes in the batch's range first so that the two common extremes, nothing deleted and
 * everything deleted, cost one Roaring range count each.
 */
#include <stdlib.h>
#include <string.h>

#include "iceberg/posset.h"

#define POS_LIMIT ((uint64_t)1 << 63) /* positions are non-negative int64 values */
#define LOW_SPAN ((uint64_t)1 << 32)

struct ice_posset {
    uint32_t *keys; /* strictly increasing high halves */
    roaring_bitmap_t **bms;
    size_t n, cap;
    size_t last; /* index of the key used last by an add, a hint for sorted input */
};

int ice_posset_new(ice_posset **out, icd_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : icd_fail_nomem(err);
}

void ice_posset_free(ice_posset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        roaring_bitmap_free(s->bms[i]);
    free(s->keys);
    free(s->bms);
    free(s);
}

/* First index whose key is >= key. */
static size_t lower_bound(const ice_posset *s, uint32_t key)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const roaring_bitmap_t *find_bitmap(const ice_posset *s, uint32_t key)
{
    size_t i = lower_bound(s, key);
    return i < s->n && s->keys[i] == key ? s->bms[i] : NULL;
}

/* Inserts `bm` under `key` at index i (the key is absent). */
static int insert_at(ice_posset *s, size_t i, uint32_t key, roaring_bitmap_t *bm,
                     icd_error *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        uint32_t *keys = realloc(s->keys, cap * sizeof *keys);
        if (keys)
            s->keys = keys;
        roaring_bitmap_t **bms = keys ? realloc(s->bms, cap * sizeof *bms) : NULL;
        if (!bms)
            return icd_fail_nomem(err);
        s->bms = bms;
        s->cap = cap;
    }
    memmove(s->keys + i + 1, s->keys + i, (s->n - i) * sizeof *s->keys);
    memmove(s->bms + i + 1, s->bms + i, (s->n - i) * sizeof *s->bms);
    s->keys[i] = key;
    s->bms[i] = bm;
    s->n++;
    return 0;
}

/* The bitmap for `key`, created when absent. */
static int bitmap_for(ice_posset *s, uint32_t key, roaring_bitmap_t **out, icd_error *err)
{
    size_t i = s->last;
    if (!(i < s->n && s->keys[i] == key)) {
        i = lower_bound(s, key);
        if (i == s->n || s->keys[i] != key) {
            roaring_bitmap_t *bm = roaring_bitmap_create();
            if (!bm)
                return icd_fail_nomem(err);
            int rc = insert_at(s, i, key, bm, err);
            if (rc) {
                roaring_bitmap_free(bm);
                return rc;
            }
        }
        s->last = i;
    }
    *out = s->bms[i];
    return 0;
}

static int bad_position(icd_error *err, uint64_t pos)
{
    return icd_fail(err, ICD_EINVALID, NULL, -1,
                    "row position %llu is out of range (positions are non-negative longs)",
                    (unsigned long long)pos);
}

int ice_posset_add(ice_posset *s, uint64_t pos, icd_error *err)
{
    if (pos >= POS_LIMIT)
        return bad_position(err, pos);
    roaring_bitmap_t *bm;
    ICD_TRY(bitmap_for(s, (uint32_t)(pos >> 32), &bm, err));
    roaring_bitmap_add(bm, (uint32_t)pos);
    return 0;
}

int ice_posset_add_many(ice_posset *s, const uint64_t *pos, size_t n, icd_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (pos[i] >= POS_LIMIT)
            return bad_position(err, pos[i]);
    uint32_t low[1024];
    size_t i = 0;
    while (i < n) {
        uint32_t key = (uint32_t)(pos[i] >> 32);
        roaring_bitmap_t *bm;
        ICD_TRY(bitmap_for(s, key, &bm, err));
        /* A run of positions with the same high half goes to Roaring in blocks. */
        size_t k = 0;
        while (i < n && (uint32_t)(pos[i] >> 32) == key) {
            low[k++] = (uint32_t)pos[i++];
            if (k == sizeof low / sizeof low[0]) {
                roaring_bitmap_add_many(bm, k, low);
                k = 0;
            }
        }
        roaring_bitmap_add_many(bm, k, low);
    }
    return 0;
}

int ice_posset_add_range(ice_posset *s, uint64_t lo, uint64_t hi, icd_error *err)
{
    if (hi > POS_LIMIT)
        return bad_position(err, hi - 1);
    while (lo < hi) {
        uint64_t base = lo & ~(LOW_SPAN - 1);
        uint64_t end = hi - base < LOW_SPAN ? hi : base + LOW_SPAN;
        roaring_bitmap_t *bm;
        ICD_TRY(bitmap_for(s, (uint32_t)(lo >> 32), &bm, err));
        roaring_bitmap_add_range_closed(bm, (uint32_t)lo, (uint32_t)(end - 1));
        lo = end;
    }
    return 0;
}

int ice_posset_union(ice_posset *dst, const ice_posset *src, icd_error *err)
{
    for (size_t i = 0; i < src->n; i++) {
        roaring_bitmap_t *bm;
        ICD_TRY(bitmap_for(dst, src->keys[i], &bm, err));
        roaring_bitmap_or_inplace(bm, src->bms[i]);
    }
    return 0;
}

int ice_posset_adopt32(ice_posset *s, uint32_t key, roaring_bitmap_t *bm, icd_error *err)
{
    if (key >= (uint32_t)(POS_LIMIT >> 32)) {
        roaring_bitmap_free(bm);
        return bad_position(err, (uint64_t)key << 32);
    }
    /* Appending in key order (a deletion vector's order) needs no search. */
    size_t i = s->n && s->keys[s->n - 1] < key ? s->n : lower_bound(s, key);
    if (i < s->n && s->keys[i] == key) {
        roaring_bitmap_or_inplace(s->bms[i], bm);
        roaring_bitmap_free(bm);
        return 0;
    }
    int rc = insert_at(s, i, key, bm, err);
    if (rc)
        roaring_bitmap_free(bm);
    return rc;
}

uint64_t ice_posset_cardinality(const ice_posset *s)
{
    uint64_t c = 0;
    for (size_t i = 0; i < s->n; i++)
        c += roaring_bitmap_get_cardinality(s->bms[i]);
    return c;
}

bool ice_posset_contains(const ice_posset *s, uint64_t pos)
{
    const roaring_bitmap_t *bm = find_bitmap(s, (uint32_t)(pos >> 32));
    return bm && pos < POS_LIMIT && roaring_bitmap_contains(bm, (uint32_t)pos);
}

/*
 * Walks the keys whose 2^32-row span meets [lo, hi) and calls `fn` with the bitmap, the
 * span's low range [a, b) and the number of deleted positions in it (when non-zero).
 */
typedef void (*span_fn)(const roaring_bitmap_t *bm, uint64_t a, uint64_t b, uint64_t count,
                        uint64_t batch_offset, void *ctx);

static uint64_t for_spans(const ice_posset *s, uint64_t lo, uint64_t hi, span_fn fn, void *ctx)
{
    if (lo >= hi || s->n == 0)
        return 0;
    uint64_t total = 0;
    for (size_t i = lower_bound(s, (uint32_t)(lo >> 32)); i < s->n; i++) {
        uint64_t base = (uint64_t)s->keys[i] << 32;
        if (base >= hi)
            break;
        uint64_t a = lo > base ? lo - base : 0;
        uint64_t b = hi - base < LOW_SPAN ? hi - base : LOW_SPAN;
        uint64_t c = roaring_bitmap_range_cardinality(s->bms[i], a, b);
        if (c) {
            total += c;
            if (fn)
                fn(s->bms[i], a, b, c, base + a - lo, ctx);
        }
    }
    return total;
}

uint64_t ice_posset_count_range(const ice_posset *s, uint64_t lo, uint64_t hi)
{
    return for_spans(s, lo, hi, NULL, NULL);
}

/* Deleted positions are read from Roaring this many at a time. */
#define VISIT_BLOCK 256

static void clear_bytes(const roaring_bitmap_t *bm, uint64_t a, uint64_t b, uint64_t count,
                        uint64_t off, void *ctx)
{
    uint8_t *sel = (uint8_t *)ctx + off;
    if (count == b - a) {
        memset(sel, 0, (size_t)count);
        return;
    }
    roaring_uint32_iterator_t it;
    roaring_init_iterator(bm, &it);
    roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)a);
    uint32_t buf[VISIT_BLOCK];
    while (count) {
        uint32_t want = count < VISIT_BLOCK ? (uint32_t)count : VISIT_BLOCK;
        uint32_t got = roaring_read_uint32_iterator(&it, buf, want);
        if (!got)
            break; /* cannot happen: `count` values lie ahead */
        for (uint32_t k = 0; k < got; k++)
            sel[buf[k] - a] = 0;
        count -= got;
    }
}

size_t ice_posset_apply(const ice_posset *s, uint64_t first, size_t n, uint8_t *selection)
{
    uint64_t end = first + n < first ? UINT64_MAX : first + n;
    return (size_t)for_spans(s, first, end, clear_bytes, selection);
}

static void clear_bit_range(uint64_t *w, uint64_t from, uint64_t to)
{
    while (from < to && (from & 63)) {
        w[from >> 6] &= ~((uint64_t)1 << (from & 63));
        from++;
    }
    if (to - from >= 64) {
        memset(w + (from >> 6), 0, (size_t)((to - from) >> 6) * sizeof *w);
        from += (to - from) & ~(uint64_t)63;
    }
    for (; from < to; from++)
        w[from >> 6] &= ~((uint64_t)1 << (from & 63));
}

static void clear_bits(const roaring_bitmap_t *bm, uint64_t a, uint64_t b, uint64_t count,
                       uint64_t off, void *ctx)
{
    uint64_t *w = ctx;
    if (count == b - a) {
        clear_bit_range(w, off, off + count);
        return;
    }
    roaring_uint32_iterator_t it;
    roaring_init_iterator(bm, &it);
    roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)a);
    uint32_t buf[VISIT_BLOCK];
    while (count) {
        uint32_t want = count < VISIT_BLOCK ? (uint32_t)count : VISIT_BLOCK;
        uint32_t got = roaring_read_uint32_iterator(&it, buf, want);
        if (!got)
            break;
        for (uint32_t k = 0; k < got; k++) {
            uint64_t bit = buf[k] - a + off;
            w[bit >> 6] &= ~((uint64_t)1 << (bit & 63));
        }
        count -= got;
    }
}

size_t ice_posset_apply_bits(const ice_posset *s, uint64_t first, size_t n, uint64_t *words)
{
    uint64_t end = first + n < first ? UINT64_MAX : first + n;
    return (size_t)for_spans(s, first, end, clear_bits, words);
}

size_t ice_posset_list(const ice_posset *s, uint64_t from, uint64_t *out, size_t max)
{
    size_t got = 0;
    for (size_t i = lower_bound(s, (uint32_t)(from >> 32)); i < s->n && got < max; i++) {
        uint64_t base = (uint64_t)s->keys[i] << 32;
        roaring_uint32_iterator_t it;
        roaring_init_iterator(s->bms[i], &it);
        if (from > base && !roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)(from - base)))
            continue;
        for (; it.has_value && got < max; roaring_advance_uint32_iterator(&it))
            out[got++] = base | it.current_value;
    }
    return got;
}
