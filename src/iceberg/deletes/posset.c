/*
 * ice_posset (see posset.h): deleted row positions of one data file as a sorted array of
 * entries, one per high 32 bits — the 64-bit layout of deletion vectors. Almost every
 * data file has fewer than 2^32 rows, so the array usually has one entry and the key
 * search is a single comparison. An entry is either being built (a CRoaring bitmap) or
 * frozen (its portable serialization plus a container index, queried by roaring32.c);
 * the batch filter (ice_posset_apply) is the merge-on-read hot path.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bits.h"
#include "iceberg/deletes/posset.h"
#include "iceberg/deletes/roaring32.h"

#define POS_LIMIT ((uint64_t)1 << 63) /* positions are non-negative int64 values */
#define LOW_SPAN ((uint64_t)1 << 32)

typedef struct pos_entry {
    uint32_t key;
    roaring_bitmap_t *bm; /* building form; NULL when frozen */
    uint8_t *bytes;       /* frozen form: portable serialization (owned) ... */
    ice_r32 r;            /* ... and its container index */
} pos_entry;

struct ice_posset {
    pos_entry *e; /* strictly increasing keys */
    size_t n, cap;
    size_t last; /* index of the entry used last by an add, a hint for sorted input */
};

static void entry_free(pos_entry *e)
{
    if (e->bm) /* CRoaring 0.2.66 does not accept NULL */
        roaring_bitmap_free(e->bm);
    free(e->bytes);
    ice_r32_release(&e->r);
}

int ice_posset_new(ice_posset **out, icd_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : icd_fail_nomem(err);
}

void ice_posset_free(ice_posset *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        entry_free(&s->e[i]);
    free(s->e);
    free(s);
}

/* First index whose key is >= key. */
static size_t lower_bound(const ice_posset *s, uint32_t key)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->e[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Inserts an entry at index i (its key is absent); returns it or NULL when out of
 * memory. */
static pos_entry *insert_at(ice_posset *s, size_t i, uint32_t key)
{
    if (ICD_ARRAY_RESERVE(s->e, s->cap, s->n + 1, 4)) return NULL;
    memmove(s->e + i + 1, s->e + i, (s->n - i) * sizeof *s->e);
    memset(&s->e[i], 0, sizeof s->e[i]);
    s->e[i].key = key;
    s->n++;
    return &s->e[i];
}

/* Turns a frozen entry back into a CRoaring bitmap (the bytes are trusted: written by
 * CRoaring or validated by ice_r32_parse). */
static int thaw(pos_entry *e, icd_error *err)
{
    if (e->bm) return 0;
    e->bm = e->bytes ? roaring_bitmap_portable_deserialize_safe((const char *)e->bytes, e->r.size)
                     : roaring_bitmap_create();
    if (!e->bm) return icd_fail_nomem(err);
    free(e->bytes);
    e->bytes = NULL;
    ice_r32_release(&e->r);
    return 0;
}

static int freeze_entry(pos_entry *e, icd_error *err)
{
    if (!e->bm) return 0;
    roaring_bitmap_run_optimize(e->bm);
    size_t size = roaring_bitmap_portable_size_in_bytes(e->bm);
    uint8_t *bytes = malloc(size);
    if (!bytes) return icd_fail_nomem(err);
    roaring_bitmap_portable_serialize(e->bm, (char *)bytes);
    ice_r32_error why;
    if (ice_r32_parse(bytes, size, &e->r, &why)) {
        free(bytes);
        if (why.nomem) return icd_fail_nomem(err);
        return icd_fail(err, ICD_EINTERNAL, NULL, -1,
                        "position set: CRoaring wrote a bitmap that does not parse: %s", why.msg);
    }
    e->bytes = bytes;
    roaring_bitmap_free(e->bm);
    e->bm = NULL;
    return 0;
}

int ice_posset_freeze(ice_posset *s, icd_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        assert(i == 0 || s->e[i - 1].key < s->e[i].key); /* lower_bound relies on it */
        ICD_TRY(freeze_entry(&s->e[i], err));
    }
    return 0;
}

/* The CRoaring bitmap for `key`, created (or thawed) when needed. */
static int bitmap_for(ice_posset *s, uint32_t key, roaring_bitmap_t **out, icd_error *err)
{
    size_t i = s->last;
    if (!(i < s->n && s->e[i].key == key)) {
        i = lower_bound(s, key);
        if (i == s->n || s->e[i].key != key) {
            if (!insert_at(s, i, key)) return icd_fail_nomem(err);
        }
        s->last = i;
    }
    ICD_TRY(thaw(&s->e[i], err));
    *out = s->e[i].bm;
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
    if (pos >= POS_LIMIT) return bad_position(err, pos);
    roaring_bitmap_t *bm;
    ICD_TRY(bitmap_for(s, (uint32_t)(pos >> 32), &bm, err));
    roaring_bitmap_add(bm, (uint32_t)pos);
    return 0;
}

int ice_posset_add_many(ice_posset *s, const uint64_t *pos, size_t n, icd_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (pos[i] >= POS_LIMIT) return bad_position(err, pos[i]);
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
    if (hi > POS_LIMIT) return bad_position(err, hi - 1);
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
        const pos_entry *e = &src->e[i];
        roaring_bitmap_t *bm;
        ICD_TRY(bitmap_for(dst, e->key, &bm, err));
        if (e->bm) {
            roaring_bitmap_or_inplace(bm, e->bm);
            continue;
        }
        if (!e->bytes) continue;
        roaring_bitmap_t *tmp =
            roaring_bitmap_portable_deserialize_safe((const char *)e->bytes, e->r.size);
        if (!tmp) return icd_fail_nomem(err);
        roaring_bitmap_or_inplace(bm, tmp);
        roaring_bitmap_free(tmp);
    }
    return 0;
}

int ice_posset_adopt32(ice_posset *s, uint32_t key, roaring_bitmap_t *bm, icd_error *err)
{
    if (key >= (uint32_t)(POS_LIMIT >> 32)) {
        roaring_bitmap_free(bm);
        return bad_position(err, (uint64_t)key << 32);
    }
    roaring_bitmap_t *dst = NULL;
    size_t i = lower_bound(s, key);
    int rc = 0;
    if (i < s->n && s->e[i].key == key) {
        rc = bitmap_for(s, key, &dst, err);
        if (!rc) roaring_bitmap_or_inplace(dst, bm);
        roaring_bitmap_free(bm);
        return rc;
    }
    pos_entry *e = insert_at(s, i, key);
    if (!e) {
        roaring_bitmap_free(bm);
        return icd_fail_nomem(err);
    }
    e->bm = bm;
    return 0;
}

int ice_posset_adopt_portable(ice_posset *s, uint32_t key, uint8_t *bytes, struct ice_r32 *r,
                              icd_error *err)
{
    if (key >= (uint32_t)(POS_LIMIT >> 32)) {
        free(bytes);
        ice_r32_release(r);
        return bad_position(err, (uint64_t)key << 32);
    }
    r->buf = bytes;
    /* Appending in key order (a deletion vector's order) needs no search. */
    size_t i = s->n && s->e[s->n - 1].key < key ? s->n : lower_bound(s, key);
    if (i < s->n && s->e[i].key == key) {
        /* Rare: the key exists already; merge through CRoaring. */
        roaring_bitmap_t *bm =
            roaring_bitmap_portable_deserialize_safe((const char *)bytes, r->size);
        free(bytes);
        ice_r32_release(r);
        if (!bm) return icd_fail_nomem(err);
        return ice_posset_adopt32(s, key, bm, err);
    }
    pos_entry *e = insert_at(s, i, key);
    if (!e) {
        free(bytes);
        ice_r32_release(r);
        return icd_fail_nomem(err);
    }
    e->bytes = bytes;
    e->r = *r;
    r->c = NULL;
    r->n = 0;
    return 0;
}

static uint64_t entry_card(const pos_entry *e)
{
    return e->bm ? roaring_bitmap_get_cardinality(e->bm) : e->r.card;
}

uint64_t ice_posset_cardinality(const ice_posset *s)
{
    uint64_t c = 0;
    for (size_t i = 0; i < s->n; i++)
        c += entry_card(&s->e[i]);
    return c;
}

bool ice_posset_contains(const ice_posset *s, uint64_t pos)
{
    uint32_t key = (uint32_t)(pos >> 32);
    size_t i = lower_bound(s, key);
    if (i == s->n || s->e[i].key != key || pos >= POS_LIMIT) return false;
    const pos_entry *e = &s->e[i];
    return e->bm ? roaring_bitmap_contains(e->bm, (uint32_t)pos)
                 : ice_r32_contains(&e->r, (uint32_t)pos);
}

/* ---- the batch filter ---- */

/* Deleted positions are read from CRoaring this many at a time (building form only). */
#define VISIT_BLOCK 256

/* Building form: count [a, b) with CRoaring, then clear via its iterator. */
static uint64_t filter_roaring(const roaring_bitmap_t *bm, uint64_t a, uint64_t b, uint64_t off,
                               uint8_t *sel, uint64_t *words)
{
    uint64_t count = roaring_bitmap_range_cardinality(bm, a, b);
    if (!count || (!sel && !words)) return count;
    if (count == b - a) {
        if (sel)
            memset(sel + off, 0, (size_t)count);
        else
            icd_bits_clear_range(words, off, off + count);
        return count;
    }
    roaring_uint32_iterator_t it;
    roaring_init_iterator(bm, &it);
    roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)a);
    uint32_t buf[VISIT_BLOCK];
    for (uint64_t left = count; left;) {
        uint32_t want = left < VISIT_BLOCK ? (uint32_t)left : VISIT_BLOCK;
        uint32_t got = roaring_read_uint32_iterator(&it, buf, want);
        if (!got) break; /* cannot happen: `count` values lie ahead */
        for (uint32_t k = 0; k < got; k++) {
            uint64_t at = buf[k] - a + off;
            if (sel)
                sel[at] = 0;
            else
                words[at >> 6] &= ~((uint64_t)1 << (at & 63));
        }
        left -= got;
    }
    return count;
}

/* Visits the entries whose 2^32-row span meets [lo, hi). */
static uint64_t filter(const ice_posset *s, uint64_t lo, uint64_t hi, uint8_t *sel, uint64_t *words)
{
    if (lo >= hi || s->n == 0) return 0;
    uint64_t total = 0;
    for (size_t i = lower_bound(s, (uint32_t)(lo >> 32)); i < s->n; i++) {
        const pos_entry *e = &s->e[i];
        uint64_t base = (uint64_t)e->key << 32;
        if (base >= hi) break;
        uint64_t a = lo > base ? lo - base : 0;
        uint64_t b = hi - base < LOW_SPAN ? hi - base : LOW_SPAN;
        uint64_t off = base + a - lo; /* batch index of low value a */
        total += e->bm ? filter_roaring(e->bm, a, b, off, sel, words)
                       : ice_r32_filter(&e->r, a, b, off, sel, words);
    }
    return total;
}

uint64_t ice_posset_count_range(const ice_posset *s, uint64_t lo, uint64_t hi)
{
    return filter(s, lo, hi, NULL, NULL);
}

size_t ice_posset_apply(const ice_posset *s, uint64_t first, size_t n, uint8_t *selection)
{
    uint64_t end = first + n < first ? UINT64_MAX : first + n;
    return (size_t)filter(s, first, end, selection, NULL);
}

size_t ice_posset_apply_bits(const ice_posset *s, uint64_t first, size_t n, uint64_t *words)
{
    uint64_t end = first + n < first ? UINT64_MAX : first + n;
    return (size_t)filter(s, first, end, NULL, words);
}

size_t ice_posset_list(const ice_posset *s, uint64_t from, uint64_t *out, size_t max)
{
    size_t got = 0;
    for (size_t i = lower_bound(s, (uint32_t)(from >> 32)); i < s->n && got < max; i++) {
        const pos_entry *e = &s->e[i];
        uint64_t base = (uint64_t)e->key << 32;
        uint32_t low = from > base ? (uint32_t)(from - base) : 0;
        if (!e->bm) {
            got += ice_r32_list(&e->r, low, base, out + got, max - got);
            continue;
        }
        roaring_uint32_iterator_t it;
        roaring_init_iterator(e->bm, &it);
        if (low && !roaring_move_uint32_iterator_equalorlarger(&it, low)) continue;
        for (; it.has_value && got < max; roaring_advance_uint32_iterator(&it))
            out[got++] = base | it.current_value;
    }
    return got;
}
